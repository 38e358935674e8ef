// Trace conversion: op names, index ranges, view validity, reported lines, and manifests the loader accepts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "opcheck/case.h"
#include "traces/trace_convert.h"
#include "traces/trace_import.h"

namespace opcheck::traces {
namespace {

// The repository's own trace (test/fixtures/make_fixtures.py writes it).
const std::string kSample = std::string(OPCHECK_TEST_FIXTURES) + "/op-traces/sample_training.txt";

std::string messages(const DiagnosticList& d) {
  std::string out;
  for (const auto& item : d.items) out += item.format() + "\n";
  return out;
}

/// Converts `text` and loads the result with the manifest loader, which must accept it without a word.
struct Converted {
  ConvertedTrace trace;
  ManifestSet set;
  const Case* find(const std::string& name) const {
    for (const auto& c : set.manifests.at(0).cases)
      if (c.name == name) return &c;
    return nullptr;
  }
};

Converted convert_and_load(const std::string& text, const std::string& path = "m.txt") {
  Converted out;
  out.trace = convert_trace(parse_trace_text(path, text), "m");
  out.set = load_manifest_text("/tmp/m.yaml", out.trace.yaml);
  EXPECT_TRUE(out.set.diagnostics.items.empty()) << messages(out.set.diagnostics) << out.trace.yaml;
  EXPECT_EQ(out.set.manifests.size(), 1u) << out.trace.yaml;
  return out;
}

const KwArgs& init_args(const Case& c, std::size_t input) { return c.inputs.at(input).tensor.init_args; }

std::int64_t arg_int(const KwArgs& kw, const std::string& key) {
  for (const auto& [k, v] : kw)
    if (k == key) return v.i;
  ADD_FAILURE() << "no " << key;
  return -1;
}

TEST(TraceOpName, SchemaSpellings) {
  EXPECT_EQ(schema_op_name("aten.add.Tensor"), "aten::add.Tensor");
  EXPECT_EQ(schema_op_name("aten._softmax.default"), "aten::_softmax.default");
  EXPECT_EQ(schema_op_name("aten.sum.SymInt"), "aten::sum.dim_IntList");
  EXPECT_EQ(schema_op_name("aten.relu"), "aten::relu");
  EXPECT_EQ(schema_op_name("prims.convert_element_type.default"), "prims::convert_element_type.default");
  EXPECT_EQ(schema_op_name("add"), "");
}

TEST(TraceView, FollowsPyTorchsStrideRule) {
  std::string why;
  EXPECT_TRUE(view_possible({4, 128, 256}, {32768, 256, 1}, {512, 256}, why));
  EXPECT_TRUE(view_possible({4, 8, 128, 32}, {32768, 4096, 32, 1}, {4, 8, -1}, why));
  EXPECT_TRUE(view_possible({2, 1, 3}, {3, 99, 1}, {6}, why)) << why;   // size-1 dims have any stride
  EXPECT_TRUE(view_possible({2, 3}, {1, 2}, {2, 3, 1}, why)) << why;    // adding a 1 keeps a transposed layout
  EXPECT_TRUE(view_possible({4, 6}, {12, 1}, {4, 2, 3}, why)) << why;  // splitting a padded row is fine
  EXPECT_TRUE(view_possible({}, {}, {1, 1}, why));
  EXPECT_TRUE(view_possible({0, 3}, {3, 1}, {3, 0}, why));

  EXPECT_FALSE(view_possible({4, 8, 128, 32}, {32768, 32, 256, 1}, {4, 8, 4096}, why));
  EXPECT_NE(why.find("cannot be viewed as [4, 8, 4096]"), std::string::npos) << why;
  EXPECT_FALSE(view_possible({2, 3}, {1, 2}, {6}, why));
  EXPECT_FALSE(view_possible({4, 6}, {12, 1}, {24}, why));
  EXPECT_FALSE(view_possible({4, 6}, {6, 1}, {5, 5}, why));
  EXPECT_NE(why.find("invalid for a tensor of 24 elements"), std::string::npos) << why;
  EXPECT_FALSE(view_possible({4, 6}, {6, 1}, {-1, -1}, why));
  EXPECT_FALSE(view_possible({4, 6}, {6, 1}, {-1, 5}, why));
}

TEST(TraceConvert, SampleEveryLineConvertedOrReported) {
  std::ifstream in(kSample);
  ASSERT_TRUE(in) << kSample;
  std::stringstream buf;
  buf << in.rdbuf();
  Converted c = convert_and_load(buf.str(), kSample);
  const ConvertedTrace& t = c.trace;
  EXPECT_GT(t.call_lines, 20);
  // Every call line is either a case or a located report.
  EXPECT_EQ(t.converted + static_cast<int>(t.reported.items.size()), t.call_lines) << messages(t.reported);
  EXPECT_EQ(static_cast<int>(c.set.manifests[0].cases.size()), t.converted);
  EXPECT_EQ(c.set.manifests[0].model, "m");

  // The one line that cannot be a real call: a view of a transposed layout.
  ASSERT_EQ(t.reported.items.size(), 1u) << messages(t.reported);
  const Diagnostic& view = t.reported.items[0];
  EXPECT_EQ(view.loc.file, kSample);
  EXPECT_NE(view.message.find("aten.view.default not converted"), std::string::npos) << view.message;
  EXPECT_NE(view.message.find("view size is not compatible"), std::string::npos) << view.message;
  std::ifstream again(kSample);
  std::string line;
  for (int n = 1; std::getline(again, line); ++n)
    if (n == view.loc.line) {
      EXPECT_NE(line.find("stride=(512, 8, 32, 1)"), std::string::npos) << line;
    }

  // Embedding indices stay below the weight's rows, and the description says why.
  const Case* emb = c.find("aten.embedding.default.1");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->op, "aten::embedding.default");
  EXPECT_EQ(emb->inputs.at(1).tensor.init, InitKind::Randint);
  EXPECT_EQ(arg_int(init_args(*emb, 1), "high"), 100);
  EXPECT_NE(emb->description.find("embedding rows into dim 0 of input 0 (size 100)"), std::string::npos)
      << emb->description;

