// The HTML page's coverage (ops the device has, enabled ops exercised), dedupe and slowest-cases sections.

#include "report/html_parts.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "report/console.h"
#include "report/figures.h"
#include "report/metrics.h"

namespace opcheck::html {

namespace {

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

}  // namespace

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

}  // namespace opcheck::html
