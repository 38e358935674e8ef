// A run's settings from flags and the environment (deadline, shard, workers and threads, the Python device, the
// device library, the fault variables), and the rerun arguments derived from them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "settings/run_settings.h"

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
  // The variables are a set: an index without a total (or a total without an index) would run every case in every
  // shard, so it is a usage error, not an unsharded run.
  EXPECT_FALSE(resolve_shard("", env({{"JOB_COMPLETION_INDEX", "3"}}), i, n, error));
  EXPECT_EQ(error,
            "JOB_COMPLETION_INDEX=3 is set (a Kubernetes Indexed Job) but OPCHECK_TOTAL_SHARDS is not: every pod would "
            "run every case\n  Fix: set OPCHECK_TOTAL_SHARDS to the Job's completions, or pass --shard 0/1 to run all "
            "cases here");
  EXPECT_FALSE(resolve_shard("", env({{"OPCHECK_SHARD_INDEX", "1"}}), i, n, error));
  EXPECT_NE(error.find("OPCHECK_SHARD_INDEX is set without OPCHECK_TOTAL_SHARDS"), std::string::npos) << error;
  EXPECT_FALSE(resolve_shard("", env({{"OPCHECK_TOTAL_SHARDS", "4"}}), i, n, error));
  EXPECT_NE(error.find("OPCHECK_TOTAL_SHARDS is set without OPCHECK_SHARD_INDEX"), std::string::npos) << error;
  // The flag decides alone.
  ASSERT_TRUE(resolve_shard("0/1", env({{"JOB_COMPLETION_INDEX", "3"}}), i, n, error)) << error;
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

bool has_pair(const std::vector<std::string>& args, const std::string& flag, const std::string& value) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == flag && args[i + 1] == value) return true;
  return false;
}

TEST(RunSettings, TheEnvironmentCompletesWhatTheFlagsLeaveOpen) {
  RunSettings s;
  std::string error;
  ASSERT_TRUE(resolve_run_settings(s,
                                   env({{"OPCHECK_DEVICE_LIB", "/opt/spyre/libspyre.so"},
                                        {"TEST_COMPILE_BACKEND", " none "},
                                        {"OPCHECK_LOOPBACK_FAULTS", "aten::exp=bias:1e-2"},
                                        {"OPCHECK_PYLOOP_FAULTS", ""},
                                        {"OPCHECK_SHARD_INDEX", "1"},
                                        {"OPCHECK_TOTAL_SHARDS", "3"}}),
                                   "art", error))
      << error;
  EXPECT_EQ(s.device_lib, "/opt/spyre/libspyre.so");
  EXPECT_EQ(s.compile_backend, "");  // `none` is eager
  EXPECT_EQ(s.device_environment,
            (std::vector<std::pair<std::string, std::string>>{{"OPCHECK_LOOPBACK_FAULTS", "aten::exp=bias:1e-2"}}));
  EXPECT_EQ(s.shard_index, 1);
  EXPECT_EQ(s.shard_total, 3);
  EXPECT_EQ(s.inductor_cache_dir, "");

  // Modules register the device: no library is loaded with them, and a compile backend keeps its caches with the
  // run's artifacts.
  RunSettings py;
  py.device_imports = {"torch_spyre"};
  py.compile_backend = "inductor";
  ASSERT_TRUE(resolve_run_settings(py, env({{"OPCHECK_DEVICE_LIB", "/opt/x.so"}}), "art", error)) << error;
  EXPECT_EQ(py.device_lib, "");
  EXPECT_NE(py.inductor_cache_dir.find("art/inductor-cache"), std::string::npos) << py.inductor_cache_dir;

  RunSettings late;
  late.deadline = "soon";
  EXPECT_FALSE(resolve_run_settings(late, env({}), "art", error));
  EXPECT_EQ(error, "invalid --deadline 'soon'\n  Fix: use seconds or a unit, e.g. 90s, 45m, 2h");
}

