// The input recipe table (src/common/init_recipes.*): one row per init kind, in InitKind order, each kind read by the
// manifest loader under its name and written back under the same name.
#include <gtest/gtest.h>

#include <string>

#include "common/init_recipes.h"
#include "opcheck/case.h"

namespace opcheck {
namespace {

TEST(InitRecipes, EveryKindHasOneRowAndTheLoaderReadsItsName) {
  const auto& rows = init_recipes();
  ASSERT_EQ(rows.size(), static_cast<std::size_t>(InitKind::Full) + 1) << "a kind without a row, or a row too many";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const InitRecipe& r = rows[i];
    EXPECT_EQ(static_cast<std::size_t>(r.kind), i) << r.name << " is out of InitKind order";
    EXPECT_EQ(std::string(init_kind_name(r.kind)), std::string(r.name));
    // The loader accepts the name and gives back this kind (data and file need their values, eye a square shape).
    std::string tensor = "{shape: [2, 2], init: " + std::string(r.name);
    if (r.kind == InitKind::Data) tensor += ", data: [[1, 2], [3, 4]]";
    if (r.kind == InitKind::File) tensor += ", file: missing.pt";
    if (r.kind == InitKind::Randint) tensor += ", init_args: {high: 3}";
    if (r.kind == InitKind::Full) tensor += ", init_args: {fill_value: 2}";
    tensor += "}";
    const ManifestSet set = load_manifest_text("/tmp/recipes.yaml", "model: m\ncases:\n  - name: c\n    op: torch.abs\n"
                                                                     "    inputs:\n      - tensor: " + tensor + "\n");
    std::string diags;
    for (const auto& d : set.diagnostics.items) diags += d.format() + "\n";
    if (r.kind == InitKind::File) {
      // The loader checks the file exists: the kind was read, the missing file is what it reports.
      EXPECT_NE(diags.find("missing.pt"), std::string::npos) << diags;
      continue;
    }
    ASSERT_FALSE(set.diagnostics.has_errors()) << r.name << ":\n" << diags;
    EXPECT_EQ(set.manifests.at(0).cases.at(0).inputs.at(0).tensor.init, r.kind) << r.name;
  }
}

TEST(InitRecipes, SeededKindsAreTheOnesThatDrawRandomNumbers) {
  for (const auto& r : init_recipes()) {
    const bool random = r.kind == InitKind::Rand || r.kind == InitKind::Uniform || r.kind == InitKind::Randn ||
                        r.kind == InitKind::Randint || r.kind == InitKind::Xavier;
    EXPECT_EQ(r.seeded, random) << r.name;
  }
  EXPECT_TRUE(init_recipe(InitKind::Data).full_shape);
  EXPECT_TRUE(init_recipe(InitKind::File).full_shape);
  EXPECT_TRUE(init_recipe(InitKind::Eye).full_shape);
  EXPECT_FALSE(init_recipe(InitKind::Rand).full_shape);
}

}  // namespace
}  // namespace opcheck
