// What a run writes, checked against what it reads before anything runs: no report, journal or cache replaces a
// manifest, a tensor file or another output (report/outputs.h: path_clashes).
#pragma once

#include <string>
#include <vector>

#include "runner/run.h"

namespace opcheck {

/// The run's outputs (its reports, --junit-dir's file of every model, --results-cache, the journal and the lock in
/// --artifact-dir), its inputs (every manifest it loaded or could not, the --manifests files, the status config, the
/// tensor and size files of every loaded case, --baseline, --durations-from) and the failure bundles' folders of the
/// selected `cases` (--save-failures): one message per clash, naming both.
std::vector<std::string> run_path_clashes(const RunRequest& r, const Loaded& loaded,
                                          const std::vector<const Case*>& cases, const std::string& config_path,
                                          const std::string& journal_path);

}  // namespace opcheck
