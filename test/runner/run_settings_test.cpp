// A run's settings from flags and the environment: deadline, shard, workers and threads, the Python device.
#include <gtest/gtest.h>

#include <map>

#include "runner/run_settings.h"

namespace opcheck {
namespace {

EnvLookup env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(RunSettings, DurationsReadAsDeadlinesAreWritten) {
  double s = -1;
  EXPECT_TRUE(parse_duration("90", s));
  EXPECT_DOUBLE_EQ(s, 90);
  EXPECT_TRUE(parse_duration("15m", s));
  EXPECT_DOUBLE_EQ(s, 900);
  EXPECT_TRUE(parse_duration("1h30m", s));
  EXPECT_DOUBLE_EQ(s, 5400);
  EXPECT_TRUE(parse_duration("1d", s));
  EXPECT_DOUBLE_EQ(s, 86400);
  EXPECT_TRUE(parse_duration("2.5s", s));
  EXPECT_DOUBLE_EQ(s, 2.5);
  for (const char* bad : {"", "soon", "-5m", "10x", "1h-2m"}) EXPECT_FALSE(parse_duration(bad, s)) << bad;
}

TEST(RunSettings, TheShardComesFromTheFlagThenGoogleTestStyleVariablesThenAnIndexedJob) {
  int i = -1, n = -1;
  std::string error;
  ASSERT_TRUE(resolve_shard("", env({}), i, n, error));
  EXPECT_EQ(i, 0);
  EXPECT_EQ(n, 1);
  ASSERT_TRUE(resolve_shard("1/3", env({{"OPCHECK_SHARD_INDEX", "0"}, {"OPCHECK_TOTAL_SHARDS", "2"}}), i, n, error));
  EXPECT_EQ(i, 1);
  EXPECT_EQ(n, 3);
  ASSERT_TRUE(resolve_shard("", env({{"OPCHECK_SHARD_INDEX", "0"}, {"OPCHECK_TOTAL_SHARDS", "2"}}), i, n, error));
  EXPECT_EQ(i, 0);
  EXPECT_EQ(n, 2);
  ASSERT_TRUE(resolve_shard("", env({{"JOB_COMPLETION_INDEX", "3"}, {"OPCHECK_TOTAL_SHARDS", "4"}}), i, n, error));
  EXPECT_EQ(i, 3);
  EXPECT_EQ(n, 4);
  // An index without a total is not a shard.
  ASSERT_TRUE(resolve_shard("", env({{"JOB_COMPLETION_INDEX", "3"}}), i, n, error));
  EXPECT_EQ(n, 1);
  for (const char* bad : {"3/3", "-1/2", "1/0", "1", "a/b", "1/2x"}) {
    error.clear();
    EXPECT_FALSE(resolve_shard(bad, env({}), i, n, error)) << bad;
    EXPECT_NE(error.find(std::string("invalid shard '") + bad + "': expected I/N"), std::string::npos) << error;
  }
}

TEST(RunSettings, WorkersTimesThreadsFillTheCoresWithoutOversubscribing) {
  WorkerLayout w = layout_workers(0, 0, 0, true, 8);
  EXPECT_EQ(w.jobs, 8);
  EXPECT_EQ(w.intra_op_threads, 1);
  w = layout_workers(2, 0, 0, true, 8);
  EXPECT_EQ(w.jobs, 2);
  EXPECT_EQ(w.intra_op_threads, 4);
  w = layout_workers(3, 0, 0, true, 8);
  EXPECT_EQ(w.intra_op_threads, 2);
  w = layout_workers(1, 0, 4, true, 8);  // one worker per device index
  EXPECT_EQ(w.jobs, 4);
  EXPECT_EQ(w.intra_op_threads, 2);
  w = layout_workers(4, 0, 0, false, 8);  // without isolation the run is this one process
  EXPECT_EQ(w.jobs, 1);
  EXPECT_EQ(w.intra_op_threads, 8);
  w = layout_workers(16, 3, 0, true, 8);  // given threads are kept; more workers than cores get one each
  EXPECT_EQ(w.intra_op_threads, 3);
  EXPECT_EQ(layout_workers(16, 0, 0, true, 8).intra_op_threads, 1);
  EXPECT_EQ(layout_workers(0, 0, 0, true, 0).jobs, 1);  // an unknown core count is one
}

TEST(RunSettings, ThePythonDeviceComesFromFlagsElseTheEnvironment) {
  PythonDeviceSettings py;
  std::string error;
  ASSERT_TRUE(resolve_python_device({}, "",
                                    env({{"OPCHECK_DEVICE_IMPORT", " torch_spyre , ,extra.mod"},
                                         {"TEST_COMPILE_BACKEND", " inductor "},
                                         {"OPCHECK_PYTHON", "/venv/bin/python"}}),
                                    py, error))
      << error;
  EXPECT_EQ(py.imports, (std::vector<std::string>{"torch_spyre", "extra.mod"}));
  EXPECT_EQ(py.compile_backend, "inductor");
  EXPECT_EQ(py.python, "/venv/bin/python");
  // Flags win over the environment, and `none` is eager.
  ASSERT_TRUE(resolve_python_device(
      {"opcheck_pyloop"}, "none", env({{"OPCHECK_DEVICE_IMPORT", "torch_spyre"}, {"TEST_COMPILE_BACKEND", "inductor"}}),
      py, error));
  EXPECT_EQ(py.imports, (std::vector<std::string>{"opcheck_pyloop"}));
  EXPECT_EQ(py.compile_backend, "");
  ASSERT_TRUE(resolve_python_device({}, "aot_eager", env({}), py, error));
  EXPECT_EQ(py.compile_backend, "aot_eager");
  EXPECT_TRUE(py.imports.empty());

  EXPECT_FALSE(resolve_python_device({"torch-spyre"}, "", env({}), py, error));
  EXPECT_NE(error.find("--device-import 'torch-spyre' is not a Python module name"), std::string::npos) << error;
  EXPECT_NE(error.find("Fix: "), std::string::npos) << error;
  EXPECT_FALSE(resolve_python_device({".mod"}, "", env({}), py, error));
  EXPECT_FALSE(resolve_python_device({}, "", env({{"TEST_COMPILE_BACKEND", "in ductor"}}), py, error));
  EXPECT_NE(error.find("--compile-backend 'in ductor' is not a backend name"), std::string::npos) << error;
}

}  // namespace
}  // namespace opcheck
