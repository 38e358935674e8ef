// `opcheck report`: the HTML dashboard of a metrics file, with the trend across a folder of earlier runs.
#include "cli/cmd_report.h"

#include <iostream>
#include <vector>

#include "cli/cli.h"
#include "report/console.h"
#include "report/html.h"
#include "report/metrics.h"

namespace opcheck::cli {

int cmd_report(const std::string& metrics, const std::string& history_dir, const std::string& html) {
  try {
    const RunReport run = read_metrics(metrics);
    std::vector<RunReport> history;
    // The current file is often kept in the history folder itself; it must not appear twice in the trend.
    if (!history_dir.empty()) history = read_metrics_history(history_dir, metrics, &run.info);
    write_html_report(run, history, html);
    std::cout << "wrote " << html << ": " << summary_line(run);
    if (!history_dir.empty()) {
      if (history.empty()) std::cout << "; no earlier metrics files in " << history_dir << ", so no trend";
      else std::cout << "; trend over " << history.size() + 1 << " runs";
    }
    std::cout << "\n";
  } catch (const std::exception& e) {
    print_error(e);
    return kInterrupted;
  }
  return kOk;
}

}  // namespace opcheck::cli
