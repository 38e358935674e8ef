// Failure bundles (`opcheck run --save-failures DIR`): per failed or errored case, a folder that reruns it alone.
// The folder's layout (names of its files) is src/repro/bundle_layout.h; the case's manifest text is written by
// the manifest writer (src/manifest/manifest_writer.h). This layer supplies the data: the tensors it saves, the
// outputs, the facts of the run.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "opcheck/case.h"
#include "opcheck/exec_api.h"
#include "opcheck/result.h"

namespace opcheck::exec {

/// The `opcheck run` arguments a bundle records for rerunning its case: the run's settings as
/// settings/run_settings.h derives them (ExecOptions::rerun), e.g. {"--device", "loopback"}.
std::vector<std::string> rerun_device_args(const ExecOptions& opts);

struct CaseEvidence;  // exec/engine.h: the tensors a case produced, recorded as it ran

/// Writes the bundles of one process's failing cases into a folder. Problems writing a bundle are reported on
/// stderr (captured with the case's result) and never change the case's result.
class FailureBundles {
 public:
  /// `dir` is created when missing. `info` names the device for the README.
  FailureBundles(std::string dir, const ExecOptions& opts, const ExecInfo& info);

  /// Before the case runs: its folder with the recipe manifest and a README saying the run did not finish. A
  /// worker that crashes or hangs on the case leaves exactly this behind (the recipe rebuilds the same inputs).
  void stage(const Case& c);
  /// After the case ran: a failed or errored case gets its full bundle (exact inputs, outputs, README, facts);
  /// any other outcome removes the staged folder.
  void finish(const Case& c, const Result& r, const CaseEvidence& ev);

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  ExecOptions opts_;
  ExecInfo info_;
};

}  // namespace opcheck::exec
