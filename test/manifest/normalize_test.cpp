// Normalization rules: what each manifest construct becomes in the Case, and how each mistake is reported.
#include "manifest/normalize.h"
#include "manifest/string_values.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "opcheck/case.h"

using namespace opcheck;
using Kind = PyValue::Kind;

namespace {

const std::string kPath = std::string(OPCHECK_TEST_DIR) + "/good/inline.yaml";

ManifestSet load(const std::string& text) { return load_manifest_text(kPath, text); }

std::string all_diags(const ManifestSet& s) {
  std::string out;
  for (const auto& d : s.diagnostics.items) out += d.format() + "\n";
  return out;
}

// The one case of a manifest that must load cleanly.
Case one_case(const std::string& text) {
  ManifestSet s = load(text);
  EXPECT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  if (s.manifests.size() != 1 || s.manifests[0].cases.size() != 1) {
    ADD_FAILURE() << "expected one manifest with one case\n" << all_diags(s);
    return {};
  }
  return s.manifests[0].cases[0];
}

// The first error diagnostic whose message contains `needle`, or nullptr.
const Diagnostic* find_error(const ManifestSet& s, const std::string& needle) {
  for (const auto& d : s.diagnostics.items)
    if (d.severity == Diagnostic::Severity::Error && d.message.find(needle) != std::string::npos) return &d;
  return nullptr;
}

// A manifest with one case `c1` whose body (indented by 4) is `body`.
std::string with_case(const std::string& body, const std::string& head = "model: m\n") {
  std::string out = head + "cases:\n  - name: c1\n    op: torch.add\n";
  std::size_t start = 0;
  while (start < body.size()) {
    std::size_t end = body.find('\n', start);
    if (end == std::string::npos) end = body.size();
    out += "    " + body.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

Case with_inputs(const std::string& inputs, const std::string& extra = {}) {
  return one_case(with_case(extra + "inputs:\n" + inputs));
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Top level and defaults

TEST(Normalize, DefaultsApplyAndCasesOverride) {
  ManifestSet s = load(
      "model: m\n"
      "description: a test manifest\n"
      "defaults: {dtype: fp16, seed: 123, rtol: 5.0e-3, atol: 1e-3, compare: pcc, pcc_min: 0.99, equal_nan: false,\n"
      "           timeout: 30}\n"
      "cases:\n"
      "  - {name: a, op: torch.add}\n"
      "  - {name: b, op: torch.add, dtype: torch.bfloat16, seed: 7, rtol: 0, compare: exact, timeout: 1.5}\n");
  ASSERT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  ASSERT_EQ(s.manifests.size(), 1u);
  const Manifest& m = s.manifests[0];
  EXPECT_EQ(m.model, "m");
  ASSERT_EQ(m.cases.size(), 2u);
  const Case& a = m.cases[0];
  EXPECT_EQ(a.id, "m::a");
  EXPECT_EQ(a.model, "m");
  EXPECT_EQ(a.dtype, DType::Float16);
  EXPECT_EQ(a.dtype_spelling, "fp16");
  EXPECT_EQ(a.seed, 123);
  EXPECT_EQ(a.rtol, 5.0e-3);
  EXPECT_EQ(a.atol, 1e-3);
  EXPECT_EQ(a.compare, Comparator::Pcc);
  EXPECT_EQ(a.pcc_min, 0.99);
  EXPECT_FALSE(a.equal_nan);
  EXPECT_EQ(a.timeout_s, 30.0);
  EXPECT_TRUE(a.inputs.empty()) << "inputs may be absent";
  const Case& b = m.cases[1];
  EXPECT_EQ(b.dtype, DType::BFloat16);
  EXPECT_EQ(b.dtype_spelling, "torch.bfloat16");
  EXPECT_EQ(b.seed, 7);
  EXPECT_EQ(b.rtol, 0.0);
  EXPECT_EQ(b.atol, 1e-3) << "unset fields still come from defaults";
  EXPECT_EQ(b.compare, Comparator::Exact);
  EXPECT_EQ(b.timeout_s, 1.5);
}

TEST(Normalize, NoDefaultsMeansTorchDefaults) {
  Case c = one_case(with_case("inputs: []"));
  EXPECT_EQ(c.dtype, DType::Float32);
  EXPECT_EQ(c.dtype_spelling, "fp32");
  EXPECT_EQ(c.seed, 0);
  EXPECT_FALSE(c.rtol);
  EXPECT_FALSE(c.atol);
  EXPECT_EQ(c.compare, Comparator::AllClose);
  EXPECT_TRUE(c.equal_nan);
  EXPECT_FALSE(c.timeout_s);
  EXPECT_FALSE(c.nondeterministic_ok);
  EXPECT_FALSE(c.expects_error);
  EXPECT_EQ(c.loc.line, 3);
  EXPECT_EQ(c.loc.col, 5);
  EXPECT_EQ(c.loc.file, kPath);
}

TEST(Normalize, DefaultIsAcceptedLikeDefaults) {
  Case c = one_case(with_case("inputs: []", "model: m\ndefault: {dtype: bf16, seed: 9}\n"));
  EXPECT_EQ(c.dtype, DType::BFloat16);
  EXPECT_EQ(c.seed, 9);
}

TEST(Normalize, DefaultsAndDefaultTogetherAreAnError) {
  ManifestSet s = load(with_case("inputs: []", "model: m\ndefaults: {seed: 1}\ndefault: {seed: 2}\n"));
  const Diagnostic* d = find_error(s, "both 'defaults' and 'default'");
  ASSERT_TRUE(d) << all_diags(s);
  EXPECT_EQ(d->loc.line, 3);
  EXPECT_TRUE(s.manifests.empty()) << "a file whose defaults are in doubt loads no cases";
}

TEST(Normalize, FileLevelMarksApplyToEveryCase) {
  ManifestSet s = load(
      "model: m\nmarks: [nightly, constant]\ncases:\n"
      "  - {name: a, op: torch.add, marks: [fp32operation, constant]}\n"
      "  - {name: b, op: torch.add, mark: slow}\n"
      "  - {name: c, op: torch.add}\n");
  ASSERT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  const auto& cases = s.manifests.at(0).cases;
  EXPECT_EQ(cases[0].marks, (std::vector<std::string>{"fp32operation", "constant", "nightly"}));
  EXPECT_EQ(cases[1].marks, (std::vector<std::string>{"slow", "nightly", "constant"}));
  EXPECT_EQ(cases[2].marks, (std::vector<std::string>{"nightly", "constant"}));
  ManifestSet one = load("model: m\nmark: nightly\ncases:\n  - {name: a, op: torch.add, marks: constant}\n");
  EXPECT_EQ(one.manifests.at(0).cases[0].marks, (std::vector<std::string>{"constant", "nightly"}));
}

TEST(Normalize, TopLevelMistakes) {
  auto expect_error = [](const std::string& text, const std::string& needle, int line) {
    ManifestSet s = load(text);
    const Diagnostic* d = find_error(s, needle);
    ASSERT_TRUE(d) << "no error containing \"" << needle << "\" in\n" << all_diags(s);
    EXPECT_EQ(d->loc.line, line) << d->format();
    EXPECT_TRUE(s.manifests.empty());
  };
  expect_error("cases: []\n", "manifest has no 'model'", 1);
  expect_error("model: m\n", "manifest has no 'cases'", 1);
  expect_error("model: m\ncases: x\n", "expected a list for 'cases', got a string", 2);
  expect_error("model: ''\ncases: []\n", "model name is empty", 1);
  expect_error("model: [a]\ncases: []\n", "expected a string for 'model', got a list", 1);
  expect_error("model: ~\ncases: []\n", "expected a string for 'model', got null", 1);
  expect_error("model: a::b\ncases: []\n", "may not contain '::'", 1);
  expect_error("- 1\n", "expected a mapping at the top of the manifest, got a list", 1);
  expect_error("just text\n", "expected a mapping at the top of the manifest, got a string", 1);
  expect_error("~\n", "empty manifest", 1);
  expect_error("model: m\ncases: []\nmarks: [a]\nmark: b\n", "both 'marks' and 'mark'", 4);
  expect_error("model: m\ncases: []\nmodle: x\n",
               "unknown key 'modle' at the top level of the manifest (did you mean 'model'?)", 3);
  expect_error("model: m\ncases: []\nop: torch.add\n", "unknown key 'op' at the top level", 3);
  expect_error("model: m\ndefaults: {device: cuda}\ncases: []\n", "unknown key 'device' in defaults", 2);
  expect_error("model: m\ndefaults: {marks: [a]}\ncases: []\n", "unknown key 'marks' in defaults", 2);
  expect_error("model: m\ndefaults: [1]\ncases: []\n", "expected a mapping for 'defaults', got a list", 2);
  expect_error("model: m\ndefaults: {dtype: fp17}\ncases: []\n", "unknown dtype 'fp17'", 2);
  expect_error("model: m\ndescription: [x]\ncases: []\n", "expected a string for 'description'", 2);
}

TEST(Normalize, UnknownKeyHintsNameTheFix) {
  ManifestSet s = load(with_case("inputs: []\nmarkz: [a]"));
  const Diagnostic* d = find_error(s, "unknown key 'markz' in a case (did you mean 'marks'?)");
  ASSERT_TRUE(d) << all_diags(s);
  EXPECT_EQ(d->fix, "rename 'markz' to 'marks'");
  EXPECT_EQ(d->case_id, "m::c1");
  EXPECT_EQ(d->loc.line, 6);
  EXPECT_EQ(d->loc.col, 5);
  EXPECT_EQ(d->format(), kPath +
                             ":6:5: error: unknown key 'markz' in a case (did you mean 'marks'?) [case m::c1]\n"
                             "  Fix: rename 'markz' to 'marks'");
  s = load(with_case("inputs: []\nzzzzzz: 1"));
  d = find_error(s, "unknown key 'zzzzzz' in a case");
  ASSERT_TRUE(d);
  EXPECT_NE(d->fix.find("allowed keys here: name, op, inputs"), std::string::npos) << d->fix;
}

// ---------------------------------------------------------------------------------------------------------------
// Case fields

TEST(Normalize, CaseFields) {
  Case c =
      one_case(with_case("description: |\n  two\n  lines\n"
                         "nondeterministic: true\n"
                         "expects_error: {type: RuntimeError, match: 'view size is not compatible.*'}\n"
                         "skip_if:\n  - {expr: \"device == 'spyre'\", reason: not yet}\n  - expr: dtype == 'bf16'\n"
                         "xfail_if: {expr: \"op in ('torch.add',)\", reason: known bug}\n"
                         "compare: pcc\npcc_min: 0.95\nequal_nan: false\ntimeout: 10\n"
                         "inputs: []"));
  EXPECT_EQ(c.description, "two\nlines\n");
  EXPECT_TRUE(c.nondeterministic_ok);
  ASSERT_TRUE(c.expects_error);
  EXPECT_EQ(c.expects_error->type, "RuntimeError");
  EXPECT_EQ(c.expects_error->match, "view size is not compatible.*");
  ASSERT_EQ(c.skip_if.size(), 2u);
  EXPECT_EQ(c.skip_if[0].expr, "device == 'spyre'");
  EXPECT_EQ(c.skip_if[0].reason, "not yet");
  EXPECT_EQ(c.skip_if[1].reason, "");
  ASSERT_TRUE(c.skip_if[0].ast);
  ASSERT_TRUE(c.skip_if[1].ast);
  EXPECT_EQ(c.skip_if[0].loc.line, 11);
  CondEnv env;
  env.device = "spyre";
  EXPECT_TRUE(c.skip_if[0].ast->evaluate(env));
  ASSERT_EQ(c.xfail_if.size(), 1u);
  env.op = c.op;
  EXPECT_TRUE(c.xfail_if[0].ast->evaluate(env));
  EXPECT_EQ(c.xfail_if[0].reason, "known bug");
  EXPECT_EQ(c.compare, Comparator::Pcc);
  EXPECT_EQ(c.pcc_min, 0.95);
  EXPECT_FALSE(c.equal_nan);
  EXPECT_EQ(c.timeout_s, 10.0);
}

TEST(Normalize, AttrsThenKwmapMergedOverIt) {
  Case c = one_case(with_case(
      "attrs: {dim: -1, keepdim: false}\n"
      "kwmap: {keepdim: true, dtype: torch.float16, device: 'cuda:0', memory_format: torch.contiguous_format}\n"
      "inputs: []"));
  ASSERT_EQ(c.kwargs.size(), 5u);
  EXPECT_EQ(c.kwargs[0].first, "dim");
  EXPECT_EQ(c.kwargs[0].second, PyValue::integer(-1));
  EXPECT_EQ(c.kwargs[1].first, "keepdim");
  EXPECT_EQ(c.kwargs[1].second, PyValue::boolean(true)) << "kwmap wins, attrs keep the position";
  EXPECT_EQ(c.kwargs[2].first, "dtype");
  EXPECT_EQ(c.kwargs[2].second, PyValue::of_dtype(DType::Float16));
  EXPECT_EQ(c.kwargs[3].second, PyValue::device("cuda:0"));
  EXPECT_EQ(c.kwargs[4].second, PyValue::string("torch.contiguous_format")) << "non-dtype torch names stay strings";
}

TEST(Normalize, CaseFieldMistakes) {
  struct Bad {
    std::string body;
    std::string needle;
    int line;  // of the offending node
  };
  const std::vector<Bad> cases = {
      {"marks: [a]\nmark: b", "both 'marks' and 'mark'", 6},
      {"marks: {a: 1}", "expected a mark name or a list of them for 'marks', got a mapping", 5},
      {"marks: ['a b']", "'a b' is not a valid marker name", 5},
      {"attrs: [1]", "expected a mapping for 'attrs', got a list", 5},
      {"kwmap: {'my key': 1}", "keyword 'my key' in 'kwmap' is not a Python identifier", 5},
      {"kwmap: {dim: {a: 1}}", "a mapping is not a value (in 'dim')", 5},
      {"kwmap: {dim: '(1,'}", "invalid Python literal '(1,' in 'dim'", 5},
      {"dtype: float33", "unknown dtype 'float33' (did you mean 'float32'?)", 5},
      {"seed: 1.5", "expected an integer for 'seed', got a number", 5},
      {"seed: -1", "seed must be >= 0", 5},
      {"rtol: '1e-3'", "expected a number for 'rtol', got a string", 5},
      {"atol: -1", "atol must be a finite number >= 0", 5},
      {"rtol: .inf", "rtol must be a finite number >= 0", 5},
      {"pcc_min: 2", "pcc_min must be between -1 and 1", 5},
      {"compare: close", "unknown compare kind 'close'", 5},
      {"equal_nan: yes", "expected true or false for 'equal_nan', got a string", 5},
      {"timeout: 0", "timeout must be a positive number of seconds", 5},
      {"nondeterministic: 1", "expected true or false for 'nondeterministic', got an integer", 5},
      {"description: [a]", "expected a string for 'description', got a list", 5},
      {"expects_error: RuntimeError", "expected a mapping for 'expects_error', got a string", 5},
      {"expects_error: {match: x}", "expects_error has no 'type'", 5},
      {"expects_error: {type: 'not a type'}", "is not a Python exception name", 5},
      {"expects_error: {type: RuntimeError, match: '[a-'}", "not a valid ECMAScript regular expression", 5},
      {"expects_error: {type: RuntimeError, match: [a]}", "expected a regular expression string for 'match'", 5},
      {"expects_error: {type: RuntimeError, kind: x}", "unknown key 'kind' in expects_error", 5},
      {"skip_if: \"device == 'spyre'\"", "expected a mapping {expr, reason} in 'skip_if', got a string", 5},
      {"skip_if: {reason: x}", "'skip_if' condition has no 'expr'", 5},
      {"skip_if: {expr: [1]}", "expected a condition string for 'expr', got a list", 5},
      {"skip_if: {expr: \"devce == 'x'\"}", "unknown name 'devce' (did you mean 'device'?)", 5},
      {"xfail_if: [{expr: 'device =='}]", "invalid xfail_if expression", 5},
      {"skip_if: {expr: 'True', reason: [x]}", "expected a string for 'reason', got a list", 5},
      {"inputs: {value: 1}", "expected a list for 'inputs', got a mapping", 5},
  };
  for (const auto& b : cases) {
    ManifestSet s = load(with_case(b.body));
    const Diagnostic* d = find_error(s, b.needle);
    ASSERT_TRUE(d) << b.body << "\nexpected \"" << b.needle << "\" in\n" << all_diags(s);
    EXPECT_EQ(d->loc.line, b.line) << d->format();
    EXPECT_GT(d->loc.col, 0) << d->format();
    EXPECT_EQ(d->case_id, "m::c1") << d->format();
    ASSERT_EQ(s.manifests.size(), 1u) << b.body;
    EXPECT_TRUE(s.manifests[0].cases.empty()) << "the bad case is dropped: " << b.body;
  }
}

TEST(Normalize, ConditionErrorsPointIntoTheExpression) {
  ManifestSet s = load(with_case("skip_if: {expr: \"device == 'spyre' and dtpye == 'fp16'\"}"));
  const Diagnostic* d = find_error(s, "unknown name 'dtpye'");
  ASSERT_TRUE(d) << all_diags(s);
  EXPECT_EQ(d->loc.line, 5);
  // `    skip_if: {expr: "` puts the expression's first character at column 22; dtpye is its 23rd.
  EXPECT_EQ(d->loc.col, 22 + 22) << d->format();
}

TEST(Normalize, RequiredCaseFields) {
  ManifestSet s = load(
      "model: m\ncases:\n  - {op: torch.add}\n  - {name: b}\n  - {name: c, op: 'torch add'}\n  - 5\n"
      "  - {name: '', op: torch.add}\n");
  const Diagnostic* d = find_error(s, "case has no 'name'");
  ASSERT_TRUE(d) << all_diags(s);
  EXPECT_EQ(d->case_id, "m::#1") << "a nameless case is named by its position";
  EXPECT_EQ(d->loc.line, 3);
  d = find_error(s, "case has no 'op'");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->case_id, "m::b");
  EXPECT_TRUE(find_error(s, "op 'torch add' is not an op name"));
  d = find_error(s, "expected a case mapping");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->loc.line, 6);
  EXPECT_EQ(s.manifests.at(0).cases.size(), 0u);
}

TEST(Normalize, ABadCaseDoesNotStopTheOthers) {
  ManifestSet s = load(
      "model: m\ncases:\n"
      "  - {name: a, op: torch.add}\n"
      "  - {name: b, op: torch.add, inputs: [{tensor: {shape: [-1]}}]}\n"
      "  - {name: c, op: torch.add, dtpye: fp16}\n"
      "  - {name: d, op: torch.add}\n"
      "  - {name: a, op: torch.mul}\n");
  ASSERT_EQ(s.manifests.size(), 1u);
  std::vector<std::string> names;
  for (const auto& c : s.manifests[0].cases) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "d"}));
  EXPECT_EQ(s.manifests[0].cases[0].op, "torch.add") << "the first of two same-named cases stays";
  EXPECT_EQ(s.diagnostics.error_count(), 3u) << all_diags(s);
  const Diagnostic* d = find_error(s, "duplicate case name 'a' (first defined at line 3)");
  ASSERT_TRUE(d) << all_diags(s);
  EXPECT_EQ(d->loc.line, 7);
}

