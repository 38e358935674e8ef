// The tables of what PyTorch leaves to a backend (src/judge/backend_freedoms_table): which resolved ops each rule
// covers, as the run's judge and the repro script both look them up.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "judge/backend_freedoms_table.h"

namespace opcheck {
namespace {

TEST(RepeatedWrites, AnyOverloadOfAListedOpAndNothingElse) {
  for (const char* op : {"aten::index_copy", "aten::index_copy_.default", "aten::index_put_.default",
                         "aten::_index_put_impl_", "aten::scatter.src", "aten::scatter_.value", "aten::put_"})
    EXPECT_TRUE(leaves_repeated_writes_undefined(op)) << op;
  for (const char* op : {"aten::index_add", "aten::scatter_add", "aten::index_select", "aten::add.Tensor", ""})
    EXPECT_FALSE(leaves_repeated_writes_undefined(op)) << op;
}

TEST(TiedIndices, AnOpWithoutOverloadCoversEveryOverloadAndOneWithAnOverloadOnlyThatOne) {
  ASSERT_NE(tied_index_rule("aten::topk"), nullptr);
  EXPECT_EQ(tied_index_rule("aten::topk.values"), tied_index_rule("aten::topk"));
  const TiedIndexRule* max_dim = tied_index_rule("aten::max.dim");
  ASSERT_NE(max_dim, nullptr);
  EXPECT_EQ(max_dim->output, 1);
  EXPECT_TRUE(max_dim->reduced);
  EXPECT_EQ(tied_index_rule("aten::max"), nullptr);  // the maximum of all elements: a value, no index
  EXPECT_EQ(tied_index_rule("aten::max.other"), nullptr);
  const TiedIndexRule* argmax = tied_index_rule("aten::argmax");
  ASSERT_NE(argmax, nullptr);
  EXPECT_EQ(argmax->output, 0);
  EXPECT_EQ(tied_index_rule("aten::add.Tensor"), nullptr);
}

TEST(FreedomTables, EveryEntryIsAnAtenOpNamedOnceAndCitesItsRule) {
  std::set<std::string> seen;
  for (const RepeatedWriteRule& r : repeated_write_rules()) {
    EXPECT_EQ(std::string(r.op).rfind("aten::", 0), 0u) << r.op;
    EXPECT_TRUE(seen.insert(r.op).second) << r.op;
    EXPECT_GT(std::string(r.rule).size(), 10u) << r.op;
  }
  seen.clear();
  for (const TiedIndexRule& t : tied_index_rules()) {
    EXPECT_EQ(std::string(t.op).rfind("aten::", 0), 0u) << t.op;
    EXPECT_TRUE(seen.insert(t.op).second) << t.op;
    EXPECT_GT(std::string(t.rule).size(), 10u) << t.op;
  }
}

}  // namespace
}  // namespace opcheck
