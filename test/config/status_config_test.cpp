// Reading the status config: the shipped example, the entry layout, and a located error for every kind of mistake.
#include <gtest/gtest.h>

#include <string>

#include "config/status_config.h"

namespace opcheck {
namespace {

// Loads `text` as opcheck.yaml and returns every diagnostic, formatted, one per line.
std::string diagnostics(const std::string& text, StatusConfig* out = nullptr, bool* ok_out = nullptr) {
  StatusConfig cfg;
  DiagnosticList diags;
  const bool ok = load_status_config_text("opcheck.yaml", text, cfg, diags);
  std::string all;
  for (const auto& d : diags.items) all += d.format() + "\n";
  EXPECT_EQ(ok, !diags.has_errors()) << all;
  if (out) *out = cfg;
  if (ok_out) *ok_out = ok;
  return all;
}

#define EXPECT_HAS(haystack, needle)                                                       \
  do {                                                                                     \
    const std::string h_ = (haystack);                                                     \
    EXPECT_NE(h_.find(needle), std::string::npos) << "missing: " << (needle) << "\nin:\n" << h_; \
  } while (0)

TEST(StatusConfigLoad, ReadsTheDocumentedLayout) {
  StatusConfig cfg;
  const std::string text =
      "rules:\n"
      "  - id: \"gpt-oss-20b::torch.mul.*\"\n"
      "    status: xfail\n"
      "    reason: https://github.com/org/repo/issues/123\n"
      "  - id: \"*\"\n"
      "    op: torch.nn.functional.linear\n"
      "    dtype: torch.bfloat16\n"
      "    atol: 1.0e-2\n"
      "    rtol: 0\n"
      "    compare: pcc\n"
      "    pcc_min: 0.99\n"
      "    equal_nan: false\n"
      "    timeout: 30\n"
      "    device_overrides:\n"
      "      spyre: {atol: 5.0e-2, status: skip, reason: kernel missing}\n";
  EXPECT_EQ(diagnostics(text, &cfg), "");
  ASSERT_EQ(cfg.rules.size(), 2u);
  const ConfigRule& a = cfg.rules[0];
  EXPECT_EQ(a.pattern, "gpt-oss-20b::torch.mul.*");
  EXPECT_EQ(a.settings.status, TriageStatus::Xfail);
  EXPECT_EQ(a.settings.reason, "https://github.com/org/repo/issues/123");
  EXPECT_EQ(a.loc.line, 2);
  EXPECT_EQ(a.index, 0u);
  const ConfigRule& b = cfg.rules[1];
  EXPECT_EQ(b.op, "torch.nn.functional.linear");
  EXPECT_EQ(b.dtype, "bf16");  // canonical, whatever the spelling
  EXPECT_EQ(b.settings.get(&CaseSettings::atol), 1.0e-2);
  EXPECT_EQ(b.settings.get(&CaseSettings::rtol), 0.0);
  EXPECT_EQ(b.settings.get(&CaseSettings::compare), Comparator::Pcc);
  EXPECT_EQ(b.settings.get(&CaseSettings::pcc_min), 0.99);
  EXPECT_EQ(b.settings.get(&CaseSettings::equal_nan), false);
  EXPECT_EQ(b.settings.get(&CaseSettings::timeout_s), 30.0);
  EXPECT_EQ(b.settings.status, TriageStatus::Unset);
  ASSERT_EQ(b.device_overrides.count("spyre"), 1u);
  const RuleSettings& spyre = b.device_overrides.at("spyre");
  EXPECT_EQ(spyre.get(&CaseSettings::atol), 5.0e-2);
  EXPECT_EQ(spyre.status, TriageStatus::Skip);
  EXPECT_EQ(spyre.reason, "kernel missing");
  EXPECT_EQ(spyre.loc.line, 15);
}

TEST(StatusConfigLoad, ShippedExampleLoadsCleanly) {
  StatusConfig cfg;
  DiagnosticList diags;
  const std::string path = std::string(OPCHECK_TEST_DIR) + "/../../manifests/opcheck.example.yaml";
  EXPECT_TRUE(load_status_config(path, cfg, diags));
  for (const auto& d : diags.items) ADD_FAILURE() << d.format();
  EXPECT_GE(cfg.rules.size(), 4u);
  bool has_override = false;
  for (const auto& r : cfg.rules) has_override = has_override || !r.device_overrides.empty();
  EXPECT_TRUE(has_override);
}

TEST(StatusConfigLoad, StatusNamesRoundTrip) {
  for (const auto& name : all_triage_status_names()) {
    auto st = parse_triage_status(name);
    ASSERT_TRUE(st) << name;
    EXPECT_EQ(triage_status_name(*st), name);
  }
  EXPECT_FALSE(parse_triage_status(""));
  EXPECT_FALSE(parse_triage_status("XFAIL"));
  EXPECT_STREQ(triage_status_name(TriageStatus::Unset), "");
}

TEST(StatusConfigLoad, UnknownKeysAreLocatedWithSuggestions) {
  const std::string d = diagnostics(
      "rules:\n"
      "  - id: \"m::a\"\n"
      "    staus: xfail\n"
      "    reason: r\n"
      "  - id: \"m::b\"\n"
      "    xfail: true\n"
      "  - id: \"m::c\"\n"
      "    arch_overrides: {spyre: {atol: 1}}\n"
      "  - id: \"m::d\"\n"
      "    status: skip\n"
      "    reason: r\n"
      "    device_overrides:\n"
      "      spyre: {atl: 1, op: x}\n"
      "  - id: \"m::e\"\n"
      "    timeout_s: 5\n");
  EXPECT_HAS(d, "opcheck.yaml:3:5: error: unknown key `staus` in a config entry (did you mean 'status'?)");
  EXPECT_HAS(d, "opcheck.yaml:6:5: error: unknown key `xfail` in a config entry\n  Fix: write `status: xfail`");
  EXPECT_HAS(d, "opcheck.yaml:8:5: error: unknown key `arch_overrides`");
  EXPECT_HAS(d, "Fix: per-device settings go under `device_overrides:");
  EXPECT_HAS(d, "opcheck.yaml:13:15: error: unknown key `atl` in the `spyre` device override (did you mean 'atol'?)");
  EXPECT_HAS(d, "opcheck.yaml:13:23: error: `op` cannot be set per device");
  EXPECT_HAS(d, "opcheck.yaml:15:5: error: unknown key `timeout_s` in a config entry (did you mean 'timeout'?)");
  EXPECT_HAS(diagnostics("rule:\n  - {id: \"*\", status: skip, reason: r}\n"),
             "opcheck.yaml:1:1: error: unknown key `rule` at the top of the status config (did you mean 'rules'?)");
}

TEST(StatusConfigLoad, BadStatusValuesAreLocatedWithSuggestions) {
  const std::string d = diagnostics(
      "rules:\n"
      "  - {id: \"m::a\", status: xfial, reason: r}\n"
      "  - {id: \"m::b\", status: passed}\n"
      "  - {id: \"m::c\", status: [xfail]}\n"
      "  - {id: \"m::d\", status: }\n"
      "  - {id: \"m::e\", compare: allclos}\n");
  EXPECT_HAS(d, "opcheck.yaml:2:26: error: unknown status `xfial` (did you mean 'xfail'?)");
  EXPECT_HAS(d, "opcheck.yaml:3:26: error: unknown status `passed`");
  EXPECT_HAS(d, "Fix: a case that must pass is `status: expected_passing`");
  EXPECT_HAS(d, "opcheck.yaml:4:26: error: `status` must be a string, not a list");
  EXPECT_HAS(d, "opcheck.yaml:5:18: error: `status` is empty");
  EXPECT_HAS(d, "opcheck.yaml:6:27: error: unknown comparator `allclos` (did you mean 'allclose'?)");
}

TEST(StatusConfigLoad, BadTypesAndRangesAreLocated) {
  const std::string d = diagnostics(
      "rules:\n"
      "  - {id: \"m::a\", atol: \"1e-2\"}\n"
      "  - {id: \"m::b\", rtol: -1}\n"
      "  - {id: \"m::c\", pcc_min: 1.5}\n"
      "  - {id: \"m::d\", timeout: 0}\n"
      "  - {id: \"m::e\", equal_nan: yes}\n"
      "  - {id: \"m::f\", atol: .inf}\n"
      "  - {id: \"m::g\", atol: big}\n"
      "  - {id: \"m::h\", dtype: bfloat61, atol: 1}\n"
      "  - {id: \"m::i\", reason: {a: b}}\n"
      "  - {id: 5, status: skip, reason: r}\n"
      "  - {id: \"m::j\", device_overrides: [spyre]}\n"
      "  - {id: \"m::k\", device_overrides: {spyre: 1}}\n");
  EXPECT_HAS(d, "opcheck.yaml:2:24: error: `atol` must be a number, not a string\n  Fix: write the number without quotes");
  EXPECT_HAS(d, "opcheck.yaml:3:24: error: `rtol` must be >= 0, not -1");
  EXPECT_HAS(d, "opcheck.yaml:4:27: error: `pcc_min` must lie between -1 and 1, not 1.5");
  EXPECT_HAS(d, "opcheck.yaml:5:27: error: `timeout` must be a positive number of seconds, not 0");
  EXPECT_HAS(d, "opcheck.yaml:6:29: error: `equal_nan` must be true or false, not a string (`yes`)");
  EXPECT_HAS(d, "opcheck.yaml:7:24: error: `atol` must be a finite number, not .inf");
  EXPECT_HAS(d, "opcheck.yaml:8:24: error: `atol` must be a number, not a string (`big`)");
  EXPECT_HAS(d, "opcheck.yaml:9:25: error: unknown dtype `bfloat61`");
  EXPECT_HAS(d, "opcheck.yaml:10:26: error: `reason` must be a string, not a mapping");
  EXPECT_HAS(d, "opcheck.yaml:12:36: error: `device_overrides` must be a mapping of device name to settings, not a list");
  EXPECT_HAS(d, "opcheck.yaml:13:44: error: the `spyre` override must be a mapping of settings, not an integer");
  // `id: 5` is read as the text "5", which can match no `model::name` id.
  EXPECT_HAS(d, "opcheck.yaml:11:10: error: `id` pattern `5` can never match: case ids are `model::name`");
}

TEST(StatusConfigLoad, DuplicateKeysAndDuplicateEntries) {
  EXPECT_HAS(diagnostics("rules:\n  - id: \"m::a\"\n    status: skip\n    status: xfail\n"), "opcheck.yaml:4:5: error:");
  EXPECT_HAS(diagnostics("rules:\n  - id: \"m::a\"\n    status: skip\n    status: xfail\n"), "status");
  const std::string d = diagnostics(
      "rules:\n"
      "  - {id: \"*::x.*\", dtype: bf16, atol: 1}\n"
      "  - {id: \"*::x.*\", dtype: torch.bfloat16, atol: 2}\n"
      "  - {id: \"*::x.*\", dtype: fp16, atol: 2}\n");
  EXPECT_HAS(d, "opcheck.yaml:3:6: error: this entry selects the same cases as the entry at line 2 (id `*::x.*`, dtype bf16)");
  EXPECT_HAS(d, "Fix: merge the two entries into one");
  EXPECT_EQ(d.find("opcheck.yaml:4:"), std::string::npos) << d;
}

TEST(StatusConfigLoad, BadGlobsAndUnmatchablePatterns) {
  const std::string d = diagnostics(
      "rules:\n"
      "  - {id: \"m::x.[0-9\", status: skip, reason: r}\n"
      "  - {id: \"torch.mul.1\", status: skip, reason: r}\n"
      "  - {op: \"torch.[\", status: skip, reason: r}\n");
  EXPECT_HAS(d, "opcheck.yaml:2:10: error: bad `id` pattern `m::x.[0-9`: the `[` at character 6 is never closed by `]`");
  EXPECT_HAS(d, "opcheck.yaml:3:10: error: `id` pattern `torch.mul.1` can never match");
  EXPECT_HAS(d, "Fix: write `\"*::torch.mul.1\"`");
  EXPECT_HAS(d, "opcheck.yaml:4:10: error: bad `op` pattern `torch.[`");
  // An unquoted leading star is a YAML alias: the parser error gets a hint about quoting.
  EXPECT_HAS(diagnostics("rules:\n  - id: *::torch.mul.*\n    status: skip\n"), "Fix: quote patterns that start with `*`");
}

TEST(StatusConfigLoad, FileLevelShapeErrors) {
  EXPECT_HAS(diagnostics(""), "opcheck.yaml: error: the status config is empty");
  EXPECT_HAS(diagnostics("# nothing yet\n"), "opcheck.yaml: error: the status config is empty");
  EXPECT_HAS(diagnostics("- {id: \"*\", status: skip}\n"),
             "opcheck.yaml:1:1: error: the status config must be a mapping with the key `rules`, not a list");
  EXPECT_HAS(diagnostics("id: \"m::a\"\nstatus: skip\n"), "entries go in a list under `rules:`");
  EXPECT_HAS(diagnostics("rules: {id: x}\n"), "opcheck.yaml:1:8: error: `rules` must be a list of entries, not a mapping");
  EXPECT_HAS(diagnostics("rules:\n  - xfail\n"), "opcheck.yaml:2:5: error: a config entry must be a mapping, not a string");
  EXPECT_HAS(diagnostics("rules: [\n"), "opcheck.yaml:2:1: error:");
  StatusConfig cfg;
  EXPECT_EQ(diagnostics("rules:\n", &cfg), "");  // a config that says nothing yet
  EXPECT_TRUE(cfg.rules.empty());
  DiagnosticList diags;
  EXPECT_FALSE(load_status_config("/nonexistent/opcheck.yaml", cfg, diags));
  ASSERT_EQ(diags.items.size(), 1u);
  EXPECT_EQ(diags.items[0].format(),
            "/nonexistent/opcheck.yaml: error: cannot read the status config: No such file or directory\n  Fix: check "
            "the path given to --config");
}

TEST(StatusConfigLoad, EntriesThatSayNothingOrEverything) {
  EXPECT_HAS(diagnostics("rules:\n  - {id: \"m::a\"}\n"), "opcheck.yaml:2:5: error: this entry sets nothing");
  EXPECT_HAS(diagnostics("rules:\n  - {status: skip, reason: r}\n"),
             "error: this entry has no `id`, `op` or `dtype`, so it would apply to every case");
  EXPECT_HAS(diagnostics("rules:\n  - {id: \"m::a\", device_overrides: {spyre: {}}}\n"),
             "error: the `spyre` override sets nothing");
  EXPECT_HAS(diagnostics("rules:\n  - {id: \"m::a\", device_overrides: {\"cuda:0\": {atol: 1}}}\n"),
             "error: `cuda:0` is not a device name");
  // An op or dtype filter alone is a fine selector: the id defaults to every case.
  StatusConfig cfg;
  EXPECT_EQ(diagnostics("rules:\n  - {op: torch.mul, dtype: half, atol: 1}\n", &cfg), "");
  ASSERT_EQ(cfg.rules.size(), 1u);
  EXPECT_EQ(cfg.rules[0].pattern, "*");
  EXPECT_EQ(cfg.rules[0].dtype, "fp16");
}

TEST(StatusConfigLoad, ReasonlessTriageIsAWarningNotAnError) {
  bool ok = false;
  StatusConfig cfg;
  const std::string d = diagnostics(
      "rules:\n"
      "  - {id: \"m::a\", status: xfail}\n"
      "  - {id: \"m::b\", status: expected_passing}\n"
      "  - {id: \"m::c\", reason: tracked, device_overrides: {spyre: {status: skip}}}\n"
      "  - {id: \"m::d\", device_overrides: {spyre: {status: exclude}}}\n",
      &cfg, &ok);
  EXPECT_TRUE(ok);
  EXPECT_EQ(cfg.rules.size(), 4u);
  EXPECT_HAS(d, "opcheck.yaml:2:6: warning: this entry sets `status: xfail` without a `reason`");
  EXPECT_HAS(d, "opcheck.yaml:5:44: warning: the `spyre` override sets `status: exclude` without a `reason`");
  EXPECT_EQ(d.find("opcheck.yaml:3:"), std::string::npos) << d;
  EXPECT_EQ(d.find("opcheck.yaml:4:"), std::string::npos) << d;  // the entry's reason covers its override
}

TEST(StatusConfigLoad, GoodEntriesSurviveABadOne) {
  StatusConfig cfg;
  bool ok = true;
  diagnostics("rules:\n  - {id: \"m::a\", status: skip, reason: r}\n  - {id: \"m::b\", status: nope}\n"
              "  - {id: \"m::c\", atol: 1}\n",
              &cfg, &ok);
  EXPECT_FALSE(ok);
  ASSERT_EQ(cfg.rules.size(), 2u);
  EXPECT_EQ(cfg.rules[0].pattern, "m::a");
  EXPECT_EQ(cfg.rules[1].pattern, "m::c");
  EXPECT_EQ(cfg.rules[1].index, 1u);
}

}  // namespace
}  // namespace opcheck
