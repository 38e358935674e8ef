// Failure bundles: folder names, the one-case manifest's round trip through the loader, and what an Executor on the
// cpu device leaves behind for errored, invalid and passing cases.
#include <gtest/gtest.h>

#include "corpus_dir.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "exec/bundle.h"
#include "manifest/manifest_writer.h"
#include "repro/bundle_layout.h"
#include "repro_files.h"
#include "exec/engine.h"
#include "plan/plan.h"
#include "settings/run_settings.h"

namespace fs = std::filesystem;

namespace opcheck::exec {
namespace {

using test::read;
using test::TempDir;
using test::write;

std::string diagnostics_text(const DiagnosticList& d) {
  std::string s;
  for (const auto& item : d.items) s += item.format() + "\n";
  return s;
}

TEST(BundleFolderName, KeepsReadableIdsAndSeparatesTheRest) {
  EXPECT_EQ(repro::bundle_folder_name("gpt-oss-20b::torch.mul.3"), "gpt-oss-20b__torch.mul.3");
  EXPECT_EQ(repro::bundle_folder_name("m::Case_1-x"), "m__Case_1-x");

  // Lossy forms carry a digest of the id, so ids that read alike still get their own folder.
  const std::string slash = repro::bundle_folder_name("m::stem/case");
  const std::string space = repro::bundle_folder_name("m::stem case");
  EXPECT_NE(slash, space);
  EXPECT_EQ(slash.rfind("m__stem_case-", 0), 0u) << slash;
  EXPECT_NE(repro::bundle_folder_name("a::b__c"), repro::bundle_folder_name("a__b::c"));
  EXPECT_EQ(repro::bundle_folder_name("..::x").front(), '_');
  EXPECT_EQ(repro::bundle_folder_name("").front(), '_');

  const std::string long_id = "m::" + std::string(300, 'x');
  const std::string name = repro::bundle_folder_name(long_id);
  EXPECT_LE(name.size(), 130u);
  EXPECT_NE(name, repro::bundle_folder_name(long_id + "y"));
  for (const std::string& id : {slash, space, name, repro::bundle_folder_name("m::\"weird\"\n/name*?")})
    EXPECT_EQ(id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"),
              std::string::npos)
        << id;
}

/// Writes every case of `paths` as a one-case manifest (the recipe form a staged bundle has, `file:` inputs copied
/// into it) and loads it back: the dedupe key — op, inputs, values, kwargs, dtype, seed, comparator, tolerances,
/// expects_error, nondeterminism — and the case's name, marks and description must come back unchanged.
std::size_t expect_round_trip(const std::vector<std::string>& paths, const fs::path& dir) {
  ManifestSet set = load_manifests(paths);
  EXPECT_FALSE(set.diagnostics.has_errors()) << diagnostics_text(set.diagnostics);
  std::size_t checked = 0;
  std::set<std::string> folders;
  for (const auto& m : set.manifests) {
    for (const auto& c : m.cases) {
      // A module case stages no bundle of its own (its traced calls are written as op cases): nothing to round-trip.
      if (c.is_module()) continue;
      const fs::path folder = dir / repro::bundle_folder_name(c.id);
      EXPECT_TRUE(folders.insert(folder.string()).second) << "two cases share the folder " << folder;
      std::vector<std::vector<manifest_text::TensorSource>> tensors(c.inputs.size());
      for (std::size_t i = 0; i < c.inputs.size(); ++i) {
        const Input& in = c.inputs[i];
        const bool list = in.kind == Input::Kind::TensorList;
        const std::size_t n = in.kind == Input::Kind::Value ? 0 : list ? in.list.size() : 1;
        for (std::size_t j = 0; j < n; ++j) {
          const TensorSpec& t = list ? in.list[j] : in.tensor;
          manifest_text::TensorSource b;
          if (t.init == InitKind::File) {
            b.file = "inputs/" + std::to_string(i) + "_" + std::to_string(j) + ".pt";
            fs::create_directories((folder / b.file).parent_path());
            fs::copy_file(t.file, folder / b.file, fs::copy_options::overwrite_existing);
          }
          tensors[i].push_back(b);
        }
      }
      const std::string text = manifest_text::case_manifest(c, tensors, "round trip of " + c.id);
      write(folder / repro::kBundleManifest, text);
      ManifestSet back = load_manifests({(folder / repro::kBundleManifest).string()});
      if (back.diagnostics.has_errors() || back.manifests.size() != 1 || back.manifests[0].cases.size() != 1) {
        ADD_FAILURE() << c.id << " does not load back:\n" << diagnostics_text(back.diagnostics) << text;
        continue;
      }
      const Case& b = back.manifests[0].cases[0];
      EXPECT_EQ(dedupe_key(b), dedupe_key(c)) << c.id << ":\n" << canonical_case_text(c) << "\nvs\n"
                                              << canonical_case_text(b) << "\n" << text;
      EXPECT_EQ(b.model, c.model);
      EXPECT_EQ(b.name, c.name);
      EXPECT_EQ(b.op, c.op);
      EXPECT_EQ(b.marks, c.marks) << c.id;
      EXPECT_EQ(b.description, c.description) << c.id;
      EXPECT_EQ(b.timeout_s, c.timeout_s) << c.id;
      EXPECT_EQ(b.kwargs.size(), c.kwargs.size()) << c.id;
      EXPECT_TRUE(b.skip_if.empty() && b.xfail_if.empty()) << "conditions are left out of a bundle";
      ++checked;
    }
  }
  return checked;
}

TEST(OneCaseManifest, EveryShippedAndTestManifestComesBackWithTheSameKey) {
  TempDir tmp("roundtrip");
  const fs::path src(OPCHECK_TEST_DIR);
  const fs::path root = src.parent_path().parent_path();
  const std::size_t n =
      expect_round_trip({(root / "manifests").string(), (root / "test" / "exec" / "python_names.yaml").string(),
                         (root / "test" / "exec" / "aten_ops.yaml").string(), (root / "test" / "fixtures" / "torch-spyre").string()},
                        tmp.path);
  EXPECT_GE(n, 580u);
}

TEST(OneCaseManifest, EveryRealFixtureComesBackWithTheSameKey) {
  const fs::path fixtures = fs::path(opcheck::test::corpus_dir()) / "torch-spyre";
  ASSERT_TRUE(fs::is_directory(fixtures))
      << "no fixtures at " << fixtures << ". Fix: set OPCHECK_FIXTURES=DIR (or configure with -DOPCHECK_FIXTURES=DIR), DIR holding torch-spyre/";
  TempDir tmp("fixtures");
  EXPECT_GE(expect_round_trip({fixtures.string()}, tmp.path), 700u);  // every case of the six files
}

TEST(OneCaseManifest, ValuesTheLoaderWouldReinterpretStayAsTheyWere) {
  // Strings that read like None, numbers, literals, dtypes or devices; floats that need every digit; devices.
  const std::string text = R"yaml(model: tricky
cases:
  - name: "odd values"
    op: torch.add
    inputs:
      - tensor: {shape: [2, 3], stride: [1, 2], storage_offset: 3, device: cpu, init: randn, init_args: {mean: 0.1, std: 3}}
      - py: "('None', '(1, 2)', 'torch.float16', 'cuda:0', 1e-300, -inf, nan, Ellipsis, slice(None, 2, -1), [True, None])"
      - value: cuda:0
      - value: 'True'
    kwmap: {mode: '(''None'')', alpha: 0.30000000000000004, beta: 1.0e-05, dtype: torch.bfloat16, s: "a b", e: '(Ellipsis)', t: '(1,)', n: null, d: cpu}
    rtol: 0.1
    atol: 1.0e-07
    compare: pcc
    pcc_min: 0.95
    equal_nan: false
    nondeterministic: true
    expects_error: {type: RuntimeError, match: "size \"of\" \\d+"}
    marks: [a, b]
    description: "line one\nline \"two\"\ttab"
)yaml";
  TempDir tmp("tricky");
  ManifestSet set = load_manifest_text((tmp.path / "tricky.yaml").string(), text);
  ASSERT_FALSE(set.diagnostics.has_errors()) << diagnostics_text(set.diagnostics);
  ASSERT_EQ(set.manifests.at(0).cases.size(), 1u);
  const Case& c = set.manifests[0].cases[0];
  ASSERT_EQ(c.kwargs.size(), 9u);
  const std::string out = manifest_text::case_manifest(c, {});
  ManifestSet back = load_manifest_text((tmp.path / "back.yaml").string(), out);
  ASSERT_FALSE(back.diagnostics.has_errors()) << diagnostics_text(back.diagnostics) << out;
  const Case& b = back.manifests.at(0).cases.at(0);
  EXPECT_EQ(dedupe_key(b), dedupe_key(c)) << out;
  ASSERT_EQ(b.inputs.size(), c.inputs.size());
  for (std::size_t i = 1; i < c.inputs.size(); ++i) EXPECT_EQ(b.inputs[i].value, c.inputs[i].value) << i << "\n" << out;
  EXPECT_EQ(b.inputs[2].value.kind, PyValue::Kind::Device);
  EXPECT_EQ(b.inputs[3].value.kind, PyValue::Kind::Bool);
  for (std::size_t k = 0; k < c.kwargs.size(); ++k) {
    EXPECT_EQ(b.kwargs[k].first, c.kwargs[k].first);
    EXPECT_EQ(b.kwargs[k].second, c.kwargs[k].second) << c.kwargs[k].first << ": " << c.kwargs[k].second.repr() << "\n"
                                                      << out;
  }
  EXPECT_EQ(b.inputs[0].tensor.placement, Placement::Host);
  EXPECT_EQ(b.description, c.description);
  EXPECT_EQ(b.expects_error->match, c.expects_error->match);
  EXPECT_TRUE(b.nondeterministic_ok);
  EXPECT_FALSE(b.equal_nan);
}

// ---- bundles an Executor writes (device cpu: errors and invalid cases are what fails there) ----------------------

std::unique_ptr<Executor> cpu_executor(const std::string& bundles) {
  RunSettings settings;  // as `opcheck run --device cpu --save-failures DIR` resolves them
  settings.device = "cpu";
  settings.save_failures_dir = bundles;
  const ExecOptions o = exec_options(settings);
  std::string error;
  std::unique_ptr<Executor> ex(opcheck_create_executor(&o, &error));
  EXPECT_TRUE(ex) << error;
  return ex;
}

nlohmann::json facts_of(const fs::path& folder) { return nlohmann::json::parse(read(folder / repro::kBundleFacts)); }

/// The one case of a bundle, loaded as `opcheck run --manifests BUNDLE/case.yaml` loads it.
Case bundle_case(const fs::path& folder) {
  ManifestSet set = load_manifests({(folder / repro::kBundleManifest).string()});
  EXPECT_FALSE(set.diagnostics.has_errors()) << diagnostics_text(set.diagnostics) << read(folder / repro::kBundleManifest);
  EXPECT_EQ(set.manifests.size(), 1u);
  return set.manifests.at(0).cases.at(0);
}

class CpuBundles : public ::testing::Test {
 protected:
  TempDir tmp{"cpu"};
  fs::path bundles = tmp.path / "bundles";
  std::unique_ptr<Executor> ex = cpu_executor(bundles.string());

