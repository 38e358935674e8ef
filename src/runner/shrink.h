// `opcheck shrink`: the smallest call that still fails the way a case fails (the same failure_signature), found by
// greedy passes of one-step simplifications (runner/call_variants.h), each candidate run isolated as `run` runs a
// case, within a budget of steps and seconds. Writes the minimal call as a manifest and a PyTorch repro script.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runner/case_probe.h"

namespace opcheck {

/// Budgets that bound a shrink (docs/triage.md, "Shrinking a failure and sweeping a case").
inline constexpr int kDefaultShrinkSteps = 200;
inline constexpr double kDefaultShrinkSeconds = 300;

/// Budgets of `run --shrink`, per failure group.
inline constexpr int kRunShrinkSteps = 100;
inline constexpr double kRunShrinkSeconds = 60;

/// Runs calls as `run` runs cases (run_calls): one record per call that got a verdict, `index` its position; none
/// starts after `deadline_s` seconds.
using CallRunner = std::function<std::vector<CaseRecord>(const std::vector<Case>& calls, double deadline_s)>;

/// One simplification kept: the edit and the call's input elements after it.
struct ShrinkStep {
  std::string edit;
  std::int64_t elements = 0;
};

/// What a search found.
struct ShrinkOutcome {
  Case minimal;               // the original when nothing smaller fails the same way
  CaseRecord record;          // the minimal call's verdict
  std::string signature;      // the failure signature every kept call has
  std::vector<ShrinkStep> kept;
  int tried = 0;              // candidate calls run
  std::string stopped_by;     // "" (nothing smaller fails the same way), "steps", "time" or "signal"
};

/// Greedy passes of shrink_steps (runner/call_variants.h) from `failing`, whose record is `record` (its signature not
/// empty): each pass runs candidates smallest first in batches of `batch` and keeps the smallest of the first batch
/// that fails with the same failure_signature, until a pass keeps none or `steps` calls ran or `seconds` passed.
ShrinkOutcome shrink_call(const Case& failing, const CaseRecord& record, const CallRunner& run, int steps,
                          double seconds, std::size_t batch);

struct ShrinkRequest {
  ProbeRequest probe;
  std::string out_dir;                     // -o DIR: minimal.yaml, repro.py and shrink.json go here
  int budget_steps = kDefaultShrinkSteps;  // candidate calls run at most
  double budget_s = kDefaultShrinkSeconds;  // no candidate starts after this long
  std::vector<std::string> library_dirs;    // where opcheck's libraries are (the repro script's device)
};

/// Runs the shrink; returns 0 when it wrote a smaller failing call or the original is already minimal, 1 when the
/// case does not fail, 2 when interrupted before the case's own verdict, 3 when a file could not be written, 4 for
/// a usage error.
int shrink_request(ShrinkRequest request, RunHost& host);

}  // namespace opcheck
