// Executing a plan: evaluates each occurrence's skip/xfail conditions and triage, runs the plan's unique cases once
// each, and fans every result out to the occurrences of its case as their records.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "config/status_config.h"
#include "opcheck/case.h"
#include "opcheck/report.h"
#include "plan/plan.h"

namespace opcheck {

/// Executes a batch of cases, reporting each result (in any order) through `done(index_in_batch, result)`.
/// `stop()` returning true asks it to finish early (cases not started get no result).
using BatchRunner = std::function<void(const std::vector<const Case*>& batch,
                                       const std::function<void(std::size_t, Result)>& done,
                                       const std::function<bool()>& stop)>;

/// What the status config says about one occurrence (Unset when no rule says), and why.
struct Triage {
  TriageStatus status = TriageStatus::Unset;
  std::string reason;
  bool strict = true;  // an xfail whose pass (XPASS) fails the run (`strict: false` in the config: it does not)
};

/// What decides the occurrences' verdicts besides their results, and when execution stops.
struct PlanExecutionOptions {
  std::function<Triage(const Case&)> triage;  // none = no status config
  std::string device_name;     // what skip_if/xfail_if see as `device`
  RunPolicy policy;            // what the run forgives; decides which occurrences count toward --maxfail
  std::size_t maxfail = 0;     // stop after this many occurrences that fail the run; 0 = never
  double deadline_s = 0;       // stop starting new cases after this many seconds; 0 = none
  const volatile bool* interrupted = nullptr;  // set by a signal handler
};

/// Called for every finished occurrence (for console progress and the journal).
using RecordSink = std::function<void(const CaseRecord&)>;

/// Runs the plan's unique cases through `runner` and puts one CaseRecord per occurrence that got a verdict into
/// `report.cases`, in selection order. `report.info.interrupted` is set when it stopped early.
void execute_plan(const Plan& plan, const PlanExecutionOptions& opts, const BatchRunner& runner, RunReport& report,
                  const RecordSink& sink = {});

/// Puts the load stage's problems into the report: every error becomes an ERROR record (stage INVALID_CASE, its
/// file:line, the model of its manifest; one record per rejected case, holding all its problems), counted like any
/// other case; every warning is listed in `report.info.warnings`, not counted.
void add_load_problems(const DiagnosticList& diagnostics, const ManifestSet& set, RunReport& report);

/// The outcome of an occurrence from the stage of its result and whether the case is expected to fail.
Outcome decide_outcome(Stage stage, bool expected_failure);

/// A CaseRecord for `c` with everything but the result filled in. `signature` is input_signature(c) (the same for
/// every occurrence of a unique case, so callers compute it once per unique case).
CaseRecord record_for(const Case& c, const std::string& key, const std::string& signature);

}  // namespace opcheck
