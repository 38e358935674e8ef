// The one table of op categories (src/judge/op_categories.h): its entries, and the two views the judge and the
// importer take of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "judge/backend_freedoms_table.h"
#include "judge/op_categories.h"

namespace opcheck {
namespace {

TEST(OpCategories, EveryEntryIsOneQualifiedOpWithACategoryAndItsReason) {
  std::set<std::string> seen;
  for (const auto& e : op_category_table()) {
    const std::string op = e.op;
    EXPECT_TRUE(seen.insert(op).second) << op << " twice";
    EXPECT_EQ(op.rfind("aten::", 0), 0u) << op;
    EXPECT_EQ(op.find('.'), std::string::npos) << op << ": an entry names every overload";
    EXPECT_NE(e.categories, 0u) << op;
    EXPECT_GT(std::string(e.reason).size(), 10u) << op << " has no reason";
    // An op whose output is uninitialised is one that made the storage.
    if (e.categories & kUninitialisedOutput) {
      EXPECT_TRUE(e.categories & kAllocation) << op;
    }
    EXPECT_EQ(op_categories(op), e.categories) << op;
    EXPECT_EQ(is_plumbing_op(op), (e.categories & kPlumbing) != 0) << op;
  }
  EXPECT_GE(seen.size(), 20u);
}

TEST(OpCategories, AnOpIsFoundByEveryOverloadAndSpelling) {
  EXPECT_EQ(op_categories("aten::empty.memory_format"), kAllocation | kUninitialisedOutput);
  EXPECT_EQ(op_categories("empty.memory_format"), kAllocation | kUninitialisedOutput);
  EXPECT_EQ(op_categories("aten::_copy_from"), unsigned(kTransfer));
  EXPECT_EQ(op_categories("aten::_local_scalar_dense"), unsigned(kScalarRead));
  EXPECT_EQ(op_categories("aten::expand"), unsigned(kView));
  EXPECT_EQ(op_categories("aten::mul.Tensor"), 0u);
  EXPECT_EQ(op_categories("aten::empty_like_not"), 0u);
  EXPECT_EQ(op_categories("other::empty"), 0u);
  // Plumbing: allocations, views, transfers and scalar reads; nothing that computes.
  for (const char* op : {"aten::empty", "aten::view", "aten::detach", "aten::_to_copy",
                         "aten::_local_scalar_dense", "aten::new_empty_strided", "aten::alias", "aten::lift_fresh"})
    EXPECT_TRUE(is_plumbing_op(op)) << op;
  for (const char* op : {"aten::mul.Tensor", "aten::mm", "aten::index_select", "aten::clone", "aten::contiguous",
                         "aten::resize_"})
    EXPECT_FALSE(is_plumbing_op(op)) << op;
}

TEST(OpCategories, TheJudgesUninitialisedOpsAreTheTables) {
  EXPECT_EQ(uninitialised_output_ops(), ops_in(kUninitialisedOutput));
  const std::vector<std::string> fresh = uninitialised_output_ops();
  for (const char* op : {"aten::empty", "aten::empty_like", "aten::empty_strided", "aten::new_empty"})
    EXPECT_NE(std::find(fresh.begin(), fresh.end(), op), fresh.end()) << op;
  EXPECT_EQ(std::find(fresh.begin(), fresh.end(), "aten::resize_"), fresh.end());  // its old elements are defined
}

}  // namespace
}  // namespace opcheck
