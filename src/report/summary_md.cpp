// `--summary-md FILE`: the run as a short Markdown page for CI summaries (GitHub's $GITHUB_STEP_SUMMARY, GitLab's
// job pages): the summary line, the outcome counts as the metrics file counts them (compute_stats, one count
// everywhere), the pass rate, and the failure groups with their example case and its message's first line. Every
// string from the run goes through markdown_text, so no id or message can open a link, an image or a table cell.
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "common/text_escape.h"
#include "report/atomic_file.h"
#include "report/console.h"
#include "report/failure_groups.h"
#include "report/report_format.h"
#include "report/stats.h"

namespace opcheck {
namespace {

// Text as Markdown shows it literally, one table cell or line: control characters made visible (printable_text),
// every ASCII punctuation character backslash-escaped (CommonMark lets any of them be), so `|`, `*`, `[`, `<`, `&`
// and the backquote are only characters.
std::string markdown_text(const std::string& text) {
  const std::string visible = printable_text(text);
  std::string out;
  out.reserve(visible.size() + visible.size() / 4);
  for (const char c : visible) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x80 && std::ispunct(u)) out += '\\';
    out += c;
  }
  return out;
}

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100.0 * share);
  return buf;
}

std::string first_message_line(const RunReport& report, const std::string& id) {
  for (const CaseRecord& rec : report.cases)
    if (rec.id == id) return first_line(rec.result.message);
  return {};
}

std::string summary_markdown(const RunReport& report) {
  const RunStats stats = compute_stats(report);
  const OutcomeCounts& c = stats.totals;
  std::string out = "## opcheck: " + markdown_text(summary_line(report)) + "\n\n";
  const RunInfo& info = report.info;
  if (!info.device_name.empty() || !info.device.empty())
    out += "Device " + markdown_text(info.device_name.empty() ? info.device : info.device_name) +
           (info.torch_version.empty() ? std::string() : ", torch " + markdown_text(info.torch_version)) + ".\n\n";
  // The metrics file's totals, under its names, in its order.
  out += "| outcome | occurrences |\n|---|---:|\n";
  const std::vector<std::pair<const char*, std::int64_t>> rows = {
      {"passed", c.passed},   {"failed", c.failed},   {"not\\_supported", c.not_supported},
      {"skipped", c.skipped}, {"no\\_device\\_op", c.no_device_op}, {"xfailed", c.xfailed},
      {"xpassed", c.xpassed}, {"errors", c.errors},   {"total", c.total()}};
  for (const auto& [name, n] : rows) out += "| " + std::string(name) + " | " + std::to_string(n) + " |\n";
  const std::optional<double> rate = c.pass_rate();
  const std::string shown = rate ? percent(*rate) : std::string("none (no occurrence says anything about the device)");
  out += "\nPass rate: " + shown + ", " + markdown_text(kPassRateRule) + ".\n";
  const std::vector<FailureGroup> groups = group_failures(report);
  if (groups.empty()) return out;
  out += "\n### " + std::to_string(groups.size()) + (groups.size() == 1 ? " failure group" : " failure groups") +
         "\n\n| # | occurrences | unique | stage | op | example | first message line |\n"
         "|---:|---:|---:|---|---|---|---|\n";
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const FailureGroup& g = groups[i];
    out += "| " + std::to_string(i + 1) + " | " + std::to_string(g.count) + " | " + std::to_string(g.unique) + " | " +
           markdown_text(stage_name(g.stage)) + " | " + markdown_text(g.op) + " | " + markdown_text(g.example) +
           " | " + markdown_text(first_message_line(report, g.example)) + " |\n";
  }
  return out;
}

void write_summary_markdown(const RunReport& report, const std::string& path) {
  write_file_atomically(path, summary_markdown(report));
}

const ReportFormat kSummaryMarkdown{
    "--summary-md", "FILE",
    "Write a Markdown summary for CI pages (e.g. $GITHUB_STEP_SUMMARY): the counts, the pass rate and the failure "
    "groups",
    "Write a Markdown summary of the sweep, one case per variant",
    kRunCommand | kSweepCommand | kMergeCommand | kReportCommand, false, nullptr,
    [](const std::string& path, const ReportContext&) { return writes_at_end(path, write_summary_markdown); }};

}  // namespace

const ReportFormat& summary_markdown_format() { return kSummaryMarkdown; }

}  // namespace opcheck
