// `opcheck repro --python`: the standalone PyTorch script of one case. Text only: no libtorch needed to write it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "opcheck/case.h"

namespace opcheck::repro {

/// Where and how the script runs the op on the device under test.
struct ScriptDevice {
  std::string device = "cpu";  // torch device string: cpu, privateuseone:0, cuda:1, ...
  std::string library;         // PrivateUse1 backend to load with torch.ops.load_library; "" = none
  std::vector<std::pair<std::string, std::string>> environment;  // set (if unset) before the library loads
  std::vector<std::string> imports;  // modules imported first: they register the device (--device-import)
  std::string compile_backend;       // the device call runs as torch.compile(backend=...); "" = eager
  std::string python_path;           // opcheck's own Python packages (pyloop), put on sys.path for the imports
  std::vector<std::string> module_paths;  // the run's PYTHONPATH entries that held the device's modules: sys.path
  std::string python;                     // the run's OPCHECK_PYTHON, the interpreter the script runs under; "" = none
  std::optional<std::string> autoload;    // the run's TORCH_DEVICE_BACKEND_AUTOLOAD, set before torch loads
};

/// What the script knows about a bundle the case came from.
struct ScriptBundle {
  std::string folder;                      // absolute; "" = not from a bundle
  std::string failure;                     // "INCORRECT_RESULT: first line of the message", for the docstring
  std::vector<std::size_t> written_slots;  // tensor slots the op writes in place
};

/// The PyTorch script for `c` (Python 3 with the torch opcheck is built against): inputs as opcheck builds them (the
/// recipes of test/exec_inputs/README.md, or torch.load of `file:` inputs), the op called as the manifest names it on
/// the CPU (float32 where the CPU kernel lacks float16/bfloat16, as opcheck's reference) and on the device, a
/// comparison with the case's comparator, and for a bundle a bit-for-bit check against its saved outputs.
std::string python_repro_script(const Case& c, const ScriptDevice& device, const ScriptBundle& bundle);

/// The Python expression of the callable a manifest op name means (`torch.ops.aten.add.Tensor` for aten::add.Tensor,
/// `operator.getitem` for torch.getitem, ...).
std::string python_op_expression(const std::string& op);

}  // namespace opcheck::repro
