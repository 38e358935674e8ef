// The run identity that --resume and --results-cache check.
#include <gtest/gtest.h>

#include <cstdlib>

#include "runner/run_identity.h"

namespace opcheck {
namespace {

RunInfo base() {
  RunInfo i;
  i.opcheck_version = "0.1.0";
  i.torch_version = "2.13.0";
  i.torch_path = "/venv/torch";
  i.device = "privateuseone:0";
  i.device_name = "loopback";
  i.device_lib = "/b/libopcheck_loopback.so";
  i.device_lib_sha256 = "ab";
  i.device_environment = {"OPCHECK_LOOPBACK_FAULTS=aten::exp=bias:1e-2"};
  i.status_config_sha256 = "cd";
  i.dedupe_key_version = "k2";
  i.host = "h1";
  i.started_at = "2026-01-01T00:00:00Z";
  return i;
}

TEST(RunIdentity, SameSettingsOnAnotherHostAndTimeAreTheSameIdentity) {
  RunInfo now = base();
  now.host = "h2";
  now.started_at = "2026-01-02T00:00:00Z";
  now.duration_s = 12;
  EXPECT_TRUE(identity_changes(base(), now).empty());
}

TEST(RunIdentity, EveryPartIsChecked) {
  struct Part {
    const char* what;
    void (*change)(RunInfo&);
  };
  const Part parts[] = {
      {"opcheck version", [](RunInfo& i) { i.opcheck_version = "0.2.0"; }},
      {"libtorch version", [](RunInfo& i) { i.torch_version = "2.11.0"; }},
      {"libtorch folder", [](RunInfo& i) { i.torch_path = "/other"; }},
      {"device", [](RunInfo& i) { i.device = "cpu"; }},
      {"device name", [](RunInfo& i) { i.device_name = "cpu"; }},
      {"device library", [](RunInfo& i) { i.device_lib = "/x/libdev.so"; }},
      {"device library digest", [](RunInfo& i) { i.device_lib_sha256 = "ef"; }},
      {"Python modules", [](RunInfo& i) { i.python_modules = {"torch 2.13.0"}; }},
      {"compile backend", [](RunInfo& i) { i.compile_backend = "inductor"; }},
      {"fault settings", [](RunInfo& i) { i.device_environment.clear(); }},
      {"status config digest", [](RunInfo& i) { i.status_config_sha256 = ""; }},
      {"dedupe-key version", [](RunInfo& i) { i.dedupe_key_version = "k3"; }},
  };
  for (const auto& p : parts) {
    RunInfo now = base();
    p.change(now);
    const auto changes = identity_changes(base(), now);
    ASSERT_EQ(changes.size(), 1u) << p.what;
    EXPECT_EQ(changes[0].what, p.what);
  }
}

TEST(RunIdentity, DescribesThenAndNow) {
  RunInfo now = base();
  now.device = "cpu";
  now.device_environment.clear();
  EXPECT_EQ(describe_changes(identity_changes(base(), now)),
            "  device: 'privateuseone:0' -> 'cpu'\n"
            "  fault settings: 'OPCHECK_LOOPBACK_FAULTS=aten::exp=bias:1e-2' -> none\n");
}

TEST(RunIdentity, DeviceEnvironmentListsTheSettingsThatAreSet) {
  ::unsetenv("OPCHECK_LOOPBACK_FAULTS");
  ::unsetenv("OPCHECK_PYLOOP_EAGER");
  ::setenv("OPCHECK_PYLOOP_FAULTS", "aten::add=zeros", 1);
  EXPECT_EQ(device_environment_now(), std::vector<std::string>{"OPCHECK_PYLOOP_FAULTS=aten::add=zeros"});
  ::unsetenv("OPCHECK_PYLOOP_FAULTS");
  EXPECT_TRUE(device_environment_now().empty());
}

}  // namespace
}  // namespace opcheck
