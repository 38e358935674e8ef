// Comparing two runs case by case: what broke, what got fixed, what appeared or went away.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "opcheck/report.h"
#include "report/failure_groups.h"
#include "report/stats.h"

namespace opcheck {

/// One case whose verdict differs between the two runs (or that exists in only one).
struct CaseChange {
  std::string id;
  std::optional<Outcome> old_outcome, new_outcome;  // empty for added / removed
  std::optional<Stage> old_stage, new_stage;
  std::string message;  // first line of the newer message (the old one for removed cases)
};

/// A pass rate before and after, for one model or op (or the whole run).
struct PassRateDelta {
  std::string name;
  OutcomeCounts old_counts, new_counts;
  std::optional<double> old_rate, new_rate;
  std::optional<double> delta() const;  // new - old, when both exist
};

/// One fact about the device under test that differs between the two runs. A change of device (its type or name)
/// means the runs checked different devices, so their verdicts do not compare; any other is a note.
struct DeviceChange {
  std::string what;  // "device", "backend version", "device library digest", "libtorch version"
  std::string old_value, new_value;
  bool other_device = false;  // the device's type or name: the runs checked different devices
};

/// What `opcheck diff` (and `run --baseline`) compares anyway when asked.
struct DiffAllowed {
  bool different_cases = false;  // --allow-different-cases
  bool device_change = false;    // --allow-device-change
};

/// Everything `opcheck diff OLD NEW` reports.
struct DiffResult {
  std::vector<DeviceChange> device_changes;  // the device first, then the notes

  std::vector<CaseChange> regressions;    // passed/xpassed/xfailed/skipped -> failed/error
  std::vector<CaseChange> stage_changes;  // failing in both runs but at another stage (also regressions)
  std::vector<CaseChange> fixed;          // failed/error/xfailed -> passed/xpassed
  std::vector<CaseChange> added, removed;
  std::vector<CaseChange> other;          // every other outcome change, e.g. passed -> skipped
  PassRateDelta overall;
  std::vector<PassRateDelta> per_model, per_op;  // sorted by name, every model/op of either run
  std::vector<FailureGroup> new_groups;   // root causes in the newer run only (its groups, largest first)
  std::vector<FailureGroup> gone_groups;  // root causes in the older run only (its groups, largest first)
  std::size_t old_cases = 0, new_cases = 0;

  bool has_regressions() const { return !regressions.empty() || !stage_changes.empty(); }
  /// The runs hold different case sets (added or removed cases): their pass rates compare different cases.
  bool different_cases() const { return !added.empty() || !removed.empty(); }
  /// The runs checked different devices (another device type or name).
  bool different_device() const;
};

/// Matches cases by id. Throws ReportError when one run holds an id twice.
DiffResult diff_reports(const RunReport& old_run, const RunReport& new_run);

/// Human-readable report: a headline, then one section per non-empty category and the pass-rate changes.
/// A change of device is said first, naming both (with a Fix unless `allowed.device_change`), then the notes (another
/// backend version, device library digest or libtorch version), then runs of different case sets, with the counts on
/// each side (with a Fix unless `allowed.different_cases`).
std::string render_diff(const DiffResult& diff, const DiffAllowed& allowed = {});

/// `opcheck diff`'s exit status: 2 when the runs checked different devices or hold different case sets (unless
/// allowed), else 1 when there is any regression (including stage changes), else 0.
int diff_exit_code(const DiffResult& diff, const DiffAllowed& allowed = {});

}  // namespace opcheck