TEST(Normalize, EveryErrorInACaseIsReported) {
  // Lines 1-4 are the model, `cases:`, the case's name and op; its body starts at line 5.
  ManifestSet s =
      load(with_case("dtype: fp99\nseed: x\ninputs:\n  - tensor: {shape: [2], dtype: fp77}\n  - value: (1,"));
  std::vector<std::pair<int, std::string>> errors;
  for (const auto& d : s.diagnostics.items) {
    if (d.severity != Diagnostic::Severity::Error) continue;
    errors.emplace_back(d.loc.line, d.message);
    EXPECT_EQ(d.case_id, "m::c1") << d.format();
    EXPECT_EQ(d.loc.file, kPath) << d.format();
  }
  const std::vector<std::pair<int, std::string>> expected = {
      {5, "unknown dtype 'fp99' (did you mean 'fp16'?)"},
      {6, "expected an integer for 'seed', got a string"},
      {8, "unknown dtype 'fp77' (did you mean 'fp16'?)"},
      {9, "invalid Python literal '(1,' in 'value': unexpected end of the literal: expected a value"},
  };
  EXPECT_EQ(errors, expected) << all_diags(s);
}

// ---------------------------------------------------------------------------------------------------------------
// Inputs

TEST(Normalize, ValueClassification) {
  Case c = with_inputs(
      "  - value: null\n  - value: ~\n  - value: true\n  - value: False\n  - value: 3\n  - value: -7\n"
      "  - value: 0x10\n  - value: 2.0\n  - value: 1.0e-05\n  - value: .inf\n  - value: '3'\n  - value: None\n"
      "  - value: 'True'\n  - value: inf\n  - value: -inf\n  - value: nan\n  - value: (-1,)\n  - value: '[2, 24]'\n"
      "  - value: torch.float16\n  - value: cuda:0\n  - value: cpu\n  - value: spyre\n  - value: python.nn_module\n"
      "  - value: fp16\n  - value: [1, 2.5, x, [true]]\n  - value: yes\n  - value: \"(1, 2)\"\n  - value: |\n"
      "      block\n");
  ASSERT_EQ(c.inputs.size(), 28u);
  std::vector<std::string> reprs;
  for (const auto& in : c.inputs) {
    EXPECT_EQ(in.kind, Input::Kind::Value);
    reprs.push_back(in.value.repr());
  }
  const std::vector<std::string> expected = {"None",
                                             "None",
                                             "True",
                                             "False",
                                             "3",
                                             "-7",
                                             "16",
                                             "2.0",
                                             "1e-05",
                                             "inf",
                                             "'3'",
                                             "None",
                                             "True",
                                             "inf",
                                             "-inf",
                                             "nan",
                                             "(-1,)",
                                             "[2, 24]",
                                             "torch.float16",
                                             "'cuda:0'",
                                             "'cpu'",
                                             "'spyre'",
                                             "'python.nn_module'",
                                             "'fp16'",
                                             "[1, 2.5, 'x', [True]]",
                                             "'yes'",
                                             "(1, 2)",
                                             "'block\\n'"};
  EXPECT_EQ(reprs, expected);
  EXPECT_EQ(c.inputs[10].value.kind, Kind::String) << "quoted numbers stay strings";
  EXPECT_EQ(c.inputs[19].value.kind, Kind::Device);
  EXPECT_TRUE(c.inputs[20].value.is_host_device());
  EXPECT_EQ(c.inputs[18].value.kind, Kind::DType);
  EXPECT_EQ(c.inputs[23].value.kind, Kind::String) << "only torch.-prefixed dtype spellings become dtypes";
}

