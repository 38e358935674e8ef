#include "opinfo/opinfo_import.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <tuple>

#include "common/opened_files.h"
#include "common/text_escape.h"
#include "opcheck/exit_code.h"
#include "opinfo/expectation_check.h"
#include "opinfo/importer_process.h"
#include "opinfo/opinfo_assets.h"
#include "opinfo/opinfo_report.h"
#include "report/console.h"
#include "runner/op_check.h"
#include "settings/device_choice.h"

namespace fs = std::filesystem;

namespace opcheck::opinfo {
namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

ImportResult ended(int exit_code, std::string error) {
  ImportResult r;
  r.exit_code = exit_code;
  r.error = std::move(error);
  return r;
}

/// Runs the importer under `python`, with opcheck's Python packages (pyloop) on its path; returns its exit status.
int run_importer(const std::string& python, const ImportRequest& q, bool quiet, const UnknownNames& unknown,
                 const std::string& as_calls) {
  std::vector<std::string> args{python, "-c", opinfo_importer_program(), "-o", q.out_dir};
  if (!as_calls.empty()) args.insert(args.end(), {"--as-calls", as_calls});
  if (!q.ops.empty()) args.insert(args.end(), {"--ops", joined(q.ops)});
  if (!q.dtypes.empty()) args.insert(args.end(), {"--dtypes", joined(q.dtypes)});
  if (!q.config.empty()) args.insert(args.end(), {"--config", q.config});
  if (q.device_ops) args.emplace_back("--device-ops");
  for (const auto& m : q.device_imports) args.insert(args.end(), {"--device-import", m});
  for (const auto& l : q.device_libs) args.insert(args.end(), {"--device-lib", l});
  if (q.jobs > 0) args.insert(args.end(), {"-j", std::to_string(q.jobs)});
  if (quiet) args.emplace_back("--quiet");
  std::string pythonpath;
  for (const auto& dir : q.python_dirs) {
    std::error_code ec;
    if (fs::is_directory(fs::path(dir) / "python", ec)) pythonpath += (fs::path(dir) / "python").string() + ":";
  }
  if (const char* old = std::getenv("PYTHONPATH")) pythonpath += old;
  std::cout.flush();
  return run_importer_process(args, pythonpath, unknown);
}

/// The cases whose op opcheck cannot resolve or whose arguments do not bind: taken out of the manifests, listed in
/// the report as `unbound_call`. Returns the error when the manifests do not load or the exec layer cannot be set up.
std::string drop_unbound_cases(const ImportRequest& q, const std::vector<std::string>& manifests, const fs::path& dir,
                               nlohmann::json& report, nlohmann::json& whole_unbound) {
  ManifestSet set = load_manifests(manifests);
  if (set.diagnostics.has_errors())
    return diagnostics_text(set.diagnostics) + "opcheck: internal error: the OpInfo manifests do not load\n";
  std::string error;
  std::unique_ptr<Executor> ex = q.make_cpu_executor(error);
  if (!ex) return "opcheck: error: import-opinfo: " + error + "\n";
  std::vector<const Case*> all;
  for (const auto& m : set.manifests)
    for (const auto& c : m.cases) all.push_back(&c);
  DiagnosticList unbound;
  check_case_ops(*ex, all, unbound);
  std::vector<UnboundCase> cases;
  for (const auto& d : unbound.items)
    if (!d.case_id.empty()) cases.push_back({d.case_id, d.loc.file, d.message});
  drop_unbound(cases, dir, report, whole_unbound);
  return {};
}

/// Makes the output folder, where a file in its place (or in a parent's) is a usage error naming the flag, not a
/// Python traceback from the importer. Returns the error, "" when the folder is there.
std::string make_output_folder(const std::string& out_dir) {
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !fs::is_directory(out_dir, ec))
    return "opcheck: error: import-opinfo -o " + printable_text(out_dir) +
           ": is a file, not a folder\n  Fix: name a folder for the manifests (it is created if missing)\n";
  fs::create_directories(fs::path(out_dir) / "tensors", ec);
  if (ec)
    return "opcheck: error: import-opinfo -o " + printable_text(out_dir) + ": cannot create the folder: " +
           ec.message() + "\n  Fix: name a folder that can be created and written (no file in its path)\n";
  return {};
}

/// Pass 2 writes every file again: pass 1's manifests and tensor files go first, so none is left over; then the
/// samples to write as their ATen calls go to `as_calls`.
void prepare_second_pass(const fs::path& dir, const nlohmann::json& report, const nlohmann::json& whole_unbound,
                         const fs::path& as_calls, bool quiet) {
  for (const auto& e : report["entries"]) {
    const std::string model = e["model"].get<std::string>();
    fs::remove(dir / (model + ".yaml"));
    for (const auto& d : e["dtypes"])
      fs::remove(dir / "tensors" / (model + "." + d.get<std::string>() + ".safetensors"));
  }
  std::ofstream(as_calls) << whole_unbound.dump() << "\n";
  close_opened_files();  // pass 1's tensor files are gone; pass 2's are opened afresh
  std::size_t n = 0;
  for (const auto& [entry, dtypes] : whole_unbound.items())
    for (const auto& [dtype, samples] : dtypes.items()) n += samples.size();
  if (!quiet)
    std::cerr << "opinfo: " << n << " sample" << (n == 1 ? "" : "s") << " of " << whole_unbound.size() << " entr"
              << (whole_unbound.size() == 1 ? "y" : "ies")
              << " whose call opcheck cannot bind: drawing again to write them as the ATen calls they make\n";
}

