#include "common/yaml_tree.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace opcheck::yaml;

namespace {

Tree parse_ok(const std::string& text) {
  Tree t;
  ParseError e;
  EXPECT_TRUE(parse_yaml(text, t, e)) << e.line << ":" << e.col << " " << e.message;
  return t;
}

ParseError parse_bad(const std::string& text) {
  Tree t;
  ParseError e;
  EXPECT_FALSE(parse_yaml(text, t, e)) << "expected a parse error for: " << text;
  return e;
}

}  // namespace

TEST(YamlTree, BuildsLocatedMapsListsAndScalars) {
  Tree t = parse_ok("model: m\ncases:\n  - name: a\n    op: torch.add\n  - {name: b, op: 'torch.mul'}\n");
  NodeRef root = t.root();
  ASSERT_TRUE(root.is_mapping());
  ASSERT_EQ(root.size(), 2u);
  EXPECT_EQ(root.key(0).text(), "model");
  EXPECT_EQ(root.value(0).text(), "m");
  EXPECT_EQ(root.value(0).line(), 1);
  EXPECT_EQ(root.value(0).col(), 8);
  NodeRef cases = root.find("cases");
  ASSERT_TRUE(cases && cases.is_sequence());
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases.item(0).line(), 3);
  EXPECT_EQ(cases.item(0).col(), 5);
  EXPECT_EQ(cases.item(0).find("op").text(), "torch.add");
  EXPECT_EQ(cases.item(1).find("op").text(), "torch.mul");
  EXPECT_EQ(cases.item(1).find("op").style(), ScalarStyle::Quoted);
  EXPECT_EQ(cases.item(1).find("name").style(), ScalarStyle::Plain);
  EXPECT_EQ(cases.item(1).line(), 5);
  EXPECT_FALSE(root.find("nope"));
}

TEST(YamlTree, ScalarStyles) {
  Tree t = parse_ok("a: plain\nb: 'single'\nc: \"double\"\nd: |\n  block\ne: !!str 3\nf: >\n  folded\n");
  NodeRef r = t.root();
  EXPECT_EQ(r.find("a").style(), ScalarStyle::Plain);
  EXPECT_EQ(r.find("b").style(), ScalarStyle::Quoted);
  EXPECT_EQ(r.find("c").style(), ScalarStyle::Quoted);
  EXPECT_EQ(r.find("d").style(), ScalarStyle::Block);
  EXPECT_EQ(r.find("d").text(), "block\n");
  EXPECT_EQ(r.find("e").style(), ScalarStyle::Quoted) << "!!str makes a string";
  EXPECT_EQ(r.find("f").style(), ScalarStyle::Block);
}

TEST(YamlTree, DescribeNamesTheYamlType) {
  Tree t = parse_ok("a: 1\nb: 1.5\nc: true\nd: ~\ne: hi\nf: '1'\ng: [1]\nh: {x: 1}\n");
  NodeRef r = t.root();
  EXPECT_EQ(r.find("a").describe(), "an integer");
  EXPECT_EQ(r.find("b").describe(), "a number");
  EXPECT_EQ(r.find("c").describe(), "a boolean");
  EXPECT_EQ(r.find("d").describe(), "null");
  EXPECT_EQ(r.find("e").describe(), "a string");
  EXPECT_EQ(r.find("f").describe(), "a string");
  EXPECT_EQ(r.find("g").describe(), "a list");
  EXPECT_EQ(r.find("h").describe(), "a mapping");
}

TEST(YamlTree, AnchorsAliasesAndMergeKeys) {
  Tree t = parse_ok(
      "base: &b {shape: [2, 3], dtype: fp16}\n"
      "x: *b\n"
      "y:\n  <<: *b\n  dtype: fp32\n"
      "z:\n  <<: [{a: 1}, {a: 2, c: 3}]\n");
  NodeRef r = t.root();
  EXPECT_EQ(r.find("x").find("dtype").text(), "fp16");
  EXPECT_EQ(r.find("x").find("shape").size(), 2u);
  NodeRef y = r.find("y");
  ASSERT_EQ(y.size(), 2u) << "explicit dtype + merged shape";
  EXPECT_EQ(y.find("dtype").text(), "fp32") << "explicit keys win over merged ones";
  EXPECT_EQ(y.find("shape").size(), 2u);
  EXPECT_FALSE(y.find("<<"));
  EXPECT_EQ(r.find("z").find("a").text(), "1") << "earlier merge sources win";
  EXPECT_EQ(r.find("z").find("c").text(), "3");
}

