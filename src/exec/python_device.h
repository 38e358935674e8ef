// Devices registered from Python (--device-import) and compiled device runs (--compile-backend): the settings of
// the Python host, and the check, made once in a short-lived child before any worker starts, that the interpreter
// imports what was asked with the torch opcheck was built against.
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

/// Starts the host in a forked child (never in this process, which forks the workers), which reports what it
/// imported and which ops the PrivateUse1 device has kernels for. False and a user-facing `error` when Python,
/// torch or a module fails to load, the child dies, or its torch is not the libtorch opcheck was built against.
bool probe_python_device(const ExecOptions& opts, PythonHostFacts& facts, std::vector<std::string>& enabled_ops,
                         std::string& error);

}  // namespace opcheck::exec
