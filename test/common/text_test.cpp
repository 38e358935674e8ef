// common/text.h's split_list: comma lists of the op tables and of Result::resolved_op.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/text.h"

namespace opcheck {
namespace {

using Items = std::vector<std::string>;

TEST(SplitList, ItemsAreTrimmedOfSpacesAndTabsAndEmptyOnesLeftOut) {
  EXPECT_EQ(split_list("aten::mul.Tensor, aten::transpose.int,aten::matmul"),
            (Items{"aten::mul.Tensor", "aten::transpose.int", "aten::matmul"}));
  EXPECT_EQ(split_list(" a ,, b ,"), (Items{"a", "b"}));
  EXPECT_EQ(split_list(""), Items{});
  EXPECT_EQ(split_list(" , "), Items{});
  EXPECT_EQ(split_list("one"), Items{"one"});
  EXPECT_EQ(split_list("\ttorch_spyre ,\t extra.mod\t"), (Items{"torch_spyre", "extra.mod"}));
  EXPECT_EQ(trim_blanks(" \t x y \t"), "x y");
  EXPECT_EQ(trim_blanks(" \t "), "");
}

TEST(SplitList, OnlyTheSeparatorSplitsAndInnerSpacesStay) {
  EXPECT_EQ(split_list("input:indices; training,inplace", ';'), (Items{"input:indices", "training,inplace"}));
  EXPECT_EQ(split_list("a b, c", ','), (Items{"a b", "c"}));
}

}  // namespace
}  // namespace opcheck
