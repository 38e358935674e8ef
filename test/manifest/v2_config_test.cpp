// torch-spyre's v2 configs (root key test_suite_config): the real files load unmodified, and every rule of the
// dialect (model, names, marks, dtype, tolerances, modes, filters) and every error is checked on small documents.
#include <gtest/gtest.h>

#include "corpus_dir.h"

#include <algorithm>
#include <filesystem>

#include "manifest/v2_config.h"
#include "opcheck/case.h"

using namespace opcheck;

namespace {

const std::string kV2 = opcheck::test::corpus_dir() + "/torch-spyre-v2";  // the real corpus (V2Fixtures)
const std::string kOwnV2 = std::string(OPCHECK_TEST_FIXTURES) + "/torch-spyre-v2";

std::string all_diags(const ManifestSet& s) {
  std::string out;
  for (const auto& d : s.diagnostics.items) out += d.format() + "\n";
  return out;
}

const Case* by_name(const Manifest& m, const std::string& name) {
  for (const auto& c : m.cases)
    if (c.name == name) return &c;
  return nullptr;
}

// A one-test config around `entries` (already indented as list items of `include:`).
std::string config(const std::string& entries, const std::string& mode = "xfail",
                   const std::string& test_tags = "[model__tiny]", const std::string& global_extra = "") {
  return "test_suite_config:\n"
         "  global:\n"
         "    supported_dtypes:\n"
         "      - {name: float16, precision: {atol: 0.01, rtol: 0.02}}\n"
         "      - {name: float32}\n"
         "      - {name: int64}\n"
         "      - {name: uint16}\n" +
         global_extra +
         "    input_config: {seed: 7}\n"
         "  files:\n"
         "    - path: ${TORCH_DEVICE_ROOT}/tests/models/test_model_ops_v2.py\n"
         "      unlisted_test_mode: skip\n"
         "      tests:\n"
         "        - names: [TestSpyreModelOps::test_model_ops_db]\n"
         "          mode: " +
         mode +
         "\n"
         "          tags: " +
         test_tags +
         "\n"
         "          edits:\n"
         "            ops:\n"
         "              include:\n" +
         entries + "cases: []\n";
}

const char* kAdd =
    "                - name: torch.add\n"
    "                  sample_inputs_func:\n"
    "                    args:\n"
    "                      - tensor: {shape: [2, 3], stride: [3, 1], dtype: torch.float16, device: cuda:0}\n"
    "                      - value: 1.0\n"
    "                  tags: [fp16operation, torch.add.1]\n";

// `text` with a second test (names written as a plain string) listing kAdd again under `mode`; its entry is at line 31.
std::string with_second_test(std::string text, const std::string& mode) {
  const std::string second =
      "        - names: TestSpyreModelOps::test_model_ops_db\n"
      "          mode: " +
      mode +
      "\n"
      "          tags: [model__tiny]\n"
      "          edits:\n"
      "            ops:\n"
      "              include:\n" +
      std::string(kAdd);
  text.insert(text.find("cases: []"), second);
  return text;
}

bool has_diag(const ManifestSet& s, Diagnostic::Severity sev, int line, const std::string& what,
              const std::string& fix_part) {
  return std::any_of(s.diagnostics.items.begin(), s.diagnostics.items.end(), [&](const Diagnostic& d) {
    return d.severity == sev && d.loc.line == line && d.message.find(what) != std::string::npos &&
           d.fix.find(fix_part) != std::string::npos;
  });
}

}  // namespace