TEST(Normalize, ClassifyStringDirectly) {
  PyValue v;
  std::string err;
  int col = 0;
  ASSERT_TRUE(classify_string("(Ellipsis, None)", v, err, col));
  EXPECT_EQ(v.repr(), "(Ellipsis, None)");
  ASSERT_FALSE(classify_string("(1, 2", v, err, col));
  EXPECT_EQ(col, 1);
  ASSERT_TRUE(classify_string("aiu:3", v, err, col));
  EXPECT_EQ(v.kind, Kind::Device);
  ASSERT_TRUE(classify_string("cuda:", v, err, col));
  EXPECT_EQ(v.kind, Kind::String);
  EXPECT_EQ(classify_device("cpu:0"), DeviceKind::Host);
  EXPECT_EQ(classify_device("loopback"), DeviceKind::DeviceUnderTest);
  EXPECT_EQ(classify_device("privateuseone:1"), DeviceKind::DeviceUnderTest);
  EXPECT_EQ(classify_device("gpu"), DeviceKind::NotADevice);
  EXPECT_EQ(classify_device("cuda:x"), DeviceKind::NotADevice);
}

TEST(Normalize, PyInputs) {
  Case c = with_inputs(
      "  - py: (Ellipsis, None, slice(None, None, None))\n  - py: '[1, (2,), ...]'\n  - py: 3\n"
      "  - py: torch.int64\n");
  ASSERT_EQ(c.inputs.size(), 4u);
  EXPECT_EQ(c.inputs[0].value.repr(), "(Ellipsis, None, slice(None, None, None))");
  EXPECT_EQ(c.inputs[1].value.repr(), "[1, (2,), Ellipsis]");
  EXPECT_EQ(c.inputs[2].value, PyValue::integer(3));
  EXPECT_EQ(c.inputs[3].value, PyValue::of_dtype(DType::Int64));
}

