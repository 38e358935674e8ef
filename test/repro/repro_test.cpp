// Reproduction (src/repro/): finding the case and its bundle, the device a script runs on, the rerun command, and
// scripts that run under the Python opcheck is built against. No libtorch in this binary.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "repro/bundle_layout.h"
#include "repro_files.h"
#include "repro/reproduction.h"
#include "repro/script.h"
#include "repro/script_assets.h"
#include "judge/backend_freedoms_table.h"
#include "opcheck/comparators.h"

namespace fs = std::filesystem;

namespace opcheck::repro {
namespace {

using test::read;
using test::TempDir;
using test::write;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// ---- bundles ------------------------------------------------------------------------------------------------------

TEST(FindBundleFolder, TheBundleItselfOrTheCasesFolderInASaveFailuresFolder) {
  TempDir tmp("find");
  const fs::path bundle = tmp.path / bundle_folder_name("m::torch.add.1");
  write(bundle / kBundleManifest, "model: m\n");
  std::string error;
  EXPECT_EQ(find_bundle_folder(bundle.string(), "", error), bundle.string()) << error;
  EXPECT_EQ(find_bundle_folder(tmp.path.string(), "m::torch.add.1", error), bundle.string()) << error;
}

TEST(FindBundleFolder, MissingBundlesSayWhatIsThereAndHowToFixIt) {
  TempDir tmp("missing");
  write(tmp.path / bundle_folder_name("m::torch.add.1") / kBundleManifest, "model: m\n");
  std::string error;

  EXPECT_EQ(find_bundle_folder((tmp.path / "nope").string(), "m::x", error), "");
  EXPECT_TRUE(has(error, "does not exist")) << error;
  EXPECT_TRUE(has(error, "Fix: ")) << error;

  error.clear();
  EXPECT_EQ(find_bundle_folder(tmp.path.string(), "", error), "");
  EXPECT_TRUE(has(error, "holds no case.yaml")) << error;
  EXPECT_TRUE(has(error, "Fix: name the case")) << error;

  error.clear();
  EXPECT_EQ(find_bundle_folder(tmp.path.string(), "m::torch.add.2", error), "");
  EXPECT_TRUE(has(error, "no bundle of m::torch.add.2")) << error;
  EXPECT_TRUE(has(error, "look alike: m__torch.add.1")) << error;
  EXPECT_TRUE(has(error, "Fix: rerun with --save-failures")) << error;
}

TEST(BundleFacts, ReadBackWhatTheRunRecorded) {
  TempDir tmp("facts");
  write(tmp.path / kBundleFacts,
        R"({"stage": "INCORRECT_RESULT", "message": "2 / 8 mismatched\nmore", "rerun_device_args": ["--device",
            "loopback"], "environment": {"OPCHECK_LOOPBACK_FAULTS": "aten::exp=bias:1e-2"}, "written_slots": [1]})");
  std::string warning, error;
  const BundleFacts f = read_bundle_facts(tmp.path.string(), warning, error);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(error, "");
  EXPECT_EQ(f.stage, "INCORRECT_RESULT");
  EXPECT_EQ(f.rerun_device_args, (std::vector<std::string>{"--device", "loopback"}));
  ASSERT_EQ(f.environment.size(), 1u);
  EXPECT_EQ(f.written_slots, std::vector<std::size_t>{1});

  // The run's device flags are the default; each flag the user gave replaces the bundle's, the others stay.
  RunSettings mine;
  mine.device = "cpu";
  mine.repeat = 3;
  EXPECT_EQ(device_args({}, RunSettings{}, f), (std::vector<std::string>{"--device", "loopback"}));
  EXPECT_EQ(device_args({"--device", "--repeat"}, mine, f),
            (std::vector<std::string>{"--device", "cpu", "--repeat", "3"}));
  EXPECT_EQ(device_args({"--repeat"}, mine, f), (std::vector<std::string>{"--device", "loopback", "--repeat", "3"}));
  // Without a bundle, `auto` is resolved as the run resolves it: no device library configured means the loopback.
  EXPECT_EQ(device_args({}, RunSettings{}, BundleFacts{}), (std::vector<std::string>{"--device", "loopback"}));

  // The script names the failure by its first line and carries the faults as the rerun line does.
  ScriptDevice cpu;
  EXPECT_EQ(script_bundle(tmp.path.string(), f, cpu).failure, "INCORRECT_RESULT: 2 / 8 mismatched");
  EXPECT_EQ(cpu.environment, f.environment);
  ScriptDevice loopback;
  loopback.library = "/x/libopcheck_loopback.so";
  script_bundle(tmp.path.string(), f, loopback);
  EXPECT_EQ(loopback.environment, f.environment);

