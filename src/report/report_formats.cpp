// The table of report formats (report/report_format.h): every flag that writes a report, in the order --help lists
// them. A new format is its ReportFormat in a file of its own, declared and listed here (docs/design.md, "Adding a
// report format").
#include <filesystem>
#include <set>
#include <stdexcept>

#include "common/text_escape.h"
#include "report/html.h"
#include "report/junit.h"
#include "report/metrics.h"
#include "report/report_format.h"

namespace opcheck {

// The formats defined in files of their own.
const ReportFormat& summary_markdown_format();  // summary_md.cpp

namespace {

std::vector<NamedPath> junit_dir_files(const std::string& dir, const std::vector<std::string>& models) {
  std::vector<NamedPath> out;
  std::set<std::string> seen;
  for (const auto& model : models)
    if (seen.insert(model).second)
      out.push_back({"--junit-dir's file for model '" + printable_text(model) + "'",
                     (std::filesystem::path(dir) / junit_file_name(model)).string()});
  return out;
}

// The dashboard, with the trend over `opcheck report --history`'s earlier runs.
class HtmlReport : public ReportListener {
 public:
  HtmlReport(std::string path, const ReportContext& context) : path_(std::move(path)), history_(context.history) {}
  void run_finished(const RunReport& report) override {
    write_html_report(report, history_ ? *history_ : std::vector<RunReport>{}, path_);
  }

 private:
  std::string path_;
  std::shared_ptr<const std::vector<RunReport>> history_;
};

const ReportFormat kJunitXml{
    "--junit-xml", "PATH", "Write JUnit XML (pytest's xunit2 shape, one testsuite for the run)",
    "Write JUnit XML, one testcase per variant", kRunCommand | kSweepCommand | kMergeCommand, false, nullptr,
    [](const std::string& path, const ReportContext&) { return writes_at_end(path, write_junit_xml); }};

const ReportFormat kJunitDir{
    "--junit-dir", "DIR", "Write one JUnit XML file per model, DIR/<model>.xml (one testsuite each)", nullptr,
    kRunCommand | kMergeCommand, true, junit_dir_files,
    [](const std::string& path, const ReportContext&) { return writes_at_end(path, write_junit_dir); }};

const ReportFormat kMetricsJson{
    "--metrics-json", "PATH", "Write the JSON metrics file (schemas/metrics.schema.json)",
    "Write the JSON metrics file, one case per variant", kRunCommand | kSweepCommand | kMergeCommand, false, nullptr,
    [](const std::string& path, const ReportContext&) { return writes_at_end(path, write_metrics_json); }};

const ReportFormat kHtml{
    "--html", "PATH", "Write the self-contained HTML dashboard of this run", "Write the HTML dashboard of the sweep",
    kRunCommand | kSweepCommand | kMergeCommand | kReportCommand, false, nullptr,
    [](const std::string& path, const ReportContext& context) -> std::unique_ptr<ReportListener> {
      return std::make_unique<HtmlReport>(path, context);
    }};

}  // namespace

const std::vector<const ReportFormat*>& report_formats() {
  static const std::vector<const ReportFormat*> formats = [] {
    std::vector<const ReportFormat*> table = {&kJunitXml, &kJunitDir, &kMetricsJson, &kHtml,
                                              &summary_markdown_format()};
    std::string problems;
    for (const auto& p : report_format_problems(table)) problems += p + "\n";
    if (!problems.empty()) throw std::logic_error(problems);
    return table;
  }();
  return formats;
}

}  // namespace opcheck
