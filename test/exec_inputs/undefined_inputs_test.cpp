// Inputs whose results PyTorch defines, through the real loader (which narrows random inputs) and the real input
// builder: the random index of an op whose result is undefined where indices repeat never repeats within one
// destination, and the `output` of a softmax backward op is a real (log_)softmax.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "exec/inputs.h"
#include "opcheck/case.h"

namespace opcheck::exec {
namespace {

/// One case of `op` with the given input lines (each a `- ...` item under `inputs:`), its inputs drawn from `seed`.
ManifestSet load_case(const std::string& op, const std::string& inputs, std::int64_t seed = 0,
                      const std::string& kwargs = "") {
  return load_manifest_text("/tmp/undefined.yaml", "model: m\ncases:\n  - name: c\n    op: " + op + "\n    seed: " +
                                                       std::to_string(seed) + "\n" + kwargs + "    inputs:\n" + inputs);
}

std::string diagnostics(const ManifestSet& s) {
  std::string out;
  for (const auto& d : s.diagnostics.items) out += d.format() + "\n";
  return out;
}

/// The one diagnostic that loading the case gives, formatted (a second one fails the test).
std::string the_warning(const std::string& op, const std::string& inputs) {
  const ManifestSet s = load_case(op, inputs);
  EXPECT_EQ(s.diagnostics.items.size(), 1u) << diagnostics(s);
  return s.diagnostics.items.empty() ? "" : s.diagnostics.items[0].format();
}

/// Input `i` (element `j` of a tensor_list when j >= 0) of the loaded case, built as a run builds it.
at::Tensor built(const ManifestSet& s, std::size_t i, int j = -1) {
  const Case& c = s.manifests.at(0).cases.at(0);
  const Input& in = c.inputs.at(i);
  const TensorSpec& spec = j < 0 ? in.tensor : in.list.at(static_cast<std::size_t>(j));
  return build_tensor(spec, input_seed(c.seed, i, j < 0 ? 0 : static_cast<std::size_t>(j)));
}

/// The first repeat among the values of each line of `t` along `dim` (taken modulo `size`, as an op reads negative
/// indices), as "line L holds V twice"; "" when none repeats.
std::string repeat_along(const at::Tensor& t, std::int64_t dim, std::int64_t size) {
  const at::Tensor lines = t.movedim(dim, -1).reshape({-1, t.size(dim)}).remainder(size).contiguous();
  for (std::int64_t l = 0; l < lines.size(0); ++l) {
    std::set<std::int64_t> seen;
    for (std::int64_t k = 0; k < lines.size(1); ++k)
      if (!seen.insert(lines[l][k].item<std::int64_t>()).second)
        return "line " + std::to_string(l) + " holds " + std::to_string(lines[l][k].item<std::int64_t>()) + " twice";
  }
  return {};
}

const int kSeeds = 60;

struct RepeatCase {
  std::string name, op, inputs, kwargs;
  std::function<std::string(const ManifestSet&)> repeat;  // the first repeat within one destination, or ""
};

std::vector<RepeatCase> repeat_cases() {
  const std::string big_index = "dtype: int64, init: randint, init_args: {high: 1000}}\n";
  return {
      {"index_copy_", "torch.index_copy_",
       "      - tensor: {shape: [16, 3]}\n      - value: 0\n      - tensor: {shape: [12], " + big_index +
           "      - tensor: {shape: [12, 3]}\n",
       "", [](const ManifestSet& s) { return repeat_along(built(s, 2), 0, 16); }},
      {"index_copy (schema, dim 1)", "aten::index_copy",
       "      - tensor: {shape: [2, 9]}\n      - value: 1\n      - tensor: {shape: [9], " + big_index +
           "      - tensor: {shape: [2, 9]}\n",
       "", [](const ManifestSet& s) { return repeat_along(built(s, 2), 0, 9); }},
      {"scatter_ (src)", "torch.Tensor.scatter_",
       "      - tensor: {shape: [4, 10]}\n      - value: 1\n      - tensor: {shape: [4, 8], " + big_index +
           "      - tensor: {shape: [4, 8]}\n",
       "", [](const ManifestSet& s) { return repeat_along(built(s, 2), 1, 10); }},
      {"scatter (value, dim -2)", "torch.scatter",
       "      - tensor: {shape: [10, 3]}\n      - value: -2\n      - tensor: {shape: [7, 3], " + big_index +
           "      - value: 2.5\n",
       "", [](const ManifestSet& s) { return repeat_along(built(s, 2), 0, 10); }},
      {"index_put_ (tuples)", "torch.index_put_",
       "      - tensor: {shape: [6, 20]}\n      - tensor_list:\n          - {shape: [10], " + big_index +
           "          - {shape: [10], " + big_index + "      - tensor: {shape: [10]}\n",
       "",
       [](const ManifestSet& s) {
         // A tuple (i, j) names element i * 20 + j.
         return repeat_along(built(s, 1, 0).mul(20).add(built(s, 1, 1)), 0, 120);
       }},
      {"index_put (accumulate=False)", "aten::index_put",
       "      - tensor: {shape: [30]}\n      - tensor_list:\n          - {shape: [25], " + big_index +
           "      - tensor: {shape: [25]}\n      - value: false\n",
       "", [](const ManifestSet& s) { return repeat_along(built(s, 1, 0), 0, 30); }},
      {"put_ (negative indices, 2-D index)", "torch.Tensor.put_",
       "      - tensor: {shape: [4, 5]}\n      - tensor: {shape: [3, 4], dtype: int64, init: randint, init_args: "
       "{low: -20, high: 20}}\n      - tensor: {shape: [12]}\n",
       "", [](const ManifestSet& s) { return repeat_along(built(s, 1).reshape({-1}), 0, 20); }},
      {"put (accumulate keyword False)", "aten::put",
       "      - tensor: {shape: [14]}\n      - tensor: {shape: [13], " + big_index + "      - tensor: {shape: [13]}\n",
       "    kwmap: {accumulate: false}\n", [](const ManifestSet& s) { return repeat_along(built(s, 1), 0, 14); }},
  };
}

TEST(UndefinedInputs, NoGeneratedIndexRepeatsWithinOneDestination) {
  for (const RepeatCase& rc : repeat_cases())
    for (int seed = 0; seed < kSeeds; ++seed) {
      const ManifestSet s = load_case(rc.op, rc.inputs, seed, rc.kwargs);
      ASSERT_FALSE(s.diagnostics.has_errors()) << rc.name << "\n" << diagnostics(s);
      const std::string repeat = rc.repeat(s);
      if (repeat.empty()) continue;
      ADD_FAILURE() << rc.name << ", seed " << seed << ": an index repeats (" << repeat << ")\n" << diagnostics(s);
      break;  // one failure per op
    }
}

TEST(UndefinedInputs, DrawingWithoutRepeatsIsAWarningAtTheIndexLine) {
  EXPECT_EQ(the_warning("torch.index_copy_", "      - tensor: {shape: [16, 3]}\n      - value: 0\n"
                                             "      - tensor: {shape: [12], dtype: int64, init: randint,"
                                             " init_args: {high: 16}}\n      - tensor: {shape: [12, 3]}\n"),
            "/tmp/undefined.yaml:9:17: warning: index: randint drawn without repeats, as torch.index_copy_'s result "
            "is undefined where indices repeat [case m::c]\n"
            "  Fix: write init_args {distinct: true}, or pin the values with init: data");
}

TEST(UndefinedInputs, ScatterLinesAreNamedByTheirDim) {
  const ManifestSet s = load_case("torch.scatter", "      - tensor: {shape: [4, 10]}\n      - value: 1\n"
                                                   "      - tensor: {shape: [4, 8], dtype: int64, init: randint,"
                                                   " init_args: {high: 10}}\n      - tensor: {shape: [4, 8]}\n");
  EXPECT_NE(diagnostics(s).find("index: randint drawn without repeats along dim 1, as torch.scatter's result is "
                                "undefined where two positions along dim 1 write one element"),
            std::string::npos)
      << diagnostics(s);
}

TEST(UndefinedInputs, MoreIndicesThanTheDimSaysNoDrawCanAvoidRepeats) {
  // As many indices as issue 29's index_copy_ has (855), into a dim of 128.
  const ManifestSet s = load_case("torch.index_copy_", "      - tensor: {shape: [1, 8, 128, 16], dtype: bf16}\n"
                                                       "      - value: 2\n      - tensor: {shape: [855], dtype: int64,"
                                                       " init: randint, init_args: {high: 2048}}\n"
                                                       "      - tensor: {shape: [1, 8, 855, 16], dtype: bf16}\n");
  ASSERT_FALSE(s.diagnostics.has_errors()) << diagnostics(s);
  EXPECT_NE(diagnostics(s).find("/tmp/undefined.yaml:9:17: warning: index: randint cannot draw its values without "
                                "repeats: index holds 855 values and the size of dim 2 of input is 128; "
                                "torch.index_copy_'s result is undefined where indices repeat [case m::c]\n"
                                "  Fix: give index at most 128 values, or pin them with init: data"),
            std::string::npos)
      << diagnostics(s);
  const TensorSpec& index = s.manifests.at(0).cases.at(0).inputs.at(2).tensor;
  for (const auto& [k, v] : index.init_args) EXPECT_NE(k, "distinct") << "no distinct draw is possible";
}

TEST(UndefinedInputs, ARangeNarrowerThanTheIndexSaysSoAndNamesTheDimsRange) {
  EXPECT_EQ(the_warning("torch.index_copy_", "      - tensor: {shape: [16, 3]}\n      - value: 0\n"
                                             "      - tensor: {shape: [6], dtype: int64, init: randint,"
                                             " init_args: {high: 4}}\n      - tensor: {shape: [6, 3]}\n"),
            "/tmp/undefined.yaml:9:17: warning: index: randint cannot draw its values without repeats: index holds 6 "
            "values and [0, 4) only 4; torch.index_copy_'s result is undefined where indices repeat [case m::c]\n"
            "  Fix: write init_args {low: 0, high: 16}, the size of dim 0 of input, or pin the values with init: data");
}

TEST(UndefinedInputs, AccumulatingAndReducingCallsKeepTheirRandomDraw) {
  // Their results are defined where indices repeat (up to the order of the sums), so nothing changes.
  const std::string index = "dtype: int64, init: randint, init_args: {high: 16}}\n";
  const std::vector<ManifestSet> sets{
      load_case("torch.index_put_", "      - tensor: {shape: [16]}\n      - tensor_list:\n          - {shape: [8], " +
                                        index + "      - tensor: {shape: [8]}\n      - value: true\n"),
      load_case("torch.scatter", "      - tensor: {shape: [16]}\n      - value: 0\n      - tensor: {shape: [8], " +
                                     index + "      - tensor: {shape: [8]}\n",
                0, "    kwmap: {reduce: add}\n"),
      load_case("torch.index_add", "      - tensor: {shape: [16]}\n      - value: 0\n      - tensor: {shape: [8], " +
                                       index + "      - tensor: {shape: [8]}\n"),
  };
  for (const ManifestSet& s : sets) EXPECT_TRUE(s.diagnostics.items.empty()) << diagnostics(s);
}

double max_abs(const at::Tensor& t) { return t.abs().max().item<double>(); }

TEST(UndefinedInputs, SoftmaxBackwardOutputIsARealSoftmax) {
  for (const char* dtype : {"fp16", "bf16", "fp32"})
    for (int seed = 0; seed < 5; ++seed) {
      const std::string inputs = std::string("      - tensor: {shape: [5, 33], dtype: ") + dtype +
                                 ", init: randn}\n      - tensor: {shape: [5, 33], dtype: " + dtype +
                                 ", init: randn, init_args: {std: 30}}\n      - value: -1\n      - value: torch.float32\n";
      const double tol = std::string(dtype) == "fp32" ? 1e-5 : std::string(dtype) == "fp16" ? 2e-2 : 1e-1;
      const at::Tensor soft = built(load_case("aten::_softmax_backward_data", inputs, seed), 1).to(at::kDouble);
      EXPECT_LT(max_abs(soft.sum(-1) - 1), tol) << dtype << " seed " << seed << ": rows of the softmax sum to 1";
      EXPECT_GE(soft.min().item<double>(), 0.0);
      const at::Tensor log = built(load_case("aten::_log_softmax_backward_data", inputs, seed), 1).to(at::kDouble);
      EXPECT_LT(max_abs(log.logsumexp(-1)), tol) << dtype << " seed " << seed << ": rows of the log_softmax";
      EXPECT_LE(log.max().item<double>(), 0.0);
    }
}

TEST(UndefinedInputs, SoftmaxIsTakenAlongTheDimTheCallNames) {
  const ManifestSet s = load_case("torch._softmax_backward_data",
                                  "      - tensor: {shape: [6, 4], dtype: fp32}\n      - tensor: {shape: [6, 4],"
                                  " dtype: fp32}\n      - value: 0\n      - value: torch.float32\n");
  EXPECT_LT(max_abs(built(s, 1).to(at::kDouble).sum(0) - 1), 1e-6) << diagnostics(s);
  EXPECT_NE(diagnostics(s).find("output: rand values replaced by a softmax along dim 0 of them, as "
                                "torch._softmax_backward_data takes the forward's result"),
            std::string::npos)
      << diagnostics(s);
}

}  // namespace
}  // namespace opcheck::exec
