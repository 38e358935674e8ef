#include "report/stats.h"

#include <algorithm>
#include <cmath>

#include "common/text.h"

namespace opcheck {
namespace {

// Device op lists and resolved ops spell names differently ("aten::add.Tensor", "add.Tensor", "aten::relu",
// "relu.default"); compare them without the namespace and without the ".default" overload.
std::string normalize_op(std::string s) {
  if (s.rfind("aten::", 0) == 0) s.erase(0, 6);
  const std::string dflt = ".default";
  if (s.size() > dflt.size() && s.compare(s.size() - dflt.size(), dflt.size(), dflt) == 0) s.resize(s.size() - dflt.size());
  return s;
}

std::string base_name(const std::string& normalized) { return normalized.substr(0, normalized.find('.')); }

}  // namespace

std::string not_run_cause(const RunInfo& info) {
  if (info.stopped_by.empty()) return "stopped";
  if (info.stopped_by == "device") return "the device did not start";
  return info.stopped_by;
}

void OutcomeCounts::add(Outcome o, XfailStrictness strictness) {
  switch (o) {
    case Outcome::Passed: ++passed; break;
    case Outcome::Failed: ++failed; break;
    case Outcome::Error: ++errors; break;
    case Outcome::Skipped: ++skipped; break;
    case Outcome::XFailed: ++xfailed; break;
    case Outcome::XPassed:
      ++xpassed;
      if (strictness == XfailStrictness::NonStrict) ++xpassed_nonstrict;
      break;
    case Outcome::NotSupported: ++not_supported; break;
    case Outcome::NoDeviceOp: ++no_device_op; break;
  }
}

std::int64_t OutcomeCounts::count(Outcome o) const {
  switch (o) {
    case Outcome::Passed: return passed;
    case Outcome::Failed: return failed;
    case Outcome::Error: return errors;
    case Outcome::Skipped: return skipped;
    case Outcome::XFailed: return xfailed;
    case Outcome::XPassed: return xpassed;
    case Outcome::NotSupported: return not_supported;
    case Outcome::NoDeviceOp: return no_device_op;
  }
  return 0;
}

std::optional<double> OutcomeCounts::pass_rate() const {
  if (counted() == 0) return std::nullopt;
  return static_cast<double>(correct()) / static_cast<double>(counted());
}

bool OutcomeCounts::operator==(const OutcomeCounts& o) const {
  return passed == o.passed && failed == o.failed && skipped == o.skipped && xfailed == o.xfailed &&
         xpassed == o.xpassed && errors == o.errors && not_supported == o.not_supported &&
         no_device_op == o.no_device_op &&
         xpassed_nonstrict == o.xpassed_nonstrict;
}

const char* case_source_name(CaseSource s) {
  switch (s) {
    case CaseSource::Manifests: return "manifests";
    case CaseSource::V2Configs: return "v2_configs";
    case CaseSource::Traces: return "traces";
    case CaseSource::OpInfo: return "opinfo";
  }
  return "manifests";
}

CaseSource case_source(const CaseRecord& rec) {
  const auto marked = [&](const char* m) { return std::find(rec.marks.begin(), rec.marks.end(), m) != rec.marks.end(); };
  if (marked("opinfo")) return CaseSource::OpInfo;
  if (marked("trace")) return CaseSource::Traces;
  if (!rec.label("upstream_test").empty()) return CaseSource::V2Configs;
  return CaseSource::Manifests;
}

double DedupeStats::ratio() const {
  if (occurrences == 0) return 0;
  return unique == 0 ? static_cast<double>(occurrences) : static_cast<double>(occurrences) / static_cast<double>(unique);
}

double case_time_ms(const CaseRecord& rec) {
  if (!rec.deduplicated_from.empty()) return 0;
  const Result& r = rec.result;
  return r.materialize_ms + r.reference_ms + r.device_ms + r.compare_ms + r.compile_ms + r.golden_ms +
         r.reference_cache_ms;
}

namespace {

void count_reference_source(const Result& r, ReferenceCacheStats& c) {
  if (r.reference_source.empty()) return;
  c.used = true;
  if (r.reference_source == "cache") ++c.from_cache;
  else ++c.computed;
  if (r.reference_source == "not_cacheable") ++c.not_cacheable;
  if (r.reference_stored) ++c.stored;
  c.evicted += r.reference_evicted;
  if (r.reference_source == "recomputed") ++c.rejected;
  c.reference_cache_ms += r.reference_cache_ms;
}

}  // namespace

RunStats compute_stats(const RunReport& report) {
  RunStats st;
  for (int s = 0; s <= static_cast<int>(kLastStage); ++s) st.stages[stage_name(static_cast<Stage>(s))] = 0;

  double log_speedup_sum = 0;
  std::vector<std::size_t> ran;
  for (std::size_t i = 0; i < report.cases.size(); ++i) {
    const CaseRecord& rec = report.cases[i];
    const Result& r = rec.result;
    ++st.sources[static_cast<std::size_t>(case_source(rec))];
    for (OutcomeCounts* c : {&st.totals, &st.per_model[rec.model], &st.per_op[rec.op], &st.per_dtype[rec.dtype]})
      c->add(rec.outcome, rec.xfail_strictness);
    ++st.stages[stage_name(r.stage)];

    const bool served = !rec.deduplicated_from.empty();
    for (DedupeStats* d : {&st.dedupe, &st.dedupe_per_model[rec.model]}) {
      ++d->occurrences;
      ++(served ? d->duplicates_served : d->unique);
    }

    for (OpCoverage* c : {&st.coverage, &st.coverage_per_model[rec.model]}) {
      c->ops.insert(rec.op);
      c->signatures.insert({rec.op, rec.signature});
    }
    for (auto& op : split_list(r.resolved_op)) st.resolved_ops.insert(op);  // "aten::a.x, aten::b": the ops used
    for (const auto& d : r.device_ops) st.device_ops.insert(d.op);

    if (!served) {
      ran.push_back(i);
      st.time.materialize_ms += r.materialize_ms;
      st.time.reference_ms += r.reference_ms;
      st.time.device_ms += r.device_ms;
      st.time.compile_ms += r.compile_ms;
      st.time.golden_ms += r.golden_ms;
      st.time.compare_ms += r.compare_ms;
      count_reference_source(r, st.reference_cache);
      if (r.reference_ms > 0 && r.device_ms > 0 && std::isfinite(r.reference_ms) && std::isfinite(r.device_ms)) {
        log_speedup_sum += std::log(r.reference_ms / r.device_ms);
        ++st.time.speedup_cases;
      }
    }
  }
  if (st.time.speedup_cases > 0) st.time.speedup_geomean = std::exp(log_speedup_sum / static_cast<double>(st.time.speedup_cases));

  std::stable_sort(ran.begin(), ran.end(), [&](std::size_t a, std::size_t b) {
    return case_time_ms(report.cases[a]) > case_time_ms(report.cases[b]);
  });
  if (ran.size() > 20) ran.resize(20);
  st.time.slowest = ran;

  // Enabled-op coverage: an enabled op without an overload ("aten::add") counts as exercised by any overload. What
  // reached the device counts as much as what a case named: every case moves its tensors with _copy_from.
  std::set<std::string> enabled(report.info.enabled_ops.begin(), report.info.enabled_ops.end());
  std::map<std::string, std::vector<const std::string*>> by_name, by_bare_name;
  for (const auto& e : enabled) {
    const auto n = normalize_op(e);
    by_name[n].push_back(&e);
    if (n.find('.') == std::string::npos) by_bare_name[n].push_back(&e);
  }
  for (const CaseRecord& rec : report.cases) {
    std::set<const std::string*> reached;
    const auto reach = [&](const std::string& op) {
      const auto n = normalize_op(op);
      for (const auto* m : {&by_name, &by_bare_name}) {
        const auto it = m->find(m == &by_name ? n : base_name(n));
        if (it != m->end()) reached.insert(it->second.begin(), it->second.end());
      }
    };
    // A call that ran no op on the device exercised none of its ops there: it reaches only what it moved.
    if (rec.outcome != Outcome::NoDeviceOp)
      for (const auto& op : split_list(rec.result.resolved_op)) reach(op);
    for (const auto& d : rec.result.device_ops) reach(d.op);
    for (const std::string* e : reached) {
      EnabledOpTally& t = st.enabled.per_op[*e];
      ++t.sources[static_cast<std::size_t>(case_source(rec))];
      t.outcomes.add(rec.outcome, rec.xfail_strictness);
    }
  }
  st.enabled.enabled = static_cast<std::int64_t>(enabled.size());
  for (const auto& e : enabled) (st.enabled.per_op.count(e) ? st.enabled.exercised : st.enabled.untouched).push_back(e);
  if (!enabled.empty())
    st.enabled.percent = 100.0 * static_cast<double>(st.enabled.exercised.size()) / static_cast<double>(enabled.size());
  return st;
}

}  // namespace opcheck