// The repository's own config in torch-spyre's v2 dialect (test/fixtures/make_fixtures.py): what the real ones
// exercise, without the corpus.
TEST(V2Config, TheRepositorysConfigEntriesBecomeCasesNamedByTheirV1Tags) {
  ManifestSet s = load_manifests({kOwnV2 + "/tiny-gpt.yaml"});
  // Only its random index_copy_ indices, drawn without repeats (the result is undefined where they repeat), are said.
  ASSERT_EQ(s.diagnostics.items.size(), 1u) << all_diags(s);
  ASSERT_EQ(s.diagnostics.items[0].message, "index: randint drawn without repeats, as torch.index_copy_'s result is "
                                            "undefined where indices repeat") << all_diags(s);
  const Manifest& m = s.manifests.at(0);
  EXPECT_EQ(m.model, "tiny-gpt");
  EXPECT_EQ(m.variant, "");
  EXPECT_EQ(m.cases.size(), 34u);
  const Case* emb = by_name(m, "torch.nn.functional.embedding.1");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->id, "tiny-gpt::torch.nn.functional.embedding.1");
  EXPECT_EQ(emb->marks, (std::vector<std::string>{"bf16operation", "constant"}));
  EXPECT_EQ(emb->dtype, DType::Int64);  // args[0]'s: the int64 indices
  EXPECT_EQ(emb->upstream_test, "test_model_ops_db_torch_nn_functional_embedding__0_spyre_int64");
  EXPECT_EQ(emb->seed, 123);
  EXPECT_EQ(emb->atol, 0.005);
  ASSERT_EQ(emb->inputs.size(), 7u);
  EXPECT_EQ(emb->inputs[1].tensor.shape, (std::vector<std::int64_t>{64, 32}));
  EXPECT_EQ(emb->inputs[1].tensor.placement, Placement::DeviceUnderTest);
  for (const auto& c : m.cases) {
    ASSERT_EQ(c.xfail_if.size(), 1u) << c.id;  // mode: xfail, non-strict
    EXPECT_FALSE(c.xfail_if[0].strict) << c.id;
  }
  const Case* mean = by_name(m, "torch.mean.1");
  ASSERT_NE(mean, nullptr);
  ASSERT_EQ(mean->kwargs.size(), 1u);  // the op-level kwargs
  EXPECT_EQ(mean->kwargs[0].second.repr(), "True");
  const Case* zeros = by_name(m, "torch.zeros.1");
  ASSERT_NE(zeros, nullptr);
  EXPECT_EQ(zeros->dtype, DType::Float16);  // a first argument that is not a tensor
}

TEST(V2Fixtures, BothRealConfigsLoadUnmodifiedWithOnlyTheNoRepeatWarnings) {
  ManifestSet s = load_manifests({kV2 + "/gpt-oss-20b.yaml", kV2 + "/Meta-Llama-3.1-8B-Instruct_spyre.yaml"});
  // Only the 5 random index_copy_ indices drawn without repeats (the result is undefined where they repeat) are said.
  ASSERT_EQ(s.diagnostics.items.size(), 5u) << all_diags(s);
  for (const auto& d : s.diagnostics.items)
    ASSERT_EQ(d.message, "index: randint drawn without repeats, as torch.index_copy_'s result is undefined where "
                         "indices repeat") << all_diags(s);
  ASSERT_EQ(s.manifests.size(), 2u);
  const Manifest& gpt = s.manifests[0];
  const Manifest& llama = s.manifests[1];
  EXPECT_EQ(gpt.model, "gpt-oss-20b");
  EXPECT_EQ(gpt.variant, "");
  EXPECT_EQ(gpt.cases.size(), 243u);
  // The model tag `model__Meta-Llama-3.1-8B-Instruct_spyre` names the base model and the spyre variant.
  EXPECT_EQ(llama.model, "Meta-Llama-3.1-8B-Instruct");
  EXPECT_EQ(llama.variant, "spyre");
  EXPECT_EQ(llama.cases.size(), 54u);
  EXPECT_FALSE(gpt.sha256.empty());
}

TEST(V2Fixtures, EntriesBecomeCasesNamedByTheirV1Tags) {
  ManifestSet s = load_manifests({kV2 + "/gpt-oss-20b.yaml"});
  ASSERT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  const Manifest& m = s.manifests.at(0);
  const Case* emb = by_name(m, "torch.nn.functional.embedding.1");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->id, "gpt-oss-20b::torch.nn.functional.embedding.1");
  EXPECT_EQ(emb->op, "torch.nn.functional.embedding");
  EXPECT_EQ(emb->marks, (std::vector<std::string>{"bf16operation", "constant"}));
  // The case dtype is args[0]'s: the int64 indices.
  EXPECT_EQ(emb->dtype, DType::Int64);
  EXPECT_EQ(emb->upstream_test, "test_model_ops_db_torch_nn_functional_embedding__0_spyre_int64");
  EXPECT_EQ(emb->seed, 123);
  EXPECT_EQ(emb->atol, 0.005);
  EXPECT_EQ(emb->rtol, 0.005);
  ASSERT_EQ(emb->inputs.size(), 7u);
  EXPECT_EQ(emb->inputs[1].tensor.shape, (std::vector<std::int64_t>{201088, 2880}));
  EXPECT_EQ(emb->inputs[1].tensor.dtype, DType::BFloat16);
  EXPECT_EQ(emb->inputs[1].tensor.placement, Placement::DeviceUnderTest);  // cuda:0
  // Every test of the file is `mode: xfail`: a non-strict expected failure, never skipped.
  for (const auto& c : m.cases) {
    ASSERT_EQ(c.xfail_if.size(), 1u) << c.id;
    EXPECT_FALSE(c.xfail_if[0].strict) << c.id;
    EXPECT_TRUE(c.skip_if.empty()) << c.id;
  }
  // The op-level `kwargs:` beside sample_inputs_func is passed (upstream drops it).
  const Case* mean = by_name(m, "torch.mean.1");
  ASSERT_NE(mean, nullptr);
  ASSERT_EQ(mean->kwargs.size(), 1u);
  EXPECT_EQ(mean->kwargs[0].first, "keepdim");
  EXPECT_EQ(mean->kwargs[0].second.repr(), "True");
  // A first argument that is not a tensor gives float16.
  std::size_t scalar_first = 0;
  for (const auto& c : m.cases)
    if (!c.inputs.empty() && c.inputs[0].kind == Input::Kind::Value) {
      ++scalar_first;
      EXPECT_EQ(c.dtype, DType::Float16) << c.id;
    }
  EXPECT_EQ(scalar_first, 3u);
}