TEST(YamlTree, UndefinedAndSelfReferencingAliasesAreErrors) {
  ParseError e = parse_bad("a: *nope\n");
  EXPECT_NE(e.message.find("'*nope'"), std::string::npos) << e.message;
  EXPECT_EQ(e.line, 1);
  e = parse_bad("a: &x [1, *x]\n");
  EXPECT_NE(e.message.find("'*x'"), std::string::npos) << e.message;
}

TEST(YamlTree, AliasExpansionIsBounded) {
  std::string text = "a: [&l0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]";
  for (int i = 1; i < 9; ++i) {
    text += ", &l" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", *l" : "*l") + std::to_string(i - 1);
    text += "]";
  }
  text += "]\n";
  ParseError e = parse_bad(text);
  EXPECT_NE(e.message.find("aliases expand"), std::string::npos) << e.message;
}

TEST(YamlTree, DuplicateKeysAreErrorsWithBothLines) {
  ParseError e = parse_bad("a: 1\nb: 2\na: 3\n");
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.col, 1);
  EXPECT_NE(e.message.find("duplicate key 'a' (first defined at line 1)"), std::string::npos) << e.message;
  // Large mappings take the hashed path.
  std::string big;
  for (int i = 0; i < 40; ++i) big += "k" + std::to_string(i) + ": 1\n";
  big += "k7: 2\n";
  e = parse_bad(big);
  EXPECT_EQ(e.line, 41);
  EXPECT_NE(e.message.find("duplicate key 'k7' (first defined at line 8)"), std::string::npos) << e.message;
}

TEST(YamlTree, NonScalarKeysAreErrors) {
  ParseError e = parse_bad("? [1, 2]\n: x\n");
  EXPECT_NE(e.message.find("mapping key must be a plain string"), std::string::npos) << e.message;
  EXPECT_GT(e.line, 0);
}

TEST(YamlTree, SyntaxErrorsAreLocated) {
  ParseError e = parse_bad("a: [1, 2\nb: 3\n");
  EXPECT_NE(e.message.find("invalid YAML"), std::string::npos);
  EXPECT_GT(e.line, 0);
  e = parse_bad("a:\n\tb: 1\n");
  EXPECT_NE(e.message.find("tab character"), std::string::npos) << e.message;
  EXPECT_EQ(e.line, 2);
  EXPECT_NE(e.fix.find("spaces"), std::string::npos);
  e = parse_bad("a: \"unterminated\n");
  EXPECT_NE(e.message.find("invalid YAML"), std::string::npos) << e.message;
  EXPECT_NE(e.fix.find("truncated"), std::string::npos) << e.fix;
}

TEST(YamlTree, EncodingProblemsAreLocated) {
  ParseError e = parse_bad("a: 1\nb: caf\xff\n");
  EXPECT_NE(e.message.find("not UTF-8"), std::string::npos) << e.message;
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.col, 7);
  e = parse_bad(std::string("a: 1\nb: x\0y\n", 12));
  EXPECT_NE(e.message.find("control characters"), std::string::npos) << e.message;
  EXPECT_EQ(e.line, 2);
  e =
      parse_bad(std::string("\xff\xfe"
                            "a\0:\0 \0"
                            "1\0",
                            10));
  EXPECT_NE(e.message.find("not UTF-8"), std::string::npos) << "UTF-16 is not guessed from a BOM";
}

TEST(YamlTree, ByteOrderMarkAndCrlfLineEnds) {
  Tree t = parse_ok("\xEF\xBB\xBFmodel: m\r\ncases:\r\n  - x\r\n");
  EXPECT_EQ(t.root().find("model").text(), "m");
  EXPECT_EQ(t.root().find("model").col(), 8);
  EXPECT_EQ(t.root().find("cases").item(0).line(), 3);
  EXPECT_EQ(t.root().find("cases").item(0).text(), "x");
}

TEST(YamlTree, EmptyStreamsAreEmptyManifests) {
  ParseError e = parse_bad("");
  EXPECT_EQ(e.message, "empty manifest");
  EXPECT_EQ(e.line, 0);
  e = parse_bad("# only a comment\n\n");
  EXPECT_EQ(e.message, "empty manifest");
  EXPECT_EQ(e.line, 1);
}

TEST(YamlTree, OneDocumentOnly) {
  ParseError e = parse_bad("a: 1\n---\nb: 2\n");
  EXPECT_NE(e.message.find("exactly one YAML document"), std::string::npos);
  EXPECT_EQ(e.line, 2);
  parse_ok("---\na: 1\n...\n");
}

