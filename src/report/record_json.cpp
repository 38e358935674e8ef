#include "report/record_json.h"

#include <cmath>
#include <limits>

#include "common/sha256.h"
#include "report/report_error.h"

namespace opcheck {
namespace {

using json = nlohmann::json;

const json& member(const json& j, const JsonWhere& where, const char* key) {
  if (!j.is_object()) throw_json_error(where, "expected an object");
  auto it = j.find(key);
  if (it == j.end()) throw_json_error(where, std::string("missing field \"") + key + "\"");
  return *it;
}

std::string get_string(const json& j, const JsonWhere& where, const char* key) {
  const json& v = member(j, where, key);
  if (!v.is_string()) throw_json_error(where.at(key), "expected a string, found " + std::string(v.type_name()));
  return v.get<std::string>();
}

std::string get_string_or(const json& j, const JsonWhere& where, const char* key, const std::string& dflt) {
  if (!j.contains(key)) return dflt;
  return get_string(j, where, key);
}

bool get_bool(const json& j, const JsonWhere& where, const char* key) {
  const json& v = member(j, where, key);
  if (!v.is_boolean()) throw_json_error(where.at(key), "expected true or false, found " + std::string(v.type_name()));
  return v.get<bool>();
}

std::int64_t get_int(const json& j, const JsonWhere& where, const char* key) {
  const json& v = member(j, where, key);
  if (!v.is_number_integer()) throw_json_error(where.at(key), "expected an integer, found " + std::string(v.type_name()));
  return v.get<std::int64_t>();
}

// A count (of cases, occurrences, workers): a whole number, never negative. A hand-edited `"not_run": -5` would
// otherwise print as "-5 skipped".
std::int64_t get_count(const json& j, const JsonWhere& where, const char* key) {
  const std::int64_t v = get_int(j, where, key);
  if (v < 0) throw_json_error(where.at(key), "a count cannot be negative, found " + std::to_string(v),
                              "the file was edited: use the metrics file `opcheck run` or `opcheck merge` wrote");
  return v;
}

int get_small_int(const json& j, const JsonWhere& where, const char* key, std::int64_t min) {
  const std::int64_t v = get_int(j, where, key);
  if (v < min || v > std::numeric_limits<int>::max())
    throw_json_error(where.at(key), "value " + std::to_string(v) + " is out of range (" + std::to_string(min) + " to " +
                                        std::to_string(std::numeric_limits<int>::max()) + ")");
  return static_cast<int>(v);
}

std::optional<double> number_from(const json& v, const JsonWhere& where) {
  if (v.is_null()) return std::nullopt;
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s == "NaN") return std::nan("");
    if (s == "Infinity") return HUGE_VAL;
    if (s == "-Infinity") return -HUGE_VAL;
  }
  throw_json_error(where, "expected a number, null, \"NaN\", \"Infinity\" or \"-Infinity\"");
}

std::optional<double> get_optional_number(const json& j, const JsonWhere& where, const char* key) {
  if (!j.contains(key)) return std::nullopt;
  return number_from(j.at(key), where.at(key));
}

double get_number(const json& j, const JsonWhere& where, const char* key) {
  auto v = number_from(member(j, where, key), where.at(key));
  if (!v) throw_json_error(where.at(key), "expected a number, found null");
  return *v;
}

// An array member whose every element `is_kind` accepts, read as T; `array` and `element` say what was expected.
template <class T, class IsKind>
std::vector<T> get_array(const json& j, const JsonWhere& where, const char* key, IsKind is_kind, const char* array,
                         const char* element) {
  const json& v = member(j, where, key);
  if (!v.is_array()) throw_json_error(where.at(key), std::string("expected an array of ") + array);
  std::vector<T> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!is_kind(v[i])) throw_json_error(where.at(key).at(i), std::string("expected ") + element);
    out.push_back(v[i].get<T>());
  }
  return out;
}

