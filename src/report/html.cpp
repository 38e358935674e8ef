#include "report/html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string_view>
#include <utility>

#include "common/base64.h"
#include "common/sha256.h"
#include "common/text.h"
#include "common/text_escape.h"
#include "report/atomic_file.h"
#include "report/console.h"
#include "report/diff.h"
#include "report/failure_groups.h"
#include "report/figures.h"
#include "report/html_assets.h"
#include "report/junit.h"
#include "report/metrics.h"
#include "report/report_error.h"
#include "report/stats.h"

namespace opcheck {
namespace {

// Long texts are cut so one chatty case cannot make the page unusable; the metrics file keeps them whole.
constexpr std::size_t kMessageCap = 8192;
constexpr std::size_t kStderrCap = 4096;

// ---------------------------------------------------------------------------------------------------------------
// Text

// Run text may hold any bytes: made visible UTF-8 without controls (as the JUnit writer does), with every character
// that means something in HTML escaped, quotes included so the result is safe inside attributes too.
std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 16);
  append_escaped(out, s, EscapeMode::Html);
  return out;
}

// Cuts at a UTF-8 character boundary and says how much was left out.
std::string capped(std::string_view s, std::size_t cap, std::string* note) {
  if (s.size() <= cap) return std::string(s);
  std::size_t cut = cap;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  *note = "… " + std::to_string(s.size() - cut) + " more bytes in the metrics file";
  return std::string(s.substr(0, cut));
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string pct(const std::optional<double>& rate) { return rate ? fmt("%.1f%%", *rate * 100.0) : "n/a"; }

std::string figure(const std::optional<double>& v) {
  if (!v) return "—";
  if (std::isnan(*v)) return "nan";
  if (std::isinf(*v)) return *v > 0 ? "inf" : "-inf";
  return fmt("%.4g", *v);
}

std::string millis(double v) { return fmt(v >= 100 ? "%.0f" : v >= 1 ? "%.1f" : "%.2f", v); }

// A number as the sort script and the tests read it: JavaScript's spelling of infinities, blank for "no value"
// (blank and NaN sort last either way).
std::string sort_key(const std::optional<double>& v) {
  if (!v || std::isnan(*v)) return "";
  if (std::isinf(*v)) return *v > 0 ? "Infinity" : "-Infinity";
  return shortest_number(*v);
}

// "2026-01-02T03:04:05Z" -> "2026-01-02 03:04"; anything else is shown as it is.
std::string short_time(const std::string& iso, std::size_t index) {
  if (iso.empty()) return "run " + std::to_string(index + 1);
  if (iso.size() >= 16 && iso[10] == 'T') return iso.substr(0, 10) + " " + iso.substr(11, 5);
  return iso;
}

std::string plural(std::int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// ---------------------------------------------------------------------------------------------------------------
// Outcome vocabulary as the page shows it

struct OutcomeStyle {
  Outcome outcome;
  const char* css;    // class suffix and filter value: outcome_name
  const char* label;  // column heading
  const char* color;
};

constexpr OutcomeStyle kOutcomes[] = {
    {Outcome::Passed, "passed", "Passed", "#2e7d32"},     {Outcome::Failed, "failed", "Failed", "#c62828"},
    {Outcome::Error, "error", "Errors", "#ef6c00"},       {Outcome::XPassed, "xpassed", "XPassed", "#8e24aa"},
    {Outcome::NotSupported, "not_supported", "Not supported", "#1565c0"},
    {Outcome::XFailed, "xfailed", "XFailed", "#78909c"},  {Outcome::Skipped, "skipped", "Skipped", "#b0bec5"},
    {Outcome::NoDeviceOp, "no_device_op", "Passed without the device", "#8d6e63"},
};
static_assert(sizeof kOutcomes / sizeof *kOutcomes == static_cast<std::size_t>(kLastOutcome) + 1,
              "a style per outcome");

const OutcomeStyle& style_of(Outcome o) {
  for (const auto& s : kOutcomes)
    if (s.outcome == o) return s;
  return kOutcomes[0];
}

std::string pill(Outcome o) {
  return std::string("<span class=\"pill o-") + style_of(o).css + "\">" + outcome_name(o) + "</span>";
}

// Green when nearly everything passes, amber when most does, red below that.
const char* rate_color(double rate) { return rate >= 0.95 ? "#2e7d32" : rate >= 0.8 ? "#f9a825" : "#c62828"; }

// Whether some occurrence with this outcome failed the run (a kpi tone, a filter option): fails_run() decides, so a
// non-strict xpass or a forgiven not_supported is no alarm.
bool failing(Outcome o, const RunReport& run) {
  for (const auto& rec : run.cases)
    if (rec.outcome == o && fails_run(rec, run.info)) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------------------------
// The inline script (html_assets/report.js), allowed by its hash in the page's Content-Security-Policy.

// The script's CSP source: 'sha256-' + base64 of the digest.
std::string script_hash_source() {
  Sha256 h;
  h.update(html_report_script());
  return "'sha256-" + base64_encode(h.digest()) + "'";
}

// ---------------------------------------------------------------------------------------------------------------
// Building blocks

std::string kpi(const std::string& id, const std::string& label, const std::string& value, const std::string& sub,
                const std::string& data_value, const char* tone = "") {
  std::string out = "<div class=\"kpi";
  if (*tone) out += std::string(" ") + tone;
  out += "\" data-kpi=\"" + id + "\" data-value=\"" + esc(data_value) + "\"><div class=\"kpi-label\">" + label +
         "</div><div class=\"kpi-value\">" + value + "</div>";
  if (!sub.empty()) out += "<div class=\"kpi-sub\">" + sub + "</div>";
  return out + "</div>\n";
}

const char* rate_tone(const std::optional<double>& r) {
  if (!r) return "";
  return *r >= 0.95 ? "good" : *r >= 0.8 ? "warn" : "bad";
}

std::string td_num(const char* col, std::int64_t v) {
  return std::string("<td class=\"num\" data-col=\"") + col + "\" data-sort=\"" + std::to_string(v) + "\">" +
         std::to_string(v) + "</td>";
}

std::string td_num(const char* col, const std::optional<double>& v, const std::string& text) {
  return std::string("<td class=\"num\" data-col=\"") + col + "\" data-sort=\"" + sort_key(v) + "\">" + text + "</td>";
}

std::string th(const char* label, bool numeric = false, const char* title = nullptr) {
  std::string out = "<th";
  if (numeric) out += " data-type=\"num\"";
  if (title) out += std::string(" title=\"") + title + "\"";
  return out + ">" + label + "</th>";
}

std::string counts_header() {
  std::string out = th("Cases", true);
  for (const auto& s : kOutcomes) out += th(s.label, true);
  return out + th("Pass rate", true, kPassRateRule);
}

std::string counts_cells(const OutcomeCounts& c) {
  std::string out = td_num("total", c.total());
  for (const auto& s : kOutcomes) out += td_num(s.css, c.count(s.outcome));
  return out + td_num("pass_rate", c.pass_rate(), pct(c.pass_rate()));
}

std::string legend() {
  std::string out = "<div class=\"legend\">";
  for (const auto& s : kOutcomes)
    out += std::string("<span><i style=\"background:") + s.color + "\"></i>" + s.css + "</span>";
  return out + "</div>\n";
}

// Text box (and optional selects) that filter the table `table_id`; hidden until the script runs, because without
// it they would do nothing.
std::string filter_controls(const std::string& table_id, const std::string& placeholder, const std::string& selects = {}) {
  return "<div class=\"controls\" data-js-controls hidden><input type=\"search\" placeholder=\"" + placeholder +
         "\" aria-label=\"" + placeholder + "\" data-filter-table=\"" + table_id + "\">" + selects +
         "<span class=\"sub\">showing <span data-count-for=\"" + table_id + "\"></span></span></div>\n";
}

std::string select_control(const std::string& table_id, const std::string& attr, const std::string& all_label,
                           const std::vector<std::pair<std::string, std::string>>& options) {
  std::string out = "<select data-filter-table=\"" + table_id + "\" data-filter-attr=\"" + attr + "\" aria-label=\"" +
                    all_label + "\"><option value=\"\">" + all_label + "</option>";
  for (const auto& [value, label] : options) out += "<option value=\"" + esc(value) + "\">" + esc(label) + "</option>";
  return out + "</select>";
}

// A label that fits the chart's label column; the full text goes in the tooltip.
std::string chart_label(const std::string& s, std::size_t max_chars) {
  if (s.size() <= max_chars) return s;
  std::size_t cut = max_chars - 1;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "…";
}

// One horizontal strip of outcome segments, proportional to the counts.
std::string outcome_strip(const OutcomeCounts& c, double x, double y, double width, double height) {
  std::string out;
  const double total = static_cast<double>(c.total());
  if (total <= 0) return out;
  double at = x;
  for (const auto& s : kOutcomes) {
    const std::int64_t n = c.count(s.outcome);
    if (n == 0) continue;
    const double w = width * static_cast<double>(n) / total;
    out += "<rect x=\"" + fmt("%.2f", at) + "\" y=\"" + fmt("%.2f", y) + "\" width=\"" + fmt("%.2f", w) +
           "\" height=\"" + fmt("%.2f", height) + "\" fill=\"" + s.color + "\"><title>" + s.css + ": " +
           std::to_string(n) + "</title></rect>";
    at += w;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Sections

struct Trend {
  struct Point {
    const RunReport* run = nullptr;
    OutcomeCounts totals;
    std::optional<DiffResult> diff;  // against the run before; empty for the first run or when it could not be made
    std::string diff_error;
  };
  std::vector<Point> points;  // oldest first; the current run last
};

Trend build_trend(const RunReport& run, const std::vector<RunReport>& history) {
  Trend t;
  if (history.empty()) return t;
  std::vector<const RunReport*> runs;
  for (const auto& h : history) runs.push_back(&h);
  runs.push_back(&run);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    Trend::Point p;
    p.run = runs[i];
    p.totals = compute_stats(*runs[i]).totals;
    if (i > 0) {
      try {
        p.diff = diff_reports(*runs[i - 1], *runs[i]);
      } catch (const ReportError& e) {
        p.diff_error = first_line(e.what());
      }
    }
    t.points.push_back(std::move(p));
  }
  return t;
}

std::size_t regression_count(const DiffResult& d) { return d.regressions.size() + d.stage_changes.size(); }

void header(std::string& out, const RunReport& run) {
  const RunInfo& i = run.info;
  out += "<header class=\"top\"><h1>opcheck report";
  if (!i.device_name.empty()) out += " — " + esc(i.device_name);
  out += "</h1><div class=\"summary\" id=\"summary-line\">" + esc(summary_line(run)) + "</div><dl>";
  auto fact = [&](const char* id, const char* label, const std::string& value) {
    if (value.empty()) return;
    out += std::string("<div data-fact=\"") + id + "\"><dt>" + label + "</dt><dd>" + esc(value) + "</dd></div>";
  };
  fact("started_at", "Started", i.started_at);
  fact("duration", "Duration", format_session_duration(i.duration_s));
  fact("host", "Host", i.host);
  fact("device", "Device", i.device + (i.device_name.empty() ? "" : " (" + i.device_name + ")"));
  fact("device_lib", "Device library",
       i.device_lib + (i.device_lib_sha256.empty() ? "" : "  sha256 " + i.device_lib_sha256.substr(0, 12)));
  fact("opcheck_version", "opcheck", i.opcheck_version);
  fact("torch_version", "libtorch", i.torch_version);
  fact("shard", "Shard", i.shard);
  std::string argv;
  for (const auto& a : i.argv) argv += (argv.empty() ? "" : " ") + a;
  fact("argv", "Arguments", argv);
  out += "</dl>";
  if (!i.manifests.empty()) {
    out += "<details><summary>" + plural(static_cast<std::int64_t>(i.manifests.size()), "manifest", "manifests") +
           "</summary><ul>";
    for (const auto& [path, digest] : i.manifests)
      out += "<li><span class=\"mono\">" + esc(path) + "</span> <span class=\"sub\">sha256 " + esc(digest.substr(0, 12)) +
             "</span></li>";
    out += "</ul></details>";
  }
  // Warnings are said where the run is described: a model dropped from the selection changes what the numbers mean.
  if (!i.warnings.empty()) {
    out += "<details id=\"warnings\" open><summary>" +
           plural(static_cast<std::int64_t>(i.warnings.size()), "warning", "warnings") + "</summary><ul>";
    for (const auto& w : i.warnings) out += "<li class=\"mono\">" + esc(w) + "</li>";
    out += "</ul></details>";
  }
  out += "</header>\n";
}

void nav(std::string& out, bool with_trend) {
  out += "<nav><a href=\"#overview\">Overview</a><a href=\"#models\">Models</a><a href=\"#ops\">Ops</a>"
         "<a href=\"#groups\">Groups</a><a href=\"#failures\">Failures</a><a href=\"#coverage\">Coverage</a><a href=\"#dedupe\">Dedupe</a>"
         "<a href=\"#slowest\">Slowest</a>";
  if (with_trend) out += "<a href=\"#trend\">Trend</a>";
  out += "</nav>\n";
}

void overview(std::string& out, const RunReport& run, const RunStats& st, const Trend& trend) {
  const OutcomeCounts& c = st.totals;
  out += "<div id=\"overview\">";
  if (run.info.interrupted) {
    out += "<div class=\"banner\" id=\"interrupted\"><b>The run stopped early</b>";
    if (!run.info.stop_reason.empty()) out += ": " + esc(run.info.stop_reason);
    out += ". Cases it did not reach are not in this report.</div>\n";
  }
  out += "<div class=\"kpis\">";
  const auto rate = c.pass_rate();
  out += kpi("pass-rate", "Pass rate", pct(rate),
             std::to_string(c.correct()) + " correct of " + std::to_string(c.counted()) +
                 " counted (skips, xfails and passes without the device left out)",
             sort_key(rate), rate_tone(rate));
  out += kpi("total", "Cases", std::to_string(c.total()),
             plural(st.dedupe.unique, "unique run", "unique runs") +
                 (run.info.deselected ? ", " + std::to_string(run.info.deselected) + " deselected" : ""),
             std::to_string(c.total()));
  for (const auto& s : kOutcomes) {
    const std::int64_t n = c.count(s.outcome);
    const bool bad = n > 0 && failing(s.outcome, run);
    out += kpi(s.css, s.label, std::to_string(n), "", std::to_string(n), bad ? "bad" : "");
  }
  const auto& en = st.enabled;
  out += kpi("enabled-coverage", "Enabled ops tested", en.percent ? fmt("%.1f%%", *en.percent) : "n/a",
             en.enabled ? std::to_string(en.exercised.size()) + " of " + std::to_string(en.enabled) + " enabled ops"
                        : "device listed no enabled ops",
             sort_key(en.percent));
  out += kpi("dedupe-ratio", "Dedupe", fmt("%.2f×", st.dedupe.ratio()),
             plural(st.dedupe.duplicates_served, "occurrence served", "occurrences served") + " by another's run",
             sort_key(std::optional<double>(st.dedupe.ratio())));
  const auto& t = st.time;
  const double total_ms = t.materialize_ms + t.reference_ms + t.device_ms + t.compare_ms + t.compile_ms;
  out += kpi("case-time", "Case time", fmt("%.2f s", total_ms / 1000.0),
             "device " + fmt("%.2f s", t.device_ms / 1000.0) + ", reference " + fmt("%.2f s", t.reference_ms / 1000.0),
             sort_key(std::optional<double>(total_ms)));
  if (trend.points.size() >= 2) {
    const auto& last = trend.points.back();
    if (last.diff) {
      const auto n = static_cast<std::int64_t>(regression_count(*last.diff));
      out += kpi("regressions", "Regressions", std::to_string(n),
                 "vs the run of " + esc(short_time(trend.points[trend.points.size() - 2].run->info.started_at,
                                                   trend.points.size() - 2)) +
                     ", " + std::to_string(last.diff->fixed.size()) + " fixed",
                 std::to_string(n), n > 0 ? "bad" : "good");
    }
  }
  out += "</div>\n";

  out += "<section><h2>Outcomes</h2>";
  if (c.total() == 0) {
    out += "<p class=\"note\">No cases ran.</p>";
  } else {
    out += "<svg class=\"strip\" id=\"outcome-chart\" viewBox=\"0 0 1000 30\" preserveAspectRatio=\"none\" "
           "role=\"img\" aria-label=\"Outcomes of all cases\">" +
           outcome_strip(c, 0, 0, 1000, 30) + "</svg>" + legend();
  }
  out += "</section>\n</div>\n";
}

void models_section(std::string& out, const RunStats& st) {
  out += "<section id=\"models\"><h2>Pass rate per model <span class=\"count\">" +
         std::to_string(st.per_model.size()) + "</span></h2>\n";
  if (st.per_model.empty()) {
    out += "<p class=\"note\">No cases ran.</p></section>\n";
    return;
  }
  // Bar = pass rate on a 0–100% scale; the thin strip under it is the model's outcome mix.
  const double label_w = 230, bar_w = 560, right_w = 170, row_h = 34, top = 22;
  const double width = label_w + bar_w + right_w;
  const double height = top + row_h * static_cast<double>(st.per_model.size()) + 6;
  out += "<svg class=\"chart\" id=\"model-chart\" viewBox=\"0 0 " + fmt("%.0f", width) + " " + fmt("%.0f", height) +
         "\" style=\"max-width:" + fmt("%.0f", width) + "px\" role=\"img\" aria-label=\"Pass rate per model\">";
  for (int g = 0; g <= 4; ++g) {
    const double x = label_w + bar_w * g / 4.0;
    out += "<line x1=\"" + fmt("%.1f", x) + "\" y1=\"" + fmt("%.0f", top - 4) + "\" x2=\"" + fmt("%.1f", x) +
           "\" y2=\"" + fmt("%.0f", height - 4) + "\" stroke=\"#e4e7eb\"/><text x=\"" + fmt("%.1f", x) +
           "\" y=\"12\" font-size=\"11\" fill=\"#616e7c\" text-anchor=\"middle\">" + std::to_string(g * 25) + "%</text>";
  }
  double y = top;
  for (const auto& [model, c] : st.per_model) {
    const auto rate = c.pass_rate();
    out += "<g class=\"bar\" data-model=\"" + esc(model) + "\"><title>" + esc(model) + ": " + pct(rate) + " (" +
           std::to_string(c.correct()) + " correct of " + std::to_string(c.counted()) + " counted, " +
           std::to_string(c.total()) + " cases)</title>";
    out += "<text x=\"" + fmt("%.0f", label_w - 10) + "\" y=\"" + fmt("%.1f", y + 14) +
           "\" font-size=\"13\" text-anchor=\"end\" fill=\"#1f2933\">" + esc(chart_label(model, 30)) + "</text>";
    out += "<rect x=\"" + fmt("%.0f", label_w) + "\" y=\"" + fmt("%.1f", y + 3) + "\" width=\"" + fmt("%.0f", bar_w) +
           "\" height=\"15\" rx=\"3\" fill=\"#eef2f6\"/>";
    if (rate && *rate > 0)
      out += "<rect class=\"rate\" x=\"" + fmt("%.0f", label_w) + "\" y=\"" + fmt("%.1f", y + 3) + "\" width=\"" +
             fmt("%.2f", bar_w * *rate) + "\" height=\"15\" rx=\"3\" fill=\"" + rate_color(*rate) + "\"/>";
    out += outcome_strip(c, label_w, y + 21, bar_w, 4);
    out += "<text x=\"" + fmt("%.0f", label_w + bar_w + 10) + "\" y=\"" + fmt("%.1f", y + 14) +
           "\" font-size=\"13\" fill=\"#1f2933\"><tspan font-weight=\"600\">" + pct(rate) + "</tspan> <tspan fill=\"#616e7c\">" +
           std::to_string(c.correct()) + "/" + std::to_string(c.counted()) + "</tspan></text></g>";
    y += row_h;
  }
  out += "</svg>" + legend();

  out += "<div class=\"scroll\"><table class=\"sortable\" id=\"model-table\"><thead><tr>" + th("Model") +
         counts_header() + th("Ops", true, "distinct ops as written in the manifests") +
         th("Signatures", true, "distinct (op, input signature) pairs") +
         th("Unique runs", true, "occurrences decided by their own run") + "</tr></thead><tbody>\n";
  for (const auto& [model, c] : st.per_model) {
    const auto cov = st.coverage_per_model.find(model);
    const auto dd = st.dedupe_per_model.find(model);
    out += "<tr data-model=\"" + esc(model) + "\"><td data-col=\"model\">" + esc(model) + "</td>" + counts_cells(c) +
           td_num("ops", cov == st.coverage_per_model.end() ? 0 : static_cast<std::int64_t>(cov->second.ops.size())) +
           td_num("signatures",
                  cov == st.coverage_per_model.end() ? 0 : static_cast<std::int64_t>(cov->second.signatures.size())) +
           td_num("unique", dd == st.dedupe_per_model.end() ? 0 : dd->second.unique) + "</tr>\n";
  }
  out += "</tbody></table></div></section>\n";
}

void ops_section(std::string& out, const RunStats& st) {
  out += "<section id=\"ops\"><h2>Pass rate per op <span class=\"count\">" + std::to_string(st.per_op.size()) +
         "</span></h2>\n";
  if (st.per_op.empty()) {
    out += "<p class=\"note\">No cases ran.</p></section>\n";
    return;
  }
  out += "<p class=\"note\">Worst first. Click a heading to sort.</p>";
  out += filter_controls("op-table", "Filter ops");
  // Worst first: the ops a bring-up team should look at lead the table.
  std::vector<std::pair<std::string, OutcomeCounts>> ops(st.per_op.begin(), st.per_op.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
    const auto ra = a.second.pass_rate(), rb = b.second.pass_rate();
    if (ra.has_value() != rb.has_value()) return ra.has_value();
    return ra && rb && *ra < *rb;
  });
  out += "<div class=\"scroll\"><table class=\"sortable\" id=\"op-table\"><thead><tr>" + th("Op") + counts_header() +
         "</tr></thead><tbody>\n";
  for (const auto& [op, c] : ops)
    out += "<tr data-op=\"" + esc(op) + "\"><td data-col=\"op\" class=\"mono\">" + esc(op) + "</td>" + counts_cells(c) +
           "</tr>\n";
  out += "</tbody></table></div></section>\n";
}

void failures_section(std::string& out, const RunReport& run, const RunStats& st) {
  std::vector<const CaseRecord*> failures;
  OutcomeCounts failing_counts;
  for (const auto& rec : run.cases)
    if (fails_run(rec, run.info)) {
      failures.push_back(&rec);
      failing_counts.add(rec.outcome, rec.xfail_strictness);
    }
  // Wrong results and errors first: a missing kernel is a known gap, and its rows would push them out of sight.
  std::stable_partition(failures.begin(), failures.end(),
                        [](const CaseRecord* r) { return r->outcome != Outcome::NotSupported; });
  // The count by outcome, in the header's words: "10" alone read as 10 failed beside a header of "6 failed, 4 not
  // supported".
  out += "<section id=\"failures\"><h2>Failures <span class=\"count\">" + std::to_string(failures.size()) + "</span>";
  if (!failures.empty())
    out += " <span class=\"sub\" id=\"failure-counts\">" + esc(outcome_counts_text(failing_counts)) + "</span>";
  out += "</h2>\n";
  // Stage mix of everything that did not pass cleanly.
  std::string chips;
  for (const auto& [stage, n] : st.stages)
    if (n > 0 && stage != "PASSED" && stage != "SKIPPED")
      chips += "<span class=\"chip\" data-stage=\"" + esc(stage) + "\">" + esc(stage) + "<b>" + std::to_string(n) +
               "</b></span>";
  if (!chips.empty()) out += "<p class=\"note\">Stages of all occurrences that did not pass (xfailed included):</p><div class=\"chips\" id=\"stage-chips\">" + chips + "</div><br>";
  if (failures.empty()) {
    out += "<p class=\"note\">No failed, errored or xpassed cases.</p></section>\n";
    return;
  }
  std::vector<std::pair<std::string, std::string>> stage_opts, outcome_opts;
  for (const auto& [stage, n] : st.stages) {
    bool present = false;
    for (const auto* f : failures) present = present || stage == stage_name(f->result.stage);
    if (present) stage_opts.push_back({stage, stage});
  }
  for (const auto& s : kOutcomes)
    if (failing(s.outcome, run)) outcome_opts.push_back({s.css, s.css});
  out += filter_controls("failure-table", "Filter failures (id, op, message, stderr)",
                         select_control("failure-table", "data-outcome", "all outcomes", outcome_opts) +
                             select_control("failure-table", "data-stage", "all stages", stage_opts));
  out += "<div class=\"scroll\"><table class=\"sortable\" id=\"failure-table\"><thead><tr>" + th("Case") +
         th("Outcome") + th("Stage") +
         th("max_abs_diff", true, "greatest |device - reference| over all compared elements") +
         th("max_rel_diff", true, "greatest |device - reference| / |reference| over all compared elements") +
         th("pcc", true) + th("Mismatched", true) + th("Message") + "</tr></thead><tbody>\n";
  for (const CaseRecord* rec : failures) {
    const Result& r = rec->result;
    const CompareFigures& f = r.figures;
    out += "<tr data-id=\"" + esc(rec->id) + "\" data-model=\"" + esc(rec->model) + "\" data-outcome=\"" +
           outcome_name(rec->outcome) + "\" data-stage=\"" + stage_name(r.stage) + "\">";
    // Op, dtype and location sit under the id: the figures and the message get the width.
    out += "<td data-col=\"id\" class=\"case\"><span class=\"mono\">" + esc(rec->id) + "</span><div class=\"sub mono\">" +
           esc(rec->op) + (rec->dtype.empty() ? "" : " · " + esc(rec->dtype)) + "</div>";
    if (!r.resolved_op.empty()) out += "<div class=\"sub mono\">" + esc(r.resolved_op) + "</div>";
    if (!rec->file.empty())
      out += "<div class=\"sub\">" + esc(rec->file) + (rec->line > 0 ? ":" + std::to_string(rec->line) : "") + "</div>";
    out += "</td><td data-col=\"outcome\">" + pill(rec->outcome) + "</td><td data-col=\"stage\" class=\"mono\">" +
           stage_name(r.stage) + "</td>";
    out += td_num("max_abs_diff", f.max_abs_diff, figure(f.max_abs_diff));
    out += td_num("max_rel_diff", f.max_rel_diff, figure(f.max_rel_diff));
    out += td_num("pcc", f.pcc, figure(f.pcc));
    const std::string mism = f.total > 0 ? std::to_string(f.mismatched) + " / " + std::to_string(f.total) : "—";
    out += td_num("mismatched", f.total > 0 ? std::optional<double>(static_cast<double>(f.mismatched)) : std::nullopt,
                  mism);
    std::string first = first_line(r.message);
    if (first.empty() && rec->outcome == Outcome::XPassed) first = "[XPASS(strict)] " + rec->status_reason;
    out += "<td data-col=\"message\" class=\"msg\">" + esc(first);
    if (!rec->call.empty()) out += "<div class=\"sub mono\" data-col=\"call\">" + esc(rec->call) + "</div>";
    const std::string worst = worst_element_text(f);
    if (!worst.empty()) out += "<div class=\"sub mono\" data-col=\"worst\">" + esc(worst) + "</div>";
    for (const CaseLabel& l : rec->labels) {  // kCaseFields' shown labels: a tracker link is one click away
      if (!l.field->shown) continue;
      const bool link = l.value.rfind("https://", 0) == 0 || l.value.rfind("http://", 0) == 0;
      out += std::string("<div class=\"sub\" data-col=\"") + l.field->record_label + "\">" + l.field->record_label +
             ": " + (link ? "<a href=\"" + esc(l.value) + "\">" + esc(l.value) + "</a>" : esc(l.value)) + "</div>";
    }
    // The rest (whole message, why it was expected to fail, stderr) folds away so the table stays scannable.
    std::string more;
    if (r.message.find('\n') != std::string::npos) {
      std::string note;
      more += "<div class=\"sub\">message</div><pre>" + esc(capped(r.message, kMessageCap, &note)) + "</pre>";
      if (!note.empty()) more += "<div class=\"sub\">" + esc(note) + "</div>";
    }
    if (!rec->status_reason.empty()) more += "<div class=\"sub\">" + esc(rec->status) + ": " + esc(rec->status_reason) + "</div>";
    if (!rec->deduplicated_from.empty())
      more += "<div class=\"sub\">result of <span class=\"mono\">" + esc(rec->deduplicated_from) + "</span> (same dedupe key)</div>";
    if (r.decomposed || r.reference_upcast)
      more += std::string("<div class=\"sub\">") + (r.decomposed ? "decomposed " : "") +
              (r.reference_upcast ? "reference upcast" : "") + "</div>";
    if (!r.reference_made.empty()) more += "<div class=\"sub\">reference: " + esc(r.reference_made) + "</div>";
    for (const auto& n : r.judge_notes) more += "<div class=\"sub\">judge: " + esc(n) + "</div>";
    if (!r.captured_stderr.empty()) {
      std::string note;
      more += "<div class=\"sub\">captured stderr</div><pre>" + esc(capped(r.captured_stderr, kStderrCap, &note)) + "</pre>";
      if (!note.empty()) more += "<div class=\"sub\">" + esc(note) + "</div>";
    }
    if (!more.empty()) out += "<details class=\"more\"><summary>details</summary>" + more + "</details>";
    out += "</td></tr>\n";
  }
  out += "</tbody></table></div></section>\n";
}

// Root causes before the cases: a nightly with thousands of failures says "7 groups" first.
void groups_section(std::string& out, const RunReport& run) {
  const std::vector<FailureGroup> groups = group_failures(run);
  out += "<section id=\"groups\"><h2>Failure groups <span class=\"count\">" + std::to_string(groups.size()) +
         "</span></h2>\n";
  if (groups.empty()) {
    out += "<p class=\"note\">No failed, errored or not-supported cases.</p></section>\n";
    return;
  }
  out += "<p class=\"note\">Failures sharing a stage, an op and an error text (numbers, shapes and dtypes masked): "
         "one row per root cause, largest first.</p>";
  out += "<div class=\"scroll\"><table class=\"sortable\" id=\"group-table\"><thead><tr>" + th("#", true) +
         th("Occurrences", true) + th("Unique", true) + th("Stage") + th("Op") + th("Error") + th("Spans") +
         th("Example") + "</tr></thead><tbody>\n";
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const FailureGroup& g = groups[i];
    out += "<tr data-signature=\"" + esc(g.signature) + "\" data-stage=\"" + stage_name(g.stage) + "\">";
    out += td_num("rank", static_cast<std::int64_t>(i + 1)) + td_num("count", g.count) + td_num("unique", g.unique);
    out += std::string("<td data-col=\"stage\" class=\"mono\">") + stage_name(g.stage) + "</td>";
    out += "<td data-col=\"op\" class=\"mono\">" + esc(g.op) + "</td>";
    out += "<td data-col=\"error\" class=\"msg mono\">" + esc(g.text) + "</td>";
    out += "<td data-col=\"spans\"><div class=\"sub mono\">" + esc(join(g.ops)) + "</div><div class=\"sub\">" +
           esc(join(g.models)) + "</div><div class=\"sub mono\">" + esc(join(g.dtypes)) + "</div></td>";
    out += "<td data-col=\"example\" class=\"mono\">" + esc(g.example) +
           (g.minimal.empty() ? "" : "<div class=\"sub mono\" data-col=\"minimal\">" + esc(g.minimal) + "</div>") +
           "</td></tr>\n";
  }
  out += "</tbody></table></div></section>\n";
}

// Each exercised enabled op: how many occurrences reached it, from which sources, and their pass rate; worst first.
void enabled_op_table(std::string& out, const EnabledOpCoverage& en) {
  if (en.per_op.empty()) return;
  out += "<h3>Enabled ops by source <span class=\"count\">" + std::to_string(en.per_op.size()) + "</span></h3>";
  out += "<p class=\"note\">The occurrences that reached each enabled op (resolved to it, or ran it on the device), "
         "by where their case came from, and their pass rate. One occurrence counts for every op it reached. Worst "
         "first.</p>";
  out += filter_controls("enabled-op-table", "Filter enabled ops");
  std::vector<std::pair<std::string, EnabledOpTally>> ops(en.per_op.begin(), en.per_op.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
    const auto ra = a.second.outcomes.pass_rate(), rb = b.second.outcomes.pass_rate();
    if (ra.has_value() != rb.has_value()) return ra.has_value();
    return ra && rb && *ra < *rb;
  });
  out += "<div class=\"scroll\"><table class=\"sortable\" id=\"enabled-op-table\"><thead><tr>" + th("Op") +
         th("Cases", true, "occurrences that reached the op");
  static const char* const kSourceLabels[kCaseSourceCount] = {"Manifests", "v2 configs", "Traces", "OpInfo"};
  for (const char* label : kSourceLabels) out += th(label, true);
  out += th("Pass rate", true, kPassRateRule) + "</tr></thead><tbody>\n";
  for (const auto& [op, t] : ops) {
    out += "<tr data-op=\"" + esc(op) + "\"><td data-col=\"op\" class=\"mono\">" + esc(op) + "</td>" +
           td_num("cases", t.outcomes.total());
    for (int s = 0; s < kCaseSourceCount; ++s)
      out += td_num(case_source_name(static_cast<CaseSource>(s)), t.sources[static_cast<std::size_t>(s)]);
    out += td_num("pass_rate", t.outcomes.pass_rate(), pct(t.outcomes.pass_rate())) + "</tr>\n";
  }
  out += "</tbody></table></div>";
}

void coverage_section(std::string& out, const RunStats& st) {
  const auto& en = st.enabled;
  out += "<section id=\"coverage\"><h2>Coverage</h2><div class=\"kpis\">";
  out += kpi("ops", "Ops", std::to_string(st.coverage.ops.size()), "distinct, as written in the manifests",
             std::to_string(st.coverage.ops.size()));
  out += kpi("signatures", "Signatures", std::to_string(st.coverage.signatures.size()), "distinct (op, inputs) pairs",
             std::to_string(st.coverage.signatures.size()));
  out += kpi("resolved-ops", "ATen ops", std::to_string(st.resolved_ops.size()), "the cases resolved to",
             std::to_string(st.resolved_ops.size()));
  out += kpi("untested", "Untested enabled ops", en.enabled ? std::to_string(en.untouched.size()) : "n/a",
             en.enabled ? "of " + std::to_string(en.enabled) + " the device enables" : "device listed no enabled ops",
             en.enabled ? std::to_string(en.untouched.size()) : "", en.untouched.empty() ? "" : "warn");
  out += "</div>";
  if (!en.enabled) {
    out += "<p class=\"note\">The device did not list its enabled ops, so what it enables but no case tests is "
           "unknown.</p></section>\n";
    return;
  }
  // Progress bar: exercised share of the enabled ops.
  const double share = en.percent ? *en.percent / 100.0 : 0;
  out += "<p class=\"note\" id=\"coverage-line\">" + std::to_string(en.exercised.size()) + " of " +
         std::to_string(en.enabled) + " enabled ops tested (" + pct(share) + ")</p>";
  out += "<svg class=\"strip\" id=\"coverage-chart\" viewBox=\"0 0 1000 14\" preserveAspectRatio=\"none\" "
         "role=\"img\" aria-label=\"Enabled ops tested\"><rect x=\"0\" y=\"0\" width=\"1000\" height=\"14\" "
         "fill=\"#eef2f6\"/><rect x=\"0\" y=\"0\" width=\"" +
         fmt("%.2f", 1000 * share) + "\" height=\"14\" fill=\"#1565c0\"/></svg>";
  enabled_op_table(out, en);
  out += "<h3>Enabled but untested <span class=\"count\">" + std::to_string(en.untouched.size()) + "</span></h3>";
  if (en.untouched.empty()) {
    out += "<p class=\"note\">Every enabled op is exercised by some case.</p>";
  } else {
    out += "<div class=\"chips scrollable\" id=\"untested-ops\">";
    for (const auto& op : en.untouched) out += "<span class=\"chip mono\">" + esc(op) + "</span>";
    out += "</div>";
  }
  if (!en.exercised.empty()) {
    out += "<details class=\"more\"><summary>" + std::to_string(en.exercised.size()) +
           " enabled ops tested</summary><div class=\"chips\" id=\"tested-ops\">";
    for (const auto& op : en.exercised) out += "<span class=\"chip mono\">" + esc(op) + "</span>";
    out += "</div></details>";
  }
  out += "</section>\n";
}

void dedupe_section(std::string& out, const RunStats& st) {
  const DedupeStats& d = st.dedupe;
  out += "<section id=\"dedupe\"><h2>Dedupe</h2><div class=\"kpis\">";
  out += kpi("occurrences", "Occurrences", std::to_string(d.occurrences), "selected", std::to_string(d.occurrences));
  out += kpi("unique", "Unique runs", std::to_string(d.unique), "executed on the device", std::to_string(d.unique));
  out += kpi("served", "Served by dedupe", std::to_string(d.duplicates_served),
             d.occurrences ? pct(static_cast<double>(d.duplicates_served) / static_cast<double>(d.occurrences)) +
                                 " of occurrences not run again"
                           : "",
             std::to_string(d.duplicates_served));
  out += kpi("ratio", "Ratio", fmt("%.2f×", d.ratio()), "occurrences per unique run",
             sort_key(std::optional<double>(d.ratio())));
  out += "</div>";
  if (d.occurrences == 0) {
    out += "<p class=\"note\">No cases ran.</p></section>\n";
    return;
  }
  out += "<table class=\"sortable\" id=\"dedupe-table\"><thead><tr>" + th("Model") + th("Occurrences", true) +
         th("Unique runs", true) + th("Served", true) + th("Ratio", true) + "</tr></thead><tbody>\n";
  for (const auto& [model, md] : st.dedupe_per_model)
    out += "<tr data-model=\"" + esc(model) + "\"><td>" + esc(model) + "</td>" + td_num("occurrences", md.occurrences) +
           td_num("unique", md.unique) + td_num("served", md.duplicates_served) +
           td_num("ratio", std::optional<double>(md.ratio()), fmt("%.2f×", md.ratio())) + "</tr>\n";
  out += "</tbody></table></section>\n";
}

void slowest_section(std::string& out, const RunReport& run, const RunStats& st) {
  const TimeStats& t = st.time;
  out += "<section id=\"slowest\"><h2>Slowest cases <span class=\"count\">" + std::to_string(t.slowest.size()) +
         "</span></h2><div class=\"kpis\">";
  auto tile = [&](const char* id, const char* label, double ms) {
    out += kpi(id, label, fmt("%.2f s", ms / 1000.0), "", sort_key(std::optional<double>(ms)));
  };
  tile("materialize-ms", "Building inputs", t.materialize_ms);
  tile("reference-ms", "CPU reference", t.reference_ms);
  tile("device-ms", "Device", t.device_ms);
  tile("compile-ms", "Compile", t.compile_ms);
  tile("compare-ms", "Comparing", t.compare_ms);
  out += kpi("speedup", "Device speed-up", t.speedup_geomean ? fmt("%.2f×", *t.speedup_geomean) : "n/a",
             "geometric mean of reference / device time over " + plural(t.speedup_cases, "case", "cases"),
             sort_key(t.speedup_geomean));
  out += "</div>";
  if (t.slowest.empty()) {
    out += "<p class=\"note\">No case ran on the device.</p></section>\n";
    return;
  }
  static const char* kPhaseColors[] = {"#90a4ae", "#1565c0", "#ef6c00", "#7cb342", "#8e24aa"};
  out += "<div class=\"legend\"><span><i style=\"background:#90a4ae\"></i>inputs</span><span><i "
         "style=\"background:#1565c0\"></i>reference</span><span><i style=\"background:#ef6c00\"></i>device</span>"
         "<span><i style=\"background:#7cb342\"></i>compare</span><span><i style=\"background:#8e24aa\"></i>"
         "compile</span></div>";
  out += "<table class=\"sortable\" id=\"slow-table\"><thead><tr>" + th("#", true) + th("Case") + th("Outcome") +
         th("Total ms", true) + th("Inputs ms", true) + th("Reference ms", true) + th("Device ms", true) +
         th("Compare ms", true) + th("Compile ms", true) + th("Split") + "</tr></thead><tbody>\n";
  const double longest = std::max(case_time_ms(run.cases[t.slowest.front()]), 1e-9);
  int rank = 0;
  for (std::size_t i : t.slowest) {
    const CaseRecord& rec = run.cases[i];
    const Result& r = rec.result;
    const double total = case_time_ms(rec);
    out += "<tr data-id=\"" + esc(rec.id) + "\">" + td_num("rank", ++rank) + "<td class=\"mono\">" + esc(rec.id) +
           "</td><td>" + pill(rec.outcome) + "</td>";
    out += td_num("total_ms", std::optional<double>(total), millis(total));
    const double phases[] = {r.materialize_ms, r.reference_ms, r.device_ms, r.compare_ms, r.compile_ms};
    static const char* kCols[] = {"materialize_ms", "reference_ms", "device_ms", "compare_ms", "compile_ms"};
    for (int p = 0; p < 5; ++p) out += td_num(kCols[p], std::optional<double>(phases[p]), millis(phases[p]));
    // Bar length is relative to the slowest case, split by phase.
    out += "<td><svg width=\"200\" height=\"12\" viewBox=\"0 0 200 12\" role=\"img\" aria-label=\"time split\">";
    double at = 0;
    for (int p = 0; p < 5; ++p) {
      if (!(phases[p] > 0) || !std::isfinite(phases[p])) continue;
      const double w = 200 * phases[p] / longest;
      out += "<rect x=\"" + fmt("%.2f", at) + "\" y=\"1\" width=\"" + fmt("%.2f", w) + "\" height=\"10\" fill=\"" +
             kPhaseColors[p] + "\"/>";
      at += w;
    }
    out += "</svg></td></tr>\n";
  }
  out += "</tbody></table></section>\n";
}

// Pass rate over the runs, with the runs that brought regressions marked.
std::string trend_chart(const Trend& trend) {
  const double W = 960, H = 320, l = 100, r = 30, top = 30, b = 80;
  const double pw = W - l - r, ph = H - top - b;
  const std::size_t n = trend.points.size();
  double lo = 1.0;
  for (const auto& p : trend.points)
    if (auto rate = p.totals.pass_rate()) lo = std::min(lo, *rate);
  // Zoom in on the band the rates live in (a drop from 99% to 97% must be visible), on a round step.
  static const double kSteps[] = {0.01, 0.02, 0.05, 0.1, 0.2, 0.25};
  double floor_rate = std::max(0.0, lo - 0.02);
  double step = 0.25;
  for (double s : kSteps) {
    const double base = std::floor(floor_rate / s) * s;
    if ((1.0 - base) / s <= 8.0 + 1e-9) {
      step = s;
      break;
    }
  }
  const double base = std::max(0.0, std::floor(floor_rate / step + 1e-9) * step);
  auto X = [&](std::size_t i) { return n == 1 ? l + pw / 2 : l + pw * static_cast<double>(i) / static_cast<double>(n - 1); };
  auto Y = [&](double rate) { return top + ph * (1.0 - (rate - base) / (1.0 - base)); };

  std::string out = "<svg class=\"chart\" id=\"trend-chart\" viewBox=\"0 0 " + fmt("%.0f", W) + " " + fmt("%.0f", H) +
                    "\" style=\"max-width:" + fmt("%.0f", W) + "px\" role=\"img\" aria-label=\"Pass rate per run\">";
  for (double g = base; g <= 1.0 + 1e-9; g += step) {
    out += "<line x1=\"" + fmt("%.0f", l) + "\" x2=\"" + fmt("%.0f", W - r) + "\" y1=\"" + fmt("%.1f", Y(g)) +
           "\" y2=\"" + fmt("%.1f", Y(g)) + "\" stroke=\"#e4e7eb\"/><text x=\"" + fmt("%.0f", l - 8) + "\" y=\"" +
           fmt("%.1f", Y(g) + 4) + "\" font-size=\"11\" fill=\"#616e7c\" text-anchor=\"end\">" +
           fmt("%.0f%%", g * 100) + "</text>";
  }
  // Label every k-th run so the dates do not overlap.
  const std::size_t every = std::max<std::size_t>(1, (n + 11) / 12);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % every != 0 && i + 1 != n) continue;
    const std::string label = i + 1 == n ? "this run" : short_time(trend.points[i].run->info.started_at, i);
    out += "<text font-size=\"11\" fill=\"#616e7c\" text-anchor=\"end\" transform=\"translate(" + fmt("%.1f", X(i)) +
           "," + fmt("%.0f", top + ph + 16) + ") rotate(-30)\">" + esc(label) + "</text>";
  }
  // The line, broken where a run counted nothing.
  std::string path;
  bool pen = false;
  for (std::size_t i = 0; i < n; ++i) {
    const auto rate = trend.points[i].totals.pass_rate();
    if (!rate) {
      pen = false;
      continue;
    }
    path += (pen ? " L" : " M") + fmt("%.1f", X(i)) + " " + fmt("%.1f", Y(*rate));
    pen = true;
  }
  if (!path.empty()) out += "<path d=\"" + path.substr(1) + "\" fill=\"none\" stroke=\"#1565c0\" stroke-width=\"2.5\"/>";
  for (std::size_t i = 0; i < n; ++i) {
    const auto& p = trend.points[i];
    const auto rate = p.totals.pass_rate();
    if (!rate) continue;
    const std::size_t regs = p.diff ? regression_count(*p.diff) : 0;
    std::string tip = short_time(p.run->info.started_at, i) + ": " + pct(rate);
    if (p.diff)
      tip += ", " + plural(static_cast<std::int64_t>(regs), "regression", "regressions") + ", " +
             std::to_string(p.diff->fixed.size()) + " fixed";
    out += "<g class=\"point" + std::string(regs ? " regression" : "") + "\" data-run=\"" + std::to_string(i) +
           "\"><title>" + esc(tip) + "</title>";
    if (regs) {
      out += "<circle cx=\"" + fmt("%.1f", X(i)) + "\" cy=\"" + fmt("%.1f", Y(*rate)) +
             "\" r=\"7\" fill=\"#c62828\" stroke=\"#fff\" stroke-width=\"2\"/><text x=\"" + fmt("%.1f", X(i)) +
             "\" y=\"" + fmt("%.1f", Y(*rate) - 12) + "\" font-size=\"12\" font-weight=\"600\" fill=\"#c62828\" "
             "text-anchor=\"middle\">▼" + std::to_string(regs) + "</text>";
    } else {
      out += "<circle cx=\"" + fmt("%.1f", X(i)) + "\" cy=\"" + fmt("%.1f", Y(*rate)) + "\" r=\"4.5\" fill=\"" +
             (i + 1 == n ? "#102a43" : "#1565c0") + "\" stroke=\"#fff\" stroke-width=\"1.5\"/>";
    }
    out += "</g>";
  }
  out += "</svg><div class=\"legend\"><span><i style=\"background:#1565c0\"></i>pass rate</span><span><i "
         "style=\"background:#c62828\"></i>run with regressions (▼ count, from diff against the run before)</span></div>";
  return out;
}

