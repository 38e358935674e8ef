// The shipped manifests and the real fixtures against the loader, the marker registry and the select stage.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "opcheck/case.h"
#include "select/marker_registry.h"
#include "select/select.h"

namespace opcheck {
namespace {

const std::string kManifests = std::string(OPCHECK_TEST_DIR) + "/../../manifests";
// The repository's own manifests in torch-spyre's dialect (test/fixtures/make_fixtures.py).
const std::string kFixtures = std::string(OPCHECK_TEST_FIXTURES) + "/torch-spyre";

std::string messages(const DiagnosticList& d) {
  std::string out;
  for (const auto& item : d.items) out += item.format() + "\n";
  return out;
}

ManifestSet load_all() {
  return load_manifests({kManifests + "/template.yaml", kManifests + "/gpt_oss.yaml", kFixtures});
}

TEST(ShippedManifests, LoadWithoutErrors) {
  ManifestSet set = load_manifests({kManifests + "/template.yaml", kManifests + "/gpt_oss.yaml"});
  EXPECT_TRUE(set.diagnostics.items.empty()) << messages(set.diagnostics);
  ASSERT_EQ(set.manifests.size(), 2u);
  EXPECT_EQ(set.manifests[0].model, "template");
  EXPECT_TRUE(set.manifests[0].is_template);
  EXPECT_EQ(set.manifests[1].model, "gpt_oss");
  EXPECT_FALSE(set.manifests[1].is_template);
  EXPECT_GE(set.manifests[1].cases.size(), 40u);
  EXPECT_LE(set.manifests[1].cases.size(), 80u);
}

TEST(ShippedManifests, EveryMarkIsRegistered) {
  MarkerRegistry registry;
  DiagnosticList diags;
  ASSERT_TRUE(load_marker_registry(kManifests + "/markers.yaml", registry, diags)) << messages(diags);
  ManifestSet set = load_all();
  ASSERT_GE(set.manifests.size(), 7u) << messages(set.diagnostics);
  Selection sel;
  sel.models = {"*", "template"};
  sel.variant = "all";
  sel.strict_markers = true;
  sel.registered_markers = marker_names(registry);
  Selected chosen = select_cases(set, sel);
  EXPECT_FALSE(chosen.usage_error);
  EXPECT_TRUE(chosen.diagnostics.items.empty()) << messages(chosen.diagnostics);
  std::size_t total = 0;
  for (const auto& m : set.manifests) total += m.cases.size();
  EXPECT_EQ(chosen.cases.size(), total);
  // ... and the registry lists nothing that no manifest uses, except torch-spyre's own pytest markers (kept so that
  // their manifests stay valid under --strict-markers when they start using them) and `trace`, which the trace
  // converter gives every case it writes (no shipped manifest is a converted trace).
  std::set<std::string> used{"paddedtensor", "largedimtensor", "trace"};
  for (const auto& m : set.manifests)
    for (const auto& c : m.cases) used.insert(c.marks.begin(), c.marks.end());
  for (const auto& entry : registry) EXPECT_TRUE(used.count(entry.first)) << "unused marker " << entry.first;
}

TEST(ShippedManifests, PytestAddoptsExpressionSelectsLikeTorchSpyre) {
  // pytest_models.ini runs with -m "not bf16operation": the base tiny-gpt file keeps only its non-bf16 cases.
  ManifestSet set = load_all();
  Selection sel;
  sel.models = {"tiny_gpt"};
  sel.mark_expr = "not bf16operation";
  Selected chosen = select_cases(set, sel);
  ASSERT_FALSE(chosen.usage_error) << messages(chosen.diagnostics);
  ASSERT_FALSE(chosen.cases.empty());
  for (const Case* c : chosen.cases) {
    EXPECT_EQ(c->model, "tiny-gpt");
    EXPECT_EQ(std::count(c->marks.begin(), c->marks.end(), "bf16operation"), 0) << c->id;
  }
  EXPECT_GT(chosen.deselected, 0u);
}

TEST(ShippedManifests, BlockMarksAndKeywordsSelectTheGptOssBlock) {
  ManifestSet set = load_all();
  Selection sel;
  sel.models = {"gpt_oss"};
  sel.mark_expr = "moe and not fp16operation";
  sel.keyword_expr = "clamp or sigmoid";
  Selected chosen = select_cases(set, sel);
  ASSERT_FALSE(chosen.usage_error) << messages(chosen.diagnostics);
  ASSERT_EQ(chosen.cases.size(), 3u);  // gate clamp, up clamp, bf16 sigmoid
  for (const Case* c : chosen.cases) EXPECT_EQ(c->model, "gpt_oss");
}

}  // namespace
}  // namespace opcheck
