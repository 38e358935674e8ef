// The JSON metrics file (schemas/metrics.schema.json): run facts, derived figures, and every occurrence, so
// merge, diff and the HTML report can work from metrics files alone.
#pragma once

#include <string>

#include "opcheck/report.h"
#include "report/atomic_file.h"

namespace opcheck {

/// Identifies the file and its layout version; read_metrics refuses other values.
inline constexpr const char* kMetricsFormat = "opcheck-metrics";
inline constexpr int kMetricsVersion = 1;

/// Writes the metrics document: pretty-printed, keys in a fixed order, one line per case, ends with a newline.
void write_metrics(const RunReport& report, TextOut& out);

/// Writes the metrics document to `path` atomically, streaming it; throws ReportError.
void write_metrics_json(const RunReport& report, const std::string& path);

/// Rebuilds the RunReport a metrics file was written from (run facts and cases; derived figures are
/// recomputed, not read). Throws ReportError with `path: error: /json/pointer: what` on bad input.
RunReport read_metrics(const std::string& path);

/// read_metrics for a file that must be whole (merge's shards): also refuses totals that contradict the case list.
RunReport read_whole_metrics(const std::string& path);

/// read_metrics on text already in memory; `path` is used in messages.
RunReport parse_metrics(const std::string& text, const std::string& path, bool check_totals_against_cases = false);

}  // namespace opcheck
