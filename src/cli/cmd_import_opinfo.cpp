// `opcheck import-opinfo -o DIR`: PyTorch's OpInfo samples as manifests. The Python of the torch opcheck was built
// against draws and writes them (src/opinfo/import_opinfo.py, carried in the binary); this side then loads every
// manifest written, resolves and binds every case as a run would, takes out the cases opcheck cannot call (each listed
// with its reason), and prints the summary.

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/exec_library.h"
#include "common/opened_files.h"
#include "common/text_escape.h"
#include "opinfo/expectation_check.h"
#include "opinfo/importer_process.h"
#include "opinfo/opinfo_assets.h"
#include "opinfo/opinfo_report.h"
#include "runner/op_check.h"
#include "settings/device_choice.h"

namespace fs = std::filesystem;

namespace opcheck::cli {
namespace {

using opinfo::drop_blocks;
using opinfo::recount;
using opinfo::summary_line;

struct OpinfoFlags {
  std::string out_dir;
  std::vector<std::string> ops;
  std::vector<std::string> dtypes;
  std::string config;
  bool device_ops = false;
  std::vector<std::string> device_imports;
  std::vector<std::string> device_libs;
  int jobs = 0;
  bool quiet = false;
  bool json = false;
  bool no_bind_check = false;
};

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

/// Runs the importer under `python`, with opcheck's Python packages (pyloop) on its path; returns its exit status.
int run_importer(const std::string& python, const OpinfoFlags& f, const opinfo::UnknownNames& unknown,
                 const std::string& as_calls) {
  std::vector<std::string> args{python, "-c", opinfo_importer_program(), "-o", f.out_dir};
  if (!as_calls.empty()) args.insert(args.end(), {"--as-calls", as_calls});
  if (!f.ops.empty()) args.insert(args.end(), {"--ops", joined(f.ops)});
  if (!f.dtypes.empty()) args.insert(args.end(), {"--dtypes", joined(f.dtypes)});
  if (!f.config.empty()) args.insert(args.end(), {"--config", f.config});
  if (f.device_ops) args.emplace_back("--device-ops");
  for (const auto& m : f.device_imports) args.insert(args.end(), {"--device-import", m});
  for (const auto& l : f.device_libs) args.insert(args.end(), {"--device-lib", l});
  if (f.jobs > 0) args.insert(args.end(), {"-j", std::to_string(f.jobs)});
  if (f.quiet) args.emplace_back("--quiet");
  std::string pythonpath;
  for (const auto& dir : library_dirs()) {
    std::error_code ec;
    if (fs::is_directory(fs::path(dir) / "python", ec)) pythonpath += (fs::path(dir) / "python").string() + ":";
  }
  if (const char* old = std::getenv("PYTHONPATH")) pythonpath += old;
  std::cout.flush();
  return opinfo::run_importer_process(args, pythonpath, unknown);
}

/// The cases whose op opcheck cannot resolve or whose arguments do not bind: taken out of the manifests, listed in
/// the report as `unbound_call`. Returns false when the exec layer could not be set up.
bool drop_unbound_cases(ExecLibrary& exec_library, const std::vector<std::string>& manifests, const fs::path& dir,
                        nlohmann::json& report, nlohmann::json& whole_unbound) {
  ManifestSet set = load_manifests(manifests);
  if (set.diagnostics.has_errors()) {
    print_diagnostics(set.diagnostics);
    std::cerr << "opcheck: internal error: the OpInfo manifests do not load\n";
    return false;
  }
  ExecOptions opts;
  opts.device = "cpu";
  std::string error;
  bool setup_failed = false;
  std::unique_ptr<Executor> ex = exec_library.create(opts, error, setup_failed);
  if (!ex) {
    std::cerr << "opcheck: error: import-opinfo: " << error << "\n";
    return false;
  }
  std::vector<const Case*> all;
  for (const auto& m : set.manifests)
    for (const auto& c : m.cases) all.push_back(&c);
  DiagnosticList unbound;
  check_case_ops(*ex, all, unbound);
  std::vector<opinfo::UnboundCase> cases;
  for (const auto& d : unbound.items)
    if (!d.case_id.empty()) cases.push_back({d.case_id, d.loc.file, d.message});
  opinfo::drop_unbound(cases, dir, report, whole_unbound);
  return true;
}

int cmd_import_opinfo(const OpinfoFlags& f) {
  if (f.device_ops && f.device_imports.empty() && f.device_libs.empty()) {
    std::cerr << "opcheck: error: --device-ops needs the device under test\n  Fix: add --device-import MODULE (a "
                 "Python device such as opcheck_pyloop) or --device-lib LIB\n";
    return kUsageError;
  }
  // The folder is made here, where a file in its place (or in a parent's) is a usage error naming the flag, not a
  // Python traceback from the importer.
  {
    std::error_code ec;
    if (fs::exists(f.out_dir, ec) && !fs::is_directory(f.out_dir, ec)) {
      std::cerr << "opcheck: error: import-opinfo -o " << printable_text(f.out_dir)
                << ": is a file, not a folder\n  Fix: name a folder for the manifests (it is created if missing)\n";
      return kUsageError;
    }
    fs::create_directories(fs::path(f.out_dir) / "tensors", ec);
    if (ec) {
      std::cerr << "opcheck: error: import-opinfo -o " << printable_text(f.out_dir)
                << ": cannot create the folder: " << ec.message()
                << "\n  Fix: name a folder that can be created and written (no file in its path)\n";
      return kUsageError;
    }
  }
  const char* configured = std::getenv("OPCHECK_PYTHON");
  const std::string python = hosting_python(configured != nullptr ? configured : "");
  // The exec layer loads while the importer imports torch; it answers which op names opcheck cannot resolve.
  ExecLibrary exec_library;
  std::unique_ptr<Executor> resolver;
  opinfo::UnknownNames unknown;
  if (!f.no_bind_check) {
    unknown = [&](const std::vector<std::string>& names) {
      std::vector<std::string> out;
      if (!resolver) {
        ExecOptions opts;
        opts.device = "cpu";
        std::string error;
        bool setup_failed = false;
        resolver = exec_library.create(opts, error, setup_failed);
        if (!resolver) return out;  // the bind check after the import reports it
      }
      return unresolved_op_names(*resolver, names);
    };
  }
  const fs::path dir = f.out_dir;
  nlohmann::json report;
  // Pass 1 writes every sample as its call; the samples whose call does not bind (a Python function's keywords
  // opcheck does not map) are then written by pass 2 as the ATen calls they make, from the same draws.
  for (int pass = 1; pass <= 2; ++pass) {
    const fs::path as_calls = dir / ".opinfo-as-calls.json";
    OpinfoFlags flags = f;
    flags.quiet = f.quiet || pass == 2;  // pass 2 draws the same entries again: their progress was shown
    const int rc = run_importer(python, flags, unknown, pass == 2 ? as_calls.string() : "");
    if (pass == 2) fs::remove(as_calls);
    if (rc == kUsageError) return kUsageError;
    if (rc != 0) {
      std::cerr << "opcheck: error: the OpInfo importer under " << python << " exited with status " << rc << "\n";
      return kInternalError;
    }
    try {
      std::ifstream in(dir / "opinfo-report.json");
      report = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      std::cerr << "opcheck: internal error: " << (dir / "opinfo-report.json").string() << ": " << e.what() << "\n";
      return kInternalError;
    }
    std::vector<std::string> manifests;
    for (const auto& e : report["entries"]) {
      const fs::path p = dir / (e["model"].get<std::string>() + ".yaml");
      if (fs::exists(p)) manifests.push_back(p.string());
    }
    std::sort(manifests.begin(), manifests.end());
    if (manifests.empty() || f.no_bind_check) break;
    nlohmann::json whole_unbound = nlohmann::json::object();
    if (!drop_unbound_cases(exec_library, manifests, dir, report, whole_unbound)) return kInternalError;
    if (pass == 2 || whole_unbound.empty()) break;
    // Pass 2 writes every file again: pass 1's manifests and tensor files go first, so none is left over.
    for (const auto& e : report["entries"]) {
      const std::string model = e["model"].get<std::string>();
      fs::remove(dir / (model + ".yaml"));
      for (const auto& d : e["dtypes"]) fs::remove(dir / "tensors" / (model + "." + d.get<std::string>() + ".safetensors"));
    }
    std::ofstream(as_calls) << whole_unbound.dump() << "\n";
    close_opened_files();  // pass 1's tensor files are gone; pass 2's are opened afresh
    std::size_t n = 0;
    for (const auto& [entry, dtypes] : whole_unbound.items())
      for (const auto& [dtype, samples] : dtypes.items()) n += samples.size();
    if (!f.quiet)
      std::cerr << "opinfo: " << n << " sample" << (n == 1 ? "" : "s") << " of " << whole_unbound.size()
                << " entr" << (whole_unbound.size() == 1 ? "y" : "ies")
                << " whose call opcheck cannot bind: drawing again to write them as the ATen calls they make\n";
  }
  // OpInfo's skips and xfails apply only where their failure happens in opcheck's own check (expectation_check.h).
  if (f.no_bind_check) {
    opinfo::leave_expectations_unchecked(report, "--no-bind-check");
  } else {
    opinfo::check_expectations(
        [&](std::string& error) {
          ExecOptions opts;
          opts.device = "cpu";
          bool setup_failed = false;
          return exec_library.create(opts, error, setup_failed);
        },
        dir, report, f.jobs);
  }
  recount(report);
  std::sort(report["not_written"].begin(), report["not_written"].end(), [](const auto& a, const auto& b) {
    return std::make_tuple(a["entry"].template get<std::string>(), a["dtype"].template get<std::string>(),
                           a["sample"].is_null() ? -1 : a["sample"].template get<int>()) <
           std::make_tuple(b["entry"].template get<std::string>(), b["dtype"].template get<std::string>(),
                           b["sample"].is_null() ? -1 : b["sample"].template get<int>());
  });
  // Timings go to the summary only: two imports of the same samples write the same bytes.
  const nlohmann::json seconds = report.value("seconds", nlohmann::json::object());
  report.erase("seconds");
  std::ofstream(dir / "opinfo-report.json") << report.dump(1) << "\n";
  // The list of what was not written, one line each, for people (the JSON holds the same).
  {
    std::ofstream txt(dir / "opinfo-not-written.txt");
    for (const auto& x : report["not_written"])
      txt << x["entry"].get<std::string>() << " " << x["dtype"].get<std::string>() << " sample "
          << (x["sample"].is_null() ? std::string("-") : std::to_string(x["sample"].get<int>())) << ": "
          << x["reason"].get<std::string>() << ": " << x["detail"].get<std::string>() << "\n";
  }
  const std::string line = summary_line(report);
  if (f.json) {
    nlohmann::json s = report["counts"];
    s["output"] = f.out_dir;
    s["seconds"] = seconds;
    s["summary"] = line;
    std::cout << s.dump() << "\n";
  } else {
    std::cout << line << "\n";
    std::cout << "wrote " << f.out_dir << "/ (opinfo_*.yaml, tensors/, opcheck.yaml, markers.yaml); not written: "
              << f.out_dir << "/opinfo-not-written.txt\n";
  }
  return report["counts"]["written"].get<long>() > 0 ? kOk : kNoTests;
}

}  // namespace

void add_import_opinfo_command(CLI::App& app, Commands& commands) {
  auto flags = std::make_shared<OpinfoFlags>();
  OpinfoFlags& f = *flags;
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
  cmd->add_option("--device-import", f.device_imports, "Python module that registers the device (repeatable)")
      ->type_name("MODULE");
  cmd->add_option("--device-lib", f.device_libs, "Library that registers the device, loaded with torch.ops.load_library")
      ->type_name("LIB");
  cmd->add_option("-j,--jobs", f.jobs, "Processes drawing samples (default: 2, or 1 on one core)")
      ->type_name("N")
      ->check(whole_number("-j", 1));
  cmd->add_flag("-q,--quiet", f.quiet, "No progress lines (op n of N), only the summary");
  cmd->add_flag("--json", f.json, "Print the summary as one JSON object (counts, reasons, seconds)");
  commands.add(cmd, [flags] { return cmd_import_opinfo(*flags); });
}

}  // namespace opcheck::cli