TEST(RerunArguments, CarryEverySettingThatDecidesAVerdict) {
  // Walks the table: each flag is given a value, and the rerun must carry every one of them, read back through the
  // same table into the same settings. A flag added to the table without a value here fails the test, so that its
  // rerun is checked too.
  const std::map<std::string, std::string> value_of = {
      {"--device", "privateuseone"},     {"--device-lib", "/opt/spyre/libspyre.so"},
      {"--device-name", "spyre"},        {"--reference-dtype", "float64"},
      {"--repeat", "3"},                 {"--device-import", "torch_spyre"},
      {"--compile-backend", "inductor"}, {"--timeout", "77"},
      {"--start-timeout", "42"},         {"--max-case-bytes", "1000000"},
      {"--module-memory-budget", "5000"}, {"--reference-cache", "/var/cache/refs"},
      {"--reference-cache-size", "8G"},  {"--reference-cache-max-entry", "1M"},
  };
  // A device comes from a library or from imports, never both: --device-import is checked on its own below.
  const auto walked = [](const SettingField& f) {
    return f.flag != nullptr && !f.is_switch && std::string(f.flag) != "--device-import";
  };  // a switch guards the run and is no rerun argument
  RunSettings s;
  const IdentityParts defaults = settings_identity(s);
  for (const auto& f : setting_fields()) {
    if (f.flag == nullptr || f.is_switch) continue;
    ASSERT_TRUE(value_of.count(f.flag)) << f.flag << " has no value in this test: add one";
    if (walked(f)) {
      ASSERT_EQ(f.set(s, value_of.at(f.flag)), "") << f.flag;
    }
  }
  s.device_environment = {{"OPCHECK_LOOPBACK_FAULTS", "aten::exp=bias:1e-2"}};
  const RerunArguments r = rerun_arguments(s);
  for (const auto& f : setting_fields()) {
    if (!walked(f)) continue;
    const auto at = std::find(r.args.begin(), r.args.end(), std::string(f.flag));
    ASSERT_NE(at, r.args.end()) << f.flag << " is not in the rerun";
    ASSERT_NE(at + 1, r.args.end()) << f.flag;
    if (std::string(f.flag) != "--reference-cache") {  // made absolute, which this value already is
      EXPECT_EQ(*(at + 1), value_of.at(f.flag)) << f.flag;
    }
  }
  EXPECT_EQ(r.environment, s.device_environment);
  // Every part of the identity a flag sets changed from the default: a rerun that dropped it would be another run.
  const IdentityParts given = settings_identity(s);
  ASSERT_EQ(given.size(), defaults.size());
  for (const auto& f : setting_fields()) {
    if (f.identity == nullptr || f.flag == nullptr) continue;
    const auto part = std::find_if(given.begin(), given.end(), [&](const auto& p) { return p.first == f.identity; });
    ASSERT_NE(part, given.end()) << f.identity;
    EXPECT_NE(*part, defaults[std::size_t(part - given.begin())]) << f.identity;
  }
  // Read back through the table, the rerun arguments are the same settings.
  RunSettings back;
  for (std::size_t i = 0; i + 1 < r.args.size(); i += 2) {
    const auto f = std::find_if(setting_fields().begin(), setting_fields().end(), [&](const SettingField& x) {
      return x.flag != nullptr && r.args[i] == x.flag;
    });
    ASSERT_NE(f, setting_fields().end()) << r.args[i];
    ASSERT_EQ(f->set(back, r.args[i + 1]), "") << r.args[i];
  }
  back.device_environment = r.environment;
  EXPECT_EQ(settings_identity(back), given);
  EXPECT_EQ(rerun_arguments(back).args, r.args);
  // The bundle records the same arguments the rerun line prints.
  EXPECT_EQ(exec_options(s).rerun, r.args);

  // An imported device: the rerun imports it again and names the device as given, with no library.
  RunSettings py = s;
  py.device_imports = {value_of.at("--device-import")};
  const RerunArguments pr = rerun_arguments(py);
  const auto imp = std::find(pr.args.begin(), pr.args.end(), std::string("--device-import"));
  ASSERT_NE(imp, pr.args.end());
  EXPECT_EQ(*(imp + 1), "torch_spyre");
  EXPECT_EQ(std::find(pr.args.begin(), pr.args.end(), std::string("--device-lib")), pr.args.end());
  EXPECT_EQ(*(std::find(pr.args.begin(), pr.args.end(), std::string("--device")) + 1), "privateuseone");
}