/// Both passes of the importer and the bind check after each; `report` is the last pass's report, its unbound cases
/// taken out. Returns the error that ends the import ("" and kOk when it went on).
ImportResult run_passes(const ImportRequest& q, const std::string& python, const UnknownNames& unknown,
                        nlohmann::json& report) {
  const fs::path dir = q.out_dir;
  for (int pass = 1; pass <= 2; ++pass) {
    const fs::path as_calls = dir / ".opinfo-as-calls.json";
    const bool quiet = q.quiet || pass == 2;  // pass 2 draws the same entries again: their progress was shown
    const int rc = run_importer(python, q, quiet, unknown, pass == 2 ? as_calls.string() : "");
    if (pass == 2) fs::remove(as_calls);
    if (rc == kUsageError) return ended(kUsageError, "");  // the importer said why
    if (rc != 0)
      return ended(kInternalError, "opcheck: error: the OpInfo importer under " + python + " exited with status " +
                                        std::to_string(rc) + "\n");
    try {
      std::ifstream in(dir / "opinfo-report.json");
      report = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      return ended(kInternalError,
                    "opcheck: internal error: " + (dir / "opinfo-report.json").string() + ": " + e.what() + "\n");
    }
    std::vector<std::string> manifests;
    for (const auto& e : report["entries"]) {
      const fs::path p = dir / (e["model"].get<std::string>() + ".yaml");
      if (fs::exists(p)) manifests.push_back(p.string());
    }
    std::sort(manifests.begin(), manifests.end());
    if (manifests.empty() || q.no_bind_check) break;
    nlohmann::json whole_unbound = nlohmann::json::object();
    if (std::string error = drop_unbound_cases(q, manifests, dir, report, whole_unbound); !error.empty())
      return ended(kInternalError, error);
    if (pass == 2 || whole_unbound.empty()) break;
    prepare_second_pass(dir, report, whole_unbound, as_calls, q.quiet);
  }
  return ended(kOk, "");
}

/// The report's files: DIR/opinfo-report.json (sorted, without its timings) and DIR/opinfo-not-written.txt.
void write_report_files(const fs::path& dir, nlohmann::json& report) {
  std::sort(report["not_written"].begin(), report["not_written"].end(), [](const auto& a, const auto& b) {
    return std::make_tuple(a["entry"].template get<std::string>(), a["dtype"].template get<std::string>(),
                           a["sample"].is_null() ? -1 : a["sample"].template get<int>()) <
           std::make_tuple(b["entry"].template get<std::string>(), b["dtype"].template get<std::string>(),
                           b["sample"].is_null() ? -1 : b["sample"].template get<int>());
  });
  std::ofstream(dir / "opinfo-report.json") << report.dump(1) << "\n";
  // The list of what was not written, one line each, for people (the JSON holds the same).
  std::ofstream txt(dir / "opinfo-not-written.txt");
  for (const auto& x : report["not_written"])
    txt << x["entry"].get<std::string>() << " " << x["dtype"].get<std::string>() << " sample "
        << (x["sample"].is_null() ? std::string("-") : std::to_string(x["sample"].get<int>())) << ": "
        << x["reason"].get<std::string>() << ": " << x["detail"].get<std::string>() << "\n";
}

}  // namespace

ImportResult import_opinfo(const ImportRequest& q) {
  if (q.device_ops && q.device_imports.empty() && q.device_libs.empty())
    return ended(kUsageError,
                  "opcheck: error: --device-ops needs the device under test\n  Fix: add --device-import MODULE (a "
                  "Python device such as opcheck_pyloop) or --device-lib LIB\n");
  if (std::string error = make_output_folder(q.out_dir); !error.empty()) return ended(kUsageError, error);
  const char* configured = std::getenv("OPCHECK_PYTHON");
  const std::string python = hosting_python(configured != nullptr ? configured : "");
  // The importer asks once which of its op names opcheck cannot resolve; the executor is made on that first question.
  std::unique_ptr<Executor> resolver;
  UnknownNames unknown;
  if (!q.no_bind_check) {
    unknown = [&](const std::vector<std::string>& names) {
      if (!resolver) {
        std::string error;
        resolver = q.make_cpu_executor(error);
        if (!resolver) return std::vector<std::string>{};  // the bind check after the import reports it
      }
      return unresolved_op_names(*resolver, names);
    };
  }
  nlohmann::json report;
  if (ImportResult r = run_passes(q, python, unknown, report); r.exit_code != kOk) return r;
  // OpInfo's skips and xfails apply only where their failure happens in opcheck's own check (expectation_check.h).
  const fs::path dir = q.out_dir;
  if (q.no_bind_check)
    leave_expectations_unchecked(report, "--no-bind-check");
  else
    check_expectations(q.make_cpu_executor, dir, report, q.jobs);
  recount(report);
  ImportResult result;
  // Timings go to the summary only: two imports of the same samples write the same bytes.
  result.seconds = report.value("seconds", nlohmann::json::object());
  report.erase("seconds");
  write_report_files(dir, report);
  result.summary = summary_line(report);
  result.exit_code = report["counts"]["written"].get<long>() > 0 ? kOk : kNoTests;
  result.report = std::move(report);
  return result;
}

}  // namespace opcheck::opinfo