TEST(Normalize, LiteralErrorsPointIntoTheText) {
  ManifestSet s = load(with_case("inputs:\n  - py: (1, 2,, 3)"));
  const Diagnostic* d = find_error(s, "invalid Python literal in 'py'");
  ASSERT_TRUE(d) << all_diags(s);
  EXPECT_EQ(d->loc.line, 6);
  EXPECT_EQ(d->loc.col, 13 + 6) << "column of the second comma";
  s = load(with_case("inputs:\n  - value: '(1, x)'"));
  d = find_error(s, "invalid Python literal '(1, x)' in 'value'");
  ASSERT_TRUE(d) << all_diags(s);
  EXPECT_EQ(d->loc.col, 16 + 1 + 4) << "quoted: one more for the quote";
}

TEST(Normalize, InputItemMistakes) {
  struct Bad {
    std::string inputs;
    std::string needle;
  };
  const std::vector<Bad> cases = {
      {"  - 3", "expected an input mapping (tensor, tensor_list, value, py or file), got an integer"},
      {"  - {}", "empty input"},
      {"  - {value: 1, py: '2'}", "an input has 'value' and 'py'; give exactly one of them"},
      {"  - valeu: 1", "unknown key 'valeu' in an input (did you mean 'value'?)"},
      {"  - {shape: [2]}", "unknown key 'shape' in an input"},
      {"  - py: [1]", "expected a string holding a Python literal for 'py', got a list"},
      {"  - py: ~", "expected a string holding a Python literal for 'py', got null"},
      {"  - py: x + 1", "only Python literals are allowed"},
      {"  - value: {a: 1}", "a mapping is not a value"},
      {"  - value: [1, {a: 1}]", "a mapping is not a value"},
      {"  - value: 18446744073709551616", "does not fit in 64 bits"},
      {"  - tensor: [2, 3]", "expected a tensor mapping (shape, dtype, ...), got a list"},
      {"  - tensor_list: {shape: [2]}", "expected a list of tensors for 'tensor_list', got a mapping"},
      {"  - tensor_list: [[2]]", "expected a tensor mapping"},
      {"  - tensor_list: [{tensor: {shape: [2]}}]", "unknown key 'tensor' in a tensor"},
  };
  for (const auto& b : cases) {
    ManifestSet s = load(with_case("inputs:\n" + b.inputs));
    const Diagnostic* d = find_error(s, b.needle);
    ASSERT_TRUE(d) << b.inputs << "\nexpected \"" << b.needle << "\" in\n" << all_diags(s);
    EXPECT_EQ(d->loc.line, 6) << d->format();
    EXPECT_TRUE(s.manifests.at(0).cases.empty());
  }
  ManifestSet s = load(with_case("inputs:\n  - {shape: [2]}"));
  const Diagnostic* d = find_error(s, "unknown key 'shape' in an input");
  ASSERT_TRUE(d);
  EXPECT_NE(d->fix.find("inside `tensor:`"), std::string::npos) << d->fix;
}

