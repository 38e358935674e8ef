// The report flags `run` and `merge` share: a merge writes every report a run writes, from the same flags.
#include <CLI/CLI.hpp>

#include "cli/cli.h"
#include "report/outputs.h"

namespace opcheck::cli {

void add_report_flags(CLI::App& app, ReportFiles& files) {
  app.add_option("--junit-xml", files.junit_xml, "Write JUnit XML (pytest's xunit2 shape, one testsuite for the run)")
      ->type_name("PATH");
  app.add_option("--junit-dir", files.junit_dir,
                 "Write one JUnit XML file per model, DIR/<model>.xml (one testsuite each)")
      ->type_name("DIR");
  app.add_option("--metrics-json", files.metrics_json, "Write the JSON metrics file (schemas/metrics.schema.json)")
      ->type_name("PATH");
  app.add_option("--html", files.html, "Write the self-contained HTML dashboard of this run")->type_name("PATH");
}

}  // namespace opcheck::cli
