// Writes a hand-built run's reports for tests written in other languages (node's JUnit reader and Ajv,
// the pytest parity check): report_sample sample|parity|empty|verdicts [--junit-xml P] [--metrics-json P] [--summary].
// `report_sample formats` prints the table of report formats (report/report_format.h), one JSON object a line, for
// the end-to-end test that walks it through the real binary (test/e2e/test_report_formats.py).
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "report/junit.h"
#include "report/metrics.h"
#include "report/report_error.h"
#include "report/report_format.h"
#include "report/console.h"
#include "sample_report.h"

namespace {

int print_formats() {
  for (const opcheck::ReportFormat* f : opcheck::report_formats()) {
    nlohmann::json commands = nlohmann::json::array();
    for (const auto c : {opcheck::kRunCommand, opcheck::kSweepCommand, opcheck::kMergeCommand,
                         opcheck::kReportCommand})
      if (f->commands & c) commands.push_back(opcheck::report_command_name(c));
    std::cout << nlohmann::json{{"flag", f->flag}, {"value_name", f->value_name}, {"folder", f->folder},
                                {"commands", commands}}
                     .dump()
              << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string kind = argc >= 2 ? argv[1] : "";
  if (kind == "formats") return print_formats();
  if (kind != "sample" && kind != "parity" && kind != "empty" && kind != "verdicts") {
    std::cerr << "usage: report_sample sample|parity|empty|verdicts [--junit-xml PATH] [--metrics-json PATH] "
                 "[--summary], or report_sample formats\n";
    return 4;
  }
  // "empty": a run that selected nothing, so every rate and mean is null.
  const opcheck::RunReport rep = kind == "sample"     ? opcheck::testing::sample_report()
                                 : kind == "parity"   ? opcheck::testing::parity_report()
                                 : kind == "verdicts" ? opcheck::testing::verdicts_report()
                                                      : opcheck::RunReport{};
  try {
    for (int i = 2; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--junit-xml" && i + 1 < argc) {
        opcheck::write_junit_xml(rep, argv[++i]);
      } else if (a == "--metrics-json" && i + 1 < argc) {
        opcheck::write_metrics_json(rep, argv[++i]);
      } else if (a == "--summary") {
        std::cout << opcheck::short_summary(rep, "fE") << opcheck::summary_line(rep) << "\n";
      } else {
        std::cerr << "report_sample: unknown argument " << a << "\n";
        return 4;
      }
    }
  } catch (const opcheck::ReportError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
