// Applying the status config to cases: matching, the documented precedence, device overrides, and what
// `validate --config` reports (stale entries with suggestions, ambiguous entries).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "config/status_config.h"

namespace opcheck {
namespace {

Case make_case(const std::string& model, const std::string& name, const std::string& op,
               DType dtype = DType::Float32) {
  Case c;
  c.model = model;
  c.name = name;
  c.id = model + "::" + name;
  c.op = op;
  c.dtype = dtype;
  return c;
}

StatusConfig load(const std::string& text) {
  StatusConfig cfg;
  DiagnosticList diags;
  EXPECT_TRUE(load_status_config_text("opcheck.yaml", text, cfg, diags));
  for (const auto& d : diags.items)
    if (d.severity == Diagnostic::Severity::Error) ADD_FAILURE() << d.format();
  return cfg;
}

std::string check(const StatusConfig& cfg, const std::vector<Case>& cases, std::size_t* errors = nullptr) {
  std::vector<const Case*> ptrs;
  for (const auto& c : cases) ptrs.push_back(&c);
  DiagnosticList diags;
  check_status_config(cfg, ptrs, diags);
  std::string all;
  for (const auto& d : diags.items) all += d.format() + "\n";
  if (errors) *errors = diags.error_count();
  return all;
}

#define EXPECT_HAS(haystack, needle)                                                       \
  do {                                                                                     \
    const std::string h_ = (haystack);                                                     \
    EXPECT_NE(h_.find(needle), std::string::npos) << "missing: " << (needle) << "\nin:\n" << h_; \
  } while (0)

TEST(StatusConfigApply, StatusesAndReasonsComeBack) {
  const StatusConfig cfg = load(
      "rules:\n"
      "  - {id: \"gpt-oss-20b::torch.mul.*\", status: xfail, reason: https://example.org/issues/1}\n"
      "  - {id: \"gpt-oss-20b::torch.cos.1\", status: skip, reason: hangs}\n"
      "  - {id: \"gpt-oss-20b::torch.sin.1\", status: exclude, reason: not a real op call}\n"
      "  - {id: \"gpt-oss-20b::torch.pow.1\", status: expected_passing}\n"
      "  - {id: \"gpt-oss-20b::torch.mean.1\", atol: 1, reason: mean sums 4096 values}\n");
  auto status_of = [&](const std::string& name, const std::string& op) {
    Case c = make_case("gpt-oss-20b", name, op);
    return apply_status_config(cfg, c, "spyre");
  };
  CaseStatus mul = status_of("torch.mul.2", "torch.mul");
  EXPECT_EQ(mul.status, TriageStatus::Xfail);
  EXPECT_EQ(mul.reason, "https://example.org/issues/1");
  EXPECT_EQ(mul.status_loc.line, 2);
  ASSERT_EQ(mul.matched.size(), 1u);
  EXPECT_EQ(mul.matched[0], &cfg.rules[0]);
  EXPECT_EQ(status_of("torch.cos.1", "torch.cos").status, TriageStatus::Skip);
  EXPECT_EQ(status_of("torch.cos.1", "torch.cos").reason, "hangs");
  EXPECT_EQ(status_of("torch.sin.1", "torch.sin").status, TriageStatus::Exclude);
  EXPECT_EQ(status_of("torch.pow.1", "torch.pow").status, TriageStatus::ExpectedPassing);
  EXPECT_EQ(status_of("torch.pow.1", "torch.pow").reason, "");
  // No status set: Unset, but the tolerance rule's reason still explains the looser atol.
  CaseStatus mean = status_of("torch.mean.1", "torch.mean");
  EXPECT_EQ(mean.status, TriageStatus::Unset);
  EXPECT_EQ(mean.reason, "mean sums 4096 values");
  EXPECT_EQ(mean.status_loc.line, 0);
  // A case no rule matches is untouched.
  Case other = make_case("Meta-Llama-3.1-8B-Instruct", "torch.mul.1", "torch.mul");
  other.atol = 0.005;
  CaseStatus none = apply_status_config(cfg, other, "spyre");
  EXPECT_EQ(none.status, TriageStatus::Unset);
  EXPECT_TRUE(none.matched.empty());
  EXPECT_EQ(other.atol, 0.005);
}

TEST(StatusConfigApply, PrecedenceManifestCaseBroadSpecificDevice) {
  // The loaded case carries the manifest default (atol 0.005) and its own field (rtol 1e-4).
  Case base = make_case("gpt-oss-20b", "torch.mul.3", "torch.mul", DType::BFloat16);
  base.atol = 0.005;
  base.rtol = 1e-4;
  base.pcc_min = 0.98;
  const StatusConfig cfg = load(
      "rules:\n"
      // Most specific first in the file: file order must not beat specificity.
      "  - id: \"gpt-oss-20b::torch.mul.3\"\n"
      "    status: skip\n"
      "    reason: specific\n"
      "    atol: 3.0e-2\n"
      "  - id: \"gpt-oss-20b::torch.mul.*\"\n"
      "    status: xfail\n"
      "    reason: medium\n"
      "    atol: 2.0e-2\n"
      "    timeout: 20\n"
      "  - id: \"*\"\n"
      "    dtype: bf16\n"
      "    atol: 1.0e-2\n"
      "    rtol: 1.0e-3\n"
      "    timeout: 10\n"
      "    status: expected_passing\n"
      "    device_overrides:\n"
      "      spyre: {atol: 5.0e-2, status: xfail, reason: spyre bf16 accumulation}\n");

  // No rule: the case keeps what the manifest and the case said.
  {
    Case c = base;
    StatusConfig empty;
    EXPECT_EQ(apply_status_config(empty, c, "spyre").status, TriageStatus::Unset);
    EXPECT_EQ(c.atol, 0.005);
    EXPECT_EQ(c.rtol, 1e-4);
  }
  // On a device without overrides: rules broad to specific, the most specific wins each field it sets.
  {
    Case c = base;
    CaseStatus st = apply_status_config(cfg, c, "loopback");
    ASSERT_EQ(st.matched.size(), 3u);
    EXPECT_EQ(st.matched[0], &cfg.rules[2]);  // broad first
    EXPECT_EQ(st.matched[2], &cfg.rules[0]);  // specific last
    EXPECT_EQ(c.atol, 3.0e-2);                // specific rule
    EXPECT_EQ(c.timeout_s, 20.0);             // medium rule (specific sets none)
    EXPECT_EQ(c.rtol, 1.0e-3);                // broad rule beats the case field
    EXPECT_EQ(c.pcc_min, 0.98);               // no rule: case value stays
    EXPECT_EQ(st.status, TriageStatus::Skip);
    EXPECT_EQ(st.reason, "specific");
    EXPECT_EQ(st.status_loc.line, 2);
  }
  // On spyre: the device override beats every rule, even one more specific than the rule holding the override.
  {
    Case c = base;
    CaseStatus st = apply_status_config(cfg, c, "spyre");
    EXPECT_EQ(c.atol, 5.0e-2);
    EXPECT_EQ(c.rtol, 1.0e-3);
    EXPECT_EQ(c.timeout_s, 20.0);
    EXPECT_EQ(st.status, TriageStatus::Xfail);
    EXPECT_EQ(st.reason, "spyre bf16 accumulation");
    EXPECT_EQ(st.status_loc.line, 18);
  }
  // A fp32 case misses the bf16 rule altogether.
  {
    Case c = base;
    c.dtype = DType::Float32;
    CaseStatus st = apply_status_config(cfg, c, "spyre");
    EXPECT_EQ(st.matched.size(), 2u);
    EXPECT_EQ(c.atol, 3.0e-2);
    EXPECT_EQ(c.rtol, 1e-4);
  }
}

TEST(StatusConfigApply, SpecificityOrderIsLiteralsThenFiltersThenOpThenFileOrder) {
  Case c = make_case("m", "torch.mul.1", "torch.mul", DType::Float16);
  auto atol_for = [&](const std::string& text) {
    Case copy = c;
    apply_status_config(load(text), copy, "cpu");
    return copy.atol.value_or(-1);
  };
  // 1. More literal characters in the id beat filters.
  EXPECT_EQ(atol_for("rules:\n  - {id: \"m::torch.*\", atol: 2}\n  - {id: \"m::*\", op: torch.mul, dtype: fp16, atol: 1}\n"), 2);
  // 2. Same id: a filter makes it more specific, wherever it stands in the file.
  EXPECT_EQ(atol_for("rules:\n  - {id: \"m::*\", dtype: half, atol: 2}\n  - {id: \"m::*\", atol: 1}\n"), 2);
  EXPECT_EQ(atol_for("rules:\n  - {id: \"m::*\", op: torch.mul, dtype: fp16, atol: 2}\n  - {id: \"m::*\", op: torch.mul, atol: 1}\n"), 2);
  // 3. Same id and filter count: the op with more literal characters.
  EXPECT_EQ(atol_for("rules:\n  - {id: \"m::*\", op: torch.mul, atol: 2}\n  - {id: \"m::*\", op: \"torch.*\", atol: 1}\n"), 2);
  // 4. A full tie: the later entry.
  EXPECT_EQ(atol_for("rules:\n  - {id: \"m::torch.mul.?\", atol: 1}\n  - {id: \"m::torch.mul.[0-9]\", atol: 2}\n"), 2);
  // Wildcards count nothing: `m::torch.mul.1` (14 literals) beats `m::torch.mul.*` (13).
  EXPECT_EQ(atol_for("rules:\n  - {id: \"m::torch.mul.1\", atol: 2}\n  - {id: \"m::torch.mul.*\", atol: 1}\n"), 2);

  const StatusConfig cfg = load("rules:\n  - {id: \"m::*\", op: \"torch.*\", dtype: fp16, atol: 1}\n");
  const RuleSpecificity s = RuleSpecificity::of(cfg.rules[0]);
  EXPECT_EQ(s.id_literals, 3);
  EXPECT_EQ(s.filters, 2);
  EXPECT_EQ(s.op_literals, 6);
}

TEST(StatusConfigApply, DeviceOverridesOnlyForTheirDevice) {
  const StatusConfig cfg = load(
      "rules:\n"
      "  - id: \"*::torch.nn.functional.linear.*\"\n"
      "    atol: 1.0e-2\n"
      "    reason: https://example.org/issues/7\n"
      "    device_overrides:\n"
      "      spyre: {atol: 5.0e-2, status: xfail}\n"
      "      cuda: {compare: pcc, pcc_min: 0.99, equal_nan: false, timeout: 9, rtol: 0}\n");
  const Case base = make_case("gpt-oss-20b", "torch.nn.functional.linear.4", "torch.nn.functional.linear");
  {
    Case c = base;
    CaseStatus st = apply_status_config(cfg, c, "spyre");
    EXPECT_EQ(c.atol, 5.0e-2);
    EXPECT_EQ(c.compare, Comparator::AllClose);
    EXPECT_EQ(st.status, TriageStatus::Xfail);
    EXPECT_EQ(st.reason, "https://example.org/issues/7");  // the override's status takes its entry's reason
  }
  for (const std::string device : {"loopback", "", "spyre2", "SPYRE"}) {
    Case c = base;
    CaseStatus st = apply_status_config(cfg, c, device);
    EXPECT_EQ(c.atol, 1.0e-2) << device;
    EXPECT_EQ(st.status, TriageStatus::Unset) << device;
    EXPECT_EQ(st.reason, "https://example.org/issues/7") << device;
  }
  // `cuda:1` is a cuda device.
  for (const std::string device : {"cuda", "cuda:1"}) {
    Case c = base;
    apply_status_config(cfg, c, device);
    EXPECT_EQ(c.compare, Comparator::Pcc) << device;
    EXPECT_EQ(c.pcc_min, 0.99) << device;
    EXPECT_FALSE(c.equal_nan) << device;
    EXPECT_EQ(c.timeout_s, 9.0) << device;
    EXPECT_EQ(c.rtol, 0.0) << device;
    EXPECT_EQ(c.atol, 1.0e-2) << device;
  }
}

TEST(StatusConfigApply, AStatusOverrideCanClearAnXfail) {
  const StatusConfig cfg = load(
      "rules:\n"
      "  - id: \"m::*\"\n"
      "    status: xfail\n"
      "    reason: https://example.org/issues/9\n"
      "    device_overrides:\n"
      "      loopback: {status: expected_passing}\n");
  Case c = make_case("m", "torch.add.1", "torch.add");
  EXPECT_EQ(apply_status_config(cfg, c, "spyre").status, TriageStatus::Xfail);
  EXPECT_EQ(apply_status_config(cfg, c, "loopback").status, TriageStatus::ExpectedPassing);
}

TEST(StatusConfigApply, OpAndDtypeFilters) {
  const StatusConfig cfg = load(
      "rules:\n"
      "  - {op: \"torch.nn.functional.*\", dtype: torch.float16, status: skip, reason: fp16 kernels missing}\n"
      "  - {op: aten::add.Tensor, status: xfail, reason: r}\n");
  Case fp16 = make_case("m", "torch.nn.functional.silu.1", "torch.nn.functional.silu", DType::Float16);
  Case fp32 = make_case("m", "torch.nn.functional.silu.2", "torch.nn.functional.silu", DType::Float32);
  Case aten = make_case("m", "aten.add.1", "aten::add.Tensor");
  Case tensor_add = make_case("m", "torch.add.1", "torch.add");
  EXPECT_EQ(apply_status_config(cfg, fp16, "x").status, TriageStatus::Skip);
  EXPECT_EQ(apply_status_config(cfg, fp32, "x").status, TriageStatus::Unset);
  EXPECT_EQ(apply_status_config(cfg, aten, "x").status, TriageStatus::Xfail);
  EXPECT_EQ(apply_status_config(cfg, tensor_add, "x").status, TriageStatus::Unset);
}

TEST(StatusConfigApply, IsAPureFunction) {
  // The result depends only on (config, case, device name): the rule applies to the case it is given, a call on
  // another case in between leaves no trace, and the config is unchanged by either.
  const StatusConfig cfg = load("rules:\n  - {id: \"m::*\", atol: 1, status: skip, reason: r}\n");
  const Case base = make_case("m", "a", "torch.add");
  const Case other = make_case("n", "b", "torch.add");
  Case first = base, unmatched = other, second = base;
  const CaseStatus a = apply_status_config(cfg, first, "spyre");
  const CaseStatus none = apply_status_config(cfg, unmatched, "spyre");
  const CaseStatus b = apply_status_config(cfg, second, "spyre");
  EXPECT_EQ(a.status, TriageStatus::Skip);
  EXPECT_EQ(a.reason, "r");
  EXPECT_EQ(first.atol, 1.0);
  EXPECT_EQ(none.status, TriageStatus::Unset);
  EXPECT_TRUE(none.matched.empty());
  EXPECT_EQ(unmatched.atol, other.atol);
  EXPECT_EQ(b.status, a.status);
  EXPECT_EQ(b.reason, a.reason);
  EXPECT_EQ(b.matched, a.matched);
  EXPECT_EQ(second.atol, first.atol);
  EXPECT_EQ(base.atol, make_case("m", "a", "torch.add").atol);  // the case it was copied from is as it was
  ASSERT_EQ(cfg.rules.size(), 1u);
  EXPECT_EQ(cfg.rules[0].settings.get(&CaseSettings::atol), 1.0);
  EXPECT_EQ(cfg.rules[0].settings.status, TriageStatus::Skip);
}

std::vector<Case> fixture_like_cases() {
  return {
      make_case("gpt-oss-20b", "torch.mul.1", "torch.mul"),
      make_case("gpt-oss-20b", "torch.mul.2", "torch.mul", DType::BFloat16),
      make_case("gpt-oss-20b", "torch.nn.functional.linear.1", "torch.nn.functional.linear"),
      make_case("gpt-oss-20b", "torch.cos.1", "torch.cos"),
      make_case("Meta-Llama-3.1-8B-Instruct", "torch.mul.1", "torch.mul"),
      make_case("Meta-Llama-3.1-8B-Instruct", "torch.nn.functional.silu.1", "torch.nn.functional.silu",
                DType::Float16),
  };
}

TEST(StatusConfigCheck, MatchingEntriesAreQuiet) {
  const StatusConfig cfg = load(
      "rules:\n"
      "  - {id: \"gpt-oss-20b::torch.mul.*\", status: xfail, reason: r}\n"
      "  - {id: \"*::torch.nn.functional.linear.*\", atol: 1}\n"
      "  - {op: torch.nn.functional.silu, dtype: fp16, status: skip, reason: r}\n");
  std::size_t errors = 9;
  EXPECT_EQ(check(cfg, fixture_like_cases(), &errors), "");
  EXPECT_EQ(errors, 0u);
}

TEST(StatusConfigCheck, StaleEntriesWithSuggestions) {
  const StatusConfig cfg = load(
      "rules:\n"
      "  - {id: \"gpt-oss-20b::torch.mull.*\", status: xfail, reason: r}\n"
      "  - {id: \"gpt-oss-20::torch.mul.1\", status: xfail, reason: r}\n"
      "  - {id: \"*::torch.cos.1\", op: torch.coss, status: skip, reason: r}\n"
      "  - {id: \"gpt-oss-20b::*\", dtype: fp16, status: skip, reason: r}\n"
      "  - {id: \"*::torch.totally_gone.9\", status: skip, reason: r}\n");
  std::size_t errors = 9;
  const std::string d = check(cfg, fixture_like_cases(), &errors);
  EXPECT_EQ(errors, 5u);  // each stale entry is an error, so `validate --config` fails on it
  EXPECT_HAS(d, "opcheck.yaml:2:6: error: entry matches no case: no case id matches `gpt-oss-20b::torch.mull.*`; "
                "closest case ids: gpt-oss-20b::torch.mul.1, gpt-oss-20b::torch.mul.2\n"
                "  Fix: update the entry to the current case ids, or delete it if the case is gone");
  EXPECT_HAS(d, "opcheck.yaml:3:6: error: entry matches no case: no case id matches `gpt-oss-20::torch.mul.1` "
                "(no model `gpt-oss-20`; did you mean gpt-oss-20b?)");
  EXPECT_HAS(d, "opcheck.yaml:4:6: error: entry matches no case: its id matches 1 case, none with op `torch.coss`; "
                "did you mean torch.cos?");
  EXPECT_HAS(d, "opcheck.yaml:5:6: error: entry matches no case: 4 cases match its id, none with dtype fp16 "
                "(they have bf16, fp32)");
  EXPECT_HAS(d, "opcheck.yaml:6:6: error: entry matches no case: no case id matches `*::torch.totally_gone.9`\n");
}

TEST(StatusConfigCheck, AmbiguousEntriesAreErrorsOncePerPair) {
  const StatusConfig cfg = load(
      "rules:\n"
      "  - {id: \"*::torch.mul.?\", status: xfail, reason: https://example.org/issues/1}\n"
      "  - {id: \"*::torch.mul.[12]\", status: skip, reason: https://example.org/issues/1}\n"
      // Same specificity, same settings: not ambiguous.
      "  - {id: \"*::torch.cos.?\", status: skip, reason: r}\n"
      "  - {id: \"*::torch.cos.[1]\", status: skip, reason: r}\n"
      // Conflicting statuses at different specificity: the specific one wins, nothing to report.
      "  - {id: \"*::torch.nn.functional.linear.*\", status: xfail, reason: r}\n"
      "  - {id: \"gpt-oss-20b::torch.nn.functional.linear.1\", status: expected_passing}\n");
  std::size_t errors = 0;
  const std::string d = check(cfg, fixture_like_cases(), &errors);
  EXPECT_EQ(errors, 1u) << d;
  EXPECT_HAS(d, "opcheck.yaml:3:6: error: this entry and the entry at line 2 both match 3 cases with the same "
                "specificity but set different status (xfail vs skip) [case gpt-oss-20b::torch.mul.1]\n"
                "  Fix: make one of them more specific");
}

TEST(StatusConfigCheck, AmbiguousDeviceOverrides) {
  const StatusConfig cfg = load(
      "rules:\n"
      "  - {id: \"*::torch.mul.?\", device_overrides: {spyre: {atol: 1.0e-2}}}\n"
      "  - {id: \"*::torch.mul.[2]\", device_overrides: {spyre: {atol: 5.0e-2}, cuda: {atol: 1}}}\n");
  std::size_t errors = 0;
  const std::string d = check(cfg, fixture_like_cases(), &errors);
  EXPECT_EQ(errors, 1u) << d;
  EXPECT_HAS(d, "opcheck.yaml:3:6: error: this entry and the entry at line 2 both match 1 case with the same "
                "specificity but set different atol (0.01 vs 0.05) on spyre [case gpt-oss-20b::torch.mul.2]");
}

TEST(StatusConfigDefaultPath, FindsOpcheckYamlNextToTheManifests) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("opcheck-config-test-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "a");
  fs::create_directories(root / "b");
  std::ofstream(root / "a" / "m.yaml") << "model: m\n";
  DiagnosticList diags;
  EXPECT_EQ(default_status_config_path({(root / "a").string()}, diags), "");
  std::ofstream(root / "a" / "opcheck.yaml") << "rules:\n";
  const std::string expected = fs::weakly_canonical(root / "a" / "opcheck.yaml").string();
  EXPECT_EQ(default_status_config_path({(root / "a").string()}, diags), expected);
  EXPECT_EQ(default_status_config_path({(root / "a" / "m.yaml").string(), (root / "a").string()}, diags), expected);
  EXPECT_EQ(default_status_config_path({(root / "a").string(), (root / "b").string()}, diags), expected);
  EXPECT_FALSE(diags.has_errors());
  std::ofstream(root / "b" / "opcheck.yaml") << "rules:\n";
  EXPECT_EQ(default_status_config_path({(root / "a").string(), (root / "b").string()}, diags), "");
  ASSERT_EQ(diags.error_count(), 1u);
  EXPECT_HAS(diags.items[0].format(), "several status configs apply");
  EXPECT_HAS(diags.items[0].format(), "Fix: pass the one to use with --config");
  fs::remove_all(root);
}

TEST(StatusConfigApply, TriageSelectionConfiguresCopiesAndDropsExcludedCases) {
  const StatusConfig cfg = load(
      "rules:\n"
      "  - {id: \"m::a\", status: xfail, reason: tracked}\n"
      "  - {id: \"m::b\", status: exclude, reason: not a real call}\n"
      "  - {id: \"m::c\", atol: 0.5, reason: sums many values}\n");
  const std::vector<Case> cases = {make_case("m", "a", "torch.add"), make_case("m", "b", "torch.mul"),
                                   make_case("m", "c", "torch.sum"), make_case("m", "d", "torch.exp")};
  std::vector<const Case*> selected;
  for (const auto& c : cases) selected.push_back(&c);
  const TriagedSelection t = triage_selection(cfg, selected, "loopback");
  ASSERT_EQ(t.cases.size(), 3u);
  EXPECT_EQ(t.excluded, 1u);
  EXPECT_EQ(t.cases[0]->id, "m::a");
  EXPECT_EQ(t.cases[1]->id, "m::c");
  EXPECT_EQ(t.cases[2]->id, "m::d");
  // The run sees configured copies; the loaded cases stay as the manifests wrote them.
  EXPECT_NE(t.cases[1], &cases[2]);
  ASSERT_TRUE(t.cases[1]->atol.has_value());
  EXPECT_DOUBLE_EQ(*t.cases[1]->atol, 0.5);
  EXPECT_FALSE(cases[2].atol.has_value());
  EXPECT_EQ(t.statuses.at(t.cases[0]).status, TriageStatus::Xfail);
  EXPECT_EQ(t.statuses.at(t.cases[0]).reason, "tracked");
  EXPECT_EQ(t.statuses.at(t.cases[2]).status, TriageStatus::Unset);

  // Without rules the selection passes through as it is: no copies.
  const TriagedSelection none = triage_selection(StatusConfig{}, selected, "loopback");
  EXPECT_EQ(none.cases, selected);
  EXPECT_TRUE(none.configured.empty());
  EXPECT_EQ(none.excluded, 0u);
}

}  // namespace
}  // namespace opcheck