void trend_section(std::string& out, const Trend& trend) {
  if (trend.points.size() < 2) return;
  out += "<section id=\"trend\"><h2>Trend <span class=\"count\">" + std::to_string(trend.points.size()) +
         " runs</span></h2>\n" + trend_chart(trend);
  out += "<div class=\"scroll\"><table class=\"sortable\" id=\"trend-table\"><thead><tr>" + th("Run") + th("Host") +
         counts_header() + th("Δ points", true, "pass-rate change against the run before") +
         th("Regressions", true) + th("Fixed", true) + th("Added", true) + th("Removed", true) + "</tr></thead><tbody>\n";
  for (std::size_t i = 0; i < trend.points.size(); ++i) {
    const auto& p = trend.points[i];
    const bool current = i + 1 == trend.points.size();
    const std::size_t regs = p.diff ? regression_count(*p.diff) : 0;
    std::string cls = regs ? "regressed" : "";
    if (current) cls += cls.empty() ? "current" : " current";
    out += "<tr data-run=\"" + std::to_string(i) + "\"" + (cls.empty() ? "" : " class=\"" + cls + "\"") + "><td>" +
           esc(short_time(p.run->info.started_at, i)) + (current ? " <span class=\"sub\">(this run)</span>" : "") +
           "</td><td>" + esc(p.run->info.host) + "</td>" + counts_cells(p.totals);
    if (p.diff) {
      const auto delta = p.diff->overall.delta();
      std::string text = delta ? fmt("%+.1f", *delta * 100.0) : "—";
      const char* tone = delta && *delta < -1e-12 ? "delta-down" : delta && *delta > 1e-12 ? "delta-up" : "";
      out += "<td class=\"num " + std::string(tone) + "\" data-col=\"delta\" data-sort=\"" +
             sort_key(delta ? std::optional<double>(*delta * 100.0) : std::nullopt) + "\">" + text + "</td>";
      out += td_num("regressions", static_cast<std::int64_t>(regs)) +
             td_num("fixed", static_cast<std::int64_t>(p.diff->fixed.size())) +
             td_num("added", static_cast<std::int64_t>(p.diff->added.size())) +
             td_num("removed", static_cast<std::int64_t>(p.diff->removed.size()));
    } else {
      const std::string why = p.diff_error.empty() ? "first run" : "not compared: " + p.diff_error;
      out += "<td colspan=\"5\" class=\"sub\">" + esc(why) + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";

  // What broke, run by run, newest first; the newest is open.
  bool first = true;
  for (std::size_t i = trend.points.size(); i-- > 1;) {
    const auto& p = trend.points[i];
    if (!p.diff || !p.diff->has_regressions()) continue;
    std::vector<const CaseChange*> changes;
    for (const auto& c : p.diff->regressions) changes.push_back(&c);
    for (const auto& c : p.diff->stage_changes) changes.push_back(&c);
    out += "<details class=\"reg\" data-run=\"" + std::to_string(i) + "\"" + (first ? " open" : "") + "><summary>" +
           esc(i + 1 == trend.points.size() ? std::string("this run") : short_time(p.run->info.started_at, i)) + ": " +
           plural(static_cast<std::int64_t>(changes.size()), "regression", "regressions") + " since " +
           esc(short_time(trend.points[i - 1].run->info.started_at, i - 1)) + "</summary>";
    out += "<table class=\"regressions\"><thead><tr><th>Case</th><th>Before</th><th>Now</th><th>Message</th></tr></thead><tbody>";
    for (const CaseChange* c : changes) {
      auto verdict = [](const std::optional<Outcome>& o, const std::optional<Stage>& s) {
        if (!o) return std::string("absent");
        std::string v = pill(*o);
        if (s && *o != Outcome::Passed && *o != Outcome::Skipped) v += " <span class=\"mono sub\">" + std::string(stage_name(*s)) + "</span>";
        return v;
      };
      out += "<tr data-id=\"" + esc(c->id) + "\"><td class=\"mono\">" + esc(c->id) + "</td><td>" +
             verdict(c->old_outcome, c->old_stage) + "</td><td>" + verdict(c->new_outcome, c->new_stage) +
             "</td><td class=\"msg\">" + esc(c->message) + "</td></tr>";
    }
    out += "</tbody></table></details>\n";
    first = false;
  }
  out += "</section>\n";
}

}  // namespace

std::string html_report(const RunReport& run, const std::vector<RunReport>& history) {
  const RunStats st = compute_stats(run);
  const Trend trend = build_trend(run, history);

  std::string out;
  out.reserve(64 * 1024 + run.cases.size() * 512);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Nothing may load from anywhere, and only the script below (by its hash) may run.
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
         "img-src data:; script-src " +
         script_hash_source() + "\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<link rel=\"icon\" href=\"data:,\">\n";
  out += "<meta name=\"generator\" content=\"opcheck " + esc(run.info.opcheck_version) + "\">\n";
  std::string title = "opcheck report";
  if (!run.info.device_name.empty()) title += " — " + run.info.device_name;
  if (!run.info.started_at.empty()) title += " — " + short_time(run.info.started_at, 0);
  out += "<title>" + esc(title) + "</title>\n<style>" + std::string(html_report_style()) + "</style>\n</head>\n<body>\n";
  header(out, run);
  nav(out, trend.points.size() >= 2);
  out += "<main>\n";
  overview(out, run, st, trend);
  models_section(out, st);
  groups_section(out, run);
  failures_section(out, run, st);
  ops_section(out, st);
  out += "<div class=\"cols\">";
  coverage_section(out, st);
  dedupe_section(out, st);
  out += "</div>\n";
  slowest_section(out, run, st);
  trend_section(out, trend);
  out += "</main>\n<footer>Written by opcheck " + esc(run.info.opcheck_version) +
         ". Pass rate = " + kPassRateRule +
         "; max abs/rel diff: the greatest difference over all compared elements; the figures are those of the "
         "metrics file.</footer>\n";
  out += "<script>" + std::string(html_report_script()) + "</script>\n</body>\n</html>\n";
  return out;
}

void write_html_report(const RunReport& run, const std::vector<RunReport>& history, const std::string& path) {
  write_file_atomically(path, html_report(run, history));
}

namespace {

// Why a `*.json` entry of a history folder is not read: "" when it is a regular file of the folder (or a link to
// one inside it).
std::string not_a_history_file(const std::filesystem::path& entry, const std::filesystem::path& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(entry, ec);
  if (fs::is_symlink(link)) {
    const fs::path target = fs::weakly_canonical(entry, ec);
    if (ec || !fs::exists(target, ec)) return "a symbolic link whose target does not exist";
    if (target.parent_path() != fs::weakly_canonical(folder, ec))
      return "a symbolic link out of the folder (not followed)";
  }
  const fs::file_status st = fs::status(entry, ec);
  if (ec) return "cannot be read: " + ec.message();
  switch (st.type()) {
    case fs::file_type::regular: return {};
    case fs::file_type::directory: return "a folder";
    case fs::file_type::fifo: return "a FIFO (named pipe), not a regular file";
    default: return "not a regular file";
  }
}

}  // namespace

std::vector<RunReport> read_metrics_history(const std::string& dir, const std::string& exclude,
                                            const RunInfo* current, std::vector<std::string>* skipped) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw ReportError(dir + ": error: not a folder\n  Fix: pass --history the folder that holds earlier runs' metrics "
                            "JSON files");
  std::vector<fs::path> files;
  fs::directory_iterator it(dir, ec), end;
  if (ec) throw ReportError(dir + ": error: cannot read the folder: " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) throw ReportError(dir + ": error: cannot read the folder: " + ec.message());
    if (it->path().extension() == ".json") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  const auto skip = [&](const fs::path& f, const std::string& why) {
    if (skipped) skipped->push_back(f.string() + ": " + why);
  };
  std::vector<std::pair<std::string, RunReport>> runs;  // started_at, run (file-name order so far)
  for (const auto& f : files) {
    if (const std::string why = not_a_history_file(f, dir); !why.empty()) {
      skip(f, why);
      continue;
    }
    std::error_code eq;
    if (!exclude.empty() && fs::equivalent(f, exclude, eq)) continue;
    RunReport r;
    try {
      r = read_metrics(f.string());
    } catch (const ReportError& e) {
      // "path: error: what\n  Fix: ..." -> what: the readers' messages name the place, never the bytes.
      std::string what = e.what();
      if (const auto at = what.find(": error: "); at != std::string::npos) what.erase(0, at + 9);
      skip(f, "not a readable metrics file: " + what.substr(0, what.find('\n')));
      continue;
    }
    if (current && r.info.started_at == current->started_at && r.info.host == current->host &&
        r.info.duration_s == current->duration_s && r.info.argv == current->argv && r.info.shard == current->shard)
      continue;  // a copy of the current run
    std::string started = r.info.started_at;
    runs.emplace_back(std::move(started), std::move(r));
  }
  std::stable_sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<RunReport> out;
  out.reserve(runs.size());
  for (auto& [started, r] : runs) out.push_back(std::move(r));
  return out;
}

}  // namespace opcheck