  // sum.SymInt is written as the schema's overload; cnt is a description note; cnt: 0 still converts.
  const Case* sum = c.find("aten.sum.SymInt.1");
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(sum->op, "aten::sum.dim_IntList");
  EXPECT_NE(sum->description.find("cnt: 2"), std::string::npos);
  const Case* zeros = c.find("aten.new_zeros.default.1");
  ASSERT_NE(zeros, nullptr);
  EXPECT_NE(zeros->description.find("cnt: 0 (synthetic input"), std::string::npos);
  ASSERT_EQ(zeros->kwargs.size(), 3u);
  EXPECT_EQ(zeros->kwargs[0].second.kind, PyValue::Kind::DType);
  EXPECT_EQ(zeros->kwargs[2].second.kind, PyValue::Kind::Device);

  // Strides survive; matrix-product operands get xavier values; marks follow dtypes and constants.
  const Case* addmm = c.find("aten.addmm.default.1");
  ASSERT_NE(addmm, nullptr);
  EXPECT_EQ(addmm->inputs.at(2).tensor.stride, (std::vector<std::int64_t>{1, 32}));
  EXPECT_EQ(addmm->inputs.at(1).tensor.init, InitKind::Xavier);
  EXPECT_EQ(addmm->inputs.at(0).tensor.init, InitKind::Rand);
  EXPECT_NE(std::find(addmm->marks.begin(), addmm->marks.end(), "noncontiguous"), addmm->marks.end());
  EXPECT_NE(std::find(addmm->marks.begin(), addmm->marks.end(), "fp16operation"), addmm->marks.end());
  const Case* cat = c.find("aten.cat.default.1");
  ASSERT_NE(cat, nullptr);
  EXPECT_EQ(cat->inputs.at(0).kind, Input::Kind::TensorList);
  EXPECT_EQ(cat->inputs.at(0).list.size(), 2u);
  EXPECT_EQ(cat->dtype, DType::Float32);
  EXPECT_NE(std::find(cat->marks.begin(), cat->marks.end(), "constant"), cat->marks.end());
}

TEST(TraceConvert, IndexRangesComeFromTheIndexedDim) {
  Converted c = convert_and_load(
      "Operator: aten.gather.default\n"
      "cnt: 1, ((T([8, 5], f32), -1, T([8, 3], i64)), {})\n"
      "Operator: aten.index_select.default\n"
      "cnt: 1, ((T([7, 4], f16), 0, T([10], i64)), {})\n"
      "Operator: aten.scatter_add.default\n"
      "cnt: 1, ((T([6, 9], f32), 1, T([6, 2], i64), T([6, 2], f32)), {})\n"
      "Operator: aten.index.Tensor\n"
      "cnt: 1, ((T([5, 6, 7], f32), [T([4], i64), T([4], i32)]), {})\n"
      "Operator: aten.nll_loss_forward.default\n"
      "cnt: 1, ((T([64, 1000], f32), T([64], i64), None, 1, -100), {})\n"
      "Operator: aten.one_hot.default\n"
      "cnt: 1, ((T([12], i64), 9), {})\n"
      "Operator: aten.max_pool2d_with_indices_backward.default\n"
      "cnt: 1, ((T([2, 3, 4, 4], f32), T([2, 3, 8, 8], f32), [2, 2], [2, 2], [0, 0], [1, 1], False, "
      "T([2, 3, 4, 4], i64)), {})\n"
      "Operator: aten.remainder.Tensor\n"
      "cnt: 1, ((T([4], i64), T([4], i64)), {})\n"
      "Operator: aten.clone.default\n"
      "cnt: 1, ((T([4, 128], i64),), {})\n"
      "Operator: aten.embedding.default\n"
      "cnt: 1, ((T([0, 4], f32), T([0], i64)), {})\n");
  ASSERT_EQ(c.trace.converted, 10) << messages(c.trace.reported);
  EXPECT_EQ(arg_int(init_args(*c.find("aten.gather.default.1"), 2), "high"), 5);
  EXPECT_NE(c.find("aten.gather.default.1")->description.find("into dim 1 of input 0 (size 5)"), std::string::npos);
  EXPECT_EQ(arg_int(init_args(*c.find("aten.index_select.default.1"), 2), "high"), 7);
  EXPECT_EQ(arg_int(init_args(*c.find("aten.scatter_add.default.1"), 2), "high"), 9);
  const Case* index = c.find("aten.index.Tensor.1");
  EXPECT_EQ(index->inputs.at(1).list.at(0).init_args.at(0).second.i, 5);
  EXPECT_EQ(index->inputs.at(1).list.at(1).init_args.at(0).second.i, 6);
  EXPECT_EQ(arg_int(init_args(*c.find("aten.nll_loss_forward.default.1"), 1), "high"), 1000);
  EXPECT_EQ(arg_int(init_args(*c.find("aten.one_hot.default.1"), 0), "high"), 9);
  EXPECT_EQ(arg_int(init_args(*c.find("aten.max_pool2d_with_indices_backward.default.1"), 7), "high"), 64);
  const Case* rem = c.find("aten.remainder.Tensor.1");
  EXPECT_EQ(arg_int(init_args(*rem, 0), "high"), 1000);
  EXPECT_EQ(arg_int(init_args(*rem, 1), "low"), 1);
  EXPECT_NE(rem->description.find("no division by zero"), std::string::npos);
  EXPECT_EQ(arg_int(init_args(*c.find("aten.clone.default.1"), 0), "high"), 1000);
  EXPECT_EQ(c.find("aten.embedding.default.1")->inputs.at(1).tensor.init, InitKind::Zeros);
}

TEST(TraceConvert, LinesThatCannotBecomeCasesAreReportedWithTheirColumn) {
  ConvertedTrace t = convert_trace(
      parse_trace_text("r.txt",
                       "Operator: aten.index.Tensor\n"
                       "cnt: 1, ((T([5, 6], f32), [None, T([4], i64)]), {})\n"                  // 2: Tensor?[] with None
                       "Operator: aten.where.self\n"
                       "cnt: 1, ((T([4], b8),), {'other': T([4], f32)})\n"                      // 4: tensor kwarg
                       "Operator: aten.add.Tensor\n"
                       "cnt: 1, ((T([4, 4], f32, stride=(1, 1)), 1), {})\n"                     // 6: overlapping
                       "Operator: aten.bernoulli.p\n"
                       "cnt: 1, ((T([4], f32), 0.5), {})\n"                                     // 8: random
                       "Operator: aten.gather.default\n"
                       "cnt: 1, ((T([8, 5], f32), 2, T([8, 3], i64)), {})\n"                    // 10: dim out of range
                       "Operator: aten.embedding.default\n"
                       "cnt: 1, ((T([0, 4], f32), T([3], i64)), {})\n"                          // 12: no valid row
                       "Operator: aten._unsafe_view.default\n"
                       "cnt: 1, ((T([4, 6], f32), [5, 5]), {})\n"                               // 14: wrong numel
                       "Operator: aten.add.Tensor\n"
                       "cnt: 1, ((T([4], f32), T([4], f32)), {})\n"),                           // 16: fine
      "r");
  EXPECT_EQ(t.converted, 1);
  std::vector<int> lines;
  for (const auto& d : t.reported.items) lines.push_back(d.loc.line);
  EXPECT_EQ(lines, (std::vector<int>{2, 4, 6, 8, 10, 12, 14})) << messages(t.reported);
  const auto& r = t.reported.items;
  EXPECT_NE(r[0].message.find("tensor_list holds tensors only"), std::string::npos) << r[0].message;
  EXPECT_EQ(r[0].loc.col, 28);
  EXPECT_NE(r[1].message.find("keyword argument 'other' holds a tensor"), std::string::npos) << r[1].message;
  EXPECT_NE(r[2].message.find("share memory"), std::string::npos) << r[2].message;
  EXPECT_NE(r[3].message.find("random"), std::string::npos) << r[3].message;
  EXPECT_NE(r[4].message.find("dim 2 is out of range"), std::string::npos) << r[4].message;
  EXPECT_NE(r[5].message.find("cannot succeed"), std::string::npos) << r[5].message;
  EXPECT_NE(r[6].message.find("invalid for a tensor of 24 elements"), std::string::npos) << r[6].message;
  ManifestSet set = load_manifest_text("/tmp/r.yaml", t.yaml);
  EXPECT_TRUE(set.diagnostics.items.empty()) << messages(set.diagnostics);
  ASSERT_EQ(set.manifests.at(0).cases.size(), 1u);
  EXPECT_EQ(set.manifests[0].cases[0].name, "aten.add.Tensor.1");
}

TEST(TraceConvert, ValuesOfEveryKindLoadBack) {
  Converted c = convert_and_load(
      "Operator: aten.masked_fill.Scalar\n"
      "cnt: 3, ((T([4, 1, 1, 128], f16), T([4, 1, 1, 128], b8), -inf), {})\n"
      "Operator: aten._to_copy.default\n"
      "cnt: 1, ((T([], f32),), {'dtype': torch.bool, 'device': \"torch.device('cpu')\", 'layout': torch.strided, "
      "'memory_format': torch.contiguous_format, 'pin_memory': False})\n"
      "Operator: aten.amax.default\n"
      "cnt: 1, ((T([4, 8], bf16), [-1, -2], True), {})\n"
      "Operator: aten.clamp.default\n"
      "cnt: 1, ((T([4], f64), None, 1e-05), {})\n"
      "Operator: aten.reflection_pad2d.default\n"
      "cnt: 1, ((T([1, 2, 4, 4], f32), (1, 1, 2, 2)), {})\n");
  ASSERT_EQ(c.trace.converted, 5) << messages(c.trace.reported);
  const Case* fill = c.find("aten.masked_fill.Scalar.1");
  EXPECT_EQ(fill->inputs.at(1).tensor.dtype, DType::Bool);
  EXPECT_EQ(fill->inputs.at(2).value.kind, PyValue::Kind::Float);
  EXPECT_TRUE(std::isinf(fill->inputs.at(2).value.f) && fill->inputs.at(2).value.f < 0);
  const Case* copy = c.find("aten._to_copy.default.1");
  EXPECT_TRUE(copy->inputs.at(0).tensor.shape.empty());
  EXPECT_EQ(copy->dtype, DType::Float32);
  ASSERT_EQ(copy->kwargs.size(), 5u);
  EXPECT_EQ(copy->kwargs[0].second.dtype, DType::Bool);
  EXPECT_EQ(copy->kwargs[1].second.s, "torch.device('cpu')");
  EXPECT_EQ(copy->kwargs[2].second.s, "torch.strided");
  const Case* amax = c.find("aten.amax.default.1");
  EXPECT_EQ(amax->inputs.at(1).value.repr(), "[-1, -2]");
  EXPECT_EQ(amax->dtype, DType::BFloat16);
  EXPECT_NE(std::find(amax->marks.begin(), amax->marks.end(), "bf16operation"), amax->marks.end());
  const Case* clamp = c.find("aten.clamp.default.1");
  EXPECT_EQ(clamp->inputs.at(1).value.kind, PyValue::Kind::None);
  EXPECT_DOUBLE_EQ(clamp->inputs.at(2).value.f, 1e-05);
  EXPECT_EQ(c.find("aten.reflection_pad2d.default.1")->inputs.at(1).value.repr(), "(1, 1, 2, 2)");
}

TEST(TraceConvert, KeywordStringsKeepTheirKind) {
  Converted c = convert_and_load(
      "Operator: aten.scatter_reduce.two\n"
      "cnt: 1, ((T([4, 5], f32), 1, T([4, 2], i64), T([4, 2], f32), 'sum'), {'reduce': '(x', 'mode': 'None', "
      "'device': 'cuda', 'other': 'torch.float16', 'null': 'inf', 'a b': 1})\n"
      "Operator: aten.div.Tensor_mode\n"
      "cnt: 1, ((T([4], f32), T([4], f32)), {'rounding_mode': 'floor', 'True': \"it's\"})\n");
  EXPECT_EQ(c.trace.converted, 1);
  ASSERT_EQ(c.trace.reported.items.size(), 1u);
  EXPECT_NE(c.trace.reported.items[0].message.find("keyword 'a b' is not a Python identifier"), std::string::npos);
  const Case* div = c.find("aten.div.Tensor_mode.1");
  ASSERT_NE(div, nullptr);
  ASSERT_EQ(div->kwargs.size(), 2u);
  EXPECT_EQ(div->kwargs[0].second.s, "floor");
  EXPECT_EQ(div->kwargs[1].first, "True");
  EXPECT_EQ(div->kwargs[1].second.kind, PyValue::Kind::String);
  EXPECT_EQ(div->kwargs[1].second.s, "it's");

  Converted s = convert_and_load(
      "Operator: aten.scatter_reduce.two\n"
      "cnt: 1, ((T([4, 5], f32), 1, T([4, 2], i64), T([4, 2], f32), 'sum'), {'reduce': '(x', 'mode': 'None', "
      "'device': 'cuda', 'other': 'torch.float16', 'null': 'inf'})\n");
  const Case* sr = s.find("aten.scatter_reduce.two.1");
  ASSERT_NE(sr, nullptr);
  EXPECT_EQ(sr->inputs.at(4).value.kind, PyValue::Kind::String);
  EXPECT_EQ(sr->inputs.at(4).value.s, "sum");
  ASSERT_EQ(sr->kwargs.size(), 5u);
  EXPECT_EQ(sr->kwargs[0].second.kind, PyValue::Kind::String);
  EXPECT_EQ(sr->kwargs[0].second.s, "(x");
  EXPECT_EQ(sr->kwargs[1].second.kind, PyValue::Kind::String);
  EXPECT_EQ(sr->kwargs[1].second.s, "None");
  EXPECT_EQ(sr->kwargs[2].second.kind, PyValue::Kind::Device);
  EXPECT_EQ(sr->kwargs[3].second.kind, PyValue::Kind::DType);
  EXPECT_EQ(sr->kwargs[4].first, "null");
  EXPECT_EQ(sr->kwargs[4].second.s, "inf");
}

TEST(TraceConvert, StringsKeepNewlinesQuotesAndYamlWords) {
  // A string argument as the trace writes it (Python's repr: \n and \t escapes) comes back as that very string.
  Converted c = convert_and_load(
      "Operator: aten.div.Tensor_mode\n"
      "cnt: 1, ((T([4], f32), T([4], f32)), {'rounding_mode': 'line one\\nline two\\ttab # not: a comment', "
      "'yes': 'no', 'on': 'null', 'x': 'ünïcødé \"q\" it\\'s'})\n");
  const Case* div = c.find("aten.div.Tensor_mode.1");
  ASSERT_NE(div, nullptr) << c.trace.yaml;
  ASSERT_EQ(div->kwargs.size(), 4u) << c.trace.yaml;
  EXPECT_EQ(div->kwargs[0].second.kind, PyValue::Kind::String);
  EXPECT_EQ(div->kwargs[0].second.s, "line one\nline two\ttab # not: a comment") << c.trace.yaml;
  EXPECT_EQ(div->kwargs[1].first, "yes");
  EXPECT_EQ(div->kwargs[1].second.s, "no");
  EXPECT_EQ(div->kwargs[2].first, "on");
  EXPECT_EQ(div->kwargs[2].second.kind, PyValue::Kind::String);
  EXPECT_EQ(div->kwargs[2].second.s, "null");
  EXPECT_EQ(div->kwargs[3].second.s, "ünïcødé \"q\" it's");
}

TEST(TraceImport, FoldersUniqueModelsAndUnreadableInput) {
  const std::string dir = std::string(OPCHECK_BUILD_DIR) + "/trace_import_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/a");
  std::filesystem::create_directories(dir + "/b");
  std::ofstream(dir + "/a/net.txt") << "Operator: aten.relu.default\ncnt: 1, ((T([4], f32),), {})\n";
  std::ofstream(dir + "/b/net.txt") << "Operator: aten.relu.default\ncnt: 1, ((T([5], f32),), {})\n";
  std::ofstream(dir + "/b/README.md") << "not a trace\n";
  TraceImport imp = import_traces({dir, dir + "/a/net.txt", dir + "/missing.txt"});
  ASSERT_EQ(imp.traces.size(), 2u);
  EXPECT_EQ(imp.traces[0].model, "net");
  EXPECT_EQ(imp.traces[1].model, "net_2");
  ASSERT_EQ(imp.errors.items.size(), 1u);
  EXPECT_NE(imp.errors.items[0].format().find("missing.txt: error: no such file"), std::string::npos);