TEST(V2Config, ValueStringsReadAsTheV1LoaderReadsThem) {
  const std::string entry =
      "                - name: torch.Tensor.view\n"
      "                  sample_inputs_func:\n"
      "                    args:\n"
      "                      - tensor: {shape: [4], dtype: torch.float32, device: cpu}\n"
      "                      - value: (-1,)\n"
      "                      - value: torch.bfloat16\n"
      "                      - value: cuda\n"
      "                      - value: 'torch.float32'\n";
  ManifestSet s = load_manifest_text("tiny.yaml", config(entry));
  ASSERT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  const Case& c = s.manifests.at(0).cases.at(0);
  EXPECT_EQ(c.name, "torch.Tensor.view.1");  // no v1 tag: <op>.<n>
  EXPECT_EQ(c.inputs[0].tensor.placement, Placement::Host);  // device: cpu stays on the host
  EXPECT_EQ(c.inputs[1].value.repr(), "(-1,)");
  EXPECT_EQ(c.inputs[2].value.kind, PyValue::Kind::DType);
  EXPECT_EQ(c.inputs[3].value.kind, PyValue::Kind::Device);
  EXPECT_EQ(c.inputs[4].value.kind, PyValue::Kind::DType);  // quoted or not
}

TEST(V2Config, TolerancesSeedAndModelComeFromTheConfig) {
  // A per-op model__ tag (what upstream's --model matches) is neither a mark nor a warning.
  std::string add = kAdd;
  add.replace(add.find("[fp16operation,"), 15, "[model__tiny, fp16operation,");
  ManifestSet s = load_manifest_text("tiny_spyre.yaml", config(add, "xfail_strict", "[model__tiny__spyre, nightly]"));
  ASSERT_TRUE(s.diagnostics.items.empty()) << all_diags(s);
  const Manifest& m = s.manifests.at(0);
  EXPECT_EQ(m.model, "tiny");
  EXPECT_EQ(m.variant, "spyre");
  const Case& c = m.cases.at(0);
  EXPECT_EQ(c.id, "tiny::torch.add.1");
  EXPECT_EQ(c.atol, 0.01);
  EXPECT_EQ(c.rtol, 0.02);
  EXPECT_EQ(c.seed, 7);
  EXPECT_EQ(c.marks, (std::vector<std::string>{"fp16operation", "nightly"}));
  ASSERT_EQ(c.xfail_if.size(), 1u);
  EXPECT_TRUE(c.xfail_if[0].strict);
}

TEST(V2Config, ModelFallsBackToTheFileStem) {
  ManifestSet s = load_manifest_text("dir/granite_spyre.yaml", config(kAdd, "mandatory_success", "[]"));
  ASSERT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  EXPECT_EQ(s.manifests.at(0).model, "granite");
  EXPECT_EQ(s.manifests.at(0).variant, "spyre");
  const Case& c = s.manifests.at(0).cases.at(0);
  EXPECT_TRUE(c.xfail_if.empty());  // mandatory_success: a failure fails
  EXPECT_TRUE(c.skip_if.empty());
}