TEST(RunSettings, ReferenceCacheSizesReadAsWrittenWithBinaryUnits) {
  std::int64_t b = -1;
  EXPECT_TRUE(parse_byte_size("1000", b));
  EXPECT_EQ(b, 1000);
  EXPECT_TRUE(parse_byte_size("40K", b));
  EXPECT_EQ(b, 40 * 1024);
  EXPECT_TRUE(parse_byte_size("256M", b));
  EXPECT_EQ(b, std::int64_t{256} << 20);
  EXPECT_TRUE(parse_byte_size("4GiB", b));
  EXPECT_EQ(b, std::int64_t{4} << 30);
  EXPECT_TRUE(parse_byte_size("1.5g", b));
  EXPECT_EQ(b, std::int64_t{3} << 29);
  EXPECT_TRUE(parse_byte_size("0", b));
  EXPECT_EQ(b, 0);
  for (const char* bad : {"", "big", "-1G", "4X", "4GG", "inf", "nan"}) EXPECT_FALSE(parse_byte_size(bad, b)) << bad;
}

TEST(RerunArguments, TheReferenceCacheIsRerunButIsNoPartOfTheIdentity) {
  RunSettings s;
  s.device = "loopback";
  const IdentityParts without = settings_identity(s);
  s.reference_cache_dir = "/var/cache/refs";
  s.reference_cache_size = "8G";
  s.reference_cache_max_entry = "0";
  EXPECT_EQ(rerun_arguments(s).args,
            (std::vector<std::string>{"--device", "loopback", "--reference-cache", "/var/cache/refs",
                                      "--reference-cache-size", "8G", "--reference-cache-max-entry", "0"}));
  // A run with the cache resumes, merges and reuses results with one without: it cannot change a verdict.
  EXPECT_EQ(settings_identity(s), without);
  std::string error;
  s.reference_cache_dir = testing::TempDir() + "/opcheck-refs-settings";
  ASSERT_TRUE(resolve_run_settings(s, env({}), "art", error)) << error;
  EXPECT_EQ(s.reference_cache_max_bytes, std::int64_t{8} << 30);
  EXPECT_EQ(s.reference_cache_max_entry_bytes, 0);
  s.reference_cache_size = "lots";
  EXPECT_FALSE(resolve_run_settings(s, env({}), "art", error));
  EXPECT_EQ(error, "--reference-cache-size 'lots' is not a size\n  Fix: bytes, or with a binary unit: 512M, 4G");
}

// A rerun of a device that imports slowly needs the same start budget; the budget decides no case's verdict, so a
// resumed run or a cached result under another budget is still this run's.
TEST(RerunArguments, StartTimeoutIsRepeatedButIsNoPartOfTheIdentity) {
  RunSettings s;
  s.device = "cpu";
  s.start_timeout_s = 20;
  const RerunArguments r = rerun_arguments(s);
  EXPECT_EQ(r.args, (std::vector<std::string>{"--device", "cpu", "--start-timeout", "20"}));
  EXPECT_EQ(exec_options(s).start_timeout_s, 20);
  RunSettings defaults;
  defaults.device = "cpu";
  EXPECT_EQ(settings_identity(s), settings_identity(defaults));
}

TEST(RerunArguments, AutoIsResolvedAsTheRunResolvesIt) {
  RunSettings s;  // auto, no library: the loopback stand-in
  EXPECT_EQ(rerun_arguments(s).args, (std::vector<std::string>{"--device", "loopback"}));
  s.device_lib = "/opt/spyre/libspyre.so";
  EXPECT_EQ(rerun_arguments(s).args,
            (std::vector<std::string>{"--device", "privateuseone", "--device-lib", "/opt/spyre/libspyre.so"}));
  // A library that the chosen device does not use is not passed on.
  s.device = "cpu";
  EXPECT_EQ(rerun_arguments(s).args, (std::vector<std::string>{"--device", "cpu"}));
  // Imports register the device again in the rerun: what was given is kept.
  RunSettings py;
  py.device_imports = {"opcheck_pyloop"};
  py.compile_backend = "eager";
  EXPECT_EQ(rerun_arguments(py).args, (std::vector<std::string>{"--device", "auto", "--device-import",
                                                                "opcheck_pyloop", "--compile-backend", "eager"}));
}

