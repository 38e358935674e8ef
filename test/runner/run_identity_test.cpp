// The run identity that --resume, --results-cache and merge check: derived from the run's settings and the
// executor's facts.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "settings/run_identity.h"

namespace opcheck {
namespace {

RunSettings settings() {
  RunSettings s;
  s.device_environment = {{"OPCHECK_LOOPBACK_FAULTS", "aten::exp=bias:1e-2"}};
  return s;
}

ExecInfo executor() {
  ExecInfo e;
  e.torch_version = "2.13.0";
  e.torch_path = "/venv/torch";
  e.device = "privateuseone:0";
  e.device_name = "loopback";
  e.device_lib = "/b/libopcheck_loopback.so";
  e.device_lib_sha256 = "ab";
  return e;
}

RunInfo info(const RunSettings& s, const ExecInfo& e, const std::string& config_digest = "cd") {
  RunInfo i;
  i.identity = run_identity(s, e, config_digest);
  i.host = "h1";
  i.started_at = "2026-01-01T00:00:00Z";
  return i;
}

RunInfo base() { return info(settings(), executor()); }

TEST(RunIdentity, SameSettingsOnAnotherHostAndTimeAreTheSameIdentity) {
  RunInfo now = base();
  now.host = "h2";
  now.started_at = "2026-01-02T00:00:00Z";
  now.duration_s = 12;
  EXPECT_TRUE(identity_changes(base(), now).empty());
}

// Every field of the settings table that has an identity name must change the identity, and be named, when it
// changes. The test holds a change per field; a field added to the table without one fails here.
TEST(RunIdentity, EverySettingThatDecidesAVerdictIsAPartNamedForIt) {
  const std::map<std::string, std::function<void(RunSettings&)>> change = {
      {"reference dtype", [](RunSettings& s) { s.reference_dtype = "float64"; }},
      {"repeat", [](RunSettings& s) { s.repeat = 1; }},
      {"compile backend", [](RunSettings& s) { s.compile_backend = "inductor"; }},
      {"timeout", [](RunSettings& s) { s.timeout_s = 30; }},
      {"max case bytes", [](RunSettings& s) { s.max_case_bytes = 4096; }},
      {"module memory budget", [](RunSettings& s) { s.module_memory_budget = 1 << 30; }},
      {"fault settings", [](RunSettings& s) { s.device_environment.clear(); }},
      {"durations file digest", [](RunSettings& s) { s.durations.sha256 = "5e1f"; }},
  };
  std::size_t checked = 0;
  for (const auto& field : setting_fields()) {
    if (field.identity == nullptr) continue;
    const auto it = change.find(field.identity);
    if (it == change.end()) {
      ADD_FAILURE() << "setting '" << field.identity << "' has no change in this test: add one";
      continue;
    }
    RunSettings s = settings();
    it->second(s);
    const auto changes = identity_changes(base(), info(s, executor()));
    ASSERT_EQ(changes.size(), 1u) << field.identity;
    EXPECT_EQ(changes[0].what, field.identity);
    ++checked;
  }
  EXPECT_EQ(checked, change.size()) << "a change in this test names no field of the table";
}

TEST(RunIdentity, EveryFactOfTheExecutorAndTheRunIsAPart) {
  const std::pair<const char*, std::function<void(ExecInfo&, std::string&)>> facts[] = {
      {"libtorch version", [](ExecInfo& e, std::string&) { e.torch_version = "2.11.0"; }},
      {"libtorch folder", [](ExecInfo& e, std::string&) { e.torch_path = "/other"; }},
      {"device", [](ExecInfo& e, std::string&) { e.device = "cpu"; }},
      {"device name", [](ExecInfo& e, std::string&) { e.device_name = "cpu"; }},
      {"device library", [](ExecInfo& e, std::string&) { e.device_lib = "/x/libdev.so"; }},
      {"device library digest", [](ExecInfo& e, std::string&) { e.device_lib_sha256 = "ef"; }},
      {"Python modules", [](ExecInfo& e, std::string&) { e.python_modules = {"torch 2.13.0"}; }},
      {"status config digest", [](ExecInfo&, std::string& digest) { digest.clear(); }},
  };
  for (const auto& [what, apply] : facts) {
    ExecInfo e = executor();
    std::string digest = "cd";
    apply(e, digest);
    const auto changes = identity_changes(base(), info(settings(), e, digest));
    ASSERT_EQ(changes.size(), 1u) << what;
    EXPECT_EQ(changes[0].what, what);
  }
}

TEST(RunIdentity, DescribesThenAndNow) {
  RunSettings clean = settings();
  clean.device_environment.clear();
  ExecInfo cpu = executor();
  cpu.device = "cpu";
  EXPECT_EQ(describe_changes(identity_changes(base(), info(clean, cpu))),
            "  device: 'privateuseone:0' -> 'cpu'\n"
            "  fault settings: 'OPCHECK_LOOPBACK_FAULTS=aten::exp=bias:1e-2' -> none\n");
}

TEST(RunIdentity, ARunThatRecordedNoIdentityDiffersInEveryPart) {
  RunInfo older;  // written before the identity was recorded
  const auto changes = identity_changes(older, base());
  EXPECT_EQ(changes.size(), base().identity.size());
}

}  // namespace
}  // namespace opcheck
