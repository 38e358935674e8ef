// The report flags of run, sweep, merge and report, made from the table of report formats (report/report_format.h):
// a command takes each format whose commands name it, and a merge writes every report a run writes, from the same
// flags.
#include <CLI/CLI.hpp>

#include "cli/cli.h"
#include "report/outputs.h"

namespace opcheck::cli {

void add_report_flags(CLI::App& app, ReportFiles& files, ReportCommand command) {
  for (const ReportFormat* f : report_formats()) {
    if ((f->commands & command) == 0) continue;
    const char* help = command == kSweepCommand && f->sweep_help ? f->sweep_help : f->help;
    app.add_option(f->flag, files.paths[f->flag], help)->type_name(f->value_name);
  }
}

}  // namespace opcheck::cli
