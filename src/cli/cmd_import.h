// `opcheck import-traces` and `opcheck run --traces`: op-trace files -> manifests.
#pragma once

#include <string>
#include <vector>

#include "runner/run.h"

namespace CLI {
class App;
}

namespace opcheck::cli {


/// Flags of `import-traces`.
struct ImportFlags {
  std::vector<std::string> paths;  // trace files or folders
  std::string out_dir;             // -o
  bool quiet = false;              // only the summary, not one line per reported trace line
};

/// Converts the traces, writes DIR/<stem>.yaml, prints every reported line (file:line: reason) and a summary per
/// file, then loads what it wrote as a check. Exit 0 when every line was converted or reported; 2 for input that
/// could not be read or output that could not be written.
int cmd_import_traces(const ImportFlags& f);

/// Adds `--traces PATH...` to the `run` subcommand.
void add_run_traces_flag(CLI::App& run, std::vector<std::string>& traces);

/// For `run --traces`: converts the traces into <artifact dir>/traces/ and adds those manifests to the run (alone
/// when --manifests was not given). Returns -1 to go on with the run, or the exit code to stop with.
int prepare_trace_run(const std::vector<std::string>& traces, RunRequest& f);

}  // namespace opcheck::cli
