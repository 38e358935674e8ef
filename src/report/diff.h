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

/// Everything `opcheck diff OLD NEW` reports.
struct DiffResult {
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
};

/// Matches cases by id. Throws ReportError when one run holds an id twice.
DiffResult diff_reports(const RunReport& old_run, const RunReport& new_run);

/// Human-readable report: a headline, then one section per non-empty category and the pass-rate changes.
/// Runs of different case sets are said first, with the counts on each side, and with a Fix unless
/// `allow_different_cases`.
std::string render_diff(const DiffResult& diff, bool allow_different_cases = false);

/// `opcheck diff`'s exit status: 2 when the runs hold different case sets (unless `allow_different_cases`), else 1
/// when there is any regression (including stage changes), else 0.
int diff_exit_code(const DiffResult& diff, bool allow_different_cases = false);

}  // namespace opcheck
