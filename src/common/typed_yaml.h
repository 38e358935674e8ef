// Typed reads of YAML values with located diagnostics, for every file opcheck reads (manifests, v2 configs, the
// status config), and the typed read of each case field (opcheck/case_fields.h) that manifests and the status config
// set: their checks live here once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/yaml_tree.h"
#include "opcheck/case.h"
#include "opcheck/diagnostic.h"
#include "opcheck/result.h"

namespace opcheck {

/// How a file's messages are worded. Manifests say "expected a number for 'rtol', got a string"; the status config
/// says "`rtol` must be a number, not a string" and wants its numbers finite and its strings non-blank. Each wording
/// is what its users (and their scripts) already read, so the reader speaks both.
enum class YamlVoice { Manifest, StatusConfig };

/// Reads typed values of one YAML file; every problem is a diagnostic at the node that holds it, naming the case
/// being read (if any). Each read returns false, reported, when the value is unusable.
class TypedYaml {
 public:
  TypedYaml(std::string path, DiagnosticList& diags, YamlVoice voice = YamlVoice::Manifest)
      : path_(std::move(path)), diags_(diags), voice_(voice) {}

  const std::string& path() const { return path_; }
  DiagnosticList& diagnostics() const { return diags_; }
  YamlVoice voice() const { return voice_; }
  /// The case id diagnostics name ("" outside a case).
  const std::string& case_id() const { return case_id_; }
  void set_case_id(std::string id) { case_id_ = std::move(id); }

  SourceLoc loc(yaml::NodeRef n) const { return SourceLoc{path_, n.line(), n.col()}; }
  /// Where column `col` (1-based) of a single-line scalar's text sits in the file.
  SourceLoc text_loc(yaml::NodeRef n, int col) const;
  void error(yaml::NodeRef n, std::string message, std::string fix = {}) {
    diags_.error(loc(n), std::move(message), case_id_, std::move(fix));
  }
  void error_at(SourceLoc l, std::string message, std::string fix = {}) {
    diags_.error(std::move(l), std::move(message), case_id_, std::move(fix));
  }
  void warning(yaml::NodeRef n, std::string message, std::string fix = {}) {
    diags_.warning(loc(n), std::move(message), case_id_, std::move(fix));
  }

  /// A string. The status config's voice also refuses blank text, and reports an absent value at `key_node` (`key:`
  /// with nothing after it has no place of its own).
  bool read_string(yaml::NodeRef n, std::string_view key, std::string& out, yaml::NodeRef key_node = {});
  bool read_int(yaml::NodeRef n, std::string_view key, std::int64_t& out);
  bool read_number(yaml::NodeRef n, std::string_view key, double& out);
  bool read_bool(yaml::NodeRef n, std::string_view key, bool& out);
  bool read_int_list(yaml::NodeRef n, std::string_view key, std::vector<std::int64_t>& out);
  bool want_mapping(yaml::NodeRef n, std::string_view key);
  /// False, reported at `n`, when `value` (the `what`: "case name", "model name", "op", "tag") holds a control
  /// character. Names reach terminals, reports and generated commands; an escape sequence or line break in one would
  /// be run by the terminal or end a shell comment.
  bool refuse_control_characters(yaml::NodeRef n, std::string_view what, std::string_view value);
  /// Reports every key of `map` not in `allowed` (with did-you-mean); `elsewhere_fix` is the hint for a key that
  /// belongs in `elsewhere` instead.
  bool check_keys(yaml::NodeRef map, const std::vector<std::string_view>& allowed, const std::string& where,
                  const std::vector<std::string_view>* elsewhere = nullptr, const char* elsewhere_fix = nullptr);

 private:
  /// "expected a number for 'rtol', got X" or "`rtol` must be a number, not X".
  std::string type_message(std::string_view key, std::string_view expected, yaml::NodeRef found) const;

  std::string path_;
  DiagnosticList& diags_;
  YamlVoice voice_;
  std::string case_id_;
};

/// 'text', cut at 120 bytes with the full length said ('abc...' (1048576 bytes)): how messages quote a name or value.
std::string in_quotes(std::string_view text);

/// True for a plain `~`, `null` or empty scalar.
bool is_yaml_null(yaml::NodeRef n);

/// The index in kCaseFields of the field whose v1 manifest key (`manifest`) or status-config key (else) is `key`;
/// -1 for none.
int case_field_for_key(std::string_view key, bool manifest);

/// Reads `key: value` into field `field` of kCaseFields (one the table reads: not own_reader), checking its type and
/// its range in the reader's voice, and marks it given in `out`. False, reported, when the value is unusable.
bool read_case_field(TypedYaml& r, std::size_t field, yaml::NodeRef key, yaml::NodeRef value, SettingsLayer& out);

}  // namespace opcheck