TEST(RunSettings, InstalledBackendsAreAskedForOnlyWhenTheDeviceMayBeOne) {
  std::string error;
  // TORCH_DEVICE_BACKEND_AUTOLOAD=0: torch loads no entry point, so none is listed, and the note says why.
  RunSettings off;
  ASSERT_TRUE(resolve_run_settings(off, env({{"TORCH_DEVICE_BACKEND_AUTOLOAD", "0"}}), "art", error)) << error;
  EXPECT_TRUE(off.installed_backends.empty());
  EXPECT_NE(off.installed_backends_note.find("TORCH_DEVICE_BACKEND_AUTOLOAD=0"), std::string::npos);
  EXPECT_EQ(exec_options(off).installed_backends_note, off.installed_backends_note);
  // A device that cannot be an installed backend, or one a library or modules name, asks no interpreter.
  for (auto set : std::vector<void (*)(RunSettings&)>{
           [](RunSettings& s) { s.device = "cpu"; }, [](RunSettings& s) { s.device = "loopback:1"; },
           [](RunSettings& s) { s.device_lib = "/opt/x.so"; },
           [](RunSettings& s) { s.device_imports = {"torch_spyre"}; }}) {
    RunSettings s;
    set(s);
    ASSERT_TRUE(resolve_run_settings(s, env({{"OPCHECK_PYTHON", "/no/such/python"}}), "art", error)) << error;
    EXPECT_TRUE(s.installed_backends.empty() && s.installed_backends_note.empty()) << s.installed_backends_note;
  }
  // A name may be one: the interpreter is asked (here it does not exist, which the note says).
  RunSettings named;
  named.device = "opencl";
  ASSERT_TRUE(resolve_run_settings(named, env({{"OPCHECK_PYTHON", "/no/such/python"}}), "art", error)) << error;
  EXPECT_NE(named.installed_backends_note.find("/no/such/python"), std::string::npos);
}

TEST(RerunArguments, AutoOnAnInstalledBackendRerunsOnPrivateUseOne) {
  RunSettings s;
  s.installed_backends = {"x = opcheck_test_backend:_autoload (opcheck-test-backend 0.1)"};
  // The rerun lists the entry points again and takes the device they register; no library, no import.
  EXPECT_EQ(rerun_arguments(s).args, (std::vector<std::string>{"--device", "privateuseone"}));
  s.device = "spyre";
  EXPECT_EQ(rerun_arguments(s).args, (std::vector<std::string>{"--device", "spyre"}));
}

TEST(RunSettings, AFieldAddedToTheTableIsSeenByTheRerunAndTheIdentity) {
  std::vector<SettingField> fields = setting_fields();
  SettingField warp;
  warp.identity = "warp factor";
  warp.flag = "--warp-factor";
  warp.values = [](const RunSettings& s) { return std::vector<std::string>{std::to_string(s.repeat * 10)}; };
  fields.push_back(warp);
  RunSettings s;
  s.repeat = 4;
  EXPECT_TRUE(has_pair(rerun_arguments(s, fields).args, "--warp-factor", "40"));
  const IdentityParts id = settings_identity(s, fields);
  EXPECT_NE(std::find(id.begin(), id.end(), std::make_pair(std::string("warp factor"), std::string("40"))), id.end());
  // And neither derivation invents it without the field.
  EXPECT_FALSE(has_pair(rerun_arguments(s).args, "--warp-factor", "40"));
}

TEST(RunSettings, TheLibraryFlagWinsOverTheEnvironment) {
  RunSettings flag;
  flag.device_lib = "/flag/lib.so";
  std::string error;
  ASSERT_TRUE(resolve_run_settings(flag, env({{"OPCHECK_DEVICE_LIB", "/env/lib.so"}}), "art", error)) << error;
  EXPECT_EQ(flag.device_lib, "/flag/lib.so");
  RunSettings none;
  ASSERT_TRUE(resolve_run_settings(none, env({}), "art", error)) << error;
  EXPECT_EQ(none.device_lib, "");
}