  Case load(const std::string& cases) {
    const fs::path path = tmp.path / "m.yaml";
    write(path, "model: cpu-bundles\ndefaults: {seed: 11}\ncases:\n" + cases);
    ManifestSet set = load_manifests({path.string()});
    EXPECT_FALSE(set.diagnostics.has_errors()) << diagnostics_text(set.diagnostics);
    return set.manifests.at(0).cases.at(0);
  }
};

TEST_F(CpuBundles, AnErroredCaseKeepsItsExactInputsAndRerunsTheSame) {
  // A strided tensor list, a host tensor and values: the reference raises, so the case errors (FAILED_REFERENCE).
  const Case c = load(R"(  - name: cat.bad
    op: torch.cat
    inputs:
      - tensor_list:
          - {shape: [2, 3], stride: [1, 4], storage_offset: 1, init: randn}
          - {shape: [3, 3], dtype: fp16}
      - value: 5
)");
  const Result r = ex->run(c);
  ASSERT_EQ(r.stage, Stage::FAILED_REFERENCE) << r.message;
  const fs::path folder = bundles / repro::bundle_folder_name(c.id);
  ASSERT_TRUE(fs::exists(folder / repro::kBundleManifest)) << folder;
  EXPECT_TRUE(fs::exists(folder / "inputs" / "0_0.pt"));
  EXPECT_TRUE(fs::exists(folder / "inputs" / "0_1.pt"));
  EXPECT_FALSE(fs::exists(folder / repro::kBundleReference)) << "the reference raised: there is no output to keep";

  const auto facts = facts_of(folder);
  EXPECT_EQ(facts["case_id"], c.id);
  EXPECT_EQ(facts["stage"], "FAILED_REFERENCE");
  EXPECT_EQ(facts["message"], r.message);
  EXPECT_EQ(facts["input_digests"].get<std::vector<std::string>>(), r.input_digests);
  const std::string readme = read(folder / repro::kBundleReadme);
  EXPECT_NE(readme.find("FAILED_REFERENCE"), std::string::npos);
  EXPECT_NE(readme.find("run --manifests " + (folder / repro::kBundleManifest).string() + " --device cpu"), std::string::npos)
      << readme;
  EXPECT_NE(readme.find("repro --bundle " + folder.string() + " --python"), std::string::npos) << readme;

  // The bundle's case: the same id, file inputs with the original layout, and the same result when run again.
  const Case again = bundle_case(folder);
  EXPECT_EQ(again.id, c.id);
  const TensorSpec& first = again.inputs.at(0).list.at(0);
  EXPECT_EQ(first.init, InitKind::File);
  EXPECT_EQ(first.stride, (std::vector<std::int64_t>{1, 4}));
  EXPECT_EQ(first.storage_offset, 1);
  EXPECT_EQ(again.inputs.at(0).list.at(1).dtype, DType::Float16);
  EXPECT_EQ(again.inputs.at(1).value, PyValue::integer(5));
  std::unique_ptr<Executor> plain = cpu_executor("");
  const Result rerun = plain->run(again);
  EXPECT_EQ(rerun.stage, r.stage);
  EXPECT_EQ(rerun.message, r.message);
  EXPECT_EQ(rerun.input_digests, r.input_digests);
}

TEST_F(CpuBundles, AnInvalidCaseKeepsItsRecipe) {
  const Case c = load(R"(  - name: typo
    op: torch.flor
    inputs:
      - tensor: {shape: [3], init: uniform, init_args: {low: -1, high: 1}}
)");
  const Result r = ex->run(c);
  ASSERT_EQ(r.stage, Stage::INVALID_CASE);
  const fs::path folder = bundles / repro::bundle_folder_name(c.id);
  const Case again = bundle_case(folder);
  EXPECT_EQ(again.inputs.at(0).tensor.init, InitKind::Uniform);
  EXPECT_EQ(dedupe_key(again), dedupe_key(c));
  EXPECT_EQ(facts_of(folder)["stage"], "INVALID_CASE");
  EXPECT_EQ(cpu_executor("")->run(again).message, r.message);
}

TEST_F(CpuBundles, PassingCasesLeaveNothingAndReplaceAnOlderBundle) {
  const Case c = load(R"(  - name: add.ok
    op: torch.add
    inputs:
      - tensor: {shape: [2, 2]}
      - tensor: {shape: [2, 2]}
)");
  const fs::path folder = bundles / repro::bundle_folder_name(c.id);
  write(folder / repro::kBundleReadme, "a bundle from an earlier, failing run");
  EXPECT_EQ(ex->run(c).stage, Stage::PASSED);
  EXPECT_FALSE(fs::exists(folder)) << "the case passes now: its old bundle would mislead";
}

TEST_F(CpuBundles, AStagedBundleSaysTheRunDidNotFinish) {
  // What a worker that dies on the case leaves: stage() without finish().
  const Case c = load(R"(  - name: staged
    op: torch.exp
    inputs:
      - tensor: {shape: [4], init: randn}
)");
  RunSettings settings;
  settings.device = "loopback";
  const ExecOptions o = exec_options(settings);
  ExecInfo info;
  info.device_name = "loopback";
  FailureBundles staged(bundles.string(), o, info);
  staged.stage(c);
  const fs::path folder = bundles / repro::bundle_folder_name(c.id);
  EXPECT_EQ(dedupe_key(bundle_case(folder)), dedupe_key(c));
  EXPECT_NE(read(folder / repro::kBundleReadme).find("did not finish"), std::string::npos);
  EXPECT_EQ(facts_of(folder)["finished"], false);
  EXPECT_EQ(facts_of(folder)["rerun_device_args"], nlohmann::json::array({"--device", "loopback"}));
}

}  // namespace
}  // namespace opcheck::exec
