#include "report/metrics.h"

#include <nlohmann/json.hpp>

#include "report/atomic_file.h"
#include "report/failure_groups.h"
#include "report/record_json.h"
#include "report/report_error.h"
#include "report/stats.h"
#include "report/json_writer.h"

namespace opcheck {
namespace {

using json = nlohmann::json;

void write_counts(JsonWriter& w, const OutcomeCounts& c, bool with_pass_rate) {
  w.begin_object();
  w.field("passed", c.passed).field("failed", c.failed).field("not_supported", c.not_supported);
  w.field("skipped", c.skipped).field("no_device_op", c.no_device_op);
  w.field("xfailed", c.xfailed).field("xpassed", c.xpassed).field("errors", c.errors).field("total", c.total());
  if (with_pass_rate) w.field("pass_rate", c.pass_rate());
  w.end_object();
}

void write_counts_map(JsonWriter& w, const std::map<std::string, OutcomeCounts>& m) {
  w.begin_object();
  for (const auto& [k, c] : m) {
    w.key(k);
    write_counts(w, c, true);
  }
  w.end_object();
}

void write_sources(JsonWriter& w, const SourceCounts& sources) {
  w.begin_object();
  for (int s = 0; s < kCaseSourceCount; ++s)
    w.field(case_source_name(static_cast<CaseSource>(s)), sources[static_cast<std::size_t>(s)]);
  w.end_object();
}

void write_dedupe(JsonWriter& w, const DedupeStats& d) {
  w.field("occurrences", d.occurrences).field("unique", d.unique);
  w.field("duplicates_served", d.duplicates_served).field("ratio", d.ratio());
}

void write_timing(JsonWriter& w, const CaseRecord& rec) {
  const Result& r = rec.result;
  w.begin_object();
  w.field("id", rec.id).field("total_ms", case_time_ms(rec)).field("materialize_ms", r.materialize_ms);
  w.field("reference_ms", r.reference_ms).field("device_ms", r.device_ms).field("compare_ms", r.compare_ms);
  w.field("compile_ms", r.compile_ms);
  if (r.golden_ms > 0) w.field("golden_ms", r.golden_ms);
  if (!r.reference_source.empty()) w.field("reference_cache_ms", r.reference_cache_ms);
  w.end_object();
}

// --reference-cache: where the references came from.
void write_reference_cache(JsonWriter& w, const ReferenceCacheStats& c) {
  w.key("reference_cache").begin_object();
  w.field("from_cache", c.from_cache).field("computed", c.computed).field("not_cacheable", c.not_cacheable);
  w.field("stored", c.stored).field("evicted", c.evicted).field("rejected", c.rejected);
  w.field("reference_cache_ms", c.reference_cache_ms);
  w.end_object();
}

void write_failure_groups(JsonWriter& w, const std::vector<FailureGroup>& groups) {
  w.key("failure_groups").begin_array();
  for (const FailureGroup& g : groups) {
    w.begin_object();
    w.field("signature", g.signature).field("stage", stage_name(g.stage)).field("op", g.op);
    w.field("count", g.count).field("unique", g.unique).field("differs_between_runs", g.differs_between_runs);
    w.key("cases").strings(g.cases, /*compact=*/true);
    w.key("ops").strings(g.ops, /*compact=*/true);
    w.key("models").strings(g.models, /*compact=*/true);
    w.key("dtypes").strings(g.dtypes, /*compact=*/true);
    w.field("example", g.example);
    if (g.minimal.empty()) w.key("minimal").null();
    else w.field("minimal", g.minimal);
    w.end_object();
  }
  w.end_array();
}

}  // namespace

void write_metrics(const RunReport& report, TextOut& out) {
  const RunStats st = compute_stats(report);
  JsonWriter w(out.buf, 2);
  w.begin_object();
  w.field("format", kMetricsFormat).field("version", kMetricsVersion);
  w.key("run");
  write_run_info(w, report.info);

  w.key("totals");
  write_counts(w, st.totals, false);
  w.key("stages").begin_object();
  for (const auto& [name, n] : st.stages) w.field(name, n);
  w.end_object();

  w.key("pass_rate").begin_object();
  w.field("overall", st.totals.pass_rate());
  w.key("per_model");
  write_counts_map(w, st.per_model);
  w.key("per_op");
  write_counts_map(w, st.per_op);
  w.key("per_dtype");
  write_counts_map(w, st.per_dtype);
  w.end_object();

  w.key("coverage").begin_object();
  w.field("ops", st.coverage.ops.size()).field("signatures", st.coverage.signatures.size());
  w.key("sources");
  write_sources(w, st.sources);
  w.key("per_model").begin_object();
  for (const auto& [m, c] : st.coverage_per_model) {
    w.key(m).begin_object();
    w.field("ops", c.ops.size()).field("signatures", c.signatures.size());
    w.key("op_names").strings(c.ops, /*compact=*/true);
    w.end_object();
  }
  w.end_object();
  w.key("resolved_ops").strings(st.resolved_ops, /*compact=*/true);
  w.key("device_ops").strings(st.device_ops, /*compact=*/true);
  w.key("enabled_ops").begin_object();
  w.field("enabled", st.enabled.enabled).field("exercised", st.enabled.exercised.size());
  w.field("percent", st.enabled.percent);
  w.key("exercised_ops").strings(st.enabled.exercised, /*compact=*/true);
  w.key("untouched_ops").strings(st.enabled.untouched, /*compact=*/true);
  w.key("per_op").begin_object();
  for (const auto& [op, t] : st.enabled.per_op) {
    w.key(op).begin_object();
    w.field("cases", t.outcomes.total());
    w.key("sources");
    write_sources(w, t.sources);
    w.field("pass_rate", t.outcomes.pass_rate());
    w.key("outcomes");
    write_counts(w, t.outcomes, true);
    w.end_object();
  }
  w.end_object();
  w.end_object();
  w.end_object();

  w.key("dedupe").begin_object();
  write_dedupe(w, st.dedupe);
  w.key("per_model").begin_object();
  for (const auto& [m, d] : st.dedupe_per_model) {
    w.key(m).begin_object();
    write_dedupe(w, d);
    w.end_object();
  }
  w.end_object();
  w.end_object();

  const auto& t = st.time;
  if (st.reference_cache.used) write_reference_cache(w, st.reference_cache);
  // --reuse-results: how many occurrences carry a result this run read from --results-cache instead of running.
  // --resume: how many carry a result this run read from the resumed journal, each entry's binding checked.
  std::int64_t from_results_cache = 0, from_journal = 0;
  for (const auto& rec : report.cases) {
    from_results_cache += rec.result.result_from_cache;
    from_journal += rec.result.result_from_journal;
  }
  w.field("results_from_cache", from_results_cache);
  w.field("results_from_journal", from_journal);

  w.key("time").begin_object();
  w.key("totals").begin_object();
  w.field("materialize_ms", t.materialize_ms).field("reference_ms", t.reference_ms);
  w.field("device_ms", t.device_ms).field("compare_ms", t.compare_ms).field("compile_ms", t.compile_ms);
  w.field("golden_ms", t.golden_ms);
  if (st.reference_cache.used) w.field("reference_cache_ms", st.reference_cache.reference_cache_ms);
  w.field("total_ms", t.materialize_ms + t.reference_ms + t.device_ms + t.compare_ms + t.compile_ms + t.golden_ms +
                          st.reference_cache.reference_cache_ms);
  w.end_object();
  w.key("slowest").begin_array();
  for (std::size_t i : st.time.slowest) write_timing(w, report.cases[i]);
  w.end_array();
  w.key("device_vs_reference").begin_object();
  w.field("speedup_geomean", t.speedup_geomean).field("cases", t.speedup_cases);
  w.end_object();
  w.end_object();

  write_failure_groups(w, group_failures(report));

  // A record per line, written out as they come: the cases are most of a nightly run's file.
  w.key("cases").begin_array();
  for (const auto& rec : report.cases) {
    write_case_record(w, rec);
    out.spill();
  }
  w.end_array();
  w.end_object();
  out.buf += '\n';
}

void write_metrics_json(const RunReport& report, const std::string& path) {
  write_file_atomically(path, [&](TextOut& out) { write_metrics(report, out); });
}

namespace {

// A file whose totals contradict its case list (a truncated or edited file) would merge or compare into a report
// greener than the run: every count must be what the cases say.
void check_totals(const json& totals, const RunReport& report, const JsonWhere& where) {
  OutcomeCounts c;
  for (const auto& rec : report.cases) c.add(rec.outcome, rec.xfail_strictness);
  const std::pair<const char*, std::int64_t> counts[] = {
      {"total", c.total()},     {"passed", c.passed},   {"failed", c.failed},
      {"errors", c.errors},     {"skipped", c.skipped}, {"xfailed", c.xfailed},
      {"xpassed", c.xpassed},   {"not_supported", c.not_supported}, {"no_device_op", c.no_device_op}};
  for (const auto& [name, n] : counts) {
    if (!totals.is_object() || !totals.contains(name)) continue;
    const json& v = totals[name];
    if (!v.is_number_integer() || v.get<std::int64_t>() != n)
      throw_json_error(where.at(name),
                       "the totals say " + v.dump() + " " + name + " but the case list holds " + std::to_string(n),
                       "the file was truncated or edited: use the metrics file `opcheck run` or `opcheck merge` wrote");
  }
}

}  // namespace

RunReport parse_metrics(const std::string& text, const std::string& path, bool check_totals_against_cases) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    // The byte offset only: the parser's own message quotes the bytes it read, which may be any file's content.
    throw ReportError(path + ": error: not a valid JSON file (syntax error at byte " + std::to_string(e.byte) + ")" +
                      "\n  Fix: pass a file written by `opcheck run --metrics-json`");
  }
  const JsonWhere root{path, ""};
  if (!j.is_object() || !j.contains("format") || j["format"] != kMetricsFormat)
    throw_json_error(root.at("format"), std::string("not an opcheck metrics file (\"format\" is not \"") + kMetricsFormat + "\")",
                     "pass a file written by `opcheck run --metrics-json` or `opcheck merge --metrics-json`");
  if (!j.contains("version") || !j["version"].is_number_integer())
    throw_json_error(root.at("version"), "missing or non-integer layout version");
  const auto version = j["version"].get<std::int64_t>();
  if (version > kMetricsVersion || version < 1)
    throw_json_error(root.at("version"), "layout version " + std::to_string(version) + " is not supported (this opcheck reads version " +
                                             std::to_string(kMetricsVersion) + ")",
                     "read it with the opcheck release that wrote it");
  RunReport report;
  if (!j.contains("run")) throw_json_error(root, "missing field \"run\"");
  report.info = run_info_from_json(j["run"], root.at("run"));
  if (!j.contains("cases") || !j["cases"].is_array()) throw_json_error(root.at("cases"), "missing or not an array");
  const json& cases = j["cases"];
  report.cases.reserve(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) report.cases.push_back(case_record_from_json(cases[i], root.at("cases").at(i)));
  if (check_totals_against_cases && j.contains("totals")) check_totals(j["totals"], report, root.at("totals"));
  // run --shrink's minimal calls live in the groups: read back, merge and report keep them.
  if (j.contains("failure_groups") && j["failure_groups"].is_array())
    for (const json& g : j["failure_groups"])
      if (g.is_object() && g.contains("example") && g["example"].is_string() && g.contains("minimal") &&
          g["minimal"].is_string())
        report.info.shrunk[g["example"].get<std::string>()] = g["minimal"].get<std::string>();
  return report;
}

RunReport read_metrics(const std::string& path) { return parse_metrics(read_file_bytes(path), path); }

RunReport read_whole_metrics(const std::string& path) { return parse_metrics(read_file_bytes(path), path, true); }

}  // namespace opcheck