TEST(V2Config, ModesAndDtypeFiltersBecomeConditionsOfTheOccurrence) {
  const std::string bf16 =
      "                - name: torch.neg\n"
      "                  sample_inputs_func:\n"
      "                    args:\n"
      "                      - tensor: {shape: [2], dtype: bfloat16, device: cuda:0}\n";
  // bfloat16 is not in supported_dtypes: reported skipped, with the reason.
  ManifestSet s = load_manifest_text("t.yaml", config(bf16, "mandatory_success"));
  ASSERT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  const Case& c = s.manifests.at(0).cases.at(0);
  ASSERT_EQ(c.skip_if.size(), 1u);
  EXPECT_NE(c.skip_if[0].reason.find("dtype bfloat16 is not in global.supported_dtypes"), std::string::npos);
  ASSERT_TRUE(c.skip_if[0].ast);
  EXPECT_EQ(c.atol, 5e-3);  // not in supported_dtypes: the default tolerance

  // mode: skip
  s = load_manifest_text("t.yaml", config(kAdd, "skip"));
  ASSERT_EQ(s.manifests.at(0).cases.at(0).skip_if.size(), 1u);
  EXPECT_NE(s.manifests.at(0).cases.at(0).skip_if[0].reason.find("mode: skip"), std::string::npos);

  // force_xfail on a dtype turns mandatory_success into a non-strict xfail.
  std::string forced = config(kAdd, "mandatory_success");
  forced.replace(forced.find("{name: float16,"), 15, "{name: float16, force_xfail: true,");
  s = load_manifest_text("t.yaml", forced);
  ASSERT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  ASSERT_EQ(s.manifests.at(0).cases.at(0).xfail_if.size(), 1u);
  EXPECT_FALSE(s.manifests.at(0).cases.at(0).xfail_if[0].strict);
}

TEST(V2Config, ErrorsAreLocatedWithAFix) {
  // Line numbers: config() puts the first entry at line 19, its tensor at line 22.
  std::string typo = kAdd;
  typo.replace(typo.find("sample_inputs_func"), 18, "sample_input_func");
  ManifestSet s = load_manifest_text("t.yaml", config(typo));
  EXPECT_TRUE(has_diag(s, Diagnostic::Severity::Error, 20, "unknown key 'sample_input_func'", "sample_inputs_func"))
      << all_diags(s);

  std::string no_dtype = kAdd;
  no_dtype.replace(no_dtype.find(", dtype: torch.float16"), 22, "");
  s = load_manifest_text("t.yaml", config(no_dtype));
  EXPECT_TRUE(has_diag(s, Diagnostic::Severity::Error, 22, "tensor has no 'dtype'", "add dtype")) << all_diags(s);
  EXPECT_TRUE(s.manifests.empty() || s.manifests[0].cases.empty());

  std::string eye = kAdd;
  eye.replace(eye.find("device: cuda:0}"), 15, "device: cuda:0, init: eye}");
  s = load_manifest_text("t.yaml", config(eye));
  EXPECT_TRUE(has_diag(s, Diagnostic::Severity::Error, 22, "init: eye needs a square 2-D shape", "[n, n]"))
      << all_diags(s);

  s = load_manifest_text("t.yaml", config(kAdd, "xfial"));
  EXPECT_TRUE(has_diag(s, Diagnostic::Severity::Error, 14, "unknown mode 'xfial' (did you mean 'xfail'?)", "xfail_strict"))
      << all_diags(s);
  // The case id is named in diagnostics inside an entry.
  s = load_manifest_text("t.yaml", config(typo));
  ASSERT_FALSE(s.diagnostics.items.empty());
  EXPECT_EQ(s.diagnostics.items[0].case_id, "tiny::#1");
}

TEST(V2Config, AnEntryListedTwiceWithDifferentModesIsAnError) {
  // A second test listing the same entry under mode: skip.
  ManifestSet s = load_manifest_text("t.yaml", with_second_test(config(kAdd, "xfail"), "skip"));
  EXPECT_TRUE(has_diag(s, Diagnostic::Severity::Error, 31, "listed twice with different modes (skip here, xfail at line 19)",
                       "keep one listing"))
      << all_diags(s);
  ASSERT_EQ(s.manifests.size(), 1u);
  EXPECT_EQ(s.manifests[0].cases.size(), 1u);
}

