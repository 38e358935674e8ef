// `opcheck repro`: a standalone reproduction of one case — the opcheck command that runs it alone, or a PyTorch
// script that builds the same inputs and calls the op on the CPU and on the device.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cli/cli.h"
#include "opcheck/case.h"

namespace CLI {
class App;
}

namespace opcheck::cli {

/// Flags of `repro`.
struct ReproFlags {
  ManifestFlags manifest;
  std::string case_id;      // positional; optional with --bundle
  std::string bundle;       // a bundle folder, or a --save-failures folder holding the case's bundle
  bool python = false;      // print the PyTorch script instead of the opcheck command
  std::string device;       // default: the bundle's device, else auto
  std::string device_lib;   // default: the bundle's, else OPCHECK_DEVICE_LIB
  std::string device_name;  // for the status config's device overrides
  std::vector<std::string> device_imports;  // --device-import: modules that register the device (default: the bundle's)
  std::string compile_backend;              // --compile-backend (default: the bundle's)
  std::string config;       // status config (default: opcheck.yaml in a manifest folder)
};

/// Registers the `repro` subcommand on `app`.
CLI::App* add_repro_command(CLI::App& app, ReproFlags& f);

/// Prints the reproduction on stdout. Exit 0; 4 for an unknown case or bundle; 2 when a manifest does not load.
int cmd_repro(const ReproFlags& f);

/// Where and how the script runs the op on the device under test.
struct ScriptDevice {
  std::string device = "cpu";  // torch device string: cpu, privateuseone:0, cuda:1, ...
  std::string library;         // PrivateUse1 backend to load with torch.ops.load_library; "" = none
  std::vector<std::pair<std::string, std::string>> environment;  // set (if unset) before the library loads
  std::vector<std::string> imports;  // modules imported first: they register the device (--device-import)
  std::string compile_backend;       // the device call runs as torch.compile(backend=...); "" = eager
  std::string python_path;           // opcheck's own Python packages (pyloop), put on sys.path for the imports
};

/// What the script knows about a bundle the case came from.
struct ScriptBundle {
  std::string folder;         // absolute; "" = not from a bundle
  std::string failure;        // "INCORRECT_RESULT: first line of the message", for the docstring
  std::vector<std::size_t> written_slots;  // tensor slots the op writes in place
};

/// The PyTorch script for `c` (Python 3, Debian's python3-torch): inputs as opcheck builds them (the recipes of
/// test/exec_inputs/README.md, or torch.load of `file:` inputs), the op called as the manifest names it on the CPU
/// (float32 where the CPU kernel lacks float16/bfloat16, as opcheck's reference) and on the device, a comparison
/// with the case's comparator, and for a bundle a bit-for-bit check against its saved outputs.
std::string python_repro_script(const Case& c, const ScriptDevice& device, const ScriptBundle& bundle);

/// The Python expression of the callable a manifest op name means (`torch.ops.aten.add.Tensor` for aten::add.Tensor,
/// `operator.getitem` for torch.getitem, ...).
std::string python_op_expression(const std::string& op);

}  // namespace opcheck::cli
