// The table of index and mask arguments (src/common/input_bounds.*), read through the real loader, which narrows
// random inputs to the bounds it gives: the range a manifest's case ends up drawing is what a user would notice.
#include <gtest/gtest.h>

#include <string>

#include "opcheck/case.h"

namespace opcheck {
namespace {

/// Loads one case of `op` with the given input lines (each a `- ...` item under `inputs:`).
ManifestSet load_case(const std::string& op, const std::string& inputs) {
  return load_manifest_text("/tmp/bounds.yaml",
                            "model: m\ncases:\n  - name: c\n    op: " + op + "\n    inputs:\n" + inputs);
}

std::string arg(const TensorSpec& t, const std::string& key) {
  for (const auto& [k, v] : t.init_args)
    if (k == key) return v.repr();
  return "absent";
}

std::string all(const ManifestSet& s) {
  std::string out;
  for (const auto& d : s.diagnostics.items) out += d.format() + "\n";
  return out;
}

const std::string kIndex100 = "      - tensor: {shape: [2], dtype: int64, init: randint, init_args: {high: 100}}\n";

TEST(InputBounds, IndexPutNarrowsEachListElementToItsOwnDim) {
  const auto s = load_case("torch.index_put", "      - tensor: {shape: [3, 5]}\n      - tensor_list:\n"
                                              "          - {shape: [2], dtype: int64, init: randint, init_args: {high: 100}}\n"
                                              "          - {shape: [2], dtype: int64, init: randint, init_args: {high: 100}}\n"
                                              "      - tensor: {shape: [2]}\n");
  ASSERT_FALSE(s.diagnostics.has_errors()) << all(s);
  const auto& list = s.manifests.at(0).cases.at(0).inputs.at(1).list;
  EXPECT_EQ(arg(list.at(0), "high"), "3");
  EXPECT_EQ(arg(list.at(1), "high"), "5");
  EXPECT_NE(all(s).find("indices[1]: randint high 100 narrowed to 5, the size of dim 1 of self"), std::string::npos)
      << all(s);
}

TEST(InputBounds, InPlaceMethodSpellingWithANegativeDimIndexesTheLastDim) {
  const auto s = load_case("torch.Tensor.scatter_", "      - tensor: {shape: [4, 6]}\n      - value: -1\n" +
                                                        kIndex100 + "      - tensor: {shape: [2]}\n");
  EXPECT_EQ(arg(s.manifests.at(0).cases.at(0).inputs.at(2).tensor, "high"), "6") << all(s);
}

TEST(InputBounds, SchemaSpellingIndexesTheDimItNames) {
  const auto s = load_case("aten::index_select", "      - tensor: {shape: [4, 9]}\n      - value: 1\n" + kIndex100);
  EXPECT_EQ(arg(s.manifests.at(0).cases.at(0).inputs.at(2).tensor, "high"), "9") << all(s);
}

TEST(InputBounds, PinnedValuesAndOpsOutsideTheTableAreLeftAsWritten) {
  const auto pinned = load_case("torch.index_select", "      - tensor: {shape: [4, 3]}\n      - value: 0\n"
                                                      "      - tensor: {shape: [2], dtype: int64, init: data, data: [0, 9]}\n");
  EXPECT_TRUE(pinned.manifests.at(0).cases.at(0).inputs.at(2).tensor.init_args.empty());
  EXPECT_TRUE(pinned.diagnostics.items.empty()) << all(pinned);
  const auto mask = load_case("torch.masked_scatter",
                              "      - tensor: {shape: [2, 2]}\n"
                              "      - tensor: {shape: [2, 2], dtype: bool, init: data, data: [[true, true], [true, true]]}\n"
                              "      - tensor: {shape: [1]}\n");
  EXPECT_TRUE(mask.manifests.at(0).cases.at(0).inputs.at(1).tensor.init_args.empty()) << all(mask);
  EXPECT_TRUE(mask.diagnostics.items.empty()) << all(mask);
  const auto other = load_case("torch.add", "      - tensor: {shape: [2], dtype: int64}\n" + kIndex100);
  EXPECT_EQ(arg(other.manifests.at(0).cases.at(0).inputs.at(1).tensor, "high"), "100");
  EXPECT_TRUE(other.diagnostics.items.empty()) << all(other);
}

TEST(InputBounds, AUint8IndexIsAMaskToGetitemAndIsNotNarrowed) {
  const auto s = load_case("torch.getitem", "      - tensor: {shape: [4]}\n"
                                            "      - tensor: {shape: [4], dtype: uint8, init: randint, init_args: {high: 200}}\n");
  EXPECT_EQ(arg(s.manifests.at(0).cases.at(0).inputs.at(1).tensor, "high"), "200");
  EXPECT_TRUE(s.diagnostics.items.empty()) << all(s);
}

TEST(InputBounds, AMaskThatBroadcastsCountsEachTrueValueOncePerRepeat) {
  // A [1, 6] mask over a [4, 6] self: each stored value is used 4 times, so 8 source elements take 2 true values.
  const auto s = load_case("torch.masked_scatter", "      - tensor: {shape: [4, 6]}\n"
                                                   "      - tensor: {shape: [1, 6], dtype: bool}\n"
                                                   "      - tensor: {shape: [8]}\n");
  EXPECT_EQ(arg(s.manifests.at(0).cases.at(0).inputs.at(1).tensor, "max_true"), "2") << all(s);
  EXPECT_NE(all(s).find("the 8 elements of source, each true value taking 4 as the mask broadcasts"),
            std::string::npos)
      << all(s);
}

}  // namespace
}  // namespace opcheck
