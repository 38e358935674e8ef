// The manifest writer (src/manifest/manifest_writer.*): what it writes, the real loader reads back as the same case.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "manifest/manifest_writer.h"
#include "opcheck/case.h"

namespace opcheck {
namespace {

std::string diagnostics_text(const DiagnosticList& d) {
  std::string s;
  for (const auto& item : d.items) s += item.format() + "\n";
  return s;
}

/// Strings a YAML reader or the manifest loader would take for something else if written plainly.
const std::vector<std::string> kTrickyStrings = {
    "line one\nline two",  "tab\there",   "say \"hi\"",  "it's",         "back\\slash", "# not a comment",
    "key: value",          "- item",      "yes",         "no",           "on",          "off",
    "null",                "~",           "true",        "False",        "None",        "True",
    "1e3",                 "0x1F",        "007",         "-.inf",        "inf",         "nan",
    "(1, 2)",              "[1]",         "torch.float16", "cuda:0",     "cpu",         "",
    " leading and trailing ", "ünïcødé → ∞ 漢字", "bell\x07", "{a: 1}",  "*anchor",     "&ref",
    "!tag",                "%percent",    "@at",         "`tick`",       "|",           ">",
};

Case tricky_case() {
  Case c;
  c.model = "writer-test";
  c.name = "tricky: #1 \"quoted\" ünï";
  c.op = "torch.add";
  c.dtype = DType::BFloat16;
  c.seed = std::numeric_limits<std::int64_t>::max();
  TensorSpec t;
  t.shape = {2, 3};
  t.stride = {1, 2};
  t.storage_offset = 1;
  t.dtype = DType::Float32;
  t.init = InitKind::Randn;
  t.init_args = {{"mean", PyValue::real(-0.1)}, {"std", PyValue::real(3e-300)}};
  Input in;
  in.kind = Input::Kind::Tensor;
  in.tensor = t;
  c.inputs.push_back(in);
  for (const auto& s : kTrickyStrings) {
    Input v;
    v.kind = Input::Kind::Value;
    v.value = PyValue::string(s);
    c.inputs.push_back(v);
  }
  for (const PyValue& v : {PyValue::real(HUGE_VAL), PyValue::real(-HUGE_VAL), PyValue::real(std::nan("")),
                           PyValue::integer(std::numeric_limits<std::int64_t>::min()),
                           PyValue::integer(std::numeric_limits<std::int64_t>::max()), PyValue::real(1e300),
                           PyValue::real(0.30000000000000004), PyValue::real(-0.0), PyValue::none()}) {
    Input x;
    x.kind = Input::Kind::Value;
    x.value = v;
    c.inputs.push_back(x);
  }
  // Keyword names that YAML reads as null or bool when plain, and values of every kind.
  c.kwargs = {{"yes", PyValue::string("no")},
              {"null", PyValue::string("null")},
              {"on", PyValue::boolean(true)},
              {"alpha", PyValue::real(1e3)},
              {"beta", PyValue::real(HUGE_VAL)},
              {"gamma", PyValue::real(std::nan(""))},
              {"big", PyValue::integer(std::numeric_limits<std::int64_t>::min())},
              {"dtype", PyValue::of_dtype(DType::Float16)},
              {"device", PyValue::device("cuda:0")},
              {"text", PyValue::string("a: b # c\nd")},
              {"looks_like_tuple", PyValue::string("(1,)")},
              {"tuple", PyValue::sequence(PyValue::Kind::Tuple, {PyValue::integer(1), PyValue::string("x\ny")})}};
  c.rtol = 1e-7;
  c.atol = 0.1;
  c.compare = Comparator::Pcc;
  c.pcc_min = 0.999;
  c.equal_nan = true;
  c.timeout_s = 2.5;
  c.nondeterministic_ok = true;
  c.expects_error = ExpectedError{"RuntimeError", "size \"of\" \\d+: #\n"};
  c.marks = {"fp16operation", "constant"};
  c.description = "first line\nsecond: line # with \"quotes\"\tand tab, ünïcødé";
  return c;
}

TEST(ManifestWriter, TrickyValuesComeBackThroughTheLoader) {
  const Case c = tricky_case();
  const std::string text = manifest_text::case_manifest(c, {}, "a header\nover two lines: # kept as comments");
  ManifestSet back = load_manifest_text("/tmp/writer-test.yaml", text);
  ASSERT_FALSE(back.diagnostics.has_errors()) << diagnostics_text(back.diagnostics) << text;
  EXPECT_TRUE(back.diagnostics.items.empty()) << diagnostics_text(back.diagnostics) << text;
  ASSERT_EQ(back.manifests.size(), 1u) << text;
  ASSERT_EQ(back.manifests[0].cases.size(), 1u) << text;
  const Case& b = back.manifests[0].cases[0];

  EXPECT_EQ(b.model, c.model);
  EXPECT_EQ(b.name, c.name);
  EXPECT_EQ(b.op, c.op);
  EXPECT_EQ(b.dtype, c.dtype);
  EXPECT_EQ(b.seed, c.seed);
  ASSERT_EQ(b.inputs.size(), c.inputs.size()) << text;
  const TensorSpec& t = b.inputs[0].tensor;
  EXPECT_EQ(t.shape, c.inputs[0].tensor.shape);
  EXPECT_EQ(t.stride, c.inputs[0].tensor.stride);
  EXPECT_EQ(t.storage_offset, 1);
  EXPECT_EQ(t.init, InitKind::Randn);
  ASSERT_EQ(t.init_args.size(), 2u);
  EXPECT_EQ(t.init_args[1].second.f, 3e-300);
  for (std::size_t i = 1; i < c.inputs.size(); ++i) {
    const PyValue& want = c.inputs[i].value;
    const PyValue& got = b.inputs[i].value;
    if (want.kind == PyValue::Kind::Float && std::isnan(want.f)) {
      EXPECT_EQ(got.kind, PyValue::Kind::Float) << i;
      EXPECT_TRUE(std::isnan(got.f)) << i;
      continue;
    }
    EXPECT_EQ(got, want) << "input " << i << ": wrote " << want.repr() << ", read " << got.repr() << "\n" << text;
    if (want.kind == PyValue::Kind::Float) {
      EXPECT_EQ(std::signbit(got.f), std::signbit(want.f)) << i;
    }
  }
  ASSERT_EQ(b.kwargs.size(), c.kwargs.size()) << text;
  for (std::size_t k = 0; k < c.kwargs.size(); ++k) {
    EXPECT_EQ(b.kwargs[k].first, c.kwargs[k].first) << text;
    const PyValue& want = c.kwargs[k].second;
    const PyValue& got = b.kwargs[k].second;
    if (want.kind == PyValue::Kind::Float && std::isnan(want.f)) {
      EXPECT_TRUE(got.kind == PyValue::Kind::Float && std::isnan(got.f)) << c.kwargs[k].first;
      continue;
    }
    EXPECT_EQ(got, want) << c.kwargs[k].first << ": wrote " << want.repr() << ", read " << got.repr() << "\n" << text;
  }
  EXPECT_EQ(b.rtol, c.rtol);
  EXPECT_EQ(b.atol, c.atol);
  EXPECT_EQ(b.compare, Comparator::Pcc);
  EXPECT_EQ(b.pcc_min, c.pcc_min);
  EXPECT_TRUE(b.equal_nan);
  EXPECT_EQ(b.timeout_s, c.timeout_s);
  EXPECT_TRUE(b.nondeterministic_ok);
  ASSERT_TRUE(b.expects_error);
  EXPECT_EQ(b.expects_error->type, c.expects_error->type);
  EXPECT_EQ(b.expects_error->match, c.expects_error->match);
  EXPECT_EQ(b.marks, c.marks);
  EXPECT_EQ(b.description, c.description);
}

TEST(ManifestWriter, ScalarsAreSpeltForEveryYamlReader) {
  // A float always has a dot (a YAML 1.1 reader takes 1e+16 for a string); nan and inf as the loader's strings.
  EXPECT_EQ(manifest_text::real(1e16), "1.0e+16");
  EXPECT_EQ(manifest_text::real(0.5), "0.5");
  EXPECT_EQ(manifest_text::real(3.0), "3.0");
  EXPECT_EQ(manifest_text::real(-HUGE_VAL), "\"-inf\"");
  // Keys: plain identifiers stay plain, YAML words and anything else are quoted.
  EXPECT_EQ(manifest_text::key("alpha"), "alpha");
  EXPECT_EQ(manifest_text::key("Yes"), "\"Yes\"");
  EXPECT_EQ(manifest_text::key("a b"), "\"a b\"");
  // A newline is an escape inside the quotes, never a space or a line break.
  EXPECT_EQ(manifest_text::quoted("a\nb"), "\"a\\nb\"");
  // A string the loader would read as None is written as the Python string literal, which it keeps a string.
  EXPECT_EQ(manifest_text::value(PyValue::string("None")), "\"('None')\"");
  EXPECT_EQ(manifest_text::value(PyValue::string("plain")), "\"plain\"");
}

}  // namespace
}  // namespace opcheck
