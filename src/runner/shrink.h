// `opcheck shrink`: the smallest call that still fails the way a case fails (the same failure_signature), found by
// greedy passes of one-step simplifications (runner/call_variants.h), each candidate run isolated as `run` runs a
// case, within a budget of steps and seconds. Writes the minimal call as a manifest and a PyTorch repro script.
#pragma once

#include <string>
#include <vector>

#include "runner/case_probe.h"

namespace opcheck {

/// Budgets that bound a shrink (README, "Shrinking a failure").
inline constexpr int kDefaultShrinkSteps = 200;
inline constexpr double kDefaultShrinkSeconds = 300;

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
