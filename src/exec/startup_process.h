// A Python device's start-up process: forked once per run before any worker, it starts the interpreter and imports
// torch and the device modules (never initialising the device), reports what they registered (the run's device
// probe), then forks every worker on request, the first ones and those replacing a crashed or timed-out one. Each
// worker inherits the imported interpreter and initialises the device itself. The process that asks never loads
// libpython.
#pragma once

#include <string>
#include <vector>

#include "exec/python_host.h"
#include "opcheck/exec_api.h"

namespace opcheck::exec {

/// Forks the start-up process (once per process) and waits for its report: the interpreter's facts and the ops the
/// PrivateUse1 device has kernels for. It is stopped (SIGKILL, reaped) and false returned with a user-facing
/// `error` when it fails, dies, overruns opts.start_timeout_s (naming the import it was in) or *opts.stop_requested
/// turns true. Called in the start-up process itself, answers from its own interpreter.
bool start_startup_process(const ExecOptions& opts, PythonHostFacts& facts, std::vector<std::string>& enabled_ops,
                           std::string& error);

/// Whether a start-up process is serving this process.
bool startup_process_running();

/// Ends the start-up process (a run whose workers need no Python after all).
void stop_startup_process();

/// Asks the start-up process for a worker that runs entry(its executor, channels); the worker becomes this
/// process's child. Its pid, or -1 and `error`.
int start_worker_from_startup(WorkerEntry entry, const WorkerChannels& channels, std::string& error);

}  // namespace opcheck::exec
