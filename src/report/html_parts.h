// The HTML page's parts (html.cpp puts them in order): the building blocks every section uses, defined in
// html_parts.cpp, and each section of the page, defined where its job is: html_run_sections.cpp (the header, the
// navigation, the overview, models and ops), html_failure_sections.cpp (failure groups and failures),
// html_coverage_sections.cpp (coverage, dedupe, the slowest cases) and html_trend.cpp (the nightly trend).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "opcheck/report.h"
#include "report/diff.h"
#include "report/stats.h"

namespace opcheck::html {

// Long texts are cut so one chatty case cannot make the page unusable; the metrics file keeps them whole.
constexpr std::size_t kMessageCap = 8192;
constexpr std::size_t kStderrCap = 4096;

// Text

// Run text may hold any bytes: made visible UTF-8 without controls (as the JUnit writer does), with every character
// that means something in HTML escaped, quotes included so the result is safe inside attributes too.
std::string esc(std::string_view s);
// Cuts at a UTF-8 character boundary and says how much was left out.
std::string capped(std::string_view s, std::size_t cap, std::string* note);
std::string fmt(const char* f, double v);
std::string pct(const std::optional<double>& rate);
std::string figure(const std::optional<double>& v);
std::string millis(double v);
// A number as the sort script and the tests read it: JavaScript's spelling of infinities, blank for "no value"
// (blank and NaN sort last either way).
std::string sort_key(const std::optional<double>& v);
// "2026-01-02T03:04:05Z" -> "2026-01-02 03:04"; anything else is shown as it is.
std::string short_time(const std::string& iso, std::size_t index);
std::string plural(std::int64_t n, const char* one, const char* many);

// Outcome vocabulary as the page shows it

struct OutcomeStyle {
  Outcome outcome;
  const char* css;    // class suffix and filter value: outcome_name
  const char* label;  // column heading
  const char* color;
};

inline constexpr OutcomeStyle kOutcomes[] = {
    {Outcome::Passed, "passed", "Passed", "#2e7d32"},     {Outcome::Failed, "failed", "Failed", "#c62828"},
    {Outcome::Error, "error", "Errors", "#ef6c00"},       {Outcome::XPassed, "xpassed", "XPassed", "#8e24aa"},
    {Outcome::NotSupported, "not_supported", "Not supported", "#1565c0"},
    {Outcome::XFailed, "xfailed", "XFailed", "#78909c"},  {Outcome::Skipped, "skipped", "Skipped", "#b0bec5"},
    {Outcome::NoDeviceOp, "no_device_op", "Passed without the device", "#8d6e63"},
};
static_assert(sizeof kOutcomes / sizeof *kOutcomes == static_cast<std::size_t>(kLastOutcome) + 1,
              "a style per outcome");

const OutcomeStyle& style_of(Outcome o);
std::string pill(Outcome o);
// Green when nearly everything passes, amber when most does, red below that.
const char* rate_color(double rate);
// Whether some occurrence with this outcome failed the run (a kpi tone, a filter option): fails_run() decides, so a
// non-strict xpass or a forgiven not_supported is no alarm.
bool failing(Outcome o, const RunReport& run);

// Building blocks

std::string kpi(const std::string& id, const std::string& label, const std::string& value, const std::string& sub,
                const std::string& data_value, const char* tone = "");
const char* rate_tone(const std::optional<double>& r);
std::string td_num(const char* col, std::int64_t v);
std::string td_num(const char* col, const std::optional<double>& v, const std::string& text);
std::string th(const char* label, bool numeric = false, const char* title = nullptr);
std::string counts_header();
std::string counts_cells(const OutcomeCounts& c);
std::string legend();
// Text box (and optional selects) that filter the table `table_id`; hidden until the script runs, because without
// it they would do nothing.
std::string filter_controls(const std::string& table_id, const std::string& placeholder, const std::string& selects = {});
std::string select_control(const std::string& table_id, const std::string& attr, const std::string& all_label,
                           const std::vector<std::pair<std::string, std::string>>& options);
// A label that fits the chart's label column; the full text goes in the tooltip.
std::string chart_label(const std::string& s, std::size_t max_chars);
// One horizontal strip of outcome segments, proportional to the counts.
std::string outcome_strip(const OutcomeCounts& c, double x, double y, double width, double height);

// Sections

/// The runs of the trend, the current one last, each with its diff against the run before.
struct Trend {
  struct Point {
    const RunReport* run = nullptr;
    OutcomeCounts totals;
    std::optional<DiffResult> diff;  // against the run before; empty for the first run or when it could not be made
    std::string diff_error;
  };
  std::vector<Point> points;  // oldest first; the current run last
};
/// The trend of `run` after `history` (empty when there is no history).
Trend build_trend(const RunReport& run, const std::vector<RunReport>& history);
/// Regressions and stage changes of a diff: what the trend marks.
std::size_t regression_count(const DiffResult& d);

void header(std::string& out, const RunReport& run);
void nav(std::string& out, bool with_trend);
void overview(std::string& out, const RunReport& run, const RunStats& st, const Trend& trend);
void models_section(std::string& out, const RunStats& st);
void ops_section(std::string& out, const RunStats& st);
void groups_section(std::string& out, const RunReport& run);
void failures_section(std::string& out, const RunReport& run, const RunStats& st);
void coverage_section(std::string& out, const RunStats& st);
void dedupe_section(std::string& out, const RunStats& st);
void slowest_section(std::string& out, const RunReport& run, const RunStats& st);
void trend_section(std::string& out, const Trend& trend);

}  // namespace opcheck::html
