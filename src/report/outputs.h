// The report files a run writes: JUnit XML (one file, or one per model), the metrics JSON and the HTML dashboard.
#pragma once

#include <string>
#include <vector>

#include "opcheck/report.h"

namespace opcheck {

/// Where each report goes; "" = not asked for.
struct ReportFiles {
  std::string junit_xml;     // --junit-xml
  std::string junit_dir;     // --junit-dir: DIR/<model>.xml
  std::string metrics_json;  // --metrics-json
  std::string html;          // --html
};

/// Makes sure, before a run starts, that every report asked for can be written: its folder exists (made when
/// missing) and takes a new file (a file is created there and removed), and the path is not a folder. One message per
/// report that cannot be, naming the flag, the path and why, with a Fix.
std::vector<std::string> check_report_paths(const ReportFiles& files);

/// A file or folder a command reads or writes, and what named it ("--junit-xml", "the manifest", "--config").
struct NamedPath {
  std::string what;
  std::string path;
};

/// The report files `files` asks for, as NamedPaths; `junit_models` are the models whose DIR/<model>.xml
/// --junit-dir writes.
std::vector<NamedPath> report_outputs(const ReportFiles& files, const std::vector<std::string>& junit_models);

/// Nothing a command writes may replace what it reads or another thing it writes. Checked before anything runs:
/// an output on the same file as an input (however the path is spelt, through a link to it, or the link itself), two
/// outputs on one file, and an input or output inside a folder the command replaces whole (`replaced_folders`: a
/// failure bundle's folder, removed before it is written). One message per clash, naming both, with a Fix.
std::vector<std::string> path_clashes(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs,
                                      const std::vector<NamedPath>& replaced_folders = {});

/// Writes the reports asked for, side by side: they are independent views of the same records. Returns what went
/// wrong, one message per report that could not be written (the others are still written).
std::vector<std::string> write_report_files(const RunReport& report, const ReportFiles& files);

}  // namespace opcheck
