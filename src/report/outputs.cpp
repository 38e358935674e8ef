#include "report/outputs.h"

#include <functional>
#include <future>

#include "report/html.h"
#include "report/junit.h"
#include "report/metrics.h"

namespace opcheck {

std::vector<std::string> write_report_files(const RunReport& report, const ReportFiles& files) {
  std::vector<std::function<void()>> writers;
  if (!files.junit_xml.empty()) writers.push_back([&] { write_junit_xml(report, files.junit_xml); });
  if (!files.junit_dir.empty()) writers.push_back([&] { write_junit_dir(report, files.junit_dir); });
  if (!files.metrics_json.empty()) writers.push_back([&] { write_metrics_json(report, files.metrics_json); });
  if (!files.html.empty()) writers.push_back([&] { write_html_report(report, {}, files.html); });
  std::vector<std::future<void>> writing;
  for (auto& w : writers) writing.push_back(std::async(std::launch::async, w));
  std::vector<std::string> errors;
  for (auto& w : writing) {
    try {
      w.get();
    } catch (const std::exception& e) {
      errors.push_back(e.what());
    }
  }
  return errors;
}

}  // namespace opcheck