  write(tmp.path / kBundleFacts, "{not json");
  read_bundle_facts(tmp.path.string(), warning, error);
  EXPECT_TRUE(has(warning, "failure.json is not readable JSON")) << warning;
}

TEST(BundleFacts, AnEnvironmentNameThatIsNotARerunVariableIsAnErrorNamingTheFile) {
  TempDir tmp("hostile_env");
  const std::string file = (tmp.path / kBundleFacts).string();
  for (const auto& [name, says] : std::vector<std::pair<std::string, std::string>>{
           {"A;touch PWNED;B", "'A;touch PWNED;B' is not an environment variable name"},
           {"LD_PRELOAD", "'LD_PRELOAD' is not a variable opcheck records for a rerun"},
           {"1X", "'1X' is not an environment variable name"}}) {
    write(tmp.path / kBundleFacts, R"({"environment": {"OPCHECK_LOOPBACK_FAULTS": "aten::exp=raise", ")" + name +
                                       R"(": "x"}})");
    std::string warning, error;
    read_bundle_facts(tmp.path.string(), warning, error);
    EXPECT_TRUE(has(error, file + ": error: /environment: " + says)) << error;
    EXPECT_TRUE(has(error, "Fix: ")) << error;
  }
  for (const char* name : {"OPCHECK_LOOPBACK_MODE", "OPCHECK_PYLOOP_FAULTS", "PYTHONPATH", "OPCHECK_PYTHON",
                           "TORCH_DEVICE_BACKEND_AUTOLOAD"}) {
    write(tmp.path / kBundleFacts, std::string(R"({"environment": {")") + name + R"(": "a b;c"}})");
    std::string warning, error;
    const BundleFacts f = read_bundle_facts(tmp.path.string(), warning, error);
    EXPECT_EQ(error, "") << name;
    EXPECT_EQ(f.environment, (std::vector<std::pair<std::string, std::string>>{{name, "a b;c"}}));
  }
}

TEST(CarryEnvironment, TheRerunLinesAllowListEachWhereTheScriptTakesIt) {
  const std::vector<std::pair<std::string, std::string>> run{
      {"OPCHECK_PYLOOP_FAULTS", "aten::mm=raise"}, {"PYTHONPATH", "/opt/a:/opt/b"},
      {"OPCHECK_PYTHON", "/venv/bin/python"}, {"TORCH_DEVICE_BACKEND_AUTOLOAD", "0"}, {"LD_PRELOAD", "/x.so"}};
  ScriptDevice spyre;  // a backend registered from Python: the same list as its rerun line, LD_PRELOAD not
  spyre.imports = {"torch_spyre"};
  carry_environment(run, spyre);
  EXPECT_EQ(spyre.environment, (std::vector<std::pair<std::string, std::string>>{run[0]}));
  EXPECT_EQ(spyre.module_paths, (std::vector<std::string>{"/opt/a", "/opt/b"}));
  EXPECT_EQ(spyre.python, "/venv/bin/python");
  EXPECT_EQ(spyre.autoload, std::optional<std::string>("0"));
  ScriptDevice installed;  // a backend torch's autoload loads (no import): the folders still go on sys.path
  installed.device = "opencl";
  carry_environment({{"PYTHONPATH", "/opt/opencl"}}, installed);
  EXPECT_EQ(installed.module_paths, (std::vector<std::string>{"/opt/opencl"}));
  EXPECT_FALSE(installed.autoload.has_value());
  const std::string script = python_repro_script(Case{}, installed, ScriptBundle{});
  EXPECT_NE(script.find("DEVICE_PATHS = ['/opt/opencl']"), std::string::npos) << script;
  EXPECT_LT(script.find("sys.path[:0] = [p for p in DEVICE_PATHS"), script.find("\nimport torch")) << script;
}

// ---- cases --------------------------------------------------------------------------------------------------------

ManifestSet two_models() {
  return load_manifest_text("/tmp/m.yaml", R"(model: gpt_oss
cases:
  - name: torch.add.1
    op: torch.add
    inputs:
      - tensor: {shape: [2]}
      - tensor: {shape: [2]}
)");
}

