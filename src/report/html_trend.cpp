// The HTML page's nightly trend: the runs of a history folder with their diffs, the pass-rate chart and the
// table of runs.

#include "report/html_parts.h"

#include <cmath>
#include <string>

#include "common/text.h"
#include "common/text_escape.h"
#include "report/console.h"
#include "report/report_error.h"

namespace opcheck::html {

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

namespace {

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

}  // namespace

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

}  // namespace opcheck::html
