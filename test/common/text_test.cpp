// common/text.h's split_list (comma lists of the op tables and of Result::resolved_op) and trim; the printable form
// of names quoted in messages (common/text_escape.h); the comparator spellings (opcheck/result.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/text.h"
#include "common/text_escape.h"
#include "opcheck/result.h"

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

TEST(Trim, LinesReadFromFilesLoseLineBreaksToo) {
  EXPECT_EQ(trim_blanks("\r\n  Operator: aten.add.Tensor \r", kWhitespace), "Operator: aten.add.Tensor");
  EXPECT_EQ(trim_blanks("x\r"), "x\r");  // a list item or a flag's value: spaces and tabs only
}

TEST(PrintableText, ControlCharactersBecomeTheirBytesAndOtherTextStays) {
  // A case name holding a terminal escape, a C1 control (NEL) and an accented letter, as a message quotes it.
  EXPECT_EQ(printable_text("a\x1b[31m\xc2\x85\xc3\xa9\t"), "a\\x1b[31m\\xc2\\x85\xc3\xa9\\x09");
  EXPECT_EQ(printable_text("\xff"), "\\xff");  // not UTF-8
  EXPECT_EQ(first_control_character("ab\xc3\xa9\xc2\x85"), 4u);
  EXPECT_EQ(first_control_character("plain \xc3\xa9"), std::string_view::npos);
  // Bidirectional and zero-width format characters reorder or hide what follows them: shown as code points.
  EXPECT_EQ(printable_text("a\xe2\x80\xae" "b\xe2\x80\x8b" "c\xef\xbb\xbf"), "a\\u202eb\\u200bc\\ufeff");
  EXPECT_EQ(first_control_character("ab\xe2\x81\xa6"), 2u);
  EXPECT_EQ(printable_text("\xe2\x80\x94 dash"), "\xe2\x80\x94 dash");  // other punctuation is kept
}

TEST(ComparatorNames, EverySpellingReadsBackAsItsComparator) {
  for (Comparator c : {Comparator::AllClose, Comparator::Pcc, Comparator::Exact}) {
    Comparator back = Comparator::AllClose;
    ASSERT_TRUE(parse_comparator(comparator_name(c), back)) << comparator_name(c);
    EXPECT_EQ(back, c);
  }
  EXPECT_STREQ(comparator_name(Comparator::Pcc), "pcc");
  Comparator unused;
  EXPECT_FALSE(parse_comparator("allclos", unused));
}

}  // namespace
}  // namespace opcheck
