// The calls shrink tries and the variants sweep runs (runner/call_variants.h), on cases loaded from manifest text.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "runner/call_variants.h"

namespace opcheck {
namespace {

Case load_one(const std::string& inputs) {
  const ManifestSet set = load_manifest_text("/tmp/variants.yaml",
                                             "model: m\ncases:\n  - name: c\n    op: torch.mul\n    inputs:\n" + inputs);
  EXPECT_FALSE(set.diagnostics.has_errors()) << set.diagnostics.items.front().format();
  return set.manifests.at(0).cases.at(0);
}

// mul.3 of gpt-oss-20b: a weight broadcast against activations.
Case broadcast_mul() {
  return load_one(
      "      - tensor: {shape: [2880], dtype: bf16}\n"
      "      - tensor: {shape: [1, 11, 2880], stride: [31680, 1, 11], dtype: fp32}\n");
}

const CallVariant* find_edit(const std::vector<CallVariant>& steps, const std::string& edit) {
  for (const auto& s : steps)
    if (s.edit == edit) return &s;
  return nullptr;
}

TEST(ShrinkSteps, EveryStepIsSmallerThanTheCallItCameFrom) {
  const Case c = broadcast_mul();
  const auto steps = shrink_steps(c);
  ASSERT_FALSE(steps.empty());
  for (const auto& s : steps)
    EXPECT_LT(std::make_pair(input_elements(s.call), call_complexity(s.call)),
              std::make_pair(input_elements(c), call_complexity(c)))
        << s.edit;
}

TEST(ShrinkSteps, BroadcastPartnersShrinkTogetherSoTheCallStaysValid) {
  const auto steps = shrink_steps(broadcast_mul());
  const CallVariant* last_dim = find_edit(steps, "dims of size 2880->1");
  ASSERT_NE(last_dim, nullptr);
  EXPECT_EQ(last_dim->call.inputs[0].tensor.shape, (std::vector<std::int64_t>{1}));
  EXPECT_EQ(last_dim->call.inputs[1].tensor.shape, (std::vector<std::int64_t>{1, 11, 1}));
  // The transposed tensor keeps its dim order in memory, without gaps.
  EXPECT_EQ(last_dim->call.inputs[1].tensor.stride, (std::vector<std::int64_t>{11, 1, 11}));
  const CallVariant* contiguous = find_edit(steps, "tensor 1 made contiguous");
  ASSERT_NE(contiguous, nullptr);
  EXPECT_EQ(contiguous->call.inputs[1].tensor.stride, (std::vector<std::int64_t>{31680, 2880, 1}));
}

TEST(ShrinkSteps, DataTensorsGetSimpleValuesBeforeTheirShapeShrinks) {
  const Case c = load_one("      - tensor: {shape: [2, 2], init: data, data: [[1.5, 2.5], [3.5, 4.5]]}\n"
                          "      - value: 2.5\n");
  const auto steps = shrink_steps(c);
  for (const auto& s : steps) EXPECT_EQ(s.edit.find("dim"), std::string::npos) << s.edit;
  const CallVariant* zeros = find_edit(steps, "tensor 0 values zeros");
  ASSERT_NE(zeros, nullptr);
  EXPECT_EQ(zeros->call.inputs[0].tensor.init, InitKind::Zeros);
  const CallVariant* scalar = find_edit(steps, "argument 1: 2.5->1.0");
  ASSERT_NE(scalar, nullptr);
  EXPECT_EQ(scalar->call.inputs[1].value, PyValue::real(1.0));
}

TEST(SweepVariants, EveryDtypeMeetsEveryLayoutWithDistinctIds) {
  std::size_t left_out = 99;
  const auto variants = sweep_variants(broadcast_mul(), 1000, left_out);
  EXPECT_EQ(left_out, 0u);
  std::set<std::string> ids;
  for (const auto& v : variants) ids.insert(v.call.id);
  EXPECT_EQ(ids.size(), variants.size());
  for (DType t : kSweepDtypes)
    for (const char* layout : {"contiguous", "transposed", "sliced", "offset"}) {
      const auto it = std::find_if(variants.begin(), variants.end(), [&](const SweepVariant& v) {
        return v.dtype == dtype_name(t) && v.layout == layout && v.shape == "[2880] [1,11,2880]";
      });
      EXPECT_NE(it, variants.end()) << dtype_name(t) << " " << layout;
    }
  const auto offset = std::find_if(variants.begin(), variants.end(), [](const SweepVariant& v) {
    return v.dtype == "bf16" && v.layout == "offset";
  });
  ASSERT_NE(offset, variants.end());
  EXPECT_EQ(offset->call.id, "m::c[bf16,offset,[2880];[1,11,2880]]");
  EXPECT_EQ(offset->call.inputs[1].tensor.storage_offset, 3);
  EXPECT_EQ(offset->call.inputs[1].tensor.dtype, DType::BFloat16);
  const auto transposed = std::find_if(variants.begin(), variants.end(), [](const SweepVariant& v) {
    return v.dtype == "fp32" && v.layout == "transposed";
  });
  ASSERT_NE(transposed, variants.end());
  EXPECT_EQ(transposed->call.inputs[1].tensor.stride, (std::vector<std::int64_t>{31680, 1, 11}));
  EXPECT_TRUE(std::any_of(variants.begin(), variants.end(),
                          [](const SweepVariant& v) { return v.shape == "[4096] [1,11,4096]"; }));
}

TEST(SweepVariants, TheBoundKeepsTheOriginalFirstAndCountsWhatItCut) {
  std::size_t all = 0, left_out = 0;
  all = sweep_variants(broadcast_mul(), 1000, left_out).size();
  const auto variants = sweep_variants(broadcast_mul(), 5, left_out);
  ASSERT_EQ(variants.size(), 5u);
  EXPECT_EQ(left_out, all - 5);
  EXPECT_EQ(variants[0].layout, "as written");
  EXPECT_EQ(variants[0].dtype, "bf16+fp32");
  EXPECT_EQ(variants[0].shape, "[2880] [1,11,2880]");
}

}  // namespace
}  // namespace opcheck