TEST(FindCase, ByIdAndByTheModelSpeltAsModelMatchesIt) {
  const ManifestSet set = two_models();
  ASSERT_FALSE(set.diagnostics.has_errors());
  std::string error;
  const Case* c = find_case(set, {}, "gpt_oss::torch.add.1", error);
  ASSERT_NE(c, nullptr) << error;
  EXPECT_EQ(find_case(set, {}, "GPT-oss::torch.add.1", error), c) << error;
  EXPECT_EQ(manifest_of(set, *c), &set.manifests[0]);
}

TEST(FindCase, AnUnknownIdNamesTheNearOnesAndTheFix) {
  const ManifestSet set = two_models();
  std::string error;
  EXPECT_EQ(find_case(set, {}, "gpt_oss::torch.add.2", error), nullptr);
  EXPECT_TRUE(has(error, "no case gpt_oss::torch.add.2 in the manifests")) << error;
  EXPECT_TRUE(has(error, "did you mean gpt_oss::torch.add.1?")) << error;
  EXPECT_TRUE(has(error, "Fix: ids are model::case")) << error;
}

// ---- the device of a script ---------------------------------------------------------------------------------------

TEST(ScriptDevice, LoopbackIsLoadedFromOpchecksLibraryFolders) {
  TempDir tmp("libs");
  const fs::path build = tmp.path / "build", installed = tmp.path / "lib64" / "opcheck";
  fs::create_directories(build);
  write(installed / "libopcheck_loopback.so", "");
  ScriptDevice d;
  std::string error;
  ASSERT_TRUE(script_device({"--device", "loopback"}, {build.string(), installed.string()}, d, error)) << error;
  EXPECT_EQ(d.device, "privateuseone:0");
  EXPECT_EQ(d.library, fs::weakly_canonical(installed / "libopcheck_loopback.so").string());

  ScriptDevice missing;
  EXPECT_FALSE(script_device({"--device", "loopback:1"}, {build.string()}, missing, error));
  EXPECT_TRUE(has(error, "cannot find libopcheck_loopback.so (looked in " + build.string() + ")")) << error;
  EXPECT_TRUE(has(error, "Fix: ")) << error;
}

TEST(ScriptDevice, AutoIsResolvedAsTheRunResolvesIt) {
  TempDir tmp("auto");
  write(tmp.path / "python" / "opcheck_pyloop" / "__init__.py", "");
  ::unsetenv("OPCHECK_DEVICE_LIB");
  std::string error;
  ScriptDevice plain;  // no library, no imports: the loopback stand-in
  EXPECT_FALSE(script_device({"--device", "auto"}, {tmp.path.string()}, plain, error));
  EXPECT_TRUE(has(error, "libopcheck_loopback.so")) << error;

  ScriptDevice lib;  // a device library: its PrivateUse1 device
  ASSERT_TRUE(script_device({"--device", "auto", "--device-lib", "/opt/dev/libdev.so"}, {}, lib, error)) << error;
  EXPECT_EQ(lib.device, "privateuseone:0");
  EXPECT_EQ(lib.library, "/opt/dev/libdev.so");

  ScriptDevice imported;  // modules register the device; opcheck's Python packages come from its library folder
  ASSERT_TRUE(script_device({"--device", "auto", "--device-import", "opcheck_pyloop", "--compile-backend", "eager"},
                            {tmp.path.string()}, imported, error))
      << error;
  EXPECT_EQ(imported.device, "privateuseone:0");
  EXPECT_EQ(imported.imports, std::vector<std::string>{"opcheck_pyloop"});
  EXPECT_EQ(imported.compile_backend, "eager");
  EXPECT_EQ(imported.python_path, fs::weakly_canonical(tmp.path / "python").string());

  ScriptDevice cuda;
  ASSERT_TRUE(script_device({"--device", "cuda:1"}, {}, cuda, error));
  EXPECT_EQ(cuda.device, "cuda:1");
}

// ---- the rerun command --------------------------------------------------------------------------------------------

