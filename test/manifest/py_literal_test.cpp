#include "manifest/py_literal.h"

#include <gtest/gtest.h>

#include <cmath>

using opcheck::parse_py_literal;
using opcheck::PyValue;
using Kind = PyValue::Kind;

namespace {

PyValue ok(const std::string& text) {
  PyValue v;
  std::string err;
  int col = -1;
  EXPECT_TRUE(parse_py_literal(text, v, err, col)) << text << ": " << err << " at column " << col;
  return v;
}

// Returns the error; `col` receives its column.
std::string bad(const std::string& text, int& col) {
  PyValue v;
  std::string err;
  col = -1;
  EXPECT_FALSE(parse_py_literal(text, v, err, col)) << text << " parsed as " << v.repr();
  EXPECT_FALSE(err.empty());
  return err;
}

}  // namespace

TEST(PyLiteral, Ints) {
  EXPECT_EQ(ok("0"), PyValue::integer(0));
  EXPECT_EQ(ok("-1"), PyValue::integer(-1));
  EXPECT_EQ(ok("+5"), PyValue::integer(5));
  EXPECT_EQ(ok("1_000"), PyValue::integer(1000));
  EXPECT_EQ(ok("0x1f"), PyValue::integer(31));
  EXPECT_EQ(ok("0o17"), PyValue::integer(15));
  EXPECT_EQ(ok("0b101"), PyValue::integer(5));
  EXPECT_EQ(ok("9223372036854775807"), PyValue::integer(INT64_MAX));
  EXPECT_EQ(ok("-9223372036854775808"), PyValue::integer(INT64_MIN));
  EXPECT_EQ(ok("  42  "), PyValue::integer(42));
}

TEST(PyLiteral, Floats) {
  EXPECT_EQ(ok("1.5"), PyValue::real(1.5));
  EXPECT_EQ(ok("1e-3"), PyValue::real(1e-3));
  EXPECT_EQ(ok("1.0e-05"), PyValue::real(1e-5));
  EXPECT_EQ(ok(".5"), PyValue::real(0.5));
  EXPECT_EQ(ok("5."), PyValue::real(5.0));
  EXPECT_EQ(ok("-2.5E+2"), PyValue::real(-250.0));
  PyValue inf = ok("inf");
  EXPECT_TRUE(inf.kind == Kind::Float && std::isinf(inf.f) && inf.f > 0);
  PyValue ninf = ok("-inf");
  EXPECT_TRUE(ninf.kind == Kind::Float && std::isinf(ninf.f) && ninf.f < 0);
  PyValue nan = ok("nan");
  EXPECT_TRUE(nan.kind == Kind::Float && std::isnan(nan.f));
  EXPECT_TRUE(std::isinf(ok("float('inf')").f));
  EXPECT_TRUE(ok("float(\"-inf\")").f < 0);
  EXPECT_TRUE(std::isnan(ok("float('nan')").f));
  EXPECT_EQ(ok("float(2)"), PyValue::real(2.0));
  EXPECT_EQ(ok("1.0").repr(), "1.0");
}

TEST(PyLiteral, Constants) {
  EXPECT_EQ(ok("True"), PyValue::boolean(true));
  EXPECT_EQ(ok("False"), PyValue::boolean(false));
  EXPECT_EQ(ok("None"), PyValue::none());
  EXPECT_EQ(ok("Ellipsis"), PyValue::ellipsis());
  EXPECT_EQ(ok("..."), PyValue::ellipsis());
}

TEST(PyLiteral, Strings) {
  EXPECT_EQ(ok("'abc'"), PyValue::string("abc"));
  EXPECT_EQ(ok("\"a'b\""), PyValue::string("a'b"));
  EXPECT_EQ(ok("'a\\'b\\n'"), PyValue::string("a'b\n"));
  EXPECT_EQ(ok("'\\x41\\u00e9'"), PyValue::string("A\xc3\xa9"));
  EXPECT_EQ(ok("''"), PyValue::string(""));
}

TEST(PyLiteral, EveryEscapeMeansWhatItMeansInPython) {
  EXPECT_EQ(ok("'\\0\\101\\7\\0123'"), PyValue::string(std::string("\0A\a\n3", 5)));  // octal, up to 3 digits
  EXPECT_EQ(ok("'\\a\\b\\f\\v\\r\\t'"), PyValue::string("\a\b\f\v\r\t"));
  EXPECT_EQ(ok("'\\U0001F600\\U00000041'"), PyValue::string("\xf0\x9f\x98\x80" "A"));
  EXPECT_EQ(ok("'\\q'"), PyValue::string("\\q"));  // Python keeps an unknown escape as written
  // What repr writes reads back: control characters are escapes, never raw bytes.
  const PyValue hostile = PyValue::string(std::string("\x1b]0;p\x07\0\t\x7f\xc2\x85", 11));
  EXPECT_EQ(hostile.repr(), "'\\x1b]0;p\\x07\\x00\\t\\x7f\\x85'");
  EXPECT_EQ(ok(hostile.repr()), hostile);
}

TEST(PyLiteral, Slices) {
  PyValue s = ok("slice(None, None, None)");
  ASSERT_EQ(s.kind, Kind::Slice);
  ASSERT_EQ(s.items.size(), 3u);
  EXPECT_EQ(s.repr(), "slice(None, None, None)");
  EXPECT_EQ(ok("slice(4)").repr(), "slice(None, 4, None)") << "one argument is the stop, as in Python";
  EXPECT_EQ(ok("slice(1, -1)").repr(), "slice(1, -1, None)");
  EXPECT_EQ(ok("slice(None, None, 2)").repr(), "slice(None, None, 2)");
}