// ---------------------------------------------------------------------------------------------------------------
// Tensors

TEST(Normalize, TensorDefaultsAndExplicitLayout) {
  Case c = with_inputs(
      "  - tensor: {shape: [2, 3]}\n"
      "  - tensor:\n      shape: [1, 64, 11, 32]\n      stride: [45056, 64, 4096, 1]\n      storage_offset: 32\n"
      "      dtype: torch.bfloat16\n      device: cuda:0\n      init: rand\n");
  ASSERT_EQ(c.inputs.size(), 2u);
  const TensorSpec& a = c.inputs[0].tensor;
  EXPECT_EQ(c.inputs[0].kind, Input::Kind::Tensor);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(a.stride, (std::vector<std::int64_t>{3, 1}));
  EXPECT_EQ(a.storage_offset, 0);
  EXPECT_EQ(a.dtype, DType::Float32);
  EXPECT_EQ(a.dtype_spelling, "fp32");
  EXPECT_EQ(a.placement, Placement::DeviceUnderTest);
  EXPECT_EQ(a.init, InitKind::Rand);
  EXPECT_TRUE(a.preset.empty());
  EXPECT_EQ(a.loc.line, 6);
  const TensorSpec& b = c.inputs[1].tensor;
  EXPECT_EQ(b.stride, (std::vector<std::int64_t>{45056, 64, 4096, 1}));
  EXPECT_EQ(b.storage_offset, 32);
  EXPECT_EQ(b.dtype, DType::BFloat16);
  EXPECT_EQ(b.dtype_spelling, "torch.bfloat16");
  EXPECT_FALSE(b.is_contiguous());
}

TEST(Normalize, TensorDtypeInheritance) {
  ManifestSet s = load(
      "model: m\ndefaults: {dtype: fp16}\ncases:\n"
      "  - {name: a, op: torch.add, inputs: [{tensor: {shape: [1]}}, {tensor: {shape: [1], dtype: int8}}]}\n"
      "  - {name: b, op: torch.add, dtype: torch.float64, inputs: [{tensor: {shape: [1]}}, "
      "{tensor_list: [{shape: [1]}, {shape: [1], dtype: bool}]}, {file: arange_2x3.pt}]}\n");
  ASSERT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  const auto& cases = s.manifests.at(0).cases;
  EXPECT_EQ(cases[0].inputs[0].tensor.dtype, DType::Float16);
  EXPECT_EQ(cases[0].inputs[0].tensor.dtype_spelling, "fp16");
  EXPECT_EQ(cases[0].inputs[1].tensor.dtype, DType::Int8);
  EXPECT_EQ(cases[1].inputs[0].tensor.dtype, DType::Float64);
  EXPECT_EQ(cases[1].inputs[0].tensor.dtype_spelling, "torch.float64");
  EXPECT_EQ(cases[1].inputs[1].kind, Input::Kind::TensorList);
  ASSERT_EQ(cases[1].inputs[1].list.size(), 2u);
  EXPECT_EQ(cases[1].inputs[1].list[0].dtype, DType::Float64);
  EXPECT_EQ(cases[1].inputs[1].list[1].dtype, DType::Bool);
  EXPECT_EQ(cases[1].inputs[2].tensor.dtype, DType::Float32) << "a bare file input takes the saved tensor's dtype";
}