  DiagnosticList errors;
  auto written = write_trace_manifests(imp, dir + "/out", errors);
  EXPECT_TRUE(errors.items.empty());
  ASSERT_EQ(written.size(), 2u);
  ManifestSet set = load_manifests({dir + "/out"});
  EXPECT_TRUE(set.diagnostics.items.empty()) << messages(set.diagnostics);
  ASSERT_EQ(set.manifests.size(), 2u);
  EXPECT_EQ(set.manifests[0].cases.at(0).inputs.at(0).tensor.shape, (std::vector<std::int64_t>{4}));

  TraceImport empty = import_traces({dir + "/out"});
  EXPECT_TRUE(empty.traces.empty());
  ASSERT_EQ(empty.errors.items.size(), 1u);
  EXPECT_NE(empty.errors.items[0].message.find("no op-trace files"), std::string::npos);
}

}  // namespace
}  // namespace opcheck::traces

namespace opcheck::traces {
namespace {

// Whatever a trace line holds, the importer's output must load: every mutation of the sample either converts into
// a case the loader accepts or is reported. (A loader error would mean the importer wrote a manifest it should not.)
TEST(TraceConvert, MutatedTracesAlwaysGiveLoadableManifests) {
  std::ifstream in(kSample);
  ASSERT_TRUE(in) << kSample;
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string sample = buf.str();
  const std::string alphabet = "0123456789-.,()[]{}':=TfibucS_ e+x\n\"\\\t#nadltrvo";
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int converted = 0, reported = 0;
  for (int round = 0; round < 1500; ++round) {
    std::string text = sample;
    for (int edit = 0; edit < 1 + static_cast<int>(next() % 6); ++edit) {
      const std::size_t at = next() % text.size();
      switch (next() % 3) {
        case 0: text.erase(at, 1 + next() % 3); break;
        case 1: text.insert(at, 1, alphabet[next() % alphabet.size()]); break;
        default: text[at] = alphabet[next() % alphabet.size()]; break;
      }
    }
    ConvertedTrace t = convert_trace(parse_trace_text("mut.txt", text), "mut");
    ManifestSet set = load_manifest_text("/tmp/mut.yaml", t.yaml);
    ASSERT_FALSE(set.diagnostics.has_errors()) << messages(set.diagnostics) << "--- trace\n" << text;
    ASSERT_EQ(set.manifests.size(), 1u);
    EXPECT_EQ(static_cast<int>(set.manifests[0].cases.size()), t.converted);
    converted += t.converted;
    reported += static_cast<int>(t.reported.items.size());
  }
  EXPECT_GT(converted, 1000);  // most mutations leave most lines intact
  EXPECT_GT(reported, 100);    // and many break a line, which is then reported
}

}  // namespace
}  // namespace opcheck::traces
