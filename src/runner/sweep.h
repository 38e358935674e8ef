// `opcheck sweep`: one case's call across dtypes, layouts and shapes around it (runner/call_variants.h), each variant
// run isolated as `run` runs a case and reported as one (JUnit, metrics), with a table of verdicts, one row per
// variant, so a team sees where failing starts and stops ("fails only for bf16 with a storage offset").
#pragma once

#include <cstddef>

#include "report/outputs.h"
#include "runner/call_variants.h"
#include "runner/case_probe.h"

namespace opcheck {

/// Variants a sweep runs at most (docs/triage.md, "Shrinking a failure and sweeping a case").
inline constexpr std::size_t kDefaultSweepVariants = 48;

struct SweepRequest {
  ProbeRequest probe;
  ReportFiles reports;  // the report formats sweep takes (kSweepCommand)
  std::size_t max_variants = kDefaultSweepVariants;
  bool color = false;
};

/// Runs the sweep and prints the table; returns run's exit code (1 when a variant fails, 2 when interrupted, 3 when
/// a report could not be written, 4 for a usage error).
int sweep_request(SweepRequest request, RunHost& host);

/// The table of verdicts: one row per record (dtype, layout, shape, verdict, the message's first line, shortened).
std::string sweep_table(const std::vector<SweepVariant>& variants, const std::vector<CaseRecord>& records);

}  // namespace opcheck
