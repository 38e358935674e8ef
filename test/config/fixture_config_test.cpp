// The status config on cases the real loader produced: the shipped example against the bundled manifests, and
// the full precedence chain starting from manifest defaults.
#include <gtest/gtest.h>

#include <map>

#include "config/status_config.h"

namespace opcheck {
namespace {

StatusConfig example_config() {
  StatusConfig cfg;
  DiagnosticList diags;
  EXPECT_TRUE(load_status_config(std::string(OPCHECK_TEST_DIR) + "/../../manifests/opcheck.example.yaml", cfg, diags));
  for (const auto& d : diags.items) ADD_FAILURE() << d.format();
  return cfg;
}

TEST(StatusConfigFixtures, ExampleConfigMatchesTheBundledManifests) {
  const std::string dir = std::string(OPCHECK_TEST_DIR) + "/../../manifests";
  const ManifestSet set = load_manifests({dir + "/gpt_oss.yaml", dir + "/granite.yaml", dir + "/convnet.yaml"});
  ASSERT_FALSE(set.diagnostics.has_errors());
  std::vector<const Case*> cases;
  for (const auto& m : set.manifests)
    for (const auto& c : m.cases) cases.push_back(&c);
  ASSERT_GT(cases.size(), 100u);

  const StatusConfig cfg = example_config();
  DiagnosticList diags;
  check_status_config(cfg, cases, diags);
  for (const auto& d : diags.items) ADD_FAILURE() << "the example has a stale or ambiguous entry: " << d.format();

  std::map<std::string, int> on_spyre, on_loopback;
  for (const Case* c : cases) {
    Case spyre = *c, loopback = *c;
    const CaseStatus s = apply_status_config(cfg, spyre, "spyre");
    const CaseStatus l = apply_status_config(cfg, loopback, "loopback");
    ++on_spyre[triage_status_name(s.status)];
    ++on_loopback[triage_status_name(l.status)];
    const std::string& id = c->id;
    if (id == "gpt_oss::torch.mul.1") {
      EXPECT_EQ(s.status, TriageStatus::ExpectedPassing);
    } else if (id.rfind("gpt_oss::torch.mul.", 0) == 0) {
      EXPECT_EQ(s.status, TriageStatus::Xfail) << id;
      EXPECT_EQ(s.reason, "https://github.com/example-org/example-repo/issues/123") << id;
    }
    if (c->op == "torch.nn.functional.linear" && c->dtype == DType::BFloat16) {
      EXPECT_EQ(spyre.atol, 5.0e-2) << id;
      EXPECT_EQ(loopback.atol, 1.0e-2) << id;
      EXPECT_EQ(spyre.rtol, c->rtol) << id;  // untouched: still the manifest's value
    }
    if (c->op == "torch.nn.functional.embedding") {
      EXPECT_EQ(s.status, TriageStatus::Skip) << id;
      EXPECT_EQ(l.status, TriageStatus::Unset) << id;
    }
    if (id == "granite::torch.float.1") {
      EXPECT_EQ(s.status, TriageStatus::Exclude);
    }
    if (id.rfind("gpt_oss::torch.matmul.", 0) == 0) {
      EXPECT_EQ(spyre.compare, Comparator::Pcc) << id;
      EXPECT_EQ(spyre.timeout_s, 120.0) << id;
    }
  }
  EXPECT_EQ(on_spyre["exclude"], 1);
  EXPECT_EQ(on_spyre["expected_passing"], 1);
  EXPECT_GE(on_spyre["xfail"], 9);
  EXPECT_GT(on_spyre["skip"], 0);
  EXPECT_EQ(on_loopback["skip"], 0);  // the skip is written for spyre only
}

TEST(StatusConfigFixtures, PrecedenceFromManifestDefaultsToDeviceOverride) {
  const ManifestSet set = load_manifest_text("/tmp/precedence.yaml",
                                             "model: m\n"
                                             "defaults:\n"
                                             "  dtype: fp16\n"
                                             "  atol: 0.005\n"
                                             "  rtol: 0.005\n"
                                             "cases:\n"
                                             "  - name: torch.add.1\n"
                                             "    op: torch.add\n"
                                             "    inputs: [{tensor: {shape: [2]}}, {tensor: {shape: [2]}}]\n"
                                             "  - name: torch.add.2\n"
                                             "    op: torch.add\n"
                                             "    atol: 0.001\n"
                                             "    inputs: [{tensor: {shape: [2]}}, {tensor: {shape: [2]}}]\n"
                                             "  - name: torch.mul.1\n"
                                             "    op: torch.mul\n"
                                             "    atol: 0.001\n"
                                             "    inputs: [{tensor: {shape: [2]}}, {tensor: {shape: [2]}}]\n");
  for (const auto& d : set.diagnostics.items) ADD_FAILURE() << d.format();
  ASSERT_EQ(set.manifests.size(), 1u);
  ASSERT_EQ(set.manifests[0].cases.size(), 3u);
  const Case& add1 = set.manifests[0].cases[0];
  const Case& add2 = set.manifests[0].cases[1];
  const Case& mul1 = set.manifests[0].cases[2];
  EXPECT_EQ(add1.atol, 0.005);  // manifest default
  EXPECT_EQ(add2.atol, 0.001);  // case field beats the default

  StatusConfig cfg;
  DiagnosticList diags;
  ASSERT_TRUE(load_status_config_text("opcheck.yaml",
                                      "rules:\n"
                                      "  - {id: \"m::torch.mul.*\", atol: 2.0e-2}\n"             // specific
                                      "  - {id: \"m::*\", rtol: 1.0e-3, atol: 1.0e-2}\n"         // broad
                                      "  - {id: \"m::torch.add.2\", device_overrides: {spyre: {atol: 0.5}}}\n",
                                      cfg, diags));
  Case a1 = add1, a2 = add2, m1 = mul1, a2_spyre = add2;
  apply_status_config(cfg, a1, "loopback");
  apply_status_config(cfg, a2, "loopback");
  apply_status_config(cfg, m1, "loopback");
  apply_status_config(cfg, a2_spyre, "spyre");
  EXPECT_EQ(a1.rtol, 1.0e-3);   // broad rule beats the manifest default
  EXPECT_EQ(a2.atol, 1.0e-2);   // broad rule beats the case field
  EXPECT_EQ(m1.atol, 2.0e-2);   // specific rule beats the broad one, though earlier in the file
  EXPECT_EQ(a2_spyre.atol, 0.5);  // device override beats everything
  EXPECT_EQ(a2_spyre.rtol, 1.0e-3);
}

}  // namespace
}  // namespace opcheck
