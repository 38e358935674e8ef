// Flags of `opcheck run`: they fill a RunRequest (runner/run.h), which the runner carries out.
#pragma once

#include <string>
#include <vector>

#include "cli/cli.h"
#include "runner/run.h"

namespace opcheck::cli {

/// What the run flags parse into: the request, plus the flags that are spelled differently from what they ask.
struct RunFlags {
  RunRequest request;
  bool exitfirst = false;           // -x: --maxfail 1
  bool no_groups = false;  // --no-groups: the console without the failure groups
  std::string tb = "auto";          // --tb: auto, short, long or no failures section
  std::string report_chars = "fE";  // -r: pytest's short summary chars
  std::vector<std::string> traces;  // --traces: op-trace files to convert and run
  bool no_isolation = false;        // --no-isolation
};

}  // namespace opcheck::cli