TEST(PyLiteral, TuplesAndLists) {
  EXPECT_EQ(ok("()").repr(), "()");
  EXPECT_EQ(ok("(1,)").repr(), "(1,)");
  EXPECT_EQ(ok("(1)"), PyValue::integer(1)) << "parentheses alone make no tuple";
  EXPECT_EQ(ok("(-1,)").repr(), "(-1,)");
  EXPECT_EQ(ok("(1, 12, -1, 128)").repr(), "(1, 12, -1, 128)");
  EXPECT_EQ(ok("[2, 32]").repr(), "[2, 32]");
  EXPECT_EQ(ok("[]").repr(), "[]");
  EXPECT_EQ(ok("[1, 2,]").repr(), "[1, 2]");
  EXPECT_EQ(ok("((1, 2), [3, (4,)])").repr(), "((1, 2), [3, (4,)])");
  EXPECT_EQ(ok("(Ellipsis, None, slice(None, None, None))").repr(), "(Ellipsis, None, slice(None, None, None))");
  EXPECT_EQ(ok("(..., slice(None, 64, None))").repr(), "(Ellipsis, slice(None, 64, None))");
  EXPECT_EQ(ok("(\n  1,\n  2\n)").repr(), "(1, 2)");
}

TEST(PyLiteral, Dtypes) {
  EXPECT_EQ(ok("torch.float16"), PyValue::of_dtype(opcheck::DType::Float16));
  EXPECT_EQ(ok("torch.bfloat16"), PyValue::of_dtype(opcheck::DType::BFloat16));
  EXPECT_EQ(ok("torch.long"), PyValue::of_dtype(opcheck::DType::Int64));
  EXPECT_EQ(ok("(torch.int32, 3)").repr(), "(torch.int32, 3)");
}

TEST(PyLiteral, ErrorsCarryTheColumn) {
  int col = 0;
  EXPECT_NE(bad("(1, 2", col).find("unclosed '('"), std::string::npos);
  EXPECT_EQ(col, 1);
  EXPECT_NE(bad("(1, 2,, 3)", col).find("unexpected ','"), std::string::npos);
  EXPECT_EQ(col, 7);
  EXPECT_NE(bad("[1 2]", col).find("expected ',' or ']'"), std::string::npos);
  EXPECT_EQ(col, 4);
  EXPECT_NE(bad("(1,) x", col).find("after the end"), std::string::npos);
  EXPECT_EQ(col, 6);
  EXPECT_NE(bad("os.system('ls')", col).find("only Python literals"), std::string::npos);
  EXPECT_EQ(col, 1);
  EXPECT_NE(bad("(1, __import__('os'))", col).find("'__import__'"), std::string::npos);
  EXPECT_EQ(col, 5);
  EXPECT_NE(bad("torch.flaot16", col).find("did you mean 'torch.float16'?"), std::string::npos);
  EXPECT_NE(bad("torch.nn.Linear", col).find("unknown dtype"), std::string::npos);
  EXPECT_NE(bad("'abc", col).find("unterminated string"), std::string::npos);
  EXPECT_EQ(col, 1);
  EXPECT_NE(bad("slice()", col).find("1 to 3 arguments"), std::string::npos);
  EXPECT_NE(bad("slice(1, 2, 3, 4)", col).find("1 to 3 arguments"), std::string::npos);
  EXPECT_NE(bad("slice('a')", col).find("integers or None"), std::string::npos);
  EXPECT_NE(bad("slice", col).find("expected '('"), std::string::npos);
  EXPECT_NE(bad("", col).find("empty"), std::string::npos);
  EXPECT_NE(bad("   ", col).find("empty"), std::string::npos);
  EXPECT_NE(bad("1 + 2", col).find("after the end"), std::string::npos);
  EXPECT_EQ(col, 3);
  EXPECT_NE(bad("9223372036854775808", col).find("does not fit in 64 bits"), std::string::npos);
  EXPECT_NE(bad("007", col).find("leading zeros"), std::string::npos);
  EXPECT_NE(bad("1__0", col).find("misplaced '_'"), std::string::npos);
  EXPECT_NE(bad("1e", col).find("malformed exponent"), std::string::npos);
  EXPECT_NE(bad("1.2.3", col).find("malformed number"), std::string::npos);
  EXPECT_NE(bad("2j", col).find("complex"), std::string::npos);
  EXPECT_NE(bad("true", col).find("did you mean 'True'?"), std::string::npos);
  EXPECT_NE(bad("-'a'", col).find("expected a number after '-'"), std::string::npos);
  EXPECT_NE(bad("-True", col).find("expected a number after '-'"), std::string::npos);
  EXPECT_NE(bad("{1: 2}", col).find("unexpected '{'"), std::string::npos);
  EXPECT_NE(bad("lambda: 0", col).find("only Python literals"), std::string::npos);
}

TEST(PyLiteral, NestingIsBounded) {
  int col = 0;
  std::string deep = std::string(100, '(') + "1" + std::string(100, ')');
  EXPECT_NE(bad(deep, col).find("deeper than 64"), std::string::npos);
  std::string huge(200000, '[');
  EXPECT_NE(bad(huge, col).find("deeper than 64"), std::string::npos);
  std::string fine = std::string(30, '[') + std::string(30, ']');
  ok(fine);
}

TEST(PyLiteral, FailureLeavesOutputUntouched) {
  PyValue v = PyValue::integer(7);
  std::string err;
  int col = 0;
  EXPECT_FALSE(parse_py_literal("(1, ", v, err, col));
  EXPECT_EQ(v, PyValue::integer(7));
}
