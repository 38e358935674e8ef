#include "cli/cmd_import.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "common/text_escape.h"
#include "repro/bundle_layout.h"
#include "traces/trace_import.h"

namespace fs = std::filesystem;

namespace opcheck::cli {
namespace {

void print_reported(const traces::TraceImport& imported, bool quiet) {
  for (const auto& t : imported.traces) {
    if (quiet) continue;
    for (const auto& d : t.reported.items) std::cerr << printable_lines(d.format()) << "\n";
  }
}

std::string plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

void print_summary(const traces::TraceImport& imported, const std::vector<std::string>& written, std::ostream& os) {
  std::size_t calls = 0, converted = 0, reported = 0;
  for (std::size_t k = 0; k < imported.traces.size(); ++k) {
    const auto& t = imported.traces[k];
    calls += static_cast<std::size_t>(t.call_lines);
    converted += static_cast<std::size_t>(t.converted);
    reported += t.reported.items.size();
    os << printable_text(t.path) << ": " << plural(static_cast<std::size_t>(t.call_lines), "call line") << " -> "
       << plural(static_cast<std::size_t>(t.converted), "case") << ", " << t.reported.items.size() << " reported";
    if (k < written.size()) os << " (" << printable_text(written[k]) << ", model " << t.model << ")";
    os << "\n";
  }
  os << plural(imported.traces.size(), "trace file") << ": " << plural(calls, "call line") << ", " << converted
     << " converted, " << reported << " reported\n";
}

}  // namespace

void add_import_command(CLI::App& app, Commands& commands) {
  auto flags = std::make_shared<ImportFlags>();
  ImportFlags& f = *flags;
  auto* cmd = app.add_subcommand(
      "import-traces",
      "Convert op traces (PyTorch operator benchmark logs, BackendBench) into manifests, one per trace file");
  cmd->footer(
      "Each 'cnt:' line becomes one case of model <file stem>, written to DIR/<file stem>.yaml; a line that cannot "
      "become a runnable case is reported with its file:line and the reason. Exit 0 when every line was converted "
      "or reported, 2 when an input cannot be read or a line names an op opcheck refuses (docs/design.md: Reliability).\n"
      "Example: opcheck import-traces " + repro::shell_word(shipped_manifest_dir() + "/examples/gpt_oss_trace.txt") +
      " -o traced   # the sample trace shipped with opcheck\n"
      "         opcheck run --manifests traced/gpt_oss_trace.yaml --device loopback");
  cmd->add_option("paths", f.paths, "Trace files, or folders searched for *.txt traces")->required();
  cmd->add_option("-o,--output", f.out_dir, "Folder to write the manifests to")->required()->type_name("DIR");
  cmd->add_flag("-q,--quiet", f.quiet, "Only the summary, not one line per reported trace line");
  commands.add(cmd, [flags] { return cmd_import_traces(*flags); });
}

int cmd_import_traces(const ImportFlags& f) {
  traces::TraceImport imported = traces::import_traces(f.paths);
  DiagnosticList errors = imported.errors;
  const auto written = traces::write_trace_manifests(imported, f.out_dir, errors);
  print_reported(imported, f.quiet);
  print_diagnostics(errors);
  print_summary(imported, written, std::cout);

  // The importer only writes text; the loader must read every case back. A loader error here is opcheck's bug.
  if (!written.empty()) {
    ManifestSet check = load_manifests(written);
    if (check.diagnostics.has_errors()) {
      print_diagnostics(check.diagnostics);
      std::cerr << "opcheck: internal error: the converted manifests do not load\n";
      return kInternalError;
    }
  }
  bool refused = false;
  for (const auto& t : imported.traces) refused = refused || t.reported.has_errors();
  return errors.has_errors() || refused ? kInterrupted : kOk;
}

void add_run_traces_flag(CLI::App& run, std::vector<std::string>& traces) {
  run.add_option("--traces", traces,
                 "Op-trace files or folders to run (converted into <artifact-dir>/traces/ first); without --manifests "
                 "only these run")
      ->type_name("PATH");
}

int prepare_trace_run(const std::vector<std::string>& traces, RunRequest& f) {
  traces::TraceImport imported = traces::import_traces(traces);
  DiagnosticList errors = imported.errors;
  const std::string dir = (fs::path(f.session.artifact_dir) / "traces").string();
  const auto written = traces::write_trace_manifests(imported, dir, errors);
  print_diagnostics(errors);  // the lines not converted are the run's load errors: it prints and reports them
  if (!f.quiet) print_summary(imported, written, std::cerr);
  if (errors.has_errors()) return kInterrupted;
  // A trace line that did not become a case is a case missing from the run: an error of its input in the reports.
  for (const auto& t : imported.traces)
    for (Diagnostic d : t.reported.items) {
      d.severity = Diagnostic::Severity::Error;
      f.selection.input_problems.items.push_back(std::move(d));
    }
  f.selection.manifests.insert(f.selection.manifests.end(), written.begin(), written.end());
  if (f.selection.manifests.empty()) {
    std::cerr << "opcheck: the traces gave no manifest to run\n";
    return kNoTests;
  }
  return -1;
}

}  // namespace opcheck::cli
