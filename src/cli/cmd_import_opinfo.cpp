// `opcheck import-opinfo -o DIR`: PyTorch's OpInfo samples as manifests. The Python of the torch opcheck was built
// against draws and writes them (src/opinfo/import_opinfo.py, carried in the binary); the import then loads every
// manifest written, resolves and binds every case as a run would, takes out the cases opcheck cannot call (each listed
// with its reason), and prints the summary. The passes live in src/opinfo/opinfo_import; this file defines the flags
// and prints.

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/exec_library.h"
#include "opinfo/opinfo_import.h"

namespace opcheck::cli {
namespace {

struct OpinfoFlags {
  opinfo::ImportRequest request;
  bool json = false;  // --json: the summary as one JSON object
};

int cmd_import_opinfo(const OpinfoFlags& flags) {
  opinfo::ImportRequest q = flags.request;
  q.python_dirs = library_dirs();
  // The exec layer loads while the importer imports torch; it answers which op names opcheck cannot resolve.
  ExecLibrary exec_library;
  q.make_cpu_executor = [&exec_library](std::string& error) {
    ExecOptions opts;
    opts.device = "cpu";
    bool setup_failed = false;
    return exec_library.create(opts, error, setup_failed);
  };
  const opinfo::ImportResult r = opinfo::import_opinfo(q);
  if (r.exit_code != kOk && r.exit_code != kNoTests) {
    std::cerr << r.error;
    return r.exit_code;
  }
  if (flags.json) {
    nlohmann::json s = r.report["counts"];
    s["output"] = q.out_dir;
    s["seconds"] = r.seconds;
    s["summary"] = r.summary;
    std::cout << s.dump() << "\n";
  } else {
    std::cout << r.summary << "\n";
    std::cout << "wrote " << q.out_dir << "/ (opinfo_*.yaml, tensors/, opcheck.yaml, markers.yaml); not written: "
              << q.out_dir << "/opinfo-not-written.txt\n";
  }
  return r.exit_code;
}

}  // namespace

void add_import_opinfo_command(CLI::App& app, Commands& commands) {
  auto flags = std::make_shared<OpinfoFlags>();
  opinfo::ImportRequest& f = flags->request;
  auto* cmd = app.add_subcommand("import-opinfo",
                                 "Write PyTorch's OpInfo samples (torch.testing._internal op_db) as manifests: one case "
                                 "per sample and dtype (or per ATen call it makes), inputs bit for bit");
  cmd->footer(
      "Runs in the Python of the torch opcheck was built against (OPCHECK_PYTHON, else the active virtual "
      "environment), which needs NumPy and expecttest (scripts/requirements-test.txt). Writes DIR/opinfo_<entry>.yaml, "
      "DIR/tensors/*.safetensors, DIR/opcheck.yaml (OpInfo's CPU skips and xfails as a status config), "
      "DIR/markers.yaml and DIR/opinfo-report.json (every sample not written, with its reason). Exit 0 when cases "
      "were written, 5 when none could be, 4 on a usage error. docs/opinfo.md.\n"
      "Example: opcheck import-opinfo --ops add,nn.functional.relu --dtypes fp32,fp16 -o opinfo\n"
      "         opcheck run --manifests opinfo --device loopback -m \"opinfo and dtype__float16\"");
  cmd->add_option("-o,--output", f.out_dir, "Folder to write the manifests to")->required()->type_name("DIR");
  cmd->add_option("--ops", f.ops, "OpInfo names (add, nn.functional.relu, max.binary) or ATen ops (aten::add), "
                                  "globs allowed; default: every entry")
      ->delimiter(',')
      ->type_name("NAME,...");
  cmd->add_option("--dtypes", f.dtypes,
                  "Dtypes to draw samples at (fp32,fp16,bf16,...); default: the floating and integer dtypes each op "
                  "supports on the CPU")
      ->delimiter(',')
      ->type_name("DTYPE,...");
  cmd->add_option("--config", f.config,
                  "A torch-spyre v2 test_suite_config: its global.supported_ops pick the ops and dtypes, and the "
                  "precision of an op's dtype (else of global.supported_dtypes) is the cases' atol/rtol")
      ->type_name("FILE");
  cmd->add_flag("--device-ops", f.device_ops,
                "Only ops whose samples reach an ATen op the device under test has its own kernel for (the enabled ops "
                "of coverage); needs --device-import or --device-lib");
  cmd->add_flag("--no-bind-check", f.no_bind_check,
                "Run nothing on the cases written: no check that each binds, and every OpInfo skip and xfail applies "
                "unchecked (faster; docs/opinfo.md)");
  cmd->add_option("--device-import", f.device_imports, "Python module that registers the device (repeatable)")
      ->type_name("MODULE");
  cmd->add_option("--device-lib", f.device_libs, "Library that registers the device, loaded with torch.ops.load_library")
      ->type_name("LIB");
  cmd->add_option("-j,--jobs", f.jobs, "Processes drawing samples (default: 2, or 1 on one core)")
      ->type_name("N")
      ->check(whole_number("-j", 1));
  cmd->add_flag("-q,--quiet", f.quiet, "No progress lines (op n of N), only the summary");
  cmd->add_flag("--json", flags->json, "Print the summary as one JSON object (counts, reasons, seconds)");
  commands.add(cmd, [flags] { return cmd_import_opinfo(*flags); });
}

}  // namespace opcheck::cli
