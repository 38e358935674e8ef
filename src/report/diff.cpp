#include "report/diff.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "common/text.h"
#include "common/text_escape.h"
#include "report/report_error.h"

namespace opcheck {
namespace {

// A verdict as a run judged it: failing is fails_run(), and not_supported even where --not-supported-ok forgave it
// (a case that passed and now has no kernel regressed, whatever the run's exit code); passing is a pass, or an
// xpass the run forgave.
bool failing(const CaseRecord& r, const RunInfo& info) {
  return fails_run(r, info) || r.outcome == Outcome::NotSupported;
}
bool passing(const CaseRecord& r, const RunInfo& info) {
  return r.outcome == Outcome::Passed || (r.outcome == Outcome::XPassed && !fails_run(r, info));
}

std::map<std::string, const CaseRecord*> index_by_id(const RunReport& r, const char* which) {
  std::map<std::string, const CaseRecord*> m;
  for (const auto& rec : r.cases)
    if (!m.emplace(rec.id, &rec).second)
      throw ReportError("opcheck diff: error: the " + std::string(which) + " run holds case " + rec.id +
                        " twice\n  Fix: diff metrics files written by `opcheck run` or `opcheck merge`");
  return m;
}

std::vector<PassRateDelta> rate_deltas(const std::map<std::string, OutcomeCounts>& old_m,
                                       const std::map<std::string, OutcomeCounts>& new_m) {
  std::map<std::string, PassRateDelta> all;
  for (const auto& [k, c] : old_m) { all[k].name = k; all[k].old_counts = c; }
  for (const auto& [k, c] : new_m) { all[k].name = k; all[k].new_counts = c; }
  std::vector<PassRateDelta> out;
  for (auto& [k, d] : all) {
    d.old_rate = d.old_counts.pass_rate();
    d.new_rate = d.new_counts.pass_rate();
    out.push_back(d);
  }
  return out;
}

std::string pct(const std::optional<double>& r) {
  if (!r) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", *r * 100.0);
  return buf;
}

std::string verdict(const std::optional<Outcome>& o, const std::optional<Stage>& s) {
  if (!o) return "absent";
  std::string v = outcome_name(*o);
  if (s && (*o == Outcome::Failed || *o == Outcome::Error || *o == Outcome::XFailed)) v += std::string(" [") + stage_name(*s) + "]";
  return v;
}

/// A first line as one line of diff's lists: a long one (a dispatcher's account) cut, the reports have all of it.
std::string cut_line(const std::string& text) {
  constexpr std::size_t kMax = 160;
  const std::string first = text.substr(0, text.find('\n'));
  return first.size() <= kMax ? first : first.substr(0, kMax) + " ...";
}

std::string change_line(const CaseChange& c) {
  std::string line = "  " + c.id + ": " + verdict(c.old_outcome, c.old_stage) + " -> " + verdict(c.new_outcome, c.new_stage);
  if (!c.message.empty()) line += " - " + cut_line(c.message);
  return line + "\n";
}

std::string rate_line(const PassRateDelta& d) {
  std::string line = pct(d.old_rate) + " -> " + pct(d.new_rate);
  if (auto delta = d.delta()) {
    char buf[48];
    std::snprintf(buf, sizeof buf, " (%+.1f points)", *delta * 100.0);
    line += buf;
  }
  return line;
}

bool rate_changed(const PassRateDelta& d) {
  if (d.old_rate.has_value() != d.new_rate.has_value()) return true;
  return d.old_rate && std::fabs(*d.old_rate - *d.new_rate) > 1e-12;
}

// Groups are matched by signature: a signature in one run only is a root cause that appeared or went away.
void diff_groups(const std::vector<FailureGroup>& old_groups, const std::vector<FailureGroup>& new_groups,
                 DiffResult& d) {
  std::set<std::string> old_sigs, new_sigs;
  for (const auto& g : old_groups) old_sigs.insert(g.signature);
  for (const auto& g : new_groups) new_sigs.insert(g.signature);
  for (const auto& g : new_groups)
    if (!old_sigs.count(g.signature)) d.new_groups.push_back(g);
  for (const auto& g : old_groups)
    if (!new_sigs.count(g.signature)) d.gone_groups.push_back(g);
}

std::string group_line(const FailureGroup& g, const char* what) {
  return "  group " + cut_line(g.signature) + " " + what + " (" + std::to_string(g.count) +
         (g.count == 1 ? " occurrence" : " occurrences") + ", example " + g.example + ")\n";
}

// The device as the reports name it: "loopback (privateuseone:0)", or "cpu" where its name is its device.
std::string device_label(const RunInfo& i) {
  if (i.device_name.empty() || i.device_name == i.device) return i.device.empty() ? i.device_name : i.device;
  return i.device_name + (i.device.empty() ? "" : " (" + i.device + ")");
}

std::string device_type(const std::string& device) { return device.substr(0, device.find(':')); }

// Two runs on another device type ("privateuseone" -> "cpu") or device name ("loopback" -> "spyre") checked different
// devices. Another index of one device, a new device library, backend modules or libtorch are the same device
// changed: notes. A fact one run does not record (an older metrics file) is not compared.
std::vector<DeviceChange> device_changes(const RunInfo& o, const RunInfo& n) {
  std::vector<DeviceChange> out;
  auto differ = [](const std::string& a, const std::string& b) { return !a.empty() && !b.empty() && a != b; };
  if (differ(device_type(o.device), device_type(n.device)) || differ(o.device_name, n.device_name))
    out.push_back({"device", device_label(o), device_label(n), true});
  auto note = [&](const char* what, const std::string& a, const std::string& b) {
    if (differ(a, b)) out.push_back({what, a, b, false});
  };
  note("backend version", join(o.python_modules, ", "), join(n.python_modules, ", "));
  note("device library digest", o.device_lib_sha256.substr(0, 12), n.device_lib_sha256.substr(0, 12));
  note("libtorch version", o.torch_version, n.torch_version);
  return out;
}

// The device change first (with its Fix unless allowed), then the notes.
std::string device_lines(const DiffResult& d, bool allowed) {
  std::string out, notes;
  for (const DeviceChange& c : d.device_changes) {
    if (!c.other_device) {
      notes += "opcheck diff: note: " + c.what + " changed: " + c.old_value + " -> " + c.new_value + "\n";
      continue;
    }
    out += "opcheck diff: the device changed: " + c.old_value + " in the old run, " + c.new_value +
           " in the new; the verdicts below are of different devices\n";
    if (!allowed)
      out += "  Fix: compare runs on one device, or pass --allow-device-change to compare them anyway\n";
  }
  return out + notes;
}

}  // namespace

bool DiffResult::different_device() const {
  for (const auto& c : device_changes)
    if (c.other_device) return true;
  return false;
}

std::optional<double> PassRateDelta::delta() const {
  if (!old_rate || !new_rate) return std::nullopt;
  return *new_rate - *old_rate;
}

DiffResult diff_reports(const RunReport& old_run, const RunReport& new_run) {
  DiffResult d;
  d.device_changes = device_changes(old_run.info, new_run.info);
  d.old_cases = old_run.cases.size();
  d.new_cases = new_run.cases.size();
  const auto old_ids = index_by_id(old_run, "old");
  const auto new_ids = index_by_id(new_run, "new");

  for (const auto& rec : new_run.cases) {
    CaseChange c;
    c.id = rec.id;
    c.new_outcome = rec.outcome;
    c.new_stage = rec.result.stage;
    c.message = first_line(rec.result.message);
    auto it = old_ids.find(rec.id);
    if (it == old_ids.end()) {
      d.added.push_back(c);
      continue;
    }
    const CaseRecord& old = *it->second;
    c.old_outcome = old.outcome;
    c.old_stage = old.result.stage;
    const bool now_failing = failing(rec, new_run.info), was_failing = failing(old, old_run.info);
    if (now_failing && !was_failing) {
      d.regressions.push_back(c);
    } else if (now_failing && was_failing) {
      if (old.result.stage != rec.result.stage || old.outcome != rec.outcome) d.stage_changes.push_back(c);
    } else if (passing(rec, new_run.info) && (was_failing || old.outcome == Outcome::XFailed)) {
      d.fixed.push_back(c);
    } else if (rec.outcome != old.outcome) {
      d.other.push_back(c);
    }
  }
  for (const auto& rec : old_run.cases) {
    if (new_ids.count(rec.id)) continue;
    CaseChange c;
    c.id = rec.id;
    c.old_outcome = rec.outcome;
    c.old_stage = rec.result.stage;  // no message: a case the new run does not hold is one short line
    d.removed.push_back(c);
  }

  const RunStats os = compute_stats(old_run), ns = compute_stats(new_run);
  d.overall.name = "overall";
  d.overall.old_counts = os.totals;
  d.overall.new_counts = ns.totals;
  d.overall.old_rate = os.totals.pass_rate();
  d.overall.new_rate = ns.totals.pass_rate();
  d.per_model = rate_deltas(os.per_model, ns.per_model);
  d.per_op = rate_deltas(os.per_op, ns.per_op);
  diff_groups(group_failures(old_run), group_failures(new_run), d);
  return d;
}

std::string render_diff(const DiffResult& d, const DiffAllowed& allowed) {
  std::string out = device_lines(d, allowed.device_change);
  if (d.different_cases()) {
    const std::size_t both = d.new_cases - d.added.size();
    out += "opcheck diff: the runs hold different case sets: " + std::to_string(d.removed.size()) +
          " only in the old run, " + std::to_string(d.added.size()) + " only in the new, " + std::to_string(both) +
          " in both; the pass rates below compare different cases\n";
    if (!allowed.different_cases)
      out += "  Fix: diff runs of one selection (merge shards first: opcheck merge), or pass "
             "--allow-different-cases to compare them anyway\n";
  }
  out += "opcheck diff: " + std::to_string(d.regressions.size() + d.stage_changes.size()) + " regression" +
                    (d.regressions.size() + d.stage_changes.size() == 1 ? "" : "s") + ", " +
                    std::to_string(d.fixed.size()) + " fixed, " + std::to_string(d.added.size()) + " added, " +
                    std::to_string(d.removed.size()) + " removed, " + std::to_string(d.other.size()) +
                    " other change" + (d.other.size() == 1 ? "" : "s") + " (" + std::to_string(d.old_cases) +
                    " -> " + std::to_string(d.new_cases) + (d.new_cases == 1 ? " case)\n" : " cases)\n");
  auto section = [&](const char* title, const std::vector<CaseChange>& v) {
    if (v.empty()) return;
    out += std::string("\n") + title + " (" + std::to_string(v.size()) + "):\n";
    for (const auto& c : v) out += change_line(c);
  };
  section("Regressions", d.regressions);
  section("Failing at another stage", d.stage_changes);
  section("Fixed", d.fixed);
  section("Added", d.added);
  section("Removed", d.removed);
  section("Other outcome changes", d.other);

  if (!d.new_groups.empty()) out += "\nNew failure groups (" + std::to_string(d.new_groups.size()) + "):\n";
  for (const auto& g : d.new_groups) out += group_line(g, "new");
  if (!d.gone_groups.empty()) out += "\nFailure groups gone (" + std::to_string(d.gone_groups.size()) + "):\n";
  for (const auto& g : d.gone_groups) out += group_line(g, "gone");
  out += "\nPass rate: " + rate_line(d.overall) + "\n";
  auto rates = [&](const char* title, const std::vector<PassRateDelta>& v) {
    std::string body;
    for (const auto& r : v)
      if (rate_changed(r)) body += "  " + r.name + ": " + rate_line(r) + "\n";
    if (!body.empty()) out += std::string(title) + ":\n" + body;
  };
  rates("Pass rate by model", d.per_model);
  rates("Pass rate by op", d.per_op);
  // Ids, models, ops and messages come from metrics files, which are input: nothing in them reaches the terminal raw.
  return printable_lines(out);
}

int diff_exit_code(const DiffResult& diff, const DiffAllowed& allowed) {
  if (diff.different_device() && !allowed.device_change) return 2;
  if (diff.different_cases() && !allowed.different_cases) return 2;
  return diff.has_regressions() ? 1 : 0;
}

}  // namespace opcheck