TEST(YamlTree, NestingDepthIsBounded) {
  ParseLimits limits;
  std::string deep(100, '[');
  deep += std::string(100, ']');
  ParseError e = parse_bad("a: " + deep + "\n");
  EXPECT_NE(e.message.find("nesting deeper than 64"), std::string::npos) << e.message;
  // A million open brackets must neither crash nor take long.
  std::string huge(1000000, '[');
  e = parse_bad(huge);
  EXPECT_NE(e.message.find("nesting deeper"), std::string::npos) << e.message;
  parse_ok("a: " + std::string(60, '[') + std::string(60, ']') + "\n");
}

TEST(YamlTree, UnknownTagsAreErrors) {
  ParseError e = parse_bad("a: !!python/object:os.system ls\n");
  EXPECT_NE(e.message.find("unsupported YAML tag"), std::string::npos);
  e = parse_bad("a: !custom 1\n");
  EXPECT_NE(e.message.find("unsupported YAML tag '!custom'"), std::string::npos) << e.message;
  parse_ok("a: !!int 3\nb: !!seq [1]\nc: !!map {x: 1}\n");
}

TEST(YamlTree, TreeIsReusable) {
  Tree t;
  ParseError e;
  ASSERT_TRUE(parse_yaml("a: [1, 2, 3]\n", t, e));
  ASSERT_TRUE(parse_yaml("b: x\n", t, e));
  EXPECT_EQ(t.root().size(), 1u);
  EXPECT_EQ(t.root().key(0).text(), "b");
  EXPECT_FALSE(parse_yaml("c: [\n", t, e));
  ASSERT_TRUE(parse_yaml("d: 1\n", t, e));
  EXPECT_EQ(t.root().find("d").text(), "1");
}

TEST(YamlCoreSchema, Null) {
  for (const char* s : {"", "~", "null", "Null", "NULL"}) EXPECT_TRUE(is_core_null(s)) << s;
  for (const char* s : {"None", "nil", "NUll"}) EXPECT_FALSE(is_core_null(s)) << s;
}

TEST(YamlCoreSchema, Bool) {
  bool b = false;
  EXPECT_TRUE(parse_core_bool("True", b) && b);
  EXPECT_TRUE(parse_core_bool("FALSE", b) && !b);
  EXPECT_FALSE(parse_core_bool("yes", b)) << "YAML 1.1 booleans are strings in the core schema";
  EXPECT_FALSE(parse_core_bool("on", b));
}

TEST(YamlCoreSchema, Int) {
  std::int64_t v = 0;
  bool overflow = false;
  EXPECT_TRUE(parse_core_int("-12", v, overflow) && v == -12);
  EXPECT_TRUE(parse_core_int("+7", v, overflow) && v == 7);
  EXPECT_TRUE(parse_core_int("0x1F", v, overflow) && v == 31);
  EXPECT_TRUE(parse_core_int("0o17", v, overflow) && v == 15);
  EXPECT_TRUE(parse_core_int("-9223372036854775808", v, overflow) && !overflow && v == INT64_MIN);
  EXPECT_TRUE(parse_core_int("9223372036854775808", v, overflow) && overflow);
  EXPECT_FALSE(parse_core_int("1.0", v, overflow));
  EXPECT_FALSE(parse_core_int("1_000", v, overflow));
  EXPECT_FALSE(parse_core_int("-", v, overflow));
  EXPECT_FALSE(parse_core_int("0x", v, overflow));
}

TEST(YamlCoreSchema, Float) {
  double f = 0;
  EXPECT_TRUE(parse_core_float("1.0e-05", f) && f == 1.0e-05);
  EXPECT_TRUE(parse_core_float("1e-3", f) && f == 1e-3);
  EXPECT_TRUE(parse_core_float(".5", f) && f == 0.5);
  EXPECT_TRUE(parse_core_float("5.", f) && f == 5.0);
  EXPECT_TRUE(parse_core_float("-.inf", f) && std::isinf(f) && f < 0);
  EXPECT_TRUE(parse_core_float(".NaN", f) && std::isnan(f));
  EXPECT_TRUE(parse_core_float("1e999", f) && std::isinf(f));
  EXPECT_FALSE(parse_core_float("inf", f)) << "bare inf is a string to YAML (the manifest classifies it later)";
  EXPECT_FALSE(parse_core_float("1.2.3", f));
  EXPECT_FALSE(parse_core_float("e5", f));
  EXPECT_FALSE(parse_core_float("1e", f));
}
