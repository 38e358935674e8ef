// The HTML page's failures: the failure groups (root causes first) and each failing case with its message, figures
// and captured output.

#include "report/html_parts.h"

#include <algorithm>
#include <string>

#include "common/text.h"
#include "common/text_escape.h"
#include "report/console.h"
#include "report/failure_groups.h"
#include "report/figures.h"
#include "report/junit.h"
#include "report/metrics.h"

namespace opcheck::html {

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

}  // namespace opcheck::html
