// The HTML page's building blocks: its text (escaped, capped, numbers as the page and its sort script spell them),
// the outcome vocabulary's pills and colours, KPI tiles, table cells and headings, filters, the outcome strip.

#include "report/html_parts.h"

#include <cmath>
#include <cstdio>

#include "common/text.h"
#include "common/text_escape.h"
#include "report/console.h"
#include "report/junit.h"
#include "report/metrics.h"

namespace opcheck::html {

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
// Building blocks

std::string kpi(const std::string& id, const std::string& label, const std::string& value, const std::string& sub,
                const std::string& data_value, const char* tone) {
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

std::string th(const char* label, bool numeric, const char* title) {
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
std::string filter_controls(const std::string& table_id, const std::string& placeholder, const std::string& selects) {
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

}  // namespace opcheck::html