TEST(Normalize, EveryDtypeSpellingIsAccepted) {
  const std::vector<std::pair<std::string, DType>> spellings = {
      {"fp16", DType::Float16},
      {"float16", DType::Float16},
      {"half", DType::Float16},
      {"f16", DType::Float16},
      {"bf16", DType::BFloat16},
      {"bfloat16", DType::BFloat16},
      {"fp32", DType::Float32},
      {"float32", DType::Float32},
      {"float", DType::Float32},
      {"f32", DType::Float32},
      {"fp64", DType::Float64},
      {"float64", DType::Float64},
      {"double", DType::Float64},
      {"f64", DType::Float64},
      {"int8", DType::Int8},
      {"i8", DType::Int8},
      {"int16", DType::Int16},
      {"short", DType::Int16},
      {"i16", DType::Int16},
      {"int32", DType::Int32},
      {"int", DType::Int32},
      {"i32", DType::Int32},
      {"int64", DType::Int64},
      {"long", DType::Int64},
      {"i64", DType::Int64},
      {"uint8", DType::UInt8},
      {"u8", DType::UInt8},
      {"bool", DType::Bool},
      {"b8", DType::Bool},
      {"complex32", DType::Complex32},
      {"chalf", DType::Complex32},
      {"c32", DType::Complex32},
      {"complex64", DType::Complex64},
      {"cfloat", DType::Complex64},
      {"c64", DType::Complex64},
      {"complex128", DType::Complex128},
      {"cdouble", DType::Complex128},
      {"c128", DType::Complex128},
  };
  std::string inputs;
  for (const auto& [name, type] : spellings) {
    inputs += "  - tensor: {shape: [1], dtype: " + name + "}\n";
    inputs += "  - tensor: {shape: [1], dtype: torch." + name + "}\n";
  }
  Case c = with_inputs(inputs);
  ASSERT_EQ(c.inputs.size(), 2 * spellings.size());
  for (std::size_t i = 0; i < spellings.size(); ++i) {
    EXPECT_EQ(c.inputs[2 * i].tensor.dtype, spellings[i].second) << spellings[i].first;
    EXPECT_EQ(c.inputs[2 * i].tensor.dtype_spelling, spellings[i].first);
    EXPECT_EQ(c.inputs[2 * i + 1].tensor.dtype, spellings[i].second) << "torch." << spellings[i].first;
    EXPECT_EQ(c.inputs[2 * i + 1].tensor.dtype_spelling, "torch." + spellings[i].first);
  }
}

TEST(Normalize, Devices) {
  Case c = with_inputs(
      "  - tensor: {shape: [1], device: cpu}\n  - tensor: {shape: [1], device: cuda}\n"
      "  - tensor: {shape: [1], device: 'cuda:3'}\n  - tensor: {shape: [1], device: spyre}\n"
      "  - tensor: {shape: [1], device: aiu:0}\n  - tensor: {shape: [1], device: privateuseone}\n"
      "  - tensor: {shape: [1], device: xpu}\n  - tensor: {shape: [1], device: mps}\n"
      "  - tensor: {shape: [1], device: hpu:1}\n  - tensor: {shape: [1], device: loopback}\n");
  ASSERT_EQ(c.inputs.size(), 10u);
  EXPECT_EQ(c.inputs[0].tensor.placement, Placement::Host);
  for (std::size_t i = 1; i < c.inputs.size(); ++i)
    EXPECT_EQ(c.inputs[i].tensor.placement, Placement::DeviceUnderTest) << i;
}

TEST(Normalize, ContiguousFlag) {
  Case c = with_inputs(
      "  - tensor: {shape: [2, 3, 4], contiguous: false}\n"
      "  - tensor: {shape: [2, 3], contiguous: true}\n"
      "  - tensor: {shape: [2, 3], stride: [3, 1], contiguous: true}\n"
      "  - tensor: {shape: [2, 3], stride: [1, 2], contiguous: false}\n");
  EXPECT_EQ(c.inputs[0].tensor.stride, (std::vector<std::int64_t>{1, 2, 6})) << "column-major";
  EXPECT_FALSE(c.inputs[0].tensor.is_contiguous());
  EXPECT_EQ(c.inputs[1].tensor.stride, (std::vector<std::int64_t>{3, 1}));
  EXPECT_EQ(c.inputs[3].tensor.stride, (std::vector<std::int64_t>{1, 2}));
}

TEST(Normalize, PresetsBecomeExplicitStrides) {
  Case c = with_inputs(
      "  - tensor: {shape: [2, 3, 8], preset: noncontig_slice, preset_args: {dim: 1, step: 2}}\n"
      "  - tensor: {shape: [2, 3, 8], preset: transpose_view, preset_args: {dim0: 1, dim1: 2}}\n"
      "  - tensor: {shape: [2, 3, 4], preset: expand_view, preset_args: {base_shape: [3, 1]}}\n");
  const TensorSpec& slice = c.inputs[0].tensor;
  EXPECT_EQ(slice.shape, (std::vector<std::int64_t>{2, 3, 8})) << "shape stays the logical shape";
  EXPECT_EQ(slice.stride, (std::vector<std::int64_t>{48, 16, 1}));
  EXPECT_EQ(slice.preset, "noncontig_slice");
  ASSERT_EQ(slice.preset_args.size(), 2u);
  EXPECT_EQ(slice.preset_args[0].first, "dim");
  EXPECT_EQ(slice.preset_args[1].second, PyValue::integer(2));
  EXPECT_EQ(slice.storage_bytes(), (1 * 48 + 2 * 16 + 7 + 1) * 4);
  const TensorSpec& tr = c.inputs[1].tensor;
  EXPECT_EQ(tr.stride, (std::vector<std::int64_t>{24, 1, 3}));
  EXPECT_EQ(tr.preset, "transpose_view");
  const TensorSpec& ex = c.inputs[2].tensor;
  EXPECT_EQ(ex.stride, (std::vector<std::int64_t>{0, 1, 0}));
  EXPECT_EQ(ex.preset_args.at(0).second.repr(), "[3, 1]");
}

