// The select stage on hand-built manifests: --model matching, variants, templates, -m, -k, --strict-markers.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "select/select.h"

namespace opcheck {
namespace {

struct CaseDef {
  std::string name;
  std::string op;
  std::vector<std::string> marks;
};

Manifest manifest(const std::string& path, const std::string& model, const std::string& variant,
                  const std::vector<CaseDef>& defs, bool is_template = false) {
  Manifest m;
  m.path = path;
  m.model = model;
  m.variant = variant;
  m.is_template = is_template;
  int line = 8;
  for (const auto& d : defs) {
    Case c;
    c.model = model;
    c.variant = variant;
    c.name = d.name;
    c.id = model + "::" + d.name;
    c.op = d.op;
    c.marks = d.marks;
    c.loc = {path, line, 5};
    line += 20;
    m.cases.push_back(std::move(c));
  }
  return m;
}

// A set shaped like the real fixtures: two models with spyre variants, a model without one, and two templates.
ManifestSet fixture_like_set() {
  ManifestSet set;
  set.manifests.push_back(manifest("m/Meta-Llama-3.1-8B-Instruct.yaml", "Meta-Llama-3.1-8B-Instruct", "",
                                   {{"torch.nn.functional.embedding.1", "torch.nn.functional.embedding",
                                     {"bf16operation", "constant"}},
                                    {"torch.mul.1", "torch.mul", {"fp32operation"}},
                                    {"torch.add.1", "torch.add", {}}}));
  set.manifests.push_back(manifest("m/Meta-Llama-3.1-8B-Instruct_spyre.yaml", "Meta-Llama-3.1-8B-Instruct", "spyre",
                                   {{"torch.nn.functional.embedding.1_spyre", "torch.nn.functional.embedding",
                                     {"constant"}},
                                    {"torch.mul.1_spyre", "torch.mul", {}}}));
  set.manifests.push_back(manifest("m/gpt-oss-20b.yaml", "gpt-oss-20b", "",
                                   {{"torch.getitem.1", "torch.getitem", {"fp32operation", "constant"}},
                                    {"torch.nn.functional.linear.1", "torch.nn.functional.linear", {"bf16operation"}},
                                    {"torch.topk.1", "torch.topk", {"bf16operation"}}}));
  set.manifests.push_back(manifest("m/gpt-oss-20b_spyre.yaml", "gpt-oss-20b", "spyre",
                                   {{"torch.getitem.1_spyre", "torch.getitem", {"constant"}}}));
  set.manifests.push_back(manifest("m/granite_3_3.yaml", "granite-3.3-8b", "",
                                   {{"rms", "torch.rms_norm", {}}}));
  set.manifests.push_back(manifest("m/template.yaml", "template", "", {{"mul_basic", "torch.mul", {}}}, true));
  set.manifests.push_back(
      manifest("m/rfc-branch-template.yaml", "template", "", {{"add_basic", "torch.add", {"constant"}}}, true));
  return set;
}

std::vector<std::string> ids(const Selected& s) {
  std::vector<std::string> out;
  for (const Case* c : s.cases) out.push_back(c->id);
  return out;
}

std::string all_messages(const Selected& s) {
  std::string out;
  for (const auto& d : s.diagnostics.items) out += d.format() + "\n";
  return out;
}

Selected run(const ManifestSet& set, Selection sel) { return select_cases(set, sel); }

Selection models(std::vector<std::string> m) {
  Selection sel;
  sel.models = std::move(m);
  return sel;
}

TEST(SelectModel, NoModelMeansEveryBaseNonTemplateModelInLoadOrder) {
  auto set = fixture_like_set();
  Selected s = run(set, {});
  EXPECT_FALSE(s.usage_error);
  EXPECT_TRUE(s.diagnostics.items.empty()) << all_messages(s);
  EXPECT_EQ(ids(s), (std::vector<std::string>{
                        "Meta-Llama-3.1-8B-Instruct::torch.nn.functional.embedding.1",
                        "Meta-Llama-3.1-8B-Instruct::torch.mul.1", "Meta-Llama-3.1-8B-Instruct::torch.add.1",
                        "gpt-oss-20b::torch.getitem.1", "gpt-oss-20b::torch.nn.functional.linear.1",
                        "gpt-oss-20b::torch.topk.1", "granite-3.3-8b::rms"}));
  // Pointers refer into the set, not copies.
  EXPECT_EQ(s.cases[0], &set.manifests[0].cases[0]);
}

TEST(SelectModel, CaseInsensitiveAndDashUnderscoreAlike) {
  auto set = fixture_like_set();
  for (const char* name : {"gpt-oss-20b", "GPT-OSS-20B", "gpt_oss_20b", "Gpt_Oss-20B"}) {
    Selected s = run(set, models({name}));
    EXPECT_FALSE(s.usage_error) << name << "\n" << all_messages(s);
    EXPECT_EQ(s.cases.size(), 3u) << name;
    for (const Case* c : s.cases) EXPECT_EQ(c->model, "gpt-oss-20b");
  }
  Selected s = run(set, models({"meta_llama_3.1_8b_instruct"}));
  EXPECT_EQ(s.cases.size(), 3u);
}

TEST(SelectModel, RepeatedModelFlagsUnionInLoadOrder) {
  auto set = fixture_like_set();
  Selected s = run(set, models({"granite-3.3-8b", "gpt-oss-20b"}));
  ASSERT_EQ(s.cases.size(), 4u);
  EXPECT_EQ(s.cases[0]->model, "gpt-oss-20b");  // load order, not flag order
  EXPECT_EQ(s.cases[3]->model, "granite-3.3-8b");
  // Naming one model twice does not duplicate its cases.
  EXPECT_EQ(run(set, models({"gpt-oss-20b", "gpt_oss_20b"})).cases.size(), 3u);
}

TEST(SelectModel, Globs) {
  auto set = fixture_like_set();
  using Ids = std::vector<std::string>;
  const Ids gpt = {"gpt-oss-20b::torch.getitem.1", "gpt-oss-20b::torch.nn.functional.linear.1",
                   "gpt-oss-20b::torch.topk.1"};
  const Ids llama = {"Meta-Llama-3.1-8B-Instruct::torch.nn.functional.embedding.1",
                     "Meta-Llama-3.1-8B-Instruct::torch.mul.1", "Meta-Llama-3.1-8B-Instruct::torch.add.1"};
  const Ids granite = {"granite-3.3-8b::rms"};
  Ids every = llama;  // load order
  every.insert(every.end(), gpt.begin(), gpt.end());
  every.insert(every.end(), granite.begin(), granite.end());
  EXPECT_EQ(ids(run(set, models({"gpt*"}))), gpt);
  EXPECT_EQ(ids(run(set, models({"GPT_OSS*"}))), gpt);
  EXPECT_EQ(ids(run(set, models({"*llama*"}))), llama);
  EXPECT_EQ(ids(run(set, models({"gpt-oss-?0b"}))), gpt);
  EXPECT_EQ(ids(run(set, models({"[gm]*"}))), every);  // gpt, Meta (case-insensitive), granite
  EXPECT_EQ(ids(run(set, models({"[!g]*"}))), llama);  // Meta only; templates never match a glob
  EXPECT_EQ(ids(run(set, models({"granite-3.3-[0-9]b"}))), granite);
  EXPECT_EQ(ids(run(set, models({"*"}))), every);
  Selected none = run(set, models({"mistral*"}));
  EXPECT_TRUE(none.usage_error);
  EXPECT_TRUE(none.cases.empty());
  EXPECT_NE(all_messages(none).find("--model 'mistral*' matches no model"), std::string::npos) << all_messages(none);
}

TEST(SelectModel, GlobHelpers) {
  EXPECT_TRUE(is_model_glob("gpt*"));
  EXPECT_TRUE(is_model_glob("gpt-oss-[12]0b"));
  EXPECT_FALSE(is_model_glob("gpt-oss-20b"));
  EXPECT_TRUE(model_matches("a[", "a["));       // an unclosed bracket is a literal, as in fnmatch
  EXPECT_TRUE(model_matches("[]]x", "]x"));     // `]` first in a class is a member
  EXPECT_TRUE(model_matches("*-20b", "gpt_oss_20B"));
  EXPECT_FALSE(model_matches("*-20b", "gpt-oss-120b-x"));
  EXPECT_TRUE(model_matches("a*b*c", "axxbyyc"));
  EXPECT_FALSE(model_matches("a*b*c", "axxbyy"));
}

TEST(SelectModel, UnknownModelIsAUsageErrorWithNearMatches) {
  auto set = fixture_like_set();
  Selected s = run(set, models({"gpt-os"}));
  EXPECT_TRUE(s.usage_error);
  EXPECT_TRUE(s.cases.empty());
  ASSERT_EQ(s.diagnostics.error_count(), 1u);
  EXPECT_EQ(s.diagnostics.items[0].message, "unknown model 'gpt-os' (did you mean gpt-oss-20b?)");

  Selected typo = run(set, models({"granite-3.3-9b"}));
  EXPECT_EQ(typo.diagnostics.items.at(0).message, "unknown model 'granite-3.3-9b' (did you mean granite-3.3-8b?)");

  Selected far = run(set, models({"bert"}));
  EXPECT_TRUE(far.usage_error);
  EXPECT_EQ(far.diagnostics.items.at(0).message, "unknown model 'bert'");
  EXPECT_NE(far.diagnostics.items.at(0).fix.find("known models: Meta-Llama-3.1-8B-Instruct, gpt-oss-20b"),
            std::string::npos);
}

TEST(SelectModel, UnknownModelAmongKnownOnesStillFails) {
  auto set = fixture_like_set();
  Selected s = run(set, models({"gpt-oss-20b", "llama"}));
  EXPECT_TRUE(s.usage_error);
  EXPECT_TRUE(s.cases.empty());
  EXPECT_NE(all_messages(s).find("unknown model 'llama' (did you mean Meta-Llama-3.1-8B-Instruct?)"),
            std::string::npos)
      << all_messages(s);
}

TEST(SelectModel, FileNameWithVariantSuffixPointsAtVariantFlag) {
  auto set = fixture_like_set();
  Selected s = run(set, models({"gpt-oss-20b_spyre"}));
  EXPECT_TRUE(s.usage_error);
  ASSERT_FALSE(s.diagnostics.items.empty());
  EXPECT_NE(s.diagnostics.items[0].message.find("did you mean gpt-oss-20b"), std::string::npos);
  EXPECT_NE(s.diagnostics.items[0].fix.find("--variant spyre"), std::string::npos);
}

TEST(SelectVariant, DefaultIsBaseFilesOnly) {
  auto set = fixture_like_set();
  Selected s = run(set, {});
  EXPECT_FALSE(s.usage_error) << all_messages(s);
  // Every case of every base file (templates are examples, left out without --model), none of the _spyre files'.
  EXPECT_EQ(ids(s), (std::vector<std::string>{"Meta-Llama-3.1-8B-Instruct::torch.nn.functional.embedding.1",
                                              "Meta-Llama-3.1-8B-Instruct::torch.mul.1",
                                              "Meta-Llama-3.1-8B-Instruct::torch.add.1",
                                              "gpt-oss-20b::torch.getitem.1",
                                              "gpt-oss-20b::torch.nn.functional.linear.1",
                                              "gpt-oss-20b::torch.topk.1",
                                              "granite-3.3-8b::rms"}));
}

TEST(SelectVariant, SpyreReplacesBaseWhereAVariantExists) {
  auto set = fixture_like_set();
  Selection sel;
  sel.variant = "spyre";
  Selected s = run(set, sel);
  EXPECT_FALSE(s.usage_error) << all_messages(s);
  EXPECT_EQ(ids(s), (std::vector<std::string>{"Meta-Llama-3.1-8B-Instruct::torch.nn.functional.embedding.1_spyre",
                                              "Meta-Llama-3.1-8B-Instruct::torch.mul.1_spyre",
                                              "gpt-oss-20b::torch.getitem.1_spyre",
                                              "granite-3.3-8b::rms"}));  // granite has no variant: its base runs
}

TEST(SelectVariant, AllSelectsBothInLoadOrder) {
  auto set = fixture_like_set();
  Selection sel = models({"gpt-oss-20b"});
  sel.variant = "all";
  Selected s = run(set, sel);
  EXPECT_EQ(ids(s), (std::vector<std::string>{"gpt-oss-20b::torch.getitem.1", "gpt-oss-20b::torch.nn.functional.linear.1",
                                              "gpt-oss-20b::torch.topk.1", "gpt-oss-20b::torch.getitem.1_spyre"}));
}

TEST(SelectVariant, UnknownVariantIsAUsageError) {
  auto set = fixture_like_set();
  Selection sel;
  sel.variant = "spyer";
  Selected s = run(set, sel);
  EXPECT_TRUE(s.usage_error);
  EXPECT_TRUE(s.cases.empty());
  EXPECT_EQ(s.diagnostics.items.at(0).message, "unknown variant 'spyer'");
  EXPECT_NE(s.diagnostics.items.at(0).fix.find("--variant spyre"), std::string::npos);
}

TEST(SelectVariant, ModelWithOnlyAVariantFileWarnsByDefault) {
  ManifestSet set;
  set.manifests.push_back(manifest("m/solo_spyre.yaml", "solo", "spyre", {{"a", "torch.add", {}}}));
  Selected s = run(set, {});
  EXPECT_FALSE(s.usage_error);
  EXPECT_TRUE(s.cases.empty());
  ASSERT_EQ(s.diagnostics.items.size(), 1u);
  EXPECT_EQ(s.diagnostics.items[0].severity, Diagnostic::Severity::Warning);
  EXPECT_NE(s.diagnostics.items[0].fix.find("--variant spyre"), std::string::npos);
  Selection sel;
  sel.variant = "spyre";
  EXPECT_EQ(run(set, sel).cases.size(), 1u);
}

TEST(SelectTemplate, TemplatesRunOnlyWhenNamedExactly) {
  auto set = fixture_like_set();
  for (const Case* c : run(set, {}).cases) EXPECT_NE(c->model, "template");
  Selected named = run(set, models({"template"}));
  EXPECT_FALSE(named.usage_error);
  EXPECT_EQ(ids(named), (std::vector<std::string>{"template::mul_basic", "template::add_basic"}));
  Selected upper = run(set, models({"TEMPLATE"}));
  EXPECT_EQ(upper.cases.size(), 2u);
  // A glob never reaches a template, even one that would match its name.
  Selected glob = run(set, models({"templ*"}));
  EXPECT_TRUE(glob.usage_error);
  EXPECT_TRUE(glob.cases.empty());
}

TEST(SelectMarks, MarkExpressionFiltersCasesByExactMarks) {
  auto set = fixture_like_set();
  Selection sel;
  sel.mark_expr = "bf16operation and not constant";
  Selected s = run(set, sel);
  EXPECT_FALSE(s.usage_error);
  EXPECT_EQ(ids(s), (std::vector<std::string>{"gpt-oss-20b::torch.nn.functional.linear.1", "gpt-oss-20b::torch.topk.1"}));
  EXPECT_EQ(s.deselected, 5u);

  sel.mark_expr = "not bf16operation";  // pytest_models.ini's addopts
  EXPECT_EQ(ids(run(set, sel)),
            (std::vector<std::string>{"Meta-Llama-3.1-8B-Instruct::torch.mul.1", "Meta-Llama-3.1-8B-Instruct::torch.add.1",
                                      "gpt-oss-20b::torch.getitem.1", "granite-3.3-8b::rms"}));

  sel.mark_expr = "fp32operation or bf16operation and constant";  // and binds tighter
  EXPECT_EQ(run(set, sel).cases.size(), 3u);                      // mul.1, getitem.1, embedding.1
  sel.mark_expr = "(fp32operation or bf16operation) and constant";
  EXPECT_EQ(run(set, sel).cases.size(), 2u);  // embedding.1, getitem.1

  sel.mark_expr = "BF16OPERATION";  // marks match exactly, as in pytest
  EXPECT_TRUE(run(set, sel).cases.empty());
}

TEST(SelectMarks, BadMarkExpressionIsAUsageErrorNamingTheColumn) {
  auto set = fixture_like_set();
  Selection sel;
  sel.mark_expr = "bf16operation and (constant";
  Selected s = run(set, sel);
  EXPECT_TRUE(s.usage_error);
  EXPECT_TRUE(s.cases.empty());
  ASSERT_EQ(s.diagnostics.error_count(), 1u);
  EXPECT_EQ(s.diagnostics.items[0].message,
            "wrong expression passed to '-m': bf16operation and (constant: at column 28: expected right parenthesis; "
            "got end of input");
}

TEST(SelectMarks, MarkNoCaseHasWarns) {
  auto set = fixture_like_set();
  Selection sel;
  sel.mark_expr = "bf16operaton";
  Selected s = run(set, sel);
  EXPECT_FALSE(s.usage_error);
  EXPECT_TRUE(s.cases.empty());
  ASSERT_EQ(s.diagnostics.items.size(), 1u);
  EXPECT_EQ(s.diagnostics.items[0].severity, Diagnostic::Severity::Warning);
  EXPECT_NE(s.diagnostics.items[0].message.find("did you mean bf16operation"), std::string::npos);
  // A registered mark that no case uses yet is not a typo.
  sel.mark_expr = "slow";
  sel.registered_markers = {"slow"};
  const Selected registered = run(set, sel);
  std::set<std::string> unregistered_marks;
  for (const auto& m : set.manifests)
    for (const auto& c : m.cases)
      for (const auto& mark : c.marks)
        if (mark != "slow") unregistered_marks.insert(mark);
  // No -m warning; the marks the registry lacks are warned about once each (not once per case that has them).
  ASSERT_EQ(registered.diagnostics.items.size(), unregistered_marks.size());
  for (const auto& d : registered.diagnostics.items) {
    EXPECT_EQ(d.message.find("-m names"), std::string::npos) << d.message;
    EXPECT_NE(d.message.find("is not registered in markers.yaml"), std::string::npos) << d.message;
  }
}

TEST(SelectKeywords, CaseInsensitiveSubstringOfModelNameOpOrMark) {
  auto set = fixture_like_set();
  Selection sel;
  sel.keyword_expr = "linear";  // op and name
  EXPECT_EQ(ids(run(set, sel)), (std::vector<std::string>{"gpt-oss-20b::torch.nn.functional.linear.1"}));
  sel.keyword_expr = "LLAMA";  // model, any case
  EXPECT_EQ(run(set, sel).cases.size(), 3u);
  sel.keyword_expr = "fp32";  // a mark fragment
  EXPECT_EQ(run(set, sel).cases.size(), 2u);
  sel.keyword_expr = "rms_norm";  // op only (the name is `rms`)
  EXPECT_EQ(ids(run(set, sel)), (std::vector<std::string>{"granite-3.3-8b::rms"}));
  sel.keyword_expr = "torch.mul.1";  // dots are identifier characters
  EXPECT_EQ(ids(run(set, sel)), (std::vector<std::string>{"Meta-Llama-3.1-8B-Instruct::torch.mul.1"}));
  sel.keyword_expr = "gpt and not getitem";
  EXPECT_EQ(ids(run(set, sel)),
            (std::vector<std::string>{"gpt-oss-20b::torch.nn.functional.linear.1", "gpt-oss-20b::torch.topk.1"}));
  sel.keyword_expr = "mul or topk and constant";  // and binds tighter: every mul, no topk (no constant mark)
  EXPECT_EQ(ids(run(set, sel)), (std::vector<std::string>{"Meta-Llama-3.1-8B-Instruct::torch.mul.1"}));
  sel.keyword_expr = "(mul or topk) and bf16";
  EXPECT_EQ(ids(run(set, sel)), (std::vector<std::string>{"gpt-oss-20b::torch.topk.1"}));
}

TEST(SelectKeywords, CombinesWithMarksAndModels) {
  auto set = fixture_like_set();
  Selection sel = models({"gpt-oss-20b"});
  sel.variant = "all";
  sel.mark_expr = "constant";
  sel.keyword_expr = "spyre";
  EXPECT_EQ(ids(run(set, sel)), (std::vector<std::string>{"gpt-oss-20b::torch.getitem.1_spyre"}));
}

TEST(SelectKeywords, BadKeywordExpressionIsAUsageErrorNamingTheColumn) {
  auto set = fixture_like_set();
  Selection sel;
  sel.keyword_expr = "mul or";
  Selected s = run(set, sel);
  EXPECT_TRUE(s.usage_error);
  EXPECT_TRUE(s.cases.empty());
  EXPECT_EQ(s.diagnostics.items.at(0).message,
            "wrong expression passed to '-k': mul or: at column 7: expected not OR left parenthesis OR identifier; "
            "got end of input");
  sel.keyword_expr = "mul | add";
  Selected bar = run(set, sel);
  EXPECT_NE(bar.diagnostics.items.at(0).message.find("at column 5: unexpected character \"|\""), std::string::npos);
}

TEST(SelectStrictMarkers, UnregisteredMarkIsAnErrorAtTheCase) {
  auto set = fixture_like_set();
  Selection sel;
  sel.strict_markers = true;
  sel.registered_markers = {"bf16operation", "constant", "fp32operaton"};  // fp32operation misspelt
  Selected s = run(set, sel);
  EXPECT_FALSE(s.usage_error);
  ASSERT_EQ(s.diagnostics.error_count(), 2u) << all_messages(s);  // Llama mul.1 and gpt getitem.1
  const Diagnostic& d = s.diagnostics.items[0];
  EXPECT_EQ(d.case_id, "Meta-Llama-3.1-8B-Instruct::torch.mul.1");
  EXPECT_EQ(d.loc.file, "m/Meta-Llama-3.1-8B-Instruct.yaml");
  EXPECT_EQ(d.loc.line, 28);
  EXPECT_NE(d.message.find("'fp32operation' not found in `markers` configuration option"), std::string::npos);
  EXPECT_NE(d.message.find("did you mean fp32operaton"), std::string::npos);
  EXPECT_NE(d.fix.find("markers.yaml"), std::string::npos);
  EXPECT_EQ(s.diagnostics.items[1].case_id, "gpt-oss-20b::torch.getitem.1");
}

TEST(SelectStrictMarkers, AllRegisteredOrNotStrictIsQuiet) {
  auto set = fixture_like_set();
  Selection sel;
  sel.strict_markers = true;
  sel.registered_markers = {"bf16operation", "constant", "fp32operation"};
  EXPECT_TRUE(run(set, sel).diagnostics.items.empty());
  sel.strict_markers = false;
  sel.registered_markers.clear();
  EXPECT_TRUE(run(set, sel).diagnostics.items.empty());
}

TEST(SelectSuggest, NearMatchesRankedByDistance) {
  std::vector<std::string> known{"gpt-oss-20b", "gpt-oss-120b", "granite-3.3-8b"};
  EXPECT_EQ(suggest_models("gpt-oss-21b", known), (std::vector<std::string>{"gpt-oss-20b", "gpt-oss-120b"}));
  EXPECT_EQ(suggest_models("GRANITE_3.3_8B", known), (std::vector<std::string>{"granite-3.3-8b"}));
  EXPECT_TRUE(suggest_models("xyz", known).empty());
}

}  // namespace
}  // namespace opcheck