TEST(RunSettings, ADeviceImportMayNameTheFunctionToCallAfterTheImport) {
  PythonDeviceSettings py;
  std::string error;
  ASSERT_TRUE(resolve_python_device({"torch_opencl:_autoload", "pkg.sub:register"}, "", env({}), py, error)) << error;
  EXPECT_EQ(py.imports, (std::vector<std::string>{"torch_opencl:_autoload", "pkg.sub:register"}));
  for (const char* bad : {"torch_opencl:", ":_autoload", "m:a.b", "m:1x", "m:a:b"}) {
    EXPECT_FALSE(resolve_python_device({bad}, "", env({}), py, error)) << bad;
    EXPECT_NE(error.find("(or MODULE:FUNCTION)"), std::string::npos) << error;
    EXPECT_NE(error.find("torch_spyre:_autoload"), std::string::npos) << error;
  }
}

/// A folder under the test's temporary folder, made empty.
std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("opcheck_run_settings_test_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void touch(const std::filesystem::path& p, const std::string& text = "") {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(RerunArguments, CarryThePythonPathEntriesThatHoldTheDeviceModulesAndNoOthers) {
  const auto root = scratch("pythonpath");
  touch(root / "pkgdir" / "torch_opencl" / "__init__.py");
  touch(root / "filedir" / "plain_dev.py");
  touch(root / "extdir" / "fast_dev.cpython-311-x86_64-linux-gnu.so");
  touch(root / "distdir" / "backend-0.1.dist-info" / "entry_points.txt", "[torch.backends]\nx = backend_mod:_autoload\n");
  touch(root / "unrelated" / "numpy_like" / "__init__.py");
  const std::string path = (root / "unrelated").string() + ":" + (root / "pkgdir").string() + "::" +
                           (root / "filedir").string() + ":" + (root / "extdir").string() + ":" +
                           (root / "distdir").string() + ":/no/such/folder";
  RunSettings s;
  s.device_imports = {"torch_opencl:_autoload", "plain_dev", "fast_dev.sub"};
  const auto origin = origin_environment_of(s, env({{"PYTHONPATH", path}}));
  ASSERT_FALSE(origin.empty());
  EXPECT_EQ(origin[0], std::make_pair(std::string("PYTHONPATH"), (root / "pkgdir").string() + ":" +
                                                                     (root / "filedir").string() + ":" +
                                                                     (root / "extdir").string()));
  // An installed backend's entry point: the folder with its module and the one with its distribution.
  RunSettings installed;
  installed.installed_backends = {"x = backend_mod:_autoload (backend 0.1)"};
  touch(root / "moddir" / "backend_mod.py");
  const auto found = origin_environment_of(
      installed, env({{"PYTHONPATH", (root / "moddir").string() + ":" + (root / "distdir").string() + ":" +
                                         (root / "unrelated").string()},
                      {"TORCH_DEVICE_BACKEND_AUTOLOAD", "1"}}));
  EXPECT_NE(std::find(found.begin(), found.end(),
                      std::make_pair(std::string("PYTHONPATH"),
                                     (root / "moddir").string() + ":" + (root / "distdir").string())),
            found.end());
  EXPECT_NE(std::find(found.begin(), found.end(),
                      std::make_pair(std::string("TORCH_DEVICE_BACKEND_AUTOLOAD"), std::string("1"))),
            found.end());
  // No Python device: PYTHONPATH decided nothing.
  EXPECT_TRUE(origin_environment_of(RunSettings{}, env({{"PYTHONPATH", path}})).empty());
  std::filesystem::remove_all(root);
}

TEST(RerunArguments, CarryTheInterpreterThatHostedTheDeviceWhenItIsNotTheBuilds) {
  RunSettings s;
  s.device_imports = {"torch_spyre"};
  s.python = "/venv/bin/python";
  const auto origin = origin_environment_of(s, env({}));
  EXPECT_EQ(origin, (std::vector<std::pair<std::string, std::string>>{{"OPCHECK_PYTHON", "/venv/bin/python"}}));
  s.origin_environment = origin;
  s.device_environment = {{"OPCHECK_PYLOOP_FAULTS", "aten::mm=raise"}};
  // The rerun sets both, faults first; the bundles record the same.
  const RerunArguments r = rerun_arguments(s);
  EXPECT_EQ(r.environment, (std::vector<std::pair<std::string, std::string>>{
                               {"OPCHECK_PYLOOP_FAULTS", "aten::mm=raise"}, {"OPCHECK_PYTHON", "/venv/bin/python"}}));
  EXPECT_EQ(exec_options(s).rerun_environment, r.environment);
  // Where the device came from is no part of the identity (the executor's facts name modules and versions).
  for (const auto& [part, value] : settings_identity(s)) EXPECT_EQ(value.find("/venv/bin/python"), std::string::npos);
}

