// Devices registered from Python (--device-import) and compiled device runs (--compile-backend): the settings of
// the Python host, and the check, made once in the run's start-up process before any worker starts, that the
// interpreter imports what was asked with the torch opcheck was built against.
#pragma once

#include <string>
#include <vector>

#include "exec/python_host.h"
#include "opcheck/exec_api.h"

namespace opcheck::exec {

/// Whether the run needs a Python host in its workers.
bool wants_python_host(const ExecOptions& opts);

/// The host's settings for this run: the interpreter (ExecOptions::python, else the active virtual environment's,
/// else the one opcheck was built with), the imports, opcheck's own Python packages, the compile backend.
PythonHostConfig python_host_config(const ExecOptions& opts);

/// Starts the host in the run's start-up process (exec/startup_process.h; never in this process, which runs the
/// pool), which reports what it imported and which ops the PrivateUse1 device has kernels for, and later forks the
/// workers. False and a user-facing `error` when Python, torch or a module fails to load, the process dies, overruns
/// --start-timeout or is stopped, or its torch is not the libtorch opcheck was built against.
bool probe_python_device(const ExecOptions& opts, PythonHostFacts& facts, std::vector<std::string>& enabled_ops,
                         std::string& error);

}  // namespace opcheck::exec