TEST(RerunCommand, SelectsTheCaseAloneAndQuotesForTheShell) {
  const ManifestSet set = two_models();
  const Case& c = set.manifests.at(0).cases.at(0);
  RerunSource source;
  source.manifest = "/data/my manifests/m.yaml";
  const auto words = rerun_words("/usr/bin/opcheck", c, source, {"--device", "cpu"});
  EXPECT_EQ(words, (std::vector<std::string>{"/usr/bin/opcheck", "run", "--manifests", "/data/my manifests/m.yaml",
                                             "gpt_oss::torch.add.1", "--device", "cpu", "-v"}));
  BundleFacts facts;
  facts.environment = {{"OPCHECK_LOOPBACK_FAULTS", "aten::exp=bias:1e-2 x"}};
  const std::string text = rerun_text(c, "", facts, words, "");
  EXPECT_TRUE(has(text, "# gpt_oss::torch.add.1: torch.add (/tmp/m.yaml:3)\n")) << text;
  EXPECT_TRUE(has(text, "OPCHECK_LOOPBACK_FAULTS='aten::exp=bias:1e-2 x' /usr/bin/opcheck run --manifests "
                        "'/data/my manifests/m.yaml' gpt_oss::torch.add.1 --device cpu -v\n"))
      << text;

  source.bundle = "/b/m__torch.add.1";
  EXPECT_EQ(rerun_words("opcheck", c, source, {"--device", "cpu"}),
            (std::vector<std::string>{"opcheck", "run", "--manifests", "/b/m__torch.add.1/case.yaml", "--device",
                                      "cpu", "-v"}));
}

// ---- scripts ------------------------------------------------------------------------------------------------------

TEST(PythonOpExpression, TheCallableTheManifestNameMeans) {
  EXPECT_EQ(python_op_expression("aten::add.Tensor"), "torch.ops.aten.add.Tensor");
  EXPECT_EQ(python_op_expression("F.silu"), "torch.nn.functional.silu");
  EXPECT_EQ(python_op_expression("torch.getitem"), "operator.getitem");
  EXPECT_EQ(python_op_expression("torch.nn.functional.linear"), "torch.nn.functional.linear");
  EXPECT_EQ(python_op_expression("torch.__and__"), "torch.Tensor.__and__");
}