TEST(RunSettings, AutoSaysWhatItChoseAndWhereItLooked) {
  std::string error;
  RunSettings none;
  ASSERT_TRUE(resolve_run_settings(none, env({{"TORCH_DEVICE_BACKEND_AUTOLOAD", "0"}}), "art", error)) << error;
  DeviceChoice c = device_choice_of(none);
  EXPECT_EQ(c.asked, "auto");
  EXPECT_EQ(c.chosen, "loopback");
  EXPECT_TRUE(c.stand_in);
  EXPECT_EQ(c.why, "opcheck's stand-in, as no backend was found");
  ASSERT_EQ(c.searched.size(), 3u);
  EXPECT_EQ(c.searched[0], "device library (--device-lib, OPCHECK_DEVICE_LIB): none");
  EXPECT_NE(c.searched[2].find("TORCH_DEVICE_BACKEND_AUTOLOAD=0"), std::string::npos) << c.searched[2];

  RunSettings lib;
  ASSERT_TRUE(resolve_run_settings(lib, env({{"OPCHECK_DEVICE_LIB", "/opt/spyre.so"}}), "art", error)) << error;
  c = device_choice_of(lib);
  EXPECT_FALSE(c.stand_in);
  EXPECT_EQ(c.chosen, "privateuseone");
  EXPECT_EQ(c.why, "the device library OPCHECK_DEVICE_LIB names");
  EXPECT_EQ(c.searched[0], "device library (OPCHECK_DEVICE_LIB): /opt/spyre.so");

  RunSettings named;
  named.device = "loopback";
  c = device_choice_of(named);
  EXPECT_EQ(c.why, "named by --device");
  EXPECT_TRUE(c.searched.empty());
}

TEST(RunSettings, RequireBackendRefusesTheLoopbackAndNamesWhereItLooked) {
  std::string error;
  RunSettings s;
  s.require_backend = true;
  EXPECT_FALSE(resolve_run_settings(s, env({{"TORCH_DEVICE_BACKEND_AUTOLOAD", "0"}}), "art", error));
  EXPECT_NE(error.find("--device auto --require-backend: no backend found"), std::string::npos) << error;
  EXPECT_NE(error.find("device library (--device-lib, OPCHECK_DEVICE_LIB): none"), std::string::npos) << error;
  EXPECT_NE(error.find("--device-import, OPCHECK_DEVICE_IMPORT): none"), std::string::npos) << error;
  EXPECT_NE(error.find("torch.backends entry points"), std::string::npos) << error;
  EXPECT_NE(error.find("Fix: "), std::string::npos) << error;
  // A backend found: the guard lets it run.
  RunSettings lib;
  lib.require_backend = true;
  EXPECT_TRUE(resolve_run_settings(lib, env({{"OPCHECK_DEVICE_LIB", "/opt/spyre.so"}}), "art", error)) << error;
  RunSettings imports;
  imports.require_backend = true;
  imports.device_imports = {"torch_spyre"};
  EXPECT_TRUE(resolve_run_settings(imports, env({}), "art", error)) << error;
  // Naming the stand-in with the guard on is a contradiction.
  RunSettings loop;
  loop.require_backend = true;
  loop.device = "loopback";
  EXPECT_FALSE(resolve_run_settings(loop, env({}), "art", error));
  EXPECT_NE(error.find("--require-backend: --device loopback is opcheck's loopback stand-in"), std::string::npos)
      << error;
  // The guard is no rerun argument and no part of the identity: a rerun names the device the run resolved.
  EXPECT_EQ(rerun_arguments(lib).args, (std::vector<std::string>{"--device", "privateuseone", "--device-lib",
                                                                 "/opt/spyre.so"}));
}

}  // namespace
}  // namespace opcheck
