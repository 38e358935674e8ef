// Selection by case id (positional ids and --deselect) on hand-built manifests.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "select/select.h"

namespace opcheck {
namespace {

Manifest manifest(const std::string& model, const std::vector<std::string>& names, bool is_template = false,
                  const std::string& variant = "") {
  Manifest m;
  m.path = "m/" + model + (variant.empty() ? "" : "_" + variant) + ".yaml";
  m.model = model;
  m.variant = variant;
  m.is_template = is_template;
  int line = 4;
  for (const auto& n : names) {
    Case c;
    c.model = model;
    c.variant = variant;
    c.name = n;
    c.id = model + "::" + n;
    c.op = n.substr(0, n.rfind('.'));
    c.loc = {m.path, line, 5};
    line += 6;
    m.cases.push_back(std::move(c));
  }
  return m;
}

ManifestSet set_of_three() {
  ManifestSet set;
  set.manifests.push_back(manifest("gpt_oss", {"torch.add.1", "torch.add.2", "torch.mul.1", "torch.mul.10"}));
  set.manifests.push_back(manifest("granite", {"torch.mul.1", "torch.neg.1", "odd[1]", "odd1"}));
  set.manifests.push_back(manifest("template", {"mul_basic"}, true));
  return set;
}

std::vector<std::string> ids(const Selected& s) {
  std::vector<std::string> out;
  for (const Case* c : s.cases) out.push_back(c->id);
  return out;
}

std::string messages(const Selected& s) {
  std::string out;
  for (const auto& d : s.diagnostics.items) out += d.format() + "\n";
  return out;
}

Selected with_ids(const ManifestSet& set, std::vector<std::string> positional, std::vector<std::string> deselect = {},
                  std::vector<std::string> models = {}) {
  Selection sel;
  sel.ids = std::move(positional);
  sel.deselect = std::move(deselect);
  sel.models = std::move(models);
  return select_cases(set, sel);
}

TEST(CaseId, ExactIdSelectsThatCaseOnly) {
  auto set = set_of_three();
  Selected s = with_ids(set, {"gpt_oss::torch.mul.1"});
  EXPECT_FALSE(s.usage_error) << messages(s);
  EXPECT_EQ(ids(s), std::vector<std::string>{"gpt_oss::torch.mul.1"});
}

TEST(CaseId, GlobsInEitherPartInLoadOrder) {
  auto set = set_of_three();
  Selected s = with_ids(set, {"*::torch.mul.1", "gpt_oss::torch.add.*"});
  EXPECT_FALSE(s.usage_error) << messages(s);
  EXPECT_EQ(ids(s), (std::vector<std::string>{"gpt_oss::torch.add.1", "gpt_oss::torch.add.2", "gpt_oss::torch.mul.1",
                                              "granite::torch.mul.1"}));
}

TEST(CaseId, ModelPartIsSpelledAsModelTakesIt) {
  auto set = set_of_three();
  EXPECT_EQ(ids(with_ids(set, {"GPT-OSS::torch.add.2"})), std::vector<std::string>{"gpt_oss::torch.add.2"});
  EXPECT_TRUE(case_id_matches("Gpt-Oss::torch.add.2", set.manifests[0].cases[1]));
  // The case part is not folded: case names are matched as written.
  EXPECT_FALSE(case_id_matches("gpt_oss::TORCH.ADD.2", set.manifests[0].cases[1]));
}

TEST(CaseId, TemplatesOnlyByTheirExactModelName) {
  auto set = set_of_three();
  EXPECT_EQ(ids(with_ids(set, {"template::mul_basic"})), std::vector<std::string>{"template::mul_basic"});
  Selected s = with_ids(set, {"*::mul_basic"});
  EXPECT_TRUE(s.usage_error);
  EXPECT_NE(messages(s).find("matches no selected case"), std::string::npos) << messages(s);
}

TEST(CaseId, IdsNarrowWhatModelChose) {
  auto set = set_of_three();
  EXPECT_EQ(ids(with_ids(set, {"*::torch.mul.1"}, {}, {"granite"})),
            std::vector<std::string>{"granite::torch.mul.1"});
}

TEST(CaseId, DeselectLeavesOutAndCounts) {
  auto set = set_of_three();
  Selected s = with_ids(set, {}, {"gpt_oss::torch.mul.*", "granite::*"});
  EXPECT_FALSE(s.usage_error) << messages(s);
  EXPECT_EQ(ids(s), (std::vector<std::string>{"gpt_oss::torch.add.1", "gpt_oss::torch.add.2"}));
  EXPECT_EQ(s.deselected, 6u);
}

TEST(CaseId, AnIdMatchingNothingIsAUsageErrorWithDidYouMean) {
  auto set = set_of_three();
  Selected s = with_ids(set, {"gpt_oss::torch.add.3"});
  EXPECT_TRUE(s.usage_error);
  EXPECT_TRUE(s.cases.empty());
  const std::string m = messages(s);
  EXPECT_NE(m.find("case id 'gpt_oss::torch.add.3' matches no selected case (did you mean gpt_oss::torch.add.1"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("Fix:"), std::string::npos) << m;
  Selected d = with_ids(set, {}, {"granit::torch.neg.1"});
  EXPECT_TRUE(d.usage_error);
  EXPECT_NE(messages(d).find("--deselect 'granit::torch.neg.1' matches no selected case (did you mean "
                             "granite::torch.neg.1"),
            std::string::npos)
      << messages(d);
}

TEST(CaseId, AnIdWithoutModelIsRejectedWithTheIdsThatEndInIt) {
  auto set = set_of_three();
  Selected s = with_ids(set, {"torch.neg.1"});
  EXPECT_TRUE(s.usage_error);
  EXPECT_NE(messages(s).find("case id 'torch.neg.1' is not MODEL::CASE (did you mean granite::torch.neg.1?)"),
            std::string::npos)
      << messages(s);
}

TEST(CaseId, ExactIdOfANameWithGlobCharactersMatchesItAlone) {
  auto set = set_of_three();
  const std::string exact = exact_case_id("granite", "odd[1]");
  EXPECT_EQ(exact, "granite::odd[[]1]");
  EXPECT_EQ(ids(with_ids(set, {exact})), std::vector<std::string>{"granite::odd[1]"});
  // The id as printed also finds the case (as well as what it globs to).
  EXPECT_EQ(ids(with_ids(set, {"granite::odd[1]"})),
            (std::vector<std::string>{"granite::odd[1]", "granite::odd1"}));
}

}  // namespace
}  // namespace opcheck
