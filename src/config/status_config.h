// The status config (`--config FILE`, default opcheck.yaml next to the manifests): what a bring-up team knows about
// cases — expected failures, skips, exclusions, looser tolerances per device — kept outside the generated manifests.
//
// Layout (see manifests/opcheck.example.yaml for a commented example):
//
//   rules:
//     - id: "gpt-oss-20b::torch.mul.*"     # glob over case ids; omitted = "*"
//       op: torch.mul                       # optional filter: glob over the op as the manifest writes it
//       dtype: bf16                         # optional filter: the case dtype, any spelling
//       status: xfail                       # expected_passing | xfail | skip | exclude
//       strict: false                       # xfail only: a pass is XPASS but does not fail the run (default true)
//       reason: https://github.com/org/repo/issues/123
//       rtol: 1.0e-2                        # also atol, compare, pcc_min, equal_nan, timeout (seconds), issue
//       device_overrides:
//         spyre: {atol: 5.0e-2}             # any of the settings above, for one device under test only
//
// Precedence, lowest first: manifest defaults < case fields < config rules, broad to specific < device overrides
// (themselves broad to specific). A rule is more specific than another when, compared in this order:
//   1. its `id` has more literal characters (every character except `*`, `?` and a `[...]` set; `\x` counts 1;
//      an omitted id is `*`, 0),
//   2. it has more filters (`op` and `dtype` count one each),
//   3. its `op` has more literal characters,
//   4. it comes later in the file.
// Two rules that both match a case and tie on 1-3 while setting different values are ambiguous:
// check_status_config reports them, and until fixed the later one wins.
// `status` and `reason` travel together: a layer that sets `status` also sets the reason (empty when it gives
// none); a layer that sets only `reason` annotates the status already decided.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/typed_yaml.h"
#include "config/glob.h"
#include "opcheck/case.h"
#include "opcheck/diagnostic.h"

namespace opcheck {

/// The triage status a config rule gives a case. `Unset` when no matching rule says.
enum class TriageStatus { Unset, ExpectedPassing, Xfail, Skip, Exclude };

/// "" for Unset, else the config spelling: expected_passing, xfail, skip, exclude.
const char* triage_status_name(TriageStatus s);
/// The config spelling back to the enum; nullopt for anything else (Unset has no spelling).
std::optional<TriageStatus> parse_triage_status(std::string_view s);
/// The spellings a config may use, for messages and did-you-mean.
const std::vector<std::string>& all_triage_status_names();

/// What one rule (or one device override of it) sets: the case fields with a status-config key (kCaseFields), the
/// status and its reason; absent fields leave the case alone.
struct RuleSettings : SettingsLayer {
  TriageStatus status = TriageStatus::Unset;
  std::optional<std::string> reason;
  std::optional<bool> strict;  // xfail strictness; unset = strict
  SourceLoc loc;  // the mapping that holds these settings

  bool empty() const;
};

/// One entry of `rules:`: which cases it matches and what it sets.
struct ConfigRule {
  std::string pattern;        // `id:` as written ("*" when omitted)
  std::string op;             // `op:` as written, "" = any op
  std::string dtype;          // canonical dtype name (fp16, bf16, ...), "" = any dtype
  Glob id_glob;
  Glob op_glob;               // meaningful only when !op.empty()
  std::optional<DType> dtype_filter;
  RuleSettings settings;
  std::map<std::string, RuleSettings> device_overrides;  // device name -> settings for that device under test
  SourceLoc loc;              // the entry's first key
  std::size_t index = 0;      // position in the file, 0-based

  /// Whether the rule selects `c` (id glob, op glob, dtype filter).
  bool matches(const Case& c) const;
};

/// Ranks rules from broad to specific (see the header comment); file order is not part of it.
struct RuleSpecificity {
  int id_literals = 0;
  int filters = 0;
  int op_literals = 0;

  static RuleSpecificity of(const ConfigRule& r);
  bool operator<(const RuleSpecificity& o) const;
  bool operator==(const RuleSpecificity& o) const;
};

/// A loaded status config file.
struct StatusConfig {
  std::string path;
  std::vector<ConfigRule> rules;  // file order; rules with errors are left out
};

/// Reads and validates `path`. Problems are located diagnostics (unknown keys with did-you-mean, bad status
/// values, wrong types, malformed globs, duplicate keys, duplicate entries); entries without errors are still
/// loaded. Returns false when any error was reported. Warnings (e.g. an xfail without a reason) do not fail.
bool load_status_config(const std::string& path, StatusConfig& out, DiagnosticList& diags);

/// Same, from memory; `path` is used for locations only.
bool load_status_config_text(const std::string& path, const std::string& text, StatusConfig& out,
                             DiagnosticList& diags);

/// The config's verdict on one case.
struct CaseStatus {
  TriageStatus status = TriageStatus::Unset;
  std::string reason;                     // may be set even when status is Unset (a rule explaining a tolerance)
  SourceLoc status_loc;                   // the rule or override that set `status` (line 0 when Unset)
  bool strict = true;                     // an xfail's XPASS fails the run (`strict: false` turns that off)
  std::vector<const ConfigRule*> matched; // every matching rule, broad to specific (pointers into the config)
};

/// Applies every rule matching `c` to `c` itself (pass a copy: tolerances, comparator, pcc_min, equal_nan,
/// timeout), with the overrides for `device_name`, and returns the triage status. A device name `name:N` also
/// uses the overrides written for `name`. A pure function of (config, case, device name).
CaseStatus apply_status_config(const StatusConfig& cfg, Case& c, const std::string& device_name);

/// The selection with the config applied: each kept case is a configured copy (the loaded manifests stay as
/// written), `exclude` deselects.
struct TriagedSelection {
  std::deque<Case> configured;                  // owns the copies `cases` points to
  std::vector<const Case*> cases;               // in selection order, excluded ones left out
  std::map<const Case*, CaseStatus> statuses;   // by configured copy
  std::size_t excluded = 0;
};
/// Applies `cfg` to every case of `selected` for `device_name`. With no rules the cases are passed through as they
/// are (no copies).
TriagedSelection triage_selection(const StatusConfig& cfg, const std::vector<const Case*>& selected,
                                  const std::string& device_name);

/// For `opcheck validate --config`: reports as errors the entries that match none of `cases` (stale after a manifest
/// regeneration, with the closest case ids, model or op as suggestions) and the pairs of entries
/// that match the same cases with equal specificity but set different values (base settings, or the overrides of
/// one device).
void check_status_config(const StatusConfig& cfg, const std::vector<const Case*>& cases, DiagnosticList& diags);

/// The config used when `--config` is not given: opcheck.yaml in a manifest folder given (or in the folder of a
/// manifest file given). "" when there is none; an error and "" when several different ones exist.
std::string default_status_config_path(const std::vector<std::string>& manifest_paths, DiagnosticList& diags);

}  // namespace opcheck
