// Result <-> JSON: what crosses the worker pipe (as CBOR) must come back identical, including odd numbers and bytes.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "common/result_json.h"

namespace opcheck {
namespace {

Result sample() {
  Result r;
  r.case_id = "llama::attn.softmax_3";
  r.stage = Stage::INCORRECT_RESULT;
  r.outcome = Outcome::Failed;
  r.message = "Mismatched elements: 3 / 12 (25.0%)";
  r.resolved_op = "aten::_softmax";
  r.decomposed = true;
  r.reference_upcast = true;
  r.figures.max_abs_diff = std::numeric_limits<double>::infinity();
  r.figures.max_rel_diff = std::nan("");
  r.figures.mismatched = 3;
  r.figures.total = 12;
  r.materialize_ms = 0.25;
  r.device_ms = 1.5;
  r.input_digests = {"ab", "cd"};
  r.captured_stderr = "warn: \xff\xfe not utf-8\n";
  return r;
}

void expect_same(const Result& a, const Result& b) {
  EXPECT_EQ(a.case_id, b.case_id);
  EXPECT_EQ(a.stage, b.stage);
  EXPECT_EQ(a.outcome, b.outcome);
  EXPECT_EQ(a.message, b.message);
  EXPECT_EQ(a.resolved_op, b.resolved_op);
  EXPECT_EQ(a.decomposed, b.decomposed);
  EXPECT_EQ(a.reference_upcast, b.reference_upcast);
  ASSERT_EQ(a.figures.max_abs_diff.has_value(), b.figures.max_abs_diff.has_value());
  if (a.figures.max_abs_diff) {
    EXPECT_EQ(*a.figures.max_abs_diff, *b.figures.max_abs_diff);
  }
  ASSERT_EQ(a.figures.max_rel_diff.has_value(), b.figures.max_rel_diff.has_value());
  if (a.figures.max_rel_diff) {
    EXPECT_EQ(std::isnan(*a.figures.max_rel_diff), std::isnan(*b.figures.max_rel_diff));
  }
  EXPECT_EQ(a.figures.pcc.has_value(), b.figures.pcc.has_value());
  EXPECT_EQ(a.figures.mismatched, b.figures.mismatched);
  EXPECT_EQ(a.figures.total, b.figures.total);
  EXPECT_EQ(a.materialize_ms, b.materialize_ms);
  EXPECT_EQ(a.device_ms, b.device_ms);
  EXPECT_EQ(a.input_digests, b.input_digests);
  EXPECT_EQ(a.captured_stderr, b.captured_stderr);
}

TEST(ResultJson, RoundTripsThroughCborByteForByte) {
  const Result r = sample();
  const auto cbor = nlohmann::json::to_cbor(to_json(r));
  expect_same(r, result_from_json(nlohmann::json::from_cbor(cbor)));
}

TEST(ResultJson, NonFiniteFiguresAreSpelledOut) {
  Result r = sample();
  r.captured_stderr = "ok";
  const std::string text = to_json(r).dump();
  EXPECT_NE(text.find("\"max_abs_diff\":\"Infinity\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"max_rel_diff\":\"NaN\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"pcc\":null"), std::string::npos) << text;
  expect_same(r, result_from_json(nlohmann::json::parse(text)));
}

TEST(ResultJson, MissingKeysKeepDefaultsAndOutcomeFollowsStage) {
  const Result r = result_from_json(nlohmann::json{{"case_id", "m::c"}, {"stage", "FAILED_REFERENCE"}});
  EXPECT_EQ(r.case_id, "m::c");
  EXPECT_EQ(r.stage, Stage::FAILED_REFERENCE);
  EXPECT_EQ(r.outcome, Outcome::Error);
  EXPECT_TRUE(r.message.empty());
}

TEST(ResultJson, BadFieldsAreNamed) {
  const std::pair<nlohmann::json, const char*> bad[] = {
      {nlohmann::json{{"stage", "EXPLODED"}}, "unknown stage 'EXPLODED'"},
      {nlohmann::json{{"outcome", "meh"}}, "unknown outcome 'meh'"},
      {nlohmann::json{{"message", 3}}, "'message': expected a string"},
      {nlohmann::json{{"figures", {{"total", "x"}}}}, "'figures.total': expected an integer"},
      {nlohmann::json{{"figures", {{"pcc", "high"}}}}, "'figures.pcc': expected a number"},
      {nlohmann::json{{"input_digests", {1, 2}}}, "'input_digests': expected an array of strings"},
      {nlohmann::json::array(), "must be a JSON object"},
  };
  for (const auto& [j, says] : bad) {
    Result r;
    std::string error;
    EXPECT_FALSE(result_from_json(j, r, error)) << j.dump();
    EXPECT_NE(error.find(says), std::string::npos) << j.dump() << " -> " << error;
  }
}

}  // namespace
}  // namespace opcheck

#include "runner/result_wire.h"

namespace opcheck {
namespace {

TEST(ResultWire, RoundTripsEveryField) {
  const Result r = sample();
  std::vector<std::uint8_t> buf;
  encode_result(r, buf);
  Result back;
  std::string error;
  ASSERT_TRUE(decode_result(buf.data(), buf.size(), back, error)) << error;
  expect_same(r, back);
}

TEST(ResultWire, RoundTripsACompiledRunsStageAndCompileTime) {
  Result r = sample();
  r.stage = Stage::FAILED_COMPILE;
  r.compile_ms = 1234.5;
  std::vector<std::uint8_t> buf;
  encode_result(r, buf);
  Result back;
  std::string error;
  ASSERT_TRUE(decode_result(buf.data(), buf.size(), back, error)) << error;
  EXPECT_EQ(back.stage, Stage::FAILED_COMPILE);
  EXPECT_EQ(back.compile_ms, 1234.5);
  expect_same(r, back);
}

TEST(ResultWire, TruncatedOrPaddedRecordsAreRejected) {
  std::vector<std::uint8_t> buf;
  encode_result(sample(), buf);
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

}  // namespace
}  // namespace opcheck
