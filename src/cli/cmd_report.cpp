// The commands that read reports: `opcheck merge` (shard metrics -> one run's reports), `opcheck diff` (two runs) and
// `opcheck report` (the HTML dashboard of a metrics file, with the trend across a folder of earlier runs, and the
// other report formats that take it, such as the Markdown summary).
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <vector>

#include "cli/cli.h"
#include "common/text_escape.h"
#include "report/console.h"
#include "report/diff.h"
#include "report/html.h"
#include "report/merge.h"
#include "report/metrics.h"
#include "report/outputs.h"
#include "runner/run_session.h"

namespace opcheck::cli {
namespace {

struct MergeFlags {
  std::vector<std::string> inputs;
  ReportFiles reports;
  bool allow_partial = false;
};

int cmd_merge(const MergeFlags& f) {
  // As `run` does: each report's folder is made, and one that cannot be written is refused before anything is read.
  const std::vector<std::string> unwritable = check_report_paths(f.reports);
  for (const auto& e : unwritable) std::cerr << "opcheck: error: " << e << "\n";
  if (!unwritable.empty()) return kUsageError;
  std::vector<NamedPath> shard_files;
  for (const auto& p : f.inputs) shard_files.push_back({"the shard", p});
  // No report replaces a shard or another report; --junit-dir's files are known once the models are.
  std::vector<std::string> clashes = path_clashes(report_outputs(f.reports, {}), shard_files);
  RunReport merged;
  try {
    std::vector<RunReport> shards;
    for (const auto& p : f.inputs) shards.push_back(read_whole_metrics(p));
    if (clashes.empty()) {
      std::vector<std::string> models;
      for (const auto& s : shards)
        for (const auto& rec : s.cases) models.push_back(rec.model);
      clashes = path_clashes(report_outputs(f.reports, models), shard_files);
    }
    if (!clashes.empty()) {
      for (const auto& e : clashes) std::cerr << "opcheck: error: " << e << "\n";
      return kUsageError;
    }
    std::string partial;
    merged = merge_reports(shards, f.allow_partial, &partial, f.inputs);
    if (!partial.empty()) std::cerr << "opcheck merge: warning: " << partial << "\n";
  } catch (const std::exception& e) {
    print_error(e);
    return kInterrupted;
  }
  // Every report a run writes, written as run writes them: one that cannot be written is said and exits 3.
  const std::vector<std::string> errors = write_report_files(merged, f.reports);
  for (const auto& e : errors) print_error(std::runtime_error(e), "writing reports: ");
  std::cout << "shards: " << merged.info.shard_count << ", longest "
            << format_session_duration(merged.info.shard_longest_s) << ", summed "
            << format_session_duration(merged.info.shard_sum_s) << "\n";
  std::cout << summary_line(merged) << "\n";
  // The merged run exits as one run of the same cases would have: a nightly's merge job fails on failures.
  RunEnd end;
  end.report_failure = errors.empty() ? 0 : kInternalError;
  return run_exit_code(merged, end);
}

int cmd_diff(const std::string& old_path, const std::string& new_path, const DiffAllowed& allowed) {
  try {
    DiffResult d = diff_reports(read_metrics(old_path), read_metrics(new_path));
    std::cout << render_diff(d, allowed);
    return diff_exit_code(d, allowed);
  } catch (const std::exception& e) {
    print_error(e);
    return kInterrupted;
  }
}

struct ReportCommandFlags {
  std::string metrics;
  std::string history_dir;
  ReportFiles reports;
};

// "--html PATH or --summary-md FILE": the reports `opcheck report` writes, as its --help names them.
std::string report_command_formats() {
  std::string out;
  for (const ReportFormat* f : report_formats())
    if (f->commands & kReportCommand)
      out += (out.empty() ? "" : " or ") + std::string(f->flag) + " " + f->value_name;
  return out;
}

/// Reads the metrics file (and, with --history, the metrics files in that folder) and writes the reports asked for.
/// Exit 0 when written, 2 when a file cannot be read or written (the message names it), 4 when no report is asked
/// for or one would replace an input.
int cmd_report(const ReportCommandFlags& f) {
  if (!f.reports.any()) {
    std::cerr << "opcheck report: error: no report to write\n  Fix: name at least one: " << report_command_formats()
              << "\n";
    return kUsageError;
  }
  std::vector<NamedPath> inputs{{"the metrics file", f.metrics}};
  std::error_code ec;
  if (!f.history_dir.empty())
    for (std::filesystem::directory_iterator it(f.history_dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".json") inputs.push_back({"the --history file", it->path().string()});
  const std::vector<NamedPath> outputs = report_outputs(f.reports, {});
  const std::vector<std::string> clashes = path_clashes(outputs, inputs);
  for (const auto& e : clashes) std::cerr << "opcheck: error: " << e << "\n";
  if (!clashes.empty()) return kUsageError;
  try {
    const RunReport run = read_metrics(f.metrics);
    auto history = std::make_shared<std::vector<RunReport>>();
    std::vector<std::string> skipped;
    // The current file is often kept in the history folder itself; it must not appear twice in the trend.
    if (!f.history_dir.empty()) *history = read_metrics_history(f.history_dir, f.metrics, &run.info, &skipped);
    for (const auto& s : skipped) std::cerr << "opcheck report: warning: skipped " << printable_text(s) << "\n";
    const std::vector<std::string> errors = write_report_files(run, f.reports, ReportContext{history});
    for (const auto& e : errors) print_error(std::runtime_error(e));
    if (!errors.empty()) return kInterrupted;
    std::cout << "wrote ";
    for (std::size_t i = 0; i < outputs.size(); ++i) std::cout << (i ? ", " : "") << outputs[i].path;
    std::cout << ": " << summary_line(run);
    if (!f.history_dir.empty()) {
      if (history->empty()) std::cout << "; no earlier metrics files in " << f.history_dir << ", so no trend";
      else std::cout << "; trend over " << history->size() + 1 << " runs";
      if (!skipped.empty())
        std::cout << " (" << skipped.size() << " file" << (skipped.size() == 1 ? "" : "s") << " of "
                  << f.history_dir << " skipped, listed above)";
    }
    std::cout << "\n";
  } catch (const std::exception& e) {
    print_error(e);
    return kInterrupted;
  }
  return kOk;
}

}  // namespace

void add_report_commands(CLI::App& app, Commands& commands) {
  auto m = std::make_shared<MergeFlags>();
  auto* merge =
      app.add_subcommand("merge", "Combine shard metrics files into the reports one machine would have written");
  merge->footer("Examples (each shard's metrics from its own run --shard):\n"
                "  opcheck run --model gpt_oss -k mul --device loopback --shard 0/2 --metrics-json shard-0.json\n"
                "  opcheck run --model gpt_oss -k mul --device loopback --shard 1/2 --metrics-json shard-1.json\n"
                "  opcheck merge shard-*.json --junit-xml all.xml --metrics-json all.json --html all.html\n"
                "Exit codes: as `run` would exit on the merged cases (0 all passed, 1 failures or errors, 2 interrupted "
                "shards), 2 when the shards cannot be merged, 3 when a report cannot be written, 4 when a report's path "
                "is refused (a folder, a FIFO, a folder that cannot be made, a shard's or another report's path).");
  merge->add_option("metrics", m->inputs, "Metrics files of the shards")->required();
  add_report_flags(*merge, m->reports, kMergeCommand);
  merge->add_flag("--allow-partial", m->allow_partial,
                  "Merge an incomplete shard set (what is missing is printed and the merged run records its shards)");
  commands.add(merge, [m] { return cmd_merge(*m); });

  auto paths = std::make_shared<std::pair<std::string, std::string>>();
  auto allowed = std::make_shared<DiffAllowed>();
  auto* diff = app.add_subcommand(
      "diff", "Regressions, fixes, added and removed cases between two metrics files (exit 1 on regressions)");
  diff->footer("Examples (last night's run, then tonight's with a wrong mul kernel: a regression):\n"
               "  opcheck run --model gpt_oss -k mul --device loopback --metrics-json last-night.json\n"
               "  OPCHECK_LOOPBACK_FAULTS='aten::mul.Tensor=bias:1e-1' opcheck run --model gpt_oss -k mul "
               "--device loopback --metrics-json tonight.json\n"
               "  opcheck diff last-night.json tonight.json\n"
               "A run on another device (its type or name: loopback -> cpu) is refused, naming both devices; another "
               "backend version, device library digest or libtorch version heads the output as a note.\n"
               "Exit codes: 0 no regressions, 1 regressions, 2 the runs ran on different devices (without "
               "--allow-device-change) or hold different case sets (without --allow-different-cases), or a file "
               "cannot be read.");
  diff->add_option("old", paths->first, "Earlier metrics file")->required();
  diff->add_option("new", paths->second, "Later metrics file")->required();
  diff->add_flag("--allow-different-cases", allowed->different_cases,
                 "Compare runs of different case sets (e.g. two shards) without failing; the counts are still said");
  diff->add_flag("--allow-device-change", allowed->device_change,
                 "Compare runs on different devices (e.g. the loopback and cpu) without failing; the change heads the "
                 "output");
  commands.add(diff, [paths, allowed] { return cmd_diff(paths->first, paths->second, *allowed); });

  auto r = std::make_shared<ReportCommandFlags>();
  auto* report = app.add_subcommand(
      "report", "Write a self-contained HTML dashboard of a metrics file (with --history: the nightly trend), or its "
                "Markdown summary");
  report->footer("Examples (nightly/ holds earlier runs' metrics files):\n"
                 "  opcheck run --model gpt_oss -k mul --device loopback --metrics-json nightly/tonight.json\n"
                 "  opcheck report nightly/tonight.json --history nightly/ --html report.html");
  report->add_option("metrics", r->metrics, "Metrics file of the run")->required();
  report->add_option("--history", r->history_dir, "Folder of earlier runs' metrics files, for the trend")
      ->type_name("DIR");
  add_report_flags(*report, r->reports, kReportCommand);
  commands.add(report, [r] { return cmd_report(*r); });
}

}  // namespace opcheck::cli