TEST(Normalize, InitsAndInitArgs) {
  Case c = with_inputs(
      "  - tensor: {shape: [2], init: randint, init_args: {high: 100, low: -5}}\n"
      "  - tensor: {shape: [2, 2], data: [[1, 2.5], [true, -inf]]}\n"
      "  - tensor: {shape: [], data: 7}\n"
      "  - tensor: {shape: [3], init: arange}\n"
      "  - tensor: {shape: [3, 2], init: xavier, init_args: {gain: 2.0}}\n"
      "  - tensor: {shape: [3], init: uniform, init_args: {low: -1.0, high: 1.0}}\n"
      "  - tensor: {shape: [3], init: rand, init_args: {low: -1.0, high: 1.0}}\n"
      "  - tensor: {shape: [3], init: randn, init_args: {mean: 0, std: 2}}\n"
      "  - tensor: {shape: [3], init: zeros}\n  - tensor: {shape: [3], init: ones}\n"
      "  - tensor: {shape: [2, 0], data: [[], []]}\n");
  const TensorSpec& ri = c.inputs[0].tensor;
  EXPECT_EQ(ri.init, InitKind::Randint);
  ASSERT_EQ(ri.init_args.size(), 2u);
  EXPECT_EQ(ri.init_args[0].first, "high") << "sorted by key";
  EXPECT_EQ(ri.init_args[0].second, PyValue::integer(100));
  EXPECT_EQ(ri.init_args[1].first, "low");
  const TensorSpec& d = c.inputs[1].tensor;
  EXPECT_EQ(d.init, InitKind::Data) << "data implies init: data";
  EXPECT_EQ(d.data.repr(), "[[1, 2.5], [True, -inf]]");
  EXPECT_EQ(c.inputs[2].tensor.data, PyValue::integer(7));
  EXPECT_EQ(c.inputs[3].tensor.init, InitKind::Arange);
  EXPECT_EQ(c.inputs[4].tensor.init, InitKind::Xavier);
  EXPECT_EQ(c.inputs[5].tensor.init, InitKind::Uniform);
  EXPECT_EQ(c.inputs[7].tensor.init, InitKind::Randn);
  EXPECT_EQ(c.inputs[8].tensor.init, InitKind::Zeros);
  EXPECT_EQ(c.inputs[9].tensor.init, InitKind::Ones);
  EXPECT_EQ(c.inputs[10].tensor.data.repr(), "[[], []]");
}

TEST(Normalize, FileInputsResolveInsideTheManifestFolder) {
  const std::string expected = std::string(OPCHECK_TEST_DIR) + "/good/arange_2x3.pt";
  Case c = with_inputs("  - file: arange_2x3.pt\n  - tensor: {shape: [2, 3], file: ./arange_2x3.pt, dtype: fp32}\n");
  ASSERT_EQ(c.inputs.size(), 2u);
  EXPECT_EQ(c.inputs[0].kind, Input::Kind::Tensor);
  EXPECT_EQ(c.inputs[0].tensor.init, InitKind::File);
  EXPECT_EQ(c.inputs[0].tensor.file, expected);
  EXPECT_EQ(c.inputs[1].tensor.init, InitKind::File) << "file: implies init: file";
  EXPECT_EQ(c.inputs[1].tensor.file, expected);
  EXPECT_EQ(c.inputs[1].tensor.shape, (std::vector<std::int64_t>{2, 3}));
}

