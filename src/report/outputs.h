// The report files a command writes, one per report format asked for (report/report_format.h: JUnit XML, one file
// or one per model, the metrics JSON, the HTML dashboard, the Markdown summary), written side by side.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "opcheck/report.h"
#include "report/report_format.h"

namespace opcheck {

/// Where each report goes, by its format's flag ("--junit-xml" -> "out.xml"); a format missing or "" is not asked
/// for. The command-line flags bind to its entries (cli/report_flags.cpp).
struct ReportFiles {
  std::map<std::string, std::string> paths;
  /// The path of the format whose flag is `flag`; "" when it is not asked for.
  const std::string& path(const std::string& flag) const;
  /// Whether any format is asked for.
  bool any() const;
};

/// Makes sure, before a run starts, that every report asked for can be written: its folder exists (made when
/// missing) and takes a new file (a file is created there and removed), and the path is not a folder. One message per
/// report that cannot be, naming the flag, the path and why, with a Fix.
std::vector<std::string> check_report_paths(const ReportFiles& files);

/// The report files `files` asks for, as NamedPaths: each file format's file, then each folder format's files for
/// `models` (--junit-dir's DIR/<model>.xml).
std::vector<NamedPath> report_outputs(const ReportFiles& files, const std::vector<std::string>& models);

/// Nothing a command writes may replace what it reads or another thing it writes. Checked before anything runs:
/// an output on the same file as an input (however the path is spelt, through a link to it, or the link itself), two
/// outputs on one file, and an input or output inside a folder the command replaces whole (`replaced_folders`: a
/// failure bundle's folder, removed before it is written). One message per clash, naming both, with a Fix.
std::vector<std::string> path_clashes(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs,
                                      const std::vector<NamedPath>& replaced_folders = {});

/// The listeners of the reports `files` asks for, in the table's order (report_formats()).
ReportEvents report_listeners(const ReportFiles& files, const ReportContext& context = {});

/// Writes the reports asked for, side by side (report_listeners, then run_finished): they are independent views of
/// the same records. Returns what went wrong, one message per report that could not be written (the others are still
/// written).
std::vector<std::string> write_report_files(const RunReport& report, const ReportFiles& files,
                                            const ReportContext& context = {});

}  // namespace opcheck