/// Runs `script` under the Python opcheck is built against; its exit status and output.
std::pair<int, std::string> run_python(const std::string& script, const fs::path& dir) {
  const char* python = std::getenv("OPCHECK_PYTHON");
  if (!python || !*python) {
    ADD_FAILURE() << "OPCHECK_PYTHON is not set. Fix: run through ctest, or set it to the Python with opcheck's torch";
    return {-1, ""};
  }
  const fs::path file = dir / "repro.py", out = dir / "out.txt";
  write(file, script);
  const std::string cmd = std::string("'") + python + "' '" + file.string() + "' > '" + out.string() + "' 2>&1";
  const int status = std::system(cmd.c_str());
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

TEST(PythonReproScript, EveryInitKindBuildsAndTheCpuAgreesWithItself) {
  TempDir tmp("script");
  // One tensor per init kind (file: a .npy written here), on a strided and an expanded layout too.
  const std::string npy = (tmp.path / "w.npy").string();
  {
    // numpy's format: magic, version 1.0, header length, a dict header padded to 128 bytes, then 6 float32 values.
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    header += std::string(128 - 10 - header.size() - 1, ' ') + "\n";
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
    bytes += static_cast<char>(header.size() & 0xff);
    bytes += static_cast<char>(header.size() >> 8);
    bytes += header;
    const float v[6] = {1, 2, 3, 4, 5, 6};
    bytes.append(reinterpret_cast<const char*>(v), sizeof v);
    write(npy, bytes);
  }
  const ManifestSet set = load_manifest_text((tmp.path / "kinds.yaml").string(), R"(model: kinds
cases:
  - name: cat.every.init
    op: torch.cat
    inputs:
      - tensor_list:
          - {shape: [2, 3], init: rand}
          - {shape: [2, 3], init: rand, init_args: {low: -2, high: 2}}
          - {shape: [2, 3], init: uniform}
          - {shape: [2, 3], init: randn, init_args: {mean: 1, std: 0.5}}
          - {shape: [2, 3], init: randint, init_args: {low: -3, high: 3}}
          - {shape: [2, 3], init: zeros}
          - {shape: [2, 3], init: ones}
          - {shape: [2, 3], init: arange}
          - {shape: [2, 3], init: xavier}
          - {shape: [2, 3], data: [[1, 2, 3], [4, 5, 6]]}
          - {shape: [2, 3], file: w.npy}
          - {shape: [2, 3], init: full, init_args: {fill_value: 0.25}}
          - {shape: [2, 3], stride: [1, 2], init: randn}
          - {shape: [2, 3], stride: [0, 1], init: rand}
  - name: eye
    op: torch.add
    inputs:
      - tensor: {shape: [3, 3], init: eye}
      - tensor: {shape: [3, 3], dtype: int32, init: rand, init_args: {low: 0, high: 9}}
)");
  ASSERT_FALSE(set.diagnostics.has_errors());
  ASSERT_EQ(set.manifests.at(0).cases.size(), 2u);
  for (const Case& c : set.manifests[0].cases) {
    const std::string script = python_repro_script(c, ScriptDevice{}, ScriptBundle{});
    EXPECT_TRUE(has(script, "def inputs():")) << script;
    const auto [status, output] = run_python(script, tmp.path);
    EXPECT_EQ(status, 0) << c.id << "\n" << output << "\n" << script;
    EXPECT_TRUE(has(output, "device (cpu) agrees with the cpu reference")) << output;
  }
}

// The script judges by opcheck's own tables: its comparators (name, bitwise, float64 judge, verdict) and the ops
// whose repeated writes and tied indices PyTorch leaves undefined are written from kComparators and
// judge/backend_freedoms_table, and its static Python names no comparator itself, so a comparator or an op added
// to a table reaches the script, and one the script spelt on its own would fail here.
TEST(PythonReproScript, JudgesByOpchecksComparatorAndFreedomTables) {
  const std::string assets = std::string(repro_script_judge()) + std::string(repro_script_main());
  for (const ComparatorSpec& c : kComparators) {
    EXPECT_FALSE(has(assets, std::string("\"") + c.name + "\"")) << c.name << " is spelt in the script's own Python";
    EXPECT_FALSE(has(assets, std::string("'") + c.name + "'")) << c.name;
  }
  const ManifestSet set = load_manifest_text("cmp.yaml", R"(model: cmp
cases:
  - {name: add, op: torch.add, compare: pcc, inputs: [{tensor: {shape: [4, 8]}}, {tensor: {shape: [4, 8]}}]}
)");
  ASSERT_FALSE(set.diagnostics.has_errors());
  const std::string script = python_repro_script(set.manifests.at(0).cases.at(0), ScriptDevice{}, ScriptBundle{});
  for (const ComparatorSpec& c : kComparators) {
    EXPECT_TRUE(has(script, "'" + std::string(c.name) + "': (" + (c.bitwise ? "True" : "False") + ", " +
                                (c.float64_judge ? "True" : "False") + ")"))
        << c.name << "\n" << script;
    EXPECT_TRUE(has(script, std::string("def verdict_") + c.name + "(e, a, mismatched, path):")) << c.name;
    EXPECT_TRUE(has(script, "'" + std::string(c.name) + "': verdict_" + c.name)) << c.name;
  }
  for (const RepeatedWriteRule& w : repeated_write_rules())
    EXPECT_TRUE(has(script.substr(script.find("WRITES = (")), "'" + std::string(w.op) + "'")) << w.op;
  for (const TiedIndexRule& t : tied_index_rules())
    EXPECT_TRUE(has(script, "'" + std::string(t.op) + "': (" + std::to_string(t.output) + ", " +
                                (t.reduced ? "True" : "False") + ")"))
        << t.op;
  // The accumulation bound's ops and how each sums, from the table; the static Python names none of them.
  EXPECT_FALSE(has(std::string(repro_script_accumulation()), "aten::")) << "an op is spelt in the bound's own Python";
  const std::size_t table = script.find("ACCUMULATION = [");
  ASSERT_NE(table, std::string::npos) << script;
  const std::string accumulation = script.substr(table, script.find('\n', table) - table);
  const auto py_bool = [](bool b) { return std::string(b ? "True" : "False"); };
  const auto py_text = [](const char* s) { return s ? "'" + std::string(s) + "'" : std::string("None"); };
  for (const AccumulationRule& a : accumulation_rules())
    EXPECT_TRUE(has(accumulation, "('" + std::string(a.op) + "', " + py_text(a.only_with) + ", " +
                                      py_bool(a.in == AccumulatesIn::Float32AtLeast) + ", " + py_bool(a.mean) + ", " +
                                      py_text(a.counted_with) + ", " + py_bool(a.product) + ")"))
        << a.op << "\n" << accumulation;
  TempDir tmp("cmp");
  const auto [status, output] = run_python(script, tmp.path);
  EXPECT_EQ(status, 0) << output << "\n" << script;
  EXPECT_TRUE(has(output, "output: pcc ") && has(output, "(minimum 0.999)")) << output;  // the table's pcc verdict ran
  EXPECT_TRUE(has(output, "device (cpu) agrees with the cpu reference")) << output;
}

}  // namespace
}  // namespace opcheck::repro
