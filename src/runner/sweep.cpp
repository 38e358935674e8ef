#include "runner/sweep.h"

#include <algorithm>
#include <chrono>

#include "report/console.h"

namespace opcheck {
namespace {

using Clock = std::chrono::steady_clock;

std::string first_line(const std::string& text, std::size_t limit) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > limit) line = line.substr(0, limit - 3) + "...";
  return line;
}

std::string verdict_of(const CaseRecord& rec) {
  std::string v = outcome_name(rec.outcome);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  if (rec.result.stage != Stage::PASSED && rec.result.stage != Stage::SKIPPED)
    v += std::string(" ") + stage_name(rec.result.stage);
  return v;
}

}  // namespace

std::string sweep_table(const std::vector<SweepVariant>& variants, const std::vector<CaseRecord>& records) {
  std::vector<std::vector<std::string>> rows = {{"dtype", "layout", "shape", "verdict", "message"}};
  for (const CaseRecord& rec : records) {
    const SweepVariant& v = variants[static_cast<std::size_t>(rec.index)];
    rows.push_back({v.dtype, v.layout, v.shape, verdict_of(rec), first_line(rec.result.message, 70)});
  }
  std::vector<std::size_t> width(4, 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < width.size(); ++i) line += row[i] + std::string(width[i] + 2 - row[i].size(), ' ');
    line += row[4];
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

int sweep_request(SweepRequest r, RunHost& host) {
  const auto t0 = Clock::now();
  std::vector<std::string> unwritable = check_report_paths(r.reports);
  for (auto& e : path_clashes(report_outputs(r.reports, {}), {})) unwritable.push_back(std::move(e));
  for (const auto& e : unwritable) host.err << "opcheck: error: " << e << "\n";
  if (!unwritable.empty()) return kUsageError;
  CaseProbe probe;
  if (int rc = probe.start(r.probe, host); rc >= 0) return rc;
  std::size_t left_out = 0;
  const std::vector<SweepVariant> variants = sweep_variants(probe.original(), r.max_variants, left_out);
  std::vector<Case> calls;
  for (const auto& v : variants) calls.push_back(v.call);
  host.err << "opcheck: sweeping " << probe.original().id << ": " << calls.size() << " variants";
  if (left_out > 0) host.err << " (" << left_out << " more left out by --max-variants " << r.max_variants << ")";
  host.err << "\n";
  RunReport report;
  report.info = probe.describe(r.probe);
  // Every variant is a case of the reports, those a stop left unrun too (skipped, saying so), as run reports them.
  report.cases = probe.run(calls, report.info, 0, /*with_not_run=*/true);
  report.info.duration_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (left_out > 0)
    report.info.warnings.push_back("sweep: " + std::to_string(left_out) + " variants left out by --max-variants " +
                                   std::to_string(r.max_variants));
  host.out << sweep_table(variants, report.cases);
  RunEnd end;
  const std::vector<std::string> errors = write_report_files(report, r.reports);
  for (const auto& e : errors) host.err << error_text(std::runtime_error(e), "writing reports: ");
  end.report_failure = errors.empty() ? 0 : kInternalError;
  end.signalled = StopSignals::received();
  if (report.info.interrupted)
    host.out << "stopped early: " << report.info.stop_reason << "; " << report.info.not_run << " not run\n";
  host.out << summary_line(report, r.color) << "\n";
  return run_exit_code(report, end);
}

}  // namespace opcheck
