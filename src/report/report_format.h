// Report formats as registered units: each format is one ReportFormat of the table report_formats() returns (its
// flag, its help, the commands that take it, the files it writes and its listener), and a run's reports are
// listeners on one event list (run started, case finished, run finished), as GoogleTest's printers are. The recipe
// for a new format is in docs/design.md, "Adding a report format".
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "opcheck/report.h"

namespace opcheck {

/// One listener on a run's event list. A file format writes at run_finished only (the whole report is known then);
/// the console's case lines listen to case_finished.
class ReportListener {
 public:
  virtual ~ReportListener() = default;
  /// The run's account of itself, before its first case.
  virtual void run_started(const RunInfo& info) { (void)info; }
  /// One occurrence finished (served from earlier results or run), in the order the run reports them.
  virtual void case_finished(const CaseRecord& record) { (void)record; }
  /// The run is over and `report` is whole. Throws ReportError when its report cannot be written.
  virtual void run_finished(const RunReport& report) { (void)report; }
};

/// A run's listeners, in the order they were added: each event goes to each of them.
class ReportEvents {
 public:
  void add(std::unique_ptr<ReportListener> listener);
  void run_started(const RunInfo& info);
  void case_finished(const CaseRecord& record);
  /// run_finished to every listener side by side (the reports are independent views of the same records); one
  /// message per listener that threw, in the order they were added (the others still finish).
  std::vector<std::string> run_finished(const RunReport& report);

 private:
  std::vector<std::unique_ptr<ReportListener>> listeners_;
};

/// The commands that take a format's flag (ReportFormat::commands is a mask of these).
enum ReportCommand : unsigned {
  kRunCommand = 1u << 0,     // opcheck run
  kSweepCommand = 1u << 1,   // opcheck sweep
  kMergeCommand = 1u << 2,   // opcheck merge
  kReportCommand = 1u << 3,  // opcheck report (a metrics file and its --history)
};

/// "run", "sweep", "merge" or "report".
const char* report_command_name(ReportCommand command);

/// A file or folder a command reads or writes, and what named it ("--junit-xml", "the manifest", "--config").
struct NamedPath {
  std::string what;
  std::string path;
};

/// What a command hands a format's listener besides the path: `opcheck report --history`'s earlier runs. A listener
/// may keep it past the call that made it (it is shared, never copied).
struct ReportContext {
  std::shared_ptr<const std::vector<RunReport>> history;  // oldest first; none outside `opcheck report`
};

/// One report format.
struct ReportFormat {
  const char* flag;        // "--junit-xml": the flag of every command that takes it, and its name in messages
  const char* value_name;  // "PATH", "DIR", "FILE": the flag's value in --help
  const char* help;        // the flag's help in run, merge and report
  const char* sweep_help;  // the flag's help in sweep, where a case is a variant; nullptr: `help`
  unsigned commands;       // the ReportCommand bits of the commands that take it
  /// The value names a folder (checked as one before the run) that holds one file per model; else a file.
  bool folder;
  /// A folder format's files for the run's `models` (each model once); nullptr for a file format (its one file).
  std::vector<NamedPath> (*files)(const std::string& folder, const std::vector<std::string>& models);
  /// The listener that writes the format to `path`; nullptr is a format without a writer, which
  /// report_format_problems refuses.
  std::unique_ptr<ReportListener> (*listener)(const std::string& path, const ReportContext& context);
};

/// Every report format, in the order --help lists them and the run writes them (src/report/report_formats.cpp).
/// Throws std::logic_error naming each problem report_format_problems finds in the table.
const std::vector<const ReportFormat*>& report_formats();

/// What is wrong with a table of formats: a flag that is not `--name` or is registered twice, no value name or help,
/// no command, a folder format without its files, a format without a writer. One message per problem, naming the
/// format and the fix; empty when the table is sound.
std::vector<std::string> report_format_problems(const std::vector<const ReportFormat*>& formats);

/// A listener that calls `write(report, path)` at run_finished: what a file format's listener is.
std::unique_ptr<ReportListener> writes_at_end(const std::string& path,
                                              void (*write)(const RunReport& report, const std::string& path));

}  // namespace opcheck