TEST(Normalize, TensorMistakes) {
  struct Bad {
    std::string tensor;
    std::string needle;
  };
  const std::vector<Bad> cases = {
      {"{dtype: fp16}", "tensor has no 'shape'"},
      {"{shape: 2}", "expected a list of integers for 'shape', got an integer"},
      {"{shape: '[2]'}", "expected a list of integers for 'shape', got a string"},
      {"{shape: [2, x]}", "expected a list of integers for 'shape', but item 1 is a string"},
      {"{shape: [2, 1.0]}", "but item 1 is a number"},
      {"{shape: [2, -1]}", "negative size -1 in shape [2, -1]"},
      {"{shape: [1099511627777]}", "is absurdly large (1099511627777 elements"},
      {"{shape: [4294967296, 4294967296, 4294967296]}", "absurdly large (overflows int64"},
      {"{shape: [0, 4294967296, 4294967296]}", "absurdly large"},
      {"{shape: [2, 3], stride: [1]}", "stride [1] has 1 entries but shape [2, 3] has 2 dims"},
      {"{shape: [2, 3], stride: [3, -1]}", "negative stride -1"},
      {"{shape: [2, 3], stride: [1099511627776, 1]}", "the storage this layout needs is absurdly large"},
      {"{shape: [2], storage_offset: -1}", "storage_offset must be >= 0"},
      {"{shape: [2], storage_offset: 1.5}", "expected an integer for 'storage_offset'"},
      {"{shape: [2], dtype: fp61}", "unknown dtype 'fp61' (did you mean 'fp16'?)"},
      {"{shape: [2], dtype: [fp16]}", "expected a dtype name for 'dtype', got a list"},
      {"{shape: [2], device: gpu}", "unknown device 'gpu'"},
      {"{shape: [2], device: cuda0}", "unknown device 'cuda0' (did you mean 'cuda'?)"},
      {"{shape: [2], device: 'cuda:x'}", "unknown device 'cuda:x'"},
      {"{shape: [2], contiguous: 'no'}", "expected true or false for 'contiguous', got a string"},
      {"{shape: [2, 3], stride: [1, 2], contiguous: true}", "contiguous: true but stride [1, 2] is not contiguous"},
      {"{shape: [2], init: randon}", "unknown init 'randon' (did you mean 'randn'?)"},
      {"{shape: [2], init: randint}", "init: randint needs init_args.high"},
      {"{shape: [2], init: randint, init_args: {low: 3}}", "init: randint needs init_args.high"},
      {"{shape: [2], init: randint, init_args: {high: 0}}", "randint needs low < high, got low 0 and high 0"},
      {"{shape: [2], init: randint, init_args: {high: 2.5}}", "randint bound 'high' must be an integer, got 2.5"},
      {"{shape: [2], init: uniform, init_args: {low: 1, high: -1}}", "init_args needs low < high"},
      {"{shape: [2], init: uniform, init_args: {low: x}}", "init_args 'low' must be a number, got 'x'"},
      {"{shape: [2], init: zeros, init_args: {low: 1}}", "for init 'zeros' (it takes no arguments)"},
      {"{shape: [2], init: xavier, init_args: {gian: 1}}",
       "unknown init_args key 'gian' for init 'xavier' (did you mean 'gain'?)"},
      // What the input recipe refuses when the case runs, refused at load (common/init_recipes.h).
      {"{shape: [8], init: xavier}", "init: xavier needs at least 2 dimensions (fan in and fan out), the tensor has 1"},
      {"{shape: [2, 2], dtype: int32, init: xavier}", "init: xavier needs a floating dtype"},
      {"{shape: [3], dtype: int32, init: randn}", "init: randn needs a floating or complex dtype"},
      {"{shape: [2], init: rand, init_args: [1]}", "expected a mapping for 'init_args', got a list"},
      {"{shape: [2], init: data}", "init: data needs a 'data' list"},
      {"{shape: [2], init: file}", "init: file needs a file path"},
      {"{shape: [2, 3], init: eye}", "init: eye needs a square 2-D shape, got [2, 3]"},
      {"{shape: [2], init: full}", "init: full needs init_args.fill_value"},
      {"{shape: [2], dtype: uint8, init: full, init_args: {fill_value: -1}}", "fill_value -1 overflows uint8"},
      {"{shape: [2], init: full, init_args: {fill_value: x}}", "init_args 'fill_value' must be a number, got 'x'"},
      {"{shape: [2], init: file, init_args: {path: a.pt}, file: a.pt}", "name the tensor file twice"},
      {"{shape: [2], init: zeros, init_args: {key: w}}", "for init 'zeros' (it takes no arguments)"},
      {"{shape: [2], init: zeros, data: [1, 2]}", "'data' is given but init is 'zeros'"},
      {"{shape: [2], init: ones, file: arange_2x3.pt}", "'file' is given but init is 'ones'"},
      {"{shape: [2, 2], data: [1, 2]}",
       "'data' does not match shape [2, 2]: expected a list of 2 items at depth 2, got an integer"},
      {"{shape: [2], data: [[1], [2]]}", "'data' nests deeper than shape [2]"},
      {"{shape: [3], data: [1, 2]}", "expected 3 items at depth 1, got 2"},
      {"{shape: [2], data: [1, x]}", "'data' holds 'x'; expected numbers or booleans"},
      {"{shape: [], data: [1]}", "'data' nests deeper than shape []"},
      {"{shape: [2], preset: noncontig_slice}", "preset 'noncontig_slice' needs preset_args {dim, step}"},
      {"{shape: [2], preset: noncontig_slice, preset_args: {dim: 0}}",
       "preset_args of noncontig_slice is missing 'step'"},
      {"{shape: [2], preset: noncontig_slice, preset_args: {dim: 0, step: 0}}", "step must be >= 1"},
      {"{shape: [2], preset: transpose_view, preset_args: {dim0: 0, dim1: 5}}", "out of range"},
      {"{shape: [2], preset: transpose_view, preset_args: {dim0: 0, dim1: x}}", "expected an integer for 'dim1'"},
      {"{shape: [2], preset: expand_view, preset_args: {base_shape: [3]}}", "cannot broadcast to shape [2]"},
      {"{shape: [2], preset: expand_view, preset_args: {base_shape: [-1]}}", "negative size in base_shape"},
      {"{shape: [2], preset: expand_view, preset_args: [1]}", "expected a mapping for 'preset_args', got a list"},
      {"{shape: [2], preset: slice, preset_args: {dim: 0, step: 2}}", "unknown preset 'slice'"},
      {"{shape: [2], preset_args: {dim: 0}}", "'preset_args' without a 'preset'"},
      {"{shape: [2, 3], preset: transpose_view, preset_args: {dim0: 0, dim1: 1}, contiguous: false}",
       "'contiguous' and 'preset' cannot both be given"},
      {"{shape: [2], file: /tmp/x.pt}", "absolute path '/tmp/x.pt' for 'file' is not allowed"},
      {"{shape: [2], file: ../bad/x.pt}", "escapes the manifest's folder"},
      {"{shape: [2], file: sub/../../x.pt}", "escapes the manifest's folder"},
      {"{shape: [2], file: missing.pt}", "file 'missing.pt' does not exist"},
      {"{shape: [2], file: arange_2x3.txt}", "must be a .pt, .npy or .safetensors file"},
      {"{shape: [2], file: ~}", "expected a string for 'file', got null"},
  };
  for (const auto& b : cases) {
    ManifestSet s = load(with_case("inputs:\n  - tensor: " + b.tensor));
    const Diagnostic* d = find_error(s, b.needle);
    ASSERT_TRUE(d) << b.tensor << "\nexpected \"" << b.needle << "\" in\n" << all_diags(s);
    EXPECT_EQ(d->loc.line, 6) << d->format();
    EXPECT_GT(d->loc.col, 14) << "points at the offending node: " << d->format();
    EXPECT_EQ(d->case_id, "m::c1");
    EXPECT_TRUE(s.manifests.at(0).cases.empty()) << b.tensor;
  }
}

TEST(Normalize, UnknownTensorKeySuggestsAndNamesAllowedKeys) {
  ManifestSet s = load(with_case("inputs:\n  - tensor: {shape: [2], dtpye: fp16}"));
  const Diagnostic* d = find_error(s, "unknown key 'dtpye' in a tensor (did you mean 'dtype'?)");
  ASSERT_TRUE(d) << all_diags(s);
  EXPECT_EQ(d->loc.col, 30);
  EXPECT_EQ(d->fix, "rename 'dtpye' to 'dtype'");
}

TEST(Normalize, UnknownKeyWithNoCloseSpellingListsTheKeysOfItsLevel) {
  ManifestSet top = load("model: m\nqqqqqqqq: 1\ncases: []\n");
  const Diagnostic* d = find_error(top, "unknown key 'qqqqqqqq' at the top level of the manifest");
  ASSERT_TRUE(d) << all_diags(top);
  EXPECT_EQ(d->loc.line, 2);
  EXPECT_EQ(d->fix, "remove 'qqqqqqqq'; allowed keys here: model, description, defaults, default, marks, mark, cases");

  ManifestSet in_case = load(with_case("qqqqqqqq: 1"));
  d = find_error(in_case, "unknown key 'qqqqqqqq' in a case");
  ASSERT_TRUE(d) << all_diags(in_case);
  EXPECT_NE(d->fix.find("allowed keys here: name, op, inputs, description, marks, mark, attrs, kwmap,"),
            std::string::npos)
      << d->fix;

  ManifestSet in_tensor = load(with_case("inputs:\n  - tensor: {shape: [2], qqqqqqqq: 1}"));
  d = find_error(in_tensor, "unknown key 'qqqqqqqq' in a tensor");
  ASSERT_TRUE(d) << all_diags(in_tensor);
  EXPECT_NE(d->fix.find("allowed keys here: shape, stride, storage_offset, dtype, device, contiguous, init, "
                        "init_args, data, file, preset, preset_args"),
            std::string::npos)
      << d->fix;
}