std::vector<std::string> get_strings(const json& j, const JsonWhere& where, const char* key) {
  return get_array<std::string>(j, where, key, [](const json& e) { return e.is_string(); }, "strings", "a string");
}

std::vector<std::int64_t> get_ints(const json& j, const JsonWhere& where, const char* key) {
  return get_array<std::int64_t>(j, where, key, [](const json& e) { return e.is_number_integer(); }, "integers",
                                 "an integer");
}

std::string outcome_list() {
  std::string s;
  for (int i = 0; i <= static_cast<int>(kLastOutcome); ++i)
    s += std::string(i ? ", " : "") + outcome_name(static_cast<Outcome>(i));
  return s;
}

std::string stage_list() {
  std::string s;
  for (int i = 0; i <= static_cast<int>(kLastStage); ++i) s += std::string(i ? ", " : "") + stage_name(static_cast<Stage>(i));
  return s;
}

Outcome get_outcome(const json& j, const JsonWhere& where, const char* key) {
  const auto s = get_string(j, where, key);
  Outcome o;
  if (!parse_outcome(s, o)) throw_json_error(where.at(key), "unknown outcome \"" + s + "\" (expected one of " + outcome_list() + ")");
  return o;
}

Stage get_stage(const json& j, const JsonWhere& where, const char* key) {
  const auto s = get_string(j, where, key);
  Stage st;
  if (!parse_stage(s, st)) throw_json_error(where.at(key), "unknown stage \"" + s + "\" (expected one of " + stage_list() + ")");
  return st;
}

/// A verdict kind by its name; "" (None) is never written, so it is refused like any other unknown name.
VerdictKind get_verdict_kind(const json& j, const JsonWhere& where, const char* key) {
  const auto s = get_string(j, where, key);
  VerdictKind k = VerdictKind::None;
  if (s.empty() || !parse_verdict_kind(s, k)) {
    std::string names;
    for (const VerdictKindSpec& spec : kVerdictKinds)
      if (spec.id != VerdictKind::None) names += std::string(names.empty() ? "" : ", ") + spec.name;
    throw_json_error(where.at(key), "unknown verdict kind \"" + s + "\" (expected one of " + names + ")");
  }
  return k;
}

}  // namespace

JsonWhere JsonWhere::at(const std::string& key) const {
  std::string k;
  for (char c : key) k += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  return {file, pointer + "/" + k};
}

void throw_json_error(const JsonWhere& where, const std::string& what, const std::string& fix) {
  std::string msg = (where.file.empty() ? std::string("opcheck") : where.file) + ": error: " +
                    (where.pointer.empty() ? std::string("/") : where.pointer) + ": " + what;
  if (!fix.empty()) msg += "\n  Fix: " + fix;
  throw ReportError(msg);
}

