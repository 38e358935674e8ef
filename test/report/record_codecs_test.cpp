// Every field of a Result and a CaseRecord through each hand-written codec: the worker wire (runner/result_wire),
// the metrics/journal JSON writer and reader (report/record_json) and the JUnit writer (report/junit). Each sample
// sets every field to a distinct value that is not its default, so a codec that drops or swaps a field fails here;
// the field counts below fail to compile when a struct grows, until the new field is added to every codec and here.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <pugixml.hpp>

#include "report/json_writer.h"
#include "report/junit.h"
#include "report/record_json.h"
#include "report/report_error.h"
#include "runner/result_wire.h"
#include "sample_report.h"

namespace opcheck {
namespace {

using opcheck::testing::written_junit_xml;

// The number of members of an aggregate: the most initializers T{...} accepts (each AnyField converts to any member
// type, so no brace elision happens).
struct AnyField {
  template <typename T>
  operator T() const;  // declared only: used in unevaluated contexts
};

template <typename T, typename... A>
constexpr auto accepts(int) -> decltype(void(T{std::declval<A>()...}), true) {
  return true;
}
template <typename T, typename... A>
constexpr bool accepts(long) {
  return false;
}

template <typename T, typename... A>
constexpr std::size_t field_count() {
  if constexpr (accepts<T, A..., AnyField>(0)) return field_count<T, A..., AnyField>();
  else return sizeof...(A);
}

static_assert(std::is_aggregate_v<Result> && std::is_aggregate_v<CaseRecord> && std::is_aggregate_v<CompareFigures>);
static_assert(field_count<Result>() == 32,
              "Result's fields changed: update encode_result/decode_result (runner/result_wire.cpp), "
              "write_case_record/case_record_from_json (report/record_json.cpp), write_junit (report/junit.cpp) "
              "where the field belongs in JUnit, sample_result() and the checks in this file, then this count");
static_assert(field_count<CompareFigures>() == 9,
              "CompareFigures' fields changed: update the same codecs as for Result, sample_result() and this count");
static_assert(field_count<CaseRecord>() == 19,
              "CaseRecord's fields changed: update write_case_record/case_record_from_json (report/record_json.cpp), "
              "write_junit (report/junit.cpp), merge if it combines records, sample_record() and the checks in this "
              "file, then this count");

/// Every field set, each to a value no other field has and none is its default.
Result sample_result() {
  Result r;
  r.case_id = "llama::attn.softmax_3";
  r.stage = Stage::INCORRECT_RESULT;
  r.kind = VerdictKind::DecompositionLimit;  // not INCORRECT_RESULT's: the codecs carry the kind whatever the stage
  r.outcome = Outcome::Failed;
  r.message = "Mismatched elements: 3 / 12 (25.0%)\nGreatest absolute difference: 0.5";
  r.resolved_op = "aten::_softmax";
  r.decomposed = true;
  r.reference_upcast = true;
  r.reference_made = "float64 (the CPU refused float16 with float32: expected scalar type Half but found Float)";
  r.judge_notes = {"output: the float64 judge passed 2 element(s)", "1 index(es) differ from the CPU's"};
  r.values_compared = false;
  r.figures.max_abs_diff = 0.5;
  r.figures.max_rel_diff = 0.25;
  r.figures.pcc = 0.75;
  r.figures.mismatched = 3;
  r.figures.total = 12;
  r.figures.worst_index = {2, 5};
  r.figures.worst_device = 1.5;
  r.figures.worst_reference = 1.0;
  r.figures.worst_golden = 1.125;
  r.golden_ms = 8.25;
  r.materialize_ms = 1.25;
  r.reference_ms = 2.5;
  r.device_ms = 3.75;
  r.compare_ms = 5.125;
  r.compile_ms = 6.0625;
  r.input_digests = {"ab01", "cd02"};
  r.captured_stderr = "warn: slow path\n";
  r.device_ops = {{"aten::_softmax", DeviceOpVia::Composite, 2, true},
                  {"aten::addcmul", DeviceOpVia::Fallback, 3, true},
                  {"aten::_copy_from", DeviceOpVia::Kernel, 5, false}};
  r.reference_source = "recomputed";
  r.reference_cache_ms = 7.5;
  r.reference_stored = true;
  r.reference_evicted = 4;
  r.reference_cache_note = "not kept: too big";
  r.reference_cache_warning = "reference cache entry x.ref does not match its digest (corrupt)";
  r.phase = CasePhase::Reference;
  r.result_from_cache = true;
  r.result_from_journal = true;
  r.traced_op = "aten::silu";
  r.module_record = "{\"parameters\": 36992}";
  return r;
}

void expect_same_result(const Result& a, const Result& b) {
  EXPECT_EQ(a.case_id, b.case_id);
  EXPECT_EQ(a.stage, b.stage);
  EXPECT_EQ(a.kind, b.kind) << verdict_kind_name(a.kind) << " came back as " << verdict_kind_name(b.kind);
  EXPECT_EQ(a.outcome, b.outcome);
  EXPECT_EQ(a.message, b.message);
  EXPECT_EQ(a.resolved_op, b.resolved_op);
  EXPECT_EQ(a.decomposed, b.decomposed);
  EXPECT_EQ(a.reference_upcast, b.reference_upcast);
  EXPECT_EQ(a.reference_made, b.reference_made);
  EXPECT_EQ(a.judge_notes, b.judge_notes);
  EXPECT_EQ(a.golden_ms, b.golden_ms);
  EXPECT_EQ(a.values_compared, b.values_compared);
  // By value; NaN equals NaN here (a figure that was NaN must come back NaN).
  auto same_figure = [](const std::optional<double>& x, const std::optional<double>& y, const char* name) {
    ASSERT_EQ(x.has_value(), y.has_value()) << name;
    if (x && std::isnan(*x)) {
      EXPECT_TRUE(std::isnan(*y)) << name;
    } else if (x) {
      EXPECT_EQ(*x, *y) << name;
    }
  };
  same_figure(a.figures.max_abs_diff, b.figures.max_abs_diff, "max_abs_diff");
  same_figure(a.figures.max_rel_diff, b.figures.max_rel_diff, "max_rel_diff");
  same_figure(a.figures.pcc, b.figures.pcc, "pcc");
  EXPECT_EQ(a.figures.mismatched, b.figures.mismatched);
  EXPECT_EQ(a.figures.total, b.figures.total);
  EXPECT_EQ(a.figures.worst_index, b.figures.worst_index);
  same_figure(a.figures.worst_device, b.figures.worst_device, "worst_device");
  same_figure(a.figures.worst_reference, b.figures.worst_reference, "worst_reference");
  same_figure(a.figures.worst_golden, b.figures.worst_golden, "worst_golden");
  EXPECT_EQ(a.materialize_ms, b.materialize_ms);
  EXPECT_EQ(a.reference_ms, b.reference_ms);
  EXPECT_EQ(a.device_ms, b.device_ms);
  EXPECT_EQ(a.compare_ms, b.compare_ms);
  EXPECT_EQ(a.compile_ms, b.compile_ms);
  EXPECT_EQ(a.input_digests, b.input_digests);
  EXPECT_EQ(a.captured_stderr, b.captured_stderr);
  ASSERT_EQ(a.device_ops.size(), b.device_ops.size());
  for (std::size_t i = 0; i < a.device_ops.size(); ++i) {
    EXPECT_EQ(a.device_ops[i].op, b.device_ops[i].op) << i;
    EXPECT_EQ(a.device_ops[i].via, b.device_ops[i].via) << i;
    EXPECT_EQ(a.device_ops[i].calls, b.device_ops[i].calls) << i;
    EXPECT_EQ(a.device_ops[i].in_call, b.device_ops[i].in_call) << i;
  }
  EXPECT_EQ(a.reference_source, b.reference_source);
  EXPECT_EQ(a.reference_cache_ms, b.reference_cache_ms);
  EXPECT_EQ(a.reference_stored, b.reference_stored);
  EXPECT_EQ(a.reference_evicted, b.reference_evicted);
  EXPECT_EQ(a.reference_cache_note, b.reference_cache_note);
  EXPECT_EQ(a.reference_cache_warning, b.reference_cache_warning);
  EXPECT_EQ(a.phase, b.phase);
  EXPECT_EQ(a.result_from_cache, b.result_from_cache);
  EXPECT_EQ(a.result_from_journal, b.result_from_journal);
  EXPECT_EQ(a.traced_op, b.traced_op);
  EXPECT_EQ(a.module_record, b.module_record);
}

Result wire_round_trip(const Result& r) {
  std::vector<std::uint8_t> buf;
  encode_result(r, buf);
  Result back;
  std::string error;
  EXPECT_TRUE(decode_result(buf.data(), buf.size(), back, error)) << error;
  return back;
}

// ----------------------------------------------------------------------------------------------------------------
// The worker -> parent wire

TEST(ResultWire, RoundTripsEveryField) {
  const Result r = sample_result();
  expect_same_result(r, wire_round_trip(r));
}

TEST(ResultWire, RoundTripsNonFiniteFiguresAndRawBytes) {
  Result r = sample_result();
  r.stage = Stage::FAILED_COMPILE;
  r.figures.max_abs_diff = std::numeric_limits<double>::infinity();
  r.figures.max_rel_diff = std::nan("");
  r.figures.pcc.reset();
  r.captured_stderr = "warn: \xff\xfe not utf-8\n";  // the wire keeps bytes; reports make them visible later
  const Result back = wire_round_trip(r);
  EXPECT_EQ(back.stage, Stage::FAILED_COMPILE);
  EXPECT_TRUE(std::isinf(*back.figures.max_abs_diff));
  EXPECT_TRUE(std::isnan(*back.figures.max_rel_diff));
  expect_same_result(r, back);
}

TEST(ResultWire, TruncatedOrPaddedRecordsAreRejected) {
  std::vector<std::uint8_t> buf;
  encode_result(sample_result(), buf);
  Result back;
  std::string error;
  for (std::size_t cut : {std::size_t{0}, std::size_t{3}, buf.size() / 2, buf.size() - 1}) {
    error.clear();
    EXPECT_FALSE(decode_result(buf.data(), cut, back, error)) << cut;
    EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  }
  buf.push_back(0);
  EXPECT_FALSE(decode_result(buf.data(), buf.size(), back, error));
  EXPECT_NE(error.find("trailing"), std::string::npos) << error;
}

// Every stage and every outcome (the last ones added included: kLastStage, kLastOutcome) through the wire.
TEST(ResultWire, RoundTripsEveryStageAndOutcome) {
  for (int s = 0; s <= static_cast<int>(kLastStage); ++s)
    for (int o = 0; o <= static_cast<int>(kLastOutcome); ++o) {
      Result r = sample_result();
      r.stage = static_cast<Stage>(s);
      r.outcome = static_cast<Outcome>(o);
      const Result back = wire_round_trip(r);
      EXPECT_EQ(back.stage, r.stage) << stage_name(r.stage);
      EXPECT_EQ(back.outcome, r.outcome) << outcome_name(r.outcome);
    }
}

// Every verdict kind (the last one added included: kLastVerdictKind) through the wire, and a kind past the table
// refused: a worker of another build cannot hand the parent a kind it does not know.
TEST(ResultWire, RoundTripsEveryVerdictKind) {
  for (const VerdictKindSpec& k : kVerdictKinds) {
    Result r = sample_result();
    r.stage = k.stage;
    r.kind = k.id;
    EXPECT_EQ(wire_round_trip(r).kind, k.id) << k.name;
  }
  Result r = sample_result();
  r.kind = kLastVerdictKind;
  std::vector<std::uint8_t> buf;
  encode_result(r, buf);
  buf.back() = static_cast<std::uint8_t>(kLastVerdictKind) + 1;  // the kind is the record's last byte
  Result back;
  std::string error;
  EXPECT_FALSE(decode_result(buf.data(), buf.size(), back, error));
  EXPECT_NE(error.find("verdict kind " + std::to_string(buf.back()) + ", out of range"), std::string::npos) << error;
}

// ----------------------------------------------------------------------------------------------------------------
// Metrics / journal JSON

CaseRecord sample_record() {
  CaseRecord rec;
  rec.id = "llama::attn.softmax_3";
  rec.index = 7;
  rec.model = "llama";
  rec.name = "attn.softmax_3";
  rec.op = "torch.nn.functional.softmax";
  rec.dtype = "bf16";
  rec.file = "manifests/llama.yaml";
  rec.line = 42;
  rec.marks = {"bf16operation", "softmax"};
  rec.key = "k3:0123456789abcdef0123456789abcdef";
  rec.signature = "torch.nn.functional.softmax(bf16[4, 8], -1)";
  rec.call = "torch.nn.functional.softmax(bf16[4,8]{stride 1,4}, -1)";
  rec.deduplicated_from = "gpt_oss::softmax.1";
  rec.status = "xfail";
  rec.status_reason = "known bf16 softmax drift";
  rec.outcome = Outcome::XPassed;
  rec.xfail_strictness = XfailStrictness::NonStrict;
  rec.labels.push_back(
      {find_case_field("upstream_test"), "test_model_ops_db_torch_nn_functional_softmax__3_spyre_bfloat16"});
  rec.labels.push_back({find_case_field("issue"), "https://github.com/org/repo/issues/7"});
  rec.result = sample_result();
  rec.result.case_id = "gpt_oss::softmax.1";  // the occurrence that ran
  return rec;
}

TEST(RecordJson, RoundTripsEveryField) {
  const CaseRecord rec = sample_record();
  const std::string line = case_record_json_line(rec);
  const CaseRecord back = case_record_from_json(nlohmann::json::parse(line), JsonWhere{"journal.jsonl", ""});
  EXPECT_EQ(back.id, rec.id);
  EXPECT_EQ(back.index, rec.index);
  EXPECT_EQ(back.model, rec.model);
  EXPECT_EQ(back.name, rec.name);
  EXPECT_EQ(back.op, rec.op);
  EXPECT_EQ(back.dtype, rec.dtype);
  EXPECT_EQ(back.file, rec.file);
  EXPECT_EQ(back.line, rec.line);
  EXPECT_EQ(back.marks, rec.marks);
  EXPECT_EQ(back.key, rec.key);
  EXPECT_EQ(back.signature, rec.signature);
  EXPECT_EQ(back.call, rec.call);
  EXPECT_EQ(back.deduplicated_from, rec.deduplicated_from);
  EXPECT_EQ(back.status, rec.status);
  EXPECT_EQ(back.status_reason, rec.status_reason);
  EXPECT_EQ(back.outcome, rec.outcome);
  EXPECT_EQ(back.xfail_strictness, rec.xfail_strictness);
  EXPECT_EQ(back.label("upstream_test"), rec.label("upstream_test"));
  EXPECT_EQ(back.label("issue"), "https://github.com/org/repo/issues/7");
  expect_same_result(rec.result, back.result);
}

// Every stage and outcome through the journal's and the metrics' record, by name.
TEST(RecordJson, RoundTripsEveryStageAndOutcome) {
  for (int s = 0; s <= static_cast<int>(kLastStage); ++s)
    for (int o = 0; o <= static_cast<int>(kLastOutcome); ++o) {
      CaseRecord rec = sample_record();
      rec.outcome = static_cast<Outcome>(o);
      rec.result.stage = static_cast<Stage>(s);
      rec.result.outcome = rec.outcome;
      const CaseRecord back =
          case_record_from_json(nlohmann::json::parse(case_record_json_line(rec)), JsonWhere{"journal.jsonl", ""});
      EXPECT_EQ(back.outcome, rec.outcome) << outcome_name(rec.outcome);
      EXPECT_EQ(back.result.outcome, rec.outcome) << outcome_name(rec.outcome);
      EXPECT_EQ(back.result.stage, rec.result.stage) << stage_name(rec.result.stage);
    }
}

// Every verdict kind through the journal's and the metrics' record, by name (`verdict_kind`); None writes no key, so
// records without a kind read as before, and a journal of an earlier run (no key) reads as None.
TEST(RecordJson, RoundTripsEveryVerdictKindAndReadsRecordsWithoutOne) {
  for (const VerdictKindSpec& k : kVerdictKinds) {
    CaseRecord rec = sample_record();
    rec.result.stage = k.stage;
    rec.result.kind = k.id;
    const nlohmann::json j = nlohmann::json::parse(case_record_json_line(rec));
    EXPECT_EQ(j.contains("verdict_kind"), k.id != VerdictKind::None) << k.name;
    if (k.id != VerdictKind::None) {
      EXPECT_EQ(j["verdict_kind"], k.name);
    }
    EXPECT_EQ(case_record_from_json(j, JsonWhere{"journal.jsonl", ""}).result.kind, k.id) << k.name;
  }
  CaseRecord rec = sample_record();
  rec.result.kind = VerdictKind::UnknownOp;
  nlohmann::json j = nlohmann::json::parse(case_record_json_line(rec));
  j.erase("verdict_kind");  // as a journal written before the kind was
  EXPECT_EQ(case_record_from_json(j, JsonWhere{"journal.jsonl", ""}).result.kind, VerdictKind::None);
}

// A kind the reader does not know (or the empty spelling of None, which is never written) is a located error that
// names the kinds it knows, not a record silently read without its kind.
TEST(RecordJson, AnUnknownVerdictKindIsALocatedError) {
  for (const char* bad : {"unknown_opp", ""}) {
    nlohmann::json j = nlohmann::json::parse(case_record_json_line(sample_record()));
    j["verdict_kind"] = bad;
    try {
      case_record_from_json(j, JsonWhere{"journal.jsonl:3", ""});
      ADD_FAILURE() << "verdict_kind \"" << bad << "\" was read";
    } catch (const ReportError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("journal.jsonl:3"), std::string::npos) << what;
      EXPECT_NE(what.find("/verdict_kind"), std::string::npos) << what;
      EXPECT_NE(what.find("unknown verdict kind \"" + std::string(bad) + "\" (expected one of unknown_op, "),
                std::string::npos)
          << what;
    }
  }
}

// The metrics schema's `verdict_kind` is every kind of the table but None (which is written as no key), so that a
// dashboard validating metrics files accepts every kind opcheck writes.
TEST(RecordJson, MetricsSchemaNamesEveryVerdictKind) {
  std::ifstream in(std::string(OPCHECK_TEST_DIR) + "/../../schemas/metrics.schema.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json schema = nlohmann::json::parse(in);
  std::vector<std::string> in_schema, in_table;
  for (const auto& v : schema["$defs"]["case"]["properties"]["verdict_kind"]["enum"]) in_schema.push_back(v);
  for (const VerdictKindSpec& k : kVerdictKinds)
    if (k.id != VerdictKind::None) in_table.push_back(k.name);
  EXPECT_EQ(in_schema, in_table);
}

TEST(RecordJson, RoundTripsNonFiniteFigures) {
  CaseRecord rec = sample_record();
  rec.result.figures.max_abs_diff = -std::numeric_limits<double>::infinity();
  rec.result.figures.max_rel_diff = std::nan("");
  rec.result.figures.pcc.reset();
  const CaseRecord back =
      case_record_from_json(nlohmann::json::parse(case_record_json_line(rec)), JsonWhere{"metrics.json", "/cases/0"});
  expect_same_result(rec.result, back.result);
}

// ----------------------------------------------------------------------------------------------------------------
// JUnit (a writer only: each field is checked where JUnit shows it)

std::string property_of(pugi::xml_node testcase, const char* name) {
  for (auto p : testcase.child("properties").children("property"))
    if (std::string(p.attribute("name").value()) == name) return p.attribute("value").value();
  return "<absent>";
}

TEST(RecordJunit, WritesEveryFieldItShows) {
  RunReport report;
  CaseRecord ran = sample_record();
  ran.deduplicated_from.clear();  // the occurrence that ran carries the case's time
  ran.outcome = Outcome::Failed;
  ran.result.case_id = ran.id;
  CaseRecord dedup = sample_record();
  report.cases = {ran, dedup};
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(written_junit_xml(report).c_str()));
  const auto suite = doc.child("testsuites").child("testsuite");
  pugi::xml_node tc_ran, tc_dedup;
  for (auto tc : suite.children("testcase"))
    (property_of(tc, "deduplicated_from") == "<absent>" ? tc_ran : tc_dedup) = tc;
  ASSERT_TRUE(tc_ran && tc_dedup);
  // The ran case's time is the sum of its seven timings (reference_cache_ms's 7.5 and golden_ms's 8.25 included):
  // 34.4375 ms.
  EXPECT_STREQ(tc_ran.attribute("time").value(), "0.034");

  // Case fields.
  EXPECT_STREQ(tc_ran.attribute("classname").value(), "llama");                   // model
  EXPECT_STREQ(tc_ran.attribute("name").value(), "attn.softmax_3");               // id after model::
  EXPECT_EQ(property_of(tc_ran, "op"), ran.op);
  EXPECT_EQ(property_of(tc_ran, "dtype"), "bf16");
  EXPECT_EQ(property_of(tc_ran, "location"), "manifests/llama.yaml:42");          // file, line
  EXPECT_EQ(property_of(tc_ran, "marks"), "bf16operation,softmax");
  EXPECT_EQ(property_of(tc_ran, "dedupe_key"), ran.key);
  EXPECT_EQ(property_of(tc_dedup, "deduplicated_from"), dedup.deduplicated_from);
  EXPECT_EQ(property_of(tc_ran, "status"), "xfail");
  EXPECT_EQ(property_of(tc_ran, "status_reason"), ran.status_reason);
  EXPECT_EQ(property_of(tc_ran, "outcome"), "failed");
  EXPECT_EQ(property_of(tc_dedup, "outcome"), "xpassed");
  EXPECT_EQ(property_of(tc_dedup, "xfail_strict"), "false");                      // xfail_strictness
  EXPECT_EQ(property_of(tc_ran, "upstream_test"), ran.label("upstream_test"));
  EXPECT_EQ(property_of(tc_ran, "issue"), ran.label("issue"));
  // Not in JUnit: index (orders merged shards in the metrics file) and signature (coverage in the metrics file).

  // Result fields.
  EXPECT_EQ(property_of(tc_ran, "stage"), "INCORRECT_RESULT");
  EXPECT_STREQ(tc_ran.child("failure").attribute("type").value(), "INCORRECT_RESULT");  // result outcome: failed
  EXPECT_EQ(std::string(tc_ran.child("failure").text().get()), ran.result.message);
  EXPECT_EQ(property_of(tc_ran, "resolved_op"), "aten::_softmax");
  EXPECT_EQ(property_of(tc_ran, "decomposed"), "true");
  EXPECT_EQ(property_of(tc_ran, "reference_upcast"), "true");
  EXPECT_EQ(property_of(tc_ran, "reference_made"), ran.result.reference_made);
  EXPECT_EQ(property_of(tc_ran, "judge_notes"), ran.result.judge_notes[0] + "; " + ran.result.judge_notes[1]);
  EXPECT_EQ(property_of(tc_ran, "golden_ms"), "8.25");
  EXPECT_EQ(property_of(tc_ran, "values_compared").rfind("false", 0), 0u);
  EXPECT_EQ(property_of(tc_ran, "result_from_cache").rfind("true", 0), 0u);
  EXPECT_EQ(property_of(tc_ran, "result_from_journal").rfind("true", 0), 0u);
  EXPECT_EQ(property_of(tc_ran, "traced_op"), "aten::silu");
  EXPECT_EQ(property_of(tc_ran, "module"), "{\"parameters\": 36992}");
  EXPECT_EQ(property_of(tc_ran, "max_abs_diff"), "0.5");
  EXPECT_EQ(property_of(tc_ran, "max_rel_diff"), "0.25");
  EXPECT_EQ(property_of(tc_ran, "pcc"), "0.75");
  EXPECT_NE(std::string(tc_ran.child("failure").attribute("message").value()).find("3 / 12"), std::string::npos)
      << "mismatched and total reach JUnit through the message";
  const std::string failure_message = tc_ran.child("failure").attribute("message").value();
  EXPECT_NE(failure_message.find("\ncall: " + ran.call + "\n"), std::string::npos) << failure_message;  // call
  EXPECT_NE(failure_message.find("\nworst element at [2, 5]: device 1.5, reference 1, float64 1.125\n"),
            std::string::npos)
      << failure_message;  // worst_index, worst_device, worst_reference, worst_golden
  EXPECT_EQ(property_of(tc_ran, "reference_ms"), "2.5");
  EXPECT_EQ(property_of(tc_ran, "device_ms"), "3.75");
  EXPECT_EQ(property_of(tc_ran, "compile_ms"), "6.0625");
  // materialize_ms and compare_ms: only in the testcase time, checked above.
  EXPECT_EQ(std::string(tc_ran.child("system-err").text().get()), ran.result.captured_stderr);
  // Not in JUnit: case_id (the testcase is the occurrence; deduplicated_from names the one that ran) and
  // input_digests (the metrics file and failure bundles keep them).
}

}  // namespace
}  // namespace opcheck
