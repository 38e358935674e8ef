// Device adapters: which device the cases run on, and what it supports.
#pragma once

#include <string>
#include <vector>

#include "opcheck/exec_api.h"
#include "exec/pch.h"

namespace opcheck::exec {

/// The device under test, set up and ready: libraries loaded, guard/allocator registered.
struct DeviceSetup {
  at::Device device = at::Device(at::kCPU);
  std::string name;        // name for skip_if/config/reports (--device-name, else the backend's, else device type)
  std::string lib;         // library that was dlopen'ed ("" for none)
  std::string lib_sha256;
  std::vector<std::string> enabled_ops;  // "aten::op.overload" with a kernel for the device's dispatch key
  std::string log_line;    // e.g. "device: loopback (libopcheck_loopback.so, privateuseone:0)"
  std::vector<std::string> python_modules;  // "torch 2.13.0", then each module (or entry point) with its version
  /// Why no case can compile for the device (inductor without a code generator for it), said once in the log line
  /// and given to every case as NOT_SUPPORTED without compiling; "" = compiling is tried.
  std::string compile_unsupported;
  std::string python_device;  // a device registered from Python: as the workers name it ("pyloop:0"); "" = none
};

/// Path of the shared object the exec layer lives in (libopcheck_exec.so, or the test binary when linked
/// statically): the libraries and Python packages opcheck ships are found beside it.
std::string this_library_path();

/// Resolves opts.device (auto | cpu | loopback | privateuseone | registered name | cuda | xpu | mps) and loads
/// the backend library when needed. Returns false and sets `error` (a user-facing message) on failure.
bool setup_device(const ExecOptions& opts, DeviceSetup& out, std::string& error);

/// For a worker that drives one of several devices of the same backend (--devices 0,1,...): points `dev` at
/// index `index` (-1 keeps it) and makes that device current for this thread. False and `error` when the device has
/// no indices (cpu) or not that one. Call it in the worker process, after fork (Engine::prepare_worker does).
bool use_device_index(DeviceSetup& dev, int index, std::string& error);

/// The aten operators ("aten::op.overload", sorted) that have a kernel registered for exactly `key`; a backend's
/// boxed fallback and composite kernels do not count.
std::vector<std::string> ops_with_kernel_for(c10::DispatchKey key);

}  // namespace opcheck::exec
