// The HTML dashboard of a run and its nightly trend: one self-contained file (inline CSS, inline SVG charts, a small
// inline script for sorting and filtering only), readable offline and without JavaScript.
#pragma once

#include <string>
#include <vector>

#include "opcheck/report.h"

namespace opcheck {

/// The page as text. Figures come from compute_stats (the same numbers as the metrics file); `history` holds
/// earlier runs, oldest first, and when it is not empty the page gets a trend section: the pass rate of every run
/// (the current one last) and the regressions diff_reports finds between consecutive runs.
/// Every string taken from a run (ids, paths, messages, stderr, run facts) is escaped; the inline script is fixed
/// text pinned by a Content-Security-Policy hash, so nothing from a run can run as script.
std::string html_report(const RunReport& run, const std::vector<RunReport>& history);

/// Writes html_report atomically (write_file_atomically); throws ReportError.
void write_html_report(const RunReport& run, const std::vector<RunReport>& history, const std::string& path);

/// The metrics files (`*.json`, not descending into sub-folders) of a folder of earlier runs, oldest first: by
/// started_at, then by file name. A file that is the same file as `exclude` is left out, so the current run's
/// metrics may sit in the history folder; so is a copy of the run `current` (same start, host, duration and command),
/// so the trend never holds the current run twice nor compares it with itself. A `*.json` that cannot be a run of
/// the trend is skipped, never read past: a link out of the folder (or a dangling one), a FIFO, device or folder, a
/// file that is not a readable metrics file; `skipped` gets "file: why" for each (the why never quotes the file's
/// bytes). Throws ReportError only when the folder cannot be read.
std::vector<RunReport> read_metrics_history(const std::string& dir, const std::string& exclude = {},
                                            const RunInfo* current = nullptr,
                                            std::vector<std::string>* skipped = nullptr);

}  // namespace opcheck
