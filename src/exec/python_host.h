// The Python device host as the exec layer sees it: an embedded interpreter in a worker process that imports the
// modules registering a device (--device-import) and runs device calls through torch.compile (--compile-backend).
// The implementation lives in libopcheck_pyhost.so (src/pyhost/), the only code linked to libpython; the exec layer
// loads it on demand, so processes that never ask for Python never load libpython.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "exec/binder.h"

namespace opcheck::exec {

/// What the interpreter is started with.
struct PythonHostConfig {
  std::string python;                    // interpreter whose environment (sys.path, site-packages) is used
  std::vector<std::string> imports;      // modules imported after torch, in order
  std::vector<std::string> extra_paths;  // put first on sys.path (opcheck's own Python packages, e.g. pyloop)
  std::string compile_backend;           // torch.compile backend for device calls; "" = eager
  std::string inductor_cache_dir;        // TORCHINDUCTOR_CACHE_DIR unless the environment sets it; "" = default
};

/// What the started interpreter reports about itself.
struct PythonHostFacts {
  std::string python_version;
  std::string torch_version;                           // torch.__version__
  std::string torch_path;                              // the torch package's folder (real path)
  std::map<std::string, std::string> module_versions;  // per import: __version__ or its distribution's version
  std::string privateuse1_name;                        // the PrivateUse1 backend's name after the imports
  /// With --compile-backend inductor: whether inductor has a code generator for that name (torch._inductor's
  /// get_scheduling_for_device). Without one, every compile of a case on that device fails the same way.
  bool privateuse1_inductor_codegen = true;
  /// While PrivateUse1 keeps its name: per import, the torch.backends entry points its distribution declares
  /// ("name = module:attr (distribution version)"), the call that would rename and register it.
  std::map<std::string, std::vector<std::string>> module_entry_points;
  /// Per --device-import MODULE:FUNCTION that is an entry point torch's autoload already called on `import torch`:
  /// that entry point ("name = value"). The host did not call it again (a backend registers itself once).
  std::map<std::string, std::string> autoloaded_imports;
  /// What the imports registered on PrivateUse1 besides kernels (the start-up process asks the dispatcher).
  bool privateuse1_guard = false;
  bool privateuse1_allocator = false;
};

/// An exception Python raised, with its class name and its message (the traceback included, where it helps).
struct PythonError : std::runtime_error {
  PythonError(std::string type_, const std::string& message) : std::runtime_error(message), type(std::move(type_)) {}
  std::string type;
};

/// torch.compile itself failed (tracing or the backend's code generation), as distinct from the compiled code
/// raising when it ran: the stage FAILED_COMPILE.
struct CompileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The interpreter of this process. One per process; never destroyed (Python is not finalized).
class PythonHost {
 public:
  virtual ~PythonHost() = default;
  /// Starts Python (no signal handlers: the worker keeps its own), imports torch and the modules, then releases the
  /// GIL. False and a message (with the Python traceback) when that fails.
  virtual bool start(const PythonHostConfig& config, PythonHostFacts& facts, std::string& error) = 0;

  /// Runs one device call as torch.compile of a module wrapping the op's Python callable (`python_op`, spelled as
  /// common/op_names.h canonical_op gives it: torch.nn.functional.linear, torch.expand, aten::add.Tensor), with this
  /// run's tensors for the
  /// call's slots; a device the arguments name (cuda:0) means `device`. The first call of a case compiles; later
  /// calls of the same case reuse the compiled code. Throws CompileError when compiling failed, PythonError when the
  /// call raised.
  virtual c10::IValue call_compiled(const std::string& python_op, const CallArgs& call,
                                    const std::vector<at::Tensor>& tensors, const at::Device& device) = 0;
  /// Calls `_opcheck_module.FUNCTION(request, tensors)` (module cases, exec/module_case.h): the JSON record it
  /// returns and its tensors. Throws PythonError when the call itself failed (a record says the case's own errors).
  virtual std::pair<std::string, std::vector<at::Tensor>> call_module(const std::string& function,
                                                                      const std::string& request,
                                                                      const std::vector<at::Tensor>& tensors) = 0;
  /// Forgets every compiled graph, so no case's compiled code serves another (torch._dynamo.reset).
  virtual void end_case() = 0;
  /// fork() as Python needs it in a process that hosts an interpreter (the start-up process): its at-fork hooks
  /// (os.register_at_fork), the import lock and the child's interpreter state. The caller has no GIL.
  virtual int fork_process() = 0;
};

/// The process's Python host, loaded (libopcheck_pyhost.so, RTLD_GLOBAL so extension modules find libpython's
/// symbols) and started on first use with `config`. nullptr and `error` when it cannot be.
PythonHost* python_host(const PythonHostConfig& config, PythonHostFacts& facts, std::string& error);

/// The started host of this process, or nullptr.
PythonHost* python_host_if_started();

/// Whether this exec layer was built with a Python host (libopcheck_pyhost.so beside it), and if not, why.
bool python_host_available(std::string& why);

}  // namespace opcheck::exec
