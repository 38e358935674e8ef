// Figures derived from a RunReport: counts, pass rates, coverage, dedupe and time. Metrics JSON, diff and
// the console all read them from here so the definitions live in one place.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "opcheck/report.h"

namespace opcheck {

/// Occurrences per outcome.
struct OutcomeCounts {
  std::int64_t passed = 0, failed = 0, skipped = 0, xfailed = 0, xpassed = 0, errors = 0, not_supported = 0;
  std::int64_t no_device_op = 0;  // passed without the device: no op of the call ran on it (no device result)
  std::int64_t xpassed_nonstrict = 0;  // of xpassed, those whose xfail is not strict (correct results; see pass_rate)

  void add(Outcome o, XfailStrictness strictness = XfailStrictness::Strict);
  std::int64_t count(Outcome o) const;
  std::int64_t total() const {
    return passed + failed + skipped + xfailed + xpassed + errors + not_supported + no_device_op;
  }
  /// The share of correct results among the occurrences that say something about the device:
  /// (passed + non-strict xpassed) / (passed + failed + errors + xpassed + not_supported). A non-strict xpass is a
  /// correct result (its expectation only said it might fail); a strict xpass counts against the rate, as it fails
  /// the run; not_supported counts against it (no correct result came out). Skips, xfails and no_device_op (passes
  /// that ran no op on the device) are left out because they say nothing about the device. The run's policy
  /// (--xpass-ok, --not-supported-ok) does not change it. Empty when nothing counts.
  std::optional<double> pass_rate() const;
  std::int64_t correct() const { return passed + xpassed_nonstrict; }                    // pass_rate's numerator
  std::int64_t counted() const { return passed + failed + errors + xpassed + not_supported; }  // its denominator
  bool operator==(const OutcomeCounts& o) const;
};

/// Why a run's not-run cases did not run, as the summary line and the JUnit properties say it in parentheses:
/// "signal", "maxfail", "deadline", "the device did not start" (stopped_by "device"), "stopped" when none is recorded.
std::string not_run_cause(const RunInfo& info);

/// pass_rate's rule in words, for the pages that state it.
constexpr const char* kPassRateRule =
    "(passed + non-strict xpassed) / (passed + failed + errors + xpassed + not_supported)";

/// How much deduplication saved: occurrences served by another occurrence's run.
struct DedupeStats {
  std::int64_t occurrences = 0;
  std::int64_t unique = 0;             // occurrences decided by their own run (deduplicated_from empty)
  std::int64_t duplicates_served = 0;  // occurrences that carry another occurrence's result
  /// occurrences / unique (1.0 = nothing shared); 0 when there are no occurrences.
  double ratio() const;
};

/// Distinct ops and call signatures of one model (or of the whole run).
struct OpCoverage {
  std::set<std::string> ops;                                   // op as written in the manifests
  std::set<std::pair<std::string, std::string>> signatures;    // (op, input signature)
};

/// Where a case came from, for coverage by source. The order is the order reports list them in.
enum class CaseSource {
  Manifests,  // a v1 manifest (bundled, written by hand, scanned from a model)
  V2Configs,  // an entry of a torch-spyre v2 test_suite_config (the case has an upstream_test)
  Traces,     // converted from an op trace (`import-traces`, `run --traces`): the case carries the mark `trace`
  OpInfo,     // a PyTorch OpInfo sample (`import-opinfo`): the case carries the mark `opinfo`
};
constexpr int kCaseSourceCount = 4;
/// The source's name in reports: "manifests", "v2_configs", "traces", "opinfo".
const char* case_source_name(CaseSource s);
/// Which source a case came from: the mark `opinfo` first, then the mark `trace`, then a v2 entry, else a manifest.
CaseSource case_source(const CaseRecord& rec);

/// Occurrences per source, indexed by CaseSource.
using SourceCounts = std::array<std::int64_t, kCaseSourceCount>;

/// The occurrences that reached one enabled op: how many, from which sources, and how they fared.
struct EnabledOpTally {
  SourceCounts sources{};  // occurrences by source; they sum to outcomes.total()
  OutcomeCounts outcomes;  // their verdicts (pass_rate is the op's pass rate)
};

/// What the run exercised of the device's enabled ops.
struct EnabledOpCoverage {
  std::int64_t enabled = 0;                // distinct names in RunInfo::enabled_ops
  std::vector<std::string> exercised;      // enabled ops some case resolved to or reached on the device
  std::vector<std::string> untouched;      // enabled ops no case resolved to or reached
  std::optional<double> percent;           // 100 * exercised / enabled; empty when enabled_ops is empty
  /// Each exercised op (keyed as enabled_ops spells it): the occurrences that reached it. An occurrence reaches an
  /// enabled op when the op is one the case resolved to or one in its device_ops (the same rule as `exercised`), so
  /// one occurrence counts for every enabled op it reached (_copy_from, which every transfer uses, included).
  std::map<std::string, EnabledOpTally> per_op;
};

/// Time summed over the occurrences that ran (deduplicated ones did not run and add nothing).
struct TimeStats {
  double materialize_ms = 0, reference_ms = 0, device_ms = 0, compare_ms = 0, compile_ms = 0;
  double golden_ms = 0;  // the float64 results the judge needed (exec/compare.h)
  std::vector<std::size_t> slowest;        // indices into RunReport::cases, slowest first, at most 20
  std::optional<double> speedup_geomean;   // geometric mean of reference_ms / device_ms over cases with both > 0
  std::int64_t speedup_cases = 0;
};

/// Where the references of a run with --reference-cache came from (occurrences that ran; `used` false without it).
struct ReferenceCacheStats {
  bool used = false;
  std::int64_t from_cache = 0;     // read from the cache: no reference computed
  std::int64_t computed = 0;       // computed in this run, for whatever reason (not_cacheable ones included)
  std::int64_t not_cacheable = 0;  // computed because the case's reference is never kept
  std::int64_t stored = 0;         // written to the cache
  std::int64_t evicted = 0;        // entries the stores evicted, least recently used first
  std::int64_t rejected = 0;       // entries that failed their check (corrupt, truncated) and were recomputed
  double reference_cache_ms = 0;   // reading and checking entries, storing them and evicting
};

/// Everything the metrics file reports besides the raw cases.
struct RunStats {
  OutcomeCounts totals;
  SourceCounts sources{};  // occurrences by source (case_source)
  std::map<std::string, std::int64_t> stages;  // every stage name, zero counts included
  std::map<std::string, OutcomeCounts> per_model, per_op, per_dtype;
  DedupeStats dedupe;
  ReferenceCacheStats reference_cache;
  std::map<std::string, DedupeStats> dedupe_per_model;
  OpCoverage coverage;
  std::map<std::string, OpCoverage> coverage_per_model;
  std::set<std::string> resolved_ops;          // distinct aten ops the cases resolved to (decompositions split)
  std::set<std::string> device_ops;            // distinct aten ops that reached the device (the cases' device_ops)
  EnabledOpCoverage enabled;
  TimeStats time;
};

/// Total time of one occurrence's run in milliseconds (0 for a deduplicated occurrence).
double case_time_ms(const CaseRecord& rec);

RunStats compute_stats(const RunReport& report);

}  // namespace opcheck