TEST(V2Config, OtherTestNamesWarnAndTheirEntriesAreSkippedWithTheReason) {
  std::string text = config(kAdd);
  text.replace(text.find("TestSpyreModelOps::test_model_ops_db"), 36, "TestSpyreOps::test_ops");
  ManifestSet s = load_manifest_text("t.yaml", text);
  EXPECT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  EXPECT_TRUE(has_diag(s, Diagnostic::Severity::Warning, 13, "test 'TestSpyreOps::test_ops' is not", "")) << all_diags(s);
  EXPECT_TRUE(has_diag(s, Diagnostic::Severity::Warning, 19, "1 op entries of this test are not run", "")) << all_diags(s);
  // Not dropped: each entry is a case the reports show skipped, saying why.
  ASSERT_EQ(s.manifests.size(), 1u);
  ASSERT_EQ(s.manifests[0].cases.size(), 1u);
  const Case& c = s.manifests[0].cases[0];
  ASSERT_EQ(c.skip_if.size(), 1u);
  EXPECT_EQ(c.skip_if[0].reason.rfind("not run: test 'TestSpyreOps::test_ops' is not TestSpyreModelOps::test_model_ops_db (t.yaml:", 0), 0u)
      << c.skip_if[0].reason;
}

TEST(V2Config, ANearMissOfTheModelOpsTestIsAnErrorWithDidYouMean) {
  std::string text = config(kAdd);
  text.replace(text.find("TestSpyreModelOps::test_model_ops_db"), 36, "TestSpyreModelOps::test_model_ops_dbb");
  ManifestSet s = load_manifest_text("t.yaml", text);
  EXPECT_TRUE(has_diag(s, Diagnostic::Severity::Error, 13, "(did you mean 'TestSpyreModelOps::test_model_ops_db'?)", ""))
      << all_diags(s);
}

TEST(V2Config, UpstreamTestNamesCountEntriesThroughTheFile) {
  EXPECT_EQ(v2_upstream_test_name("torch.nn.functional.linear", 12, DType::BFloat16),
            "test_model_ops_db_torch_nn_functional_linear__12_spyre_bfloat16");
  EXPECT_EQ(torch_dtype_name(DType::Float16), std::string("float16"));
  EXPECT_EQ(torch_dtype_name(DType::Int64), std::string("int64"));
}

TEST(V2Config, TheSameEntryTwiceUnderOneModeIsReportedTwice) {
  ManifestSet s = load_manifest_text("t.yaml", with_second_test(config(kAdd, "xfail"), "xfail"));
  ASSERT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  EXPECT_TRUE(has_diag(s, Diagnostic::Severity::Warning, 31, "is listed again (first at line 19)", "remove"))
      << all_diags(s);
  ASSERT_EQ(s.manifests.at(0).cases.size(), 2u);
  EXPECT_EQ(s.manifests[0].cases[1].id, "tiny::torch.add.1~2");
}

TEST(V2Config, DtypeAndOpEditsOfATest) {
  const std::string bf16 =
      "                - name: torch.neg\n"
      "                  sample_inputs_func:\n"
      "                    args:\n"
      "                      - tensor: {shape: [2], dtype: bfloat16, device: cuda:0}\n";
  // edits.dtypes.include adds bfloat16 for this test; edits.ops.exclude skips torch.add.
  std::string text = config(bf16 + kAdd, "mandatory_success");
  text.replace(text.find("            ops:\n"), 17,
               "            dtypes:\n"
               "              include: [{name: bfloat16}]\n"
               "            ops:\n"
               "              exclude: [{name: torch.add}]\n");
  ManifestSet s = load_manifest_text("t.yaml", text);
  ASSERT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  const auto& cases = s.manifests.at(0).cases;
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_TRUE(cases[0].skip_if.empty()) << cases[0].skip_if[0].reason;
  ASSERT_EQ(cases[1].skip_if.size(), 1u);
  EXPECT_NE(cases[1].skip_if[0].reason.find("op torch.add is in edits.ops.exclude"), std::string::npos);
  // supported_dtypes written as plain names, and an empty list that filters nothing.
  std::string plain = config(bf16, "mandatory_success");
  const auto a = plain.find("      - {name: float16"), b = plain.find("    input_config");
  const std::string names = "      - float16\n      - half\n";
  plain.replace(a, b - a, names);
  s = load_manifest_text("t.yaml", plain);
  ASSERT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  ASSERT_EQ(s.manifests.at(0).cases.at(0).skip_if.size(), 1u);  // bfloat16 is not listed
  plain.replace(plain.find(names), names.size(), "");
  const std::string key = "    supported_dtypes:\n";
  plain.replace(plain.find(key), key.size(), "    supported_dtypes: []\n");
  s = load_manifest_text("t.yaml", plain);
  ASSERT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  EXPECT_TRUE(s.manifests.at(0).cases.at(0).skip_if.empty());
}
