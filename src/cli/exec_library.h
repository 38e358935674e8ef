// Finding and loading libopcheck_exec.so: only `run` pays for libtorch.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "opcheck/exec_api.h"

namespace opcheck::cli {

/// Loads the exec layer, and with it libtorch (~0.4 s here, the largest fixed cost of a run), on a thread of its
/// own from construction, so the caller loads and plans manifests meanwhile. The thread only maps the libraries
/// and runs their initializers; the Executor is created by create(), on the caller's thread, once no other thread
/// is left (workers are forked from this process).
class ExecLibrary {
 public:
  ExecLibrary();
  ~ExecLibrary();  // waits for the thread
  ExecLibrary(const ExecLibrary&) = delete;
  ExecLibrary& operator=(const ExecLibrary&) = delete;

  /// Waits for the library and creates the Executor. On failure returns nullptr and sets `error`; `setup_failed`
  /// tells a device that could not be set up (the user's flags or backend) from a missing or broken exec layer.
  std::unique_ptr<Executor> create(const ExecOptions& opts, std::string& error, bool& setup_failed);

 private:
  void load();
  std::thread thread_;
  CreateExecutorFn create_ = nullptr;
  std::string error_;
};

}  // namespace opcheck::cli
