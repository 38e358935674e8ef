// Writes a hand-built run's reports for tests written in other languages (node's JUnit reader and Ajv,
// the pytest parity check): report_sample sample|parity|empty|verdicts [--junit-xml P] [--metrics-json P] [--summary]
#include <cstdio>
#include <iostream>
#include <string>

#include "report/junit.h"
#include "report/metrics.h"
#include "report/report_error.h"
#include "report/console.h"
#include "sample_report.h"

int main(int argc, char** argv) {
  const std::string kind = argc >= 2 ? argv[1] : "";
  if (kind != "sample" && kind != "parity" && kind != "empty" && kind != "verdicts") {
    std::cerr << "usage: report_sample sample|parity|empty|verdicts [--junit-xml PATH] [--metrics-json PATH] "
                 "[--summary]\n";
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