namespace {

// What reached the device during the case's device runs, one compact object per op.
void write_device_ops(JsonWriter& w, const std::vector<DeviceOp>& ops) {
  w.key("device_ops").begin_array(/*compact=*/true);
  for (const auto& d : ops) {
    w.begin_object();
    w.field("op", d.op).field("via", device_op_via_name(d.via)).field("calls", d.calls).field("in_call", d.in_call);
    if (d.raised) w.field("raised", true);
    w.end_object();
  }
  w.end_array();
}

std::vector<DeviceOp> get_device_ops(const json& j, const JsonWhere& w) {
  std::vector<DeviceOp> out;
  if (!j.contains("device_ops")) return out;  // written since device ops are recorded; earlier files lack it
  const json& v = j.at("device_ops");
  if (!v.is_array()) throw_json_error(w.at("device_ops"), "expected an array of {op, via, calls, in_call} objects");
  for (std::size_t i = 0; i < v.size(); ++i) {
    const JsonWhere at = w.at("device_ops").at(std::to_string(i));
    DeviceOp d;
    d.op = get_string(v[i], at, "op");
    const std::string via = get_string(v[i], at, "via");
    if (!parse_device_op_via(via, d.via))
      throw_json_error(at.at("via"), "unknown via \"" + via + "\" (expected kernel, fallback or composite)");
    d.calls = get_count(v[i], at, "calls");
    d.in_call = get_bool(v[i], at, "in_call");
    if (v[i].contains("raised")) d.raised = get_bool(v[i], at, "raised");
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

void write_case_record(JsonWriter& w, const CaseRecord& rec) {
  const Result& r = rec.result;
  w.begin_object(/*compact=*/true);
  w.field("index", rec.index);
  w.field("id", rec.id);
  w.field("model", rec.model);
  w.field("name", rec.name);
  w.field("op", rec.op);
  w.field("dtype", rec.dtype);
  w.field("file", rec.file);
  w.field("line", rec.line);
  w.key("marks").strings(rec.marks);
  w.field("key", rec.key);
  w.field("signature", rec.signature);
  if (!rec.call.empty()) w.field("call", rec.call);
  w.field("deduplicated_from", rec.deduplicated_from);
  w.field("status", rec.status);
  w.field("status_reason", rec.status_reason);
  w.field("outcome", outcome_name(rec.outcome));
  w.field("xfail_strict", rec.xfail_strictness == XfailStrictness::Strict);
  for (const CaseLabel& l : rec.labels) w.field(l.field->record_label, l.value);  // upstream_test, issue, ...
  w.field("stage", stage_name(r.stage));
  if (r.kind != VerdictKind::None) w.field("verdict_kind", verdict_kind_name(r.kind));
  if (r.phase != CasePhase::None) w.field("phase", case_phase_name(r.phase));
  w.field("result_outcome", outcome_name(r.outcome));
  w.field("result_case_id", r.case_id);
  w.field("message", r.message);
  w.field("resolved_op", r.resolved_op);
  w.field("decomposed", r.decomposed);
  w.field("reference_upcast", r.reference_upcast);
  if (!r.reference_made.empty()) w.field("reference_made", r.reference_made);
  if (!r.judge_notes.empty()) w.key("judge_notes").strings(r.judge_notes);
  if (!r.values_compared) w.field("values_compared", false);
  if (r.result_from_cache) w.field("result_from_cache", true);
  if (r.result_from_journal) w.field("result_from_journal", true);
  if (!r.traced_op.empty()) w.field("traced_op", r.traced_op);
  if (!r.module_record.empty()) w.field("module", r.module_record);
  w.key("figures").begin_object();
  w.field("max_abs_diff", r.figures.max_abs_diff);
  w.field("max_rel_diff", r.figures.max_rel_diff);
  w.field("pcc", r.figures.pcc);
  w.field("mismatched", r.figures.mismatched);
  w.field("total", r.figures.total);
  if (r.figures.has_worst()) {
    w.key("worst_index").begin_array(/*compact=*/true);
    for (auto i : r.figures.worst_index) w.value(i);
    w.end_array();
    w.field("worst_device", r.figures.worst_device);
    w.field("worst_reference", r.figures.worst_reference);
    if (r.figures.worst_golden) w.field("worst_golden", r.figures.worst_golden);
  }
  w.end_object();
  w.key("timings").begin_object();
  w.field("materialize_ms", r.materialize_ms);
  w.field("reference_ms", r.reference_ms);
  w.field("device_ms", r.device_ms);
  w.field("compare_ms", r.compare_ms);
  w.field("compile_ms", r.compile_ms);
  if (r.golden_ms > 0) w.field("golden_ms", r.golden_ms);
  if (!r.reference_source.empty()) w.field("reference_cache_ms", r.reference_cache_ms);
  w.end_object();
  w.key("input_digests").strings(r.input_digests);
  w.field("captured_stderr", r.captured_stderr);
  write_device_ops(w, r.device_ops);
  if (!r.reference_source.empty()) {  // --reference-cache
    w.key("reference_cache").begin_object();
    w.field("source", r.reference_source).field("stored", r.reference_stored).field("evicted", r.reference_evicted);
    if (!r.reference_cache_note.empty()) w.field("note", r.reference_cache_note);
    if (!r.reference_cache_warning.empty()) w.field("warning", r.reference_cache_warning);
    w.end_object();
  }
  w.end_object();
}

std::string case_record_json_line(const CaseRecord& rec) {
  std::string line;
  JsonWriter w(line);
  write_case_record(w, rec);
  return line;
}

std::string record_digest(const std::string& header_line, std::string_view record_json) {
  return sha256_hex(header_line + "\n" + std::string(record_json));
}

CaseRecord case_record_from_json(const json& j, const JsonWhere& w) {
  if (!j.is_object()) throw_json_error(w, "expected a case object");
  CaseRecord rec;
  rec.index = get_small_int(j, w, "index", -1);
  rec.id = get_string(j, w, "id");
  rec.model = get_string(j, w, "model");
  rec.name = get_string(j, w, "name");
  rec.op = get_string(j, w, "op");
  rec.dtype = get_string(j, w, "dtype");
  rec.file = get_string(j, w, "file");
  rec.line = get_small_int(j, w, "line", 0);
  rec.marks = get_strings(j, w, "marks");
  rec.key = get_string(j, w, "key");
  rec.signature = get_string(j, w, "signature");
  rec.call = get_string_or(j, w, "call", "");  // written since failures show the call
  rec.deduplicated_from = get_string(j, w, "deduplicated_from");
  rec.status = get_string(j, w, "status");
  rec.status_reason = get_string(j, w, "status_reason");
  rec.outcome = get_outcome(j, w, "outcome");
  rec.xfail_strictness = !j.contains("xfail_strict") || get_bool(j, w, "xfail_strict") ? XfailStrictness::Strict
                                                                                     : XfailStrictness::NonStrict;
  for (const CaseField& f : kCaseFields)
    if (f.record_label)
      if (std::string v = get_string_or(j, w, f.record_label, ""); !v.empty()) rec.labels.push_back({&f, std::move(v)});
  Result& r = rec.result;
  r.stage = get_stage(j, w, "stage");
  // Written for a verdict with a kind (an INVALID_CASE's: unknown_op, ...); absent otherwise and in earlier files.
  if (j.contains("verdict_kind")) r.kind = get_verdict_kind(j, w, "verdict_kind");
  // Written when the case got as far as building its inputs; absent in files of earlier runs.
  if (j.contains("phase") && !parse_case_phase(get_string(j, w, "phase"), r.phase))
    throw_json_error(w.at("phase"), "expected one of inputs, reference, device, compare");
  r.outcome = j.contains("result_outcome") ? get_outcome(j, w, "result_outcome") : stage_outcome(r.stage);
  r.case_id = get_string_or(j, w, "result_case_id", rec.deduplicated_from.empty() ? rec.id : rec.deduplicated_from);
  r.message = get_string(j, w, "message");
  r.resolved_op = get_string(j, w, "resolved_op");
  r.decomposed = get_bool(j, w, "decomposed");
  r.reference_upcast = get_bool(j, w, "reference_upcast");
  // Written when the reference or the judgement was more than the CPU in the call's dtypes; absent otherwise.
  r.reference_made = get_string_or(j, w, "reference_made", "");
  if (j.contains("judge_notes")) r.judge_notes = get_strings(j, w, "judge_notes");
  r.values_compared = !j.contains("values_compared") || get_bool(j, w, "values_compared");
  r.result_from_cache = j.contains("result_from_cache") && get_bool(j, w, "result_from_cache");
  r.result_from_journal = j.contains("result_from_journal") && get_bool(j, w, "result_from_journal");
  r.traced_op = get_string_or(j, w, "traced_op", "");  // module cases only
  r.module_record = get_string_or(j, w, "module", "");
  const json& f = member(j, w, "figures");
  const JsonWhere fw = w.at("figures");
  r.figures.max_abs_diff = get_optional_number(f, fw, "max_abs_diff");
  r.figures.max_rel_diff = get_optional_number(f, fw, "max_rel_diff");
  r.figures.pcc = get_optional_number(f, fw, "pcc");
  r.figures.mismatched = get_count(f, fw, "mismatched");
  r.figures.total = get_count(f, fw, "total");
  // Written when the comparison located its worst element; records of earlier runs lack them.
  if (f.contains("worst_device")) {
    r.figures.worst_device = get_optional_number(f, fw, "worst_device");
    r.figures.worst_reference = get_optional_number(f, fw, "worst_reference");
    r.figures.worst_index = get_ints(f, fw, "worst_index");
    if (f.contains("worst_golden")) r.figures.worst_golden = get_optional_number(f, fw, "worst_golden");
  }
  const json& t = member(j, w, "timings");
  const JsonWhere tw = w.at("timings");
  r.materialize_ms = get_number(t, tw, "materialize_ms");
  r.reference_ms = get_number(t, tw, "reference_ms");
  r.device_ms = get_number(t, tw, "device_ms");
  r.compare_ms = get_number(t, tw, "compare_ms");
  // Written since --compile-backend; files of earlier runs lack it (nothing was compiled).
  r.compile_ms = t.contains("compile_ms") ? get_number(t, tw, "compile_ms") : 0.0;
  r.golden_ms = t.contains("golden_ms") ? get_number(t, tw, "golden_ms") : 0.0;
  r.input_digests = get_strings(j, w, "input_digests");
  r.captured_stderr = get_string(j, w, "captured_stderr");
  r.device_ops = get_device_ops(j, w);
  if (j.contains("reference_cache")) {  // runs with --reference-cache
    const json& c = member(j, w, "reference_cache");
    const JsonWhere cw = w.at("reference_cache");
    r.reference_source = get_string(c, cw, "source");
    r.reference_stored = get_bool(c, cw, "stored");
    r.reference_evicted = get_count(c, cw, "evicted");
    r.reference_cache_note = get_string_or(c, cw, "note", "");
    r.reference_cache_warning = get_string_or(c, cw, "warning", "");
    r.reference_cache_ms = t.contains("reference_cache_ms") ? get_number(t, tw, "reference_cache_ms") : 0.0;
  }
  return rec;
}

void write_run_info(JsonWriter& w, const RunInfo& info) {
  w.begin_object();
  w.field("opcheck_version", info.opcheck_version);
  w.field("torch_version", info.torch_version);
  w.field("device", info.device);
  w.field("device_name", info.device_name);
  w.field("device_lib", info.device_lib);
  w.field("device_lib_sha256", info.device_lib_sha256);
  w.field("torch_path", info.torch_path);
  w.key("python_modules").strings(info.python_modules, /*compact=*/true);
  w.field("compile_backend", info.compile_backend);
  w.key("device_environment").strings(info.device_environment, /*compact=*/true);
  if (!info.device_choice.asked.empty()) {
    w.key("device_choice").begin_object();
    w.field("asked", info.device_choice.asked);
    w.field("chosen", info.device_choice.chosen);
    w.field("why", info.device_choice.why);
    w.field("stand_in", info.device_choice.stand_in);
    w.key("searched").strings(info.device_choice.searched);
    w.end_object();
  }
  w.field("status_config_sha256", info.status_config_sha256);
  w.field("dedupe_key_version", info.dedupe_key_version);
  w.key("identity").begin_object();
  for (const auto& [what, value] : info.identity) w.field(what, value);
  w.end_object();
  w.field("host", info.host);
  w.field("started_at", info.started_at);
  w.field("duration_s", info.duration_s);
  w.key("argv").strings(info.argv, /*compact=*/true);
  w.field("shard", info.shard);
  if (info.selection_occurrences) w.field("selection_occurrences", info.selection_occurrences);
  if (!info.selection_sha256.empty()) w.field("selection_sha256", info.selection_sha256);
  if (!info.cases_sha256.empty()) w.field("cases_sha256", info.cases_sha256);
  w.key("manifests").begin_object();
  for (const auto& [path, digest] : info.manifests) w.field(path, digest);
  w.end_object();
  w.key("enabled_ops").strings(info.enabled_ops, /*compact=*/true);
  w.field("interrupted", info.interrupted);
  w.field("stop_reason", info.stop_reason);
  w.field("deselected", info.deselected);
  w.field("not_run", info.not_run);
  w.field("stopped_by", info.stopped_by);
  w.field("xpass_ok", info.policy.xpass_ok);
  w.field("not_supported_ok", info.policy.not_supported_ok);
  w.field("warning_count", static_cast<std::int64_t>(info.warnings.size()));
  w.key("warnings").strings(info.warnings);
  if (info.shard_count > 0) {
    w.field("shard_count", info.shard_count);
    w.field("shard_longest_s", info.shard_longest_s);
    w.field("shard_sum_s", info.shard_sum_s);
  }
  if (info.workers_started > 0) {
    w.field("workers_started", info.workers_started);
    w.field("worker_start_mean_s", info.worker_start_mean_s);
    w.field("worker_start_max_s", info.worker_start_max_s);
    w.field("cases_wall_s", info.cases_wall_s);
  }
  if (!info.durations_sha256.empty()) {
    w.field("durations_from", info.durations_from).field("durations_sha256", info.durations_sha256);
    w.field("durations_recorded", info.durations_recorded).field("durations_estimated", info.durations_estimated);
    w.key("expected_shard_s").begin_array();
    for (double v : info.expected_shard_s) w.value(v);
    w.end_array();
  }
  w.end_object();
}

RunInfo run_info_from_json(const json& j, const JsonWhere& w) {
  if (!j.is_object()) throw_json_error(w, "expected the run object");
  RunInfo info;
  info.opcheck_version = get_string(j, w, "opcheck_version");
  info.torch_version = get_string(j, w, "torch_version");
  info.device = get_string(j, w, "device");
  info.device_name = get_string(j, w, "device_name");
  info.device_lib = get_string(j, w, "device_lib");
  info.device_lib_sha256 = get_string(j, w, "device_lib_sha256");
  // Written since opcheck ran Python-hosted devices; files of earlier runs lack them (eager, no imports).
  if (j.contains("torch_path")) info.torch_path = get_string(j, w, "torch_path");
  if (j.contains("python_modules")) info.python_modules = get_strings(j, w, "python_modules");
  if (j.contains("compile_backend")) info.compile_backend = get_string(j, w, "compile_backend");
  // Part of a run's identity since resume checks them; files of earlier runs lack them.
  if (j.contains("device_environment")) info.device_environment = get_strings(j, w, "device_environment");
  if (j.contains("status_config_sha256")) info.status_config_sha256 = get_string(j, w, "status_config_sha256");
  if (j.contains("dedupe_key_version")) info.dedupe_key_version = get_string(j, w, "dedupe_key_version");
  // Written since the identity is derived from the run's settings; files of earlier runs lack it.
  if (j.contains("identity")) {
    const json& id = member(j, w, "identity");
    if (!id.is_object()) throw_json_error(w.at("identity"), "expected an object mapping each part to its value");
    for (auto it = id.begin(); it != id.end(); ++it) {
      if (!it.value().is_string()) throw_json_error(w.at("identity").at(it.key()), "expected a string");
      info.identity.emplace_back(it.key(), it.value().get<std::string>());
    }
  }
  if (j.contains("device_choice")) {  // files of earlier runs lack it
    const json& c = member(j, w, "device_choice");
    const auto cw = w.at("device_choice");
    if (!c.is_object()) throw_json_error(cw, "expected an object");
    info.device_choice.asked = get_string(c, cw, "asked");
    info.device_choice.chosen = get_string(c, cw, "chosen");
    info.device_choice.why = get_string(c, cw, "why");
    info.device_choice.stand_in = get_bool(c, cw, "stand_in");
    info.device_choice.searched = get_strings(c, cw, "searched");
  }
  info.host = get_string(j, w, "host");
  info.started_at = get_string(j, w, "started_at");
  info.duration_s = get_number(j, w, "duration_s");
  info.argv = get_strings(j, w, "argv");
  info.shard = get_string(j, w, "shard");
  info.selection_occurrences = j.contains("selection_occurrences") ? get_count(j, w, "selection_occurrences") : 0;
  // Written since merge checks the shards' case lists; files of earlier runs lack them.
  info.selection_sha256 = get_string_or(j, w, "selection_sha256", "");
  info.cases_sha256 = get_string_or(j, w, "cases_sha256", "");
  const json& m = member(j, w, "manifests");
  if (!m.is_object()) throw_json_error(w.at("manifests"), "expected an object mapping manifest path to sha256");
  for (auto it = m.begin(); it != m.end(); ++it) {
    if (!it.value().is_string()) throw_json_error(w.at("manifests").at(it.key()), "expected a sha256 string");
    info.manifests[it.key()] = it.value().get<std::string>();
  }
  info.enabled_ops = get_strings(j, w, "enabled_ops");
  info.interrupted = get_bool(j, w, "interrupted");
  info.stop_reason = get_string(j, w, "stop_reason");
  info.deselected = j.contains("deselected") ? get_count(j, w, "deselected") : 0;
  info.not_run = j.contains("not_run") ? get_count(j, w, "not_run") : 0;
  info.stopped_by = get_string_or(j, w, "stopped_by", "");
  info.policy.xpass_ok = j.contains("xpass_ok") && get_bool(j, w, "xpass_ok");
  // Written since NOT_SUPPORTED has its own outcome; files of earlier runs lack it (it failed the run then).
  info.policy.not_supported_ok = j.contains("not_supported_ok") && get_bool(j, w, "not_supported_ok");
  if (j.contains("warnings")) info.warnings = get_strings(j, w, "warnings");
  if (j.contains("shard_count")) {
    info.shard_count = get_count(j, w, "shard_count");
    info.shard_longest_s = get_number(j, w, "shard_longest_s");
    info.shard_sum_s = get_number(j, w, "shard_sum_s");
  }
  if (j.contains("workers_started")) {
    info.workers_started = get_count(j, w, "workers_started");
    info.worker_start_mean_s = get_number(j, w, "worker_start_mean_s");
    info.worker_start_max_s = get_number(j, w, "worker_start_max_s");
    if (j.contains("cases_wall_s")) info.cases_wall_s = get_number(j, w, "cases_wall_s");
  }
  if (j.contains("durations_sha256")) {
    info.durations_from = get_string(j, w, "durations_from");
    info.durations_sha256 = get_string(j, w, "durations_sha256");
    info.durations_recorded = get_count(j, w, "durations_recorded");
    info.durations_estimated = get_count(j, w, "durations_estimated");
    const json& e = member(j, w, "expected_shard_s");
    if (!e.is_array()) throw_json_error(w.at("expected_shard_s"), "expected an array of seconds, one per shard");
    for (std::size_t i = 0; i < e.size(); ++i) {
      const auto v = number_from(e[i], w.at("expected_shard_s").at(i));
      if (!v) throw_json_error(w.at("expected_shard_s").at(i), "expected a number, found null");
      info.expected_shard_s.push_back(*v);
    }
  }
  return info;
}

}  // namespace opcheck
