// The top of the HTML page: the header with the run's facts, the navigation, the overview (KPIs, outcome strip),
// and the per-model and per-op tables.

#include "report/html_parts.h"

#include <algorithm>
#include <string>

#include "report/console.h"
#include "report/figures.h"
#include "report/metrics.h"

namespace opcheck::html {

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

}  // namespace opcheck::html
