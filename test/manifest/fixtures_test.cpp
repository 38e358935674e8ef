// torch-spyre's manifests load with zero errors, and their cases normalize as the YAML says: the repository's own
// (test/fixtures, OwnFixtures) always, the real corpus (RealFixtures, a corpus test) where it is present.
#include <gtest/gtest.h>

#include "corpus_dir.h"

#include <filesystem>
#include <set>
#include <vector>

#include "opcheck/case.h"

namespace fs = std::filesystem;
using namespace opcheck;

namespace {

const std::string kFixtures = opcheck::test::corpus_dir() + "/torch-spyre";
const std::string kOwn = std::string(OPCHECK_TEST_FIXTURES) + "/torch-spyre";

std::string all_diags(const ManifestSet& s) {
  std::string out;
  for (const auto& d : s.diagnostics.items) out += d.format() + "\n";
  return out;
}

const Manifest& only(const ManifestSet& s) {
  EXPECT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  EXPECT_EQ(s.manifests.size(), 1u) << all_diags(s);
  return s.manifests.at(0);
}

const Case& by_name(const Manifest& m, const std::string& name) {
  for (const auto& c : m.cases)
    if (c.name == name) return c;
  ADD_FAILURE() << "no case " << name << " in " << m.path;
  static const Case none;
  return none;
}

struct Expect {
  const char* file;
  const char* model;
  const char* variant;
  bool is_template;
  std::size_t cases;
};

// Each file loads alone without a diagnostic, as the model, variant, template or not, with the cases expected; every
// case has its id, a line, and a stride per dim.
void expect_each_file_loads(const std::string& dir, const std::vector<Expect>& expected) {
  for (const auto& e : expected) {
    ManifestSet s = load_manifests({dir + "/" + e.file});
    // Their random index_copy_ indices are drawn without repeats (the result is undefined where they repeat), each
    // with its warning; nothing else is said.
    for (const auto& d : s.diagnostics.items)
      EXPECT_NE(d.format().find(": warning: index: randint drawn without repeats, as torch.index_copy_'s result is "
                                "undefined where indices repeat"),
                std::string::npos)
          << e.file << "\n" << all_diags(s);
    const Manifest& m = only(s);
    EXPECT_EQ(m.model, e.model);
    EXPECT_EQ(m.variant, e.variant);
    EXPECT_EQ(m.is_template, e.is_template);
    EXPECT_EQ(m.cases.size(), e.cases) << e.file;
    for (const auto& c : m.cases) {
      EXPECT_EQ(c.id, m.model + "::" + c.name);
      EXPECT_GT(c.loc.line, 0);
      for (const auto& in : c.inputs) {
        if (in.kind == Input::Kind::Tensor) {
          EXPECT_EQ(in.tensor.stride.size(), in.tensor.shape.size()) << c.id;
        }
        for (const auto& t : in.list) EXPECT_EQ(t.stride.size(), t.shape.size()) << c.id;
      }
    }
  }
}

}  // namespace

TEST(OwnFixtures, EveryFileLoadsWithoutErrorsAsTheYamlSays) {
  expect_each_file_loads(kOwn, {
                                   {"tiny-gpt.yaml", "tiny-gpt", "", false, 34},
                                   {"tiny-gpt_spyre.yaml", "tiny-gpt", "spyre", false, 34},
                                   {"tiny-llama.yaml", "tiny-llama", "", false, 8},
                                   {"tiny-llama_spyre.yaml", "tiny-llama", "spyre", false, 8},
                                   {"template.yaml", "template", "", true, 4},
                               });
  // The dialect's features, as torch-spyre writes them, arrive in the case.
  ManifestSet s = load_manifests({kOwn + "/tiny-gpt_spyre.yaml"});
  const Manifest& m = only(s);
  const Case& emb = by_name(m, "torch.nn.functional.embedding.1_spyre");
  EXPECT_EQ(emb.inputs.at(0).tensor.init, InitKind::Randint);
  EXPECT_EQ(emb.inputs.at(0).tensor.placement, Placement::Host);  // device: cpu in a _spyre file
  EXPECT_EQ(emb.inputs.at(1).tensor.init, InitKind::Xavier);
  EXPECT_EQ(emb.inputs.at(1).tensor.placement, Placement::DeviceUnderTest);  // cuda:0
  EXPECT_EQ(emb.marks, (std::vector<std::string>{"bf16operation", "constant"}));
  const Case& strided = by_name(m, "torch.getitem.2_spyre");
  EXPECT_EQ(strided.inputs.at(0).tensor.stride, (std::vector<std::int64_t>{704, 16, 64, 1}));
  EXPECT_EQ(strided.inputs.at(1).kind, Input::Kind::Value);  // a `py` literal
  const Case& cat = by_name(m, "torch.cat.1_spyre");
  EXPECT_EQ(cat.inputs.at(0).kind, Input::Kind::TensorList);
  EXPECT_EQ(cat.inputs.at(0).list.size(), 2u);
  const Case& mean = by_name(m, "torch.mean.1_spyre");
  ASSERT_EQ(mean.kwargs.size(), 1u);  // kwmap
  EXPECT_EQ(mean.kwargs[0].first, "keepdim");
  EXPECT_EQ(mean.atol, 0.005);
  EXPECT_EQ(mean.seed, 123);
}

TEST(RealFixtures, EveryFileLoadsWithoutErrors) {
  expect_each_file_loads(kFixtures, {
                                        {"gpt-oss-20b.yaml", "gpt-oss-20b", "", false, 229},
                                        {"gpt-oss-20b_spyre.yaml", "gpt-oss-20b", "spyre", false, 229},
                                        {"Meta-Llama-3.1-8B-Instruct.yaml", "Meta-Llama-3.1-8B-Instruct", "", false, 113},
                                        {"Meta-Llama-3.1-8B-Instruct_spyre.yaml", "Meta-Llama-3.1-8B-Instruct", "spyre",
                                         false, 113},
                                        {"template.yaml", "template", "", true, 9},
                                        {"rfc-branch-template.yaml", "template", "", true, 13},
                                    });
}

TEST(RealFixtures, TheWholeFolderLoadsWithOnlyIdWarnings) {
  ManifestSet s = load_manifests({kFixtures});
  EXPECT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  std::size_t total = 0;
  for (const auto& m : s.manifests) total += m.cases.size();
  EXPECT_EQ(total, 229u * 2 + 113u * 2 + 9 + 13);
  // The two templates share case names, and so do a few base/_spyre pairs: all of those get qualified ids.
  std::set<std::string> ids;
  for (const auto& m : s.manifests)
    for (const auto& c : m.cases) EXPECT_TRUE(ids.insert(c.id).second) << "duplicate id " << c.id;
  bool template_qualified =
      ids.count("template::template/op_bool_tensors") && ids.count("template::rfc-branch-template/op_bool_tensors");
  EXPECT_TRUE(template_qualified);
  for (const auto& d : s.diagnostics.items) EXPECT_EQ(d.severity, Diagnostic::Severity::Warning) << d.format();
}

TEST(RealFixtures, GptOssCasesMatchTheYaml) {
  ManifestSet s = load_manifests({kFixtures + "/gpt-oss-20b.yaml"});
  const Manifest& m = only(s);

  // defaults: dtype fp16, seed 123, atol/rtol 0.005
  const Case& emb = by_name(m, "torch.nn.functional.embedding.1");
  EXPECT_EQ(emb.op, "torch.nn.functional.embedding");
  EXPECT_EQ(emb.dtype, DType::Float16);
  EXPECT_EQ(emb.seed, 123);
  EXPECT_EQ(emb.rtol, 0.005);
  EXPECT_EQ(emb.atol, 0.005);
  EXPECT_EQ(emb.marks, (std::vector<std::string>{"bf16operation", "constant"}));
  ASSERT_EQ(emb.inputs.size(), 7u);
  const TensorSpec& ids = emb.inputs[0].tensor;
  EXPECT_EQ(ids.shape, (std::vector<std::int64_t>{1, 11}));
  EXPECT_EQ(ids.dtype, DType::Int64);
  EXPECT_EQ(ids.dtype_spelling, "torch.int64");
  EXPECT_EQ(ids.init, InitKind::Randint);
  ASSERT_EQ(ids.init_args.size(), 1u);
  EXPECT_EQ(ids.init_args[0].second, PyValue::integer(1000));
  EXPECT_EQ(ids.placement, Placement::DeviceUnderTest);
  EXPECT_EQ(emb.inputs[1].tensor.shape, (std::vector<std::int64_t>{201088, 2880}));
  EXPECT_EQ(emb.inputs[1].tensor.dtype, DType::BFloat16);
  EXPECT_EQ(emb.inputs[2].value, PyValue::integer(199999));
  EXPECT_EQ(emb.inputs[3].value, PyValue::none());
  EXPECT_EQ(emb.inputs[4].value, PyValue::real(2.0));
  EXPECT_EQ(emb.inputs[5].value, PyValue::boolean(false));
  EXPECT_NE(emb.description.find("inputs_embeds"), std::string::npos);
  EXPECT_EQ(emb.description.find('\n'), std::string::npos) << "folded quoted scalar";

  // a py getitem
  const Case& gi = by_name(m, "torch.getitem.1");
  ASSERT_EQ(gi.inputs.size(), 2u);
  EXPECT_EQ(gi.inputs[1].kind, Input::Kind::Value);
  EXPECT_EQ(gi.inputs[1].value.repr(), "(None, slice(None, None, None), None)");
  EXPECT_EQ(gi.marks, (std::vector<std::string>{"fp32operation", "constant"}));

  // marks as a single string, a device value
  EXPECT_EQ(by_name(m, "torch.float.1").marks, (std::vector<std::string>{"fp32operation"}));
  EXPECT_EQ(by_name(m, "torch.to.1").inputs[1].value, PyValue::device("cuda:0"));

  // a tensor_list with a storage_offset, and kwmap keyword arguments
  const Case& chunk_get = by_name(m, "torch.getitem.3");
  ASSERT_EQ(chunk_get.inputs[0].kind, Input::Kind::TensorList);
  ASSERT_EQ(chunk_get.inputs[0].list.size(), 2u);
  EXPECT_EQ(chunk_get.inputs[0].list[1].stride, (std::vector<std::int64_t>{45056, 64, 4096, 1}));
  EXPECT_EQ(chunk_get.inputs[0].list[1].storage_offset, 32);
  EXPECT_FALSE(chunk_get.inputs[0].list[1].is_contiguous());

  // kwmap with a dtype and a device
  const Case& zeros = by_name(m, "torch.zeros.1");
  EXPECT_EQ(zeros.inputs.at(0).value.repr(), "(1, 8, 128, 64)");
  ASSERT_EQ(zeros.kwargs.size(), 2u);
  EXPECT_EQ(zeros.kwargs[0].first, "dtype");
  EXPECT_EQ(zeros.kwargs[0].second, PyValue::of_dtype(DType::BFloat16));
  EXPECT_EQ(zeros.kwargs[1].first, "device");
  EXPECT_EQ(zeros.kwargs[1].second, PyValue::device("cuda:0"));
}

TEST(RealFixtures, LlamaCasesMatchTheYaml) {
  ManifestSet s = load_manifests({kFixtures + "/Meta-Llama-3.1-8B-Instruct.yaml"});
  const Manifest& m = only(s);
  EXPECT_EQ(m.cases.size(), 113u);
  std::size_t tuple_values = 0;
  for (const auto& c : m.cases) {
    EXPECT_EQ(c.dtype, DType::Float16) << c.id;
    for (const auto& in : c.inputs)
      if (in.kind == Input::Kind::Value && in.value.kind == PyValue::Kind::Tuple) ++tuple_values;
  }
  EXPECT_GT(tuple_values, 0u) << "value: (1, 11, -1, 128) style strings become tuples";

  // A transposed-view tensor (stride [49152, 128, 4096, 1]) keeps its layout as written.
  const Case& mul = by_name(m, "torch.mul.4");
  ASSERT_EQ(mul.inputs.size(), 2u);
  const TensorSpec& q = mul.inputs[0].tensor;
  EXPECT_EQ(q.shape, (std::vector<std::int64_t>{1, 32, 12, 128}));
  EXPECT_EQ(q.stride, (std::vector<std::int64_t>{49152, 128, 4096, 1}));
  EXPECT_FALSE(q.is_contiguous());
  EXPECT_EQ(q.storage_bytes(), (31 * 128 + 11 * 4096 + 127 + 1) * 2);
  EXPECT_EQ(mul.inputs[1].tensor.stride, (std::vector<std::int64_t>{1536, 1536, 128, 1}));
  EXPECT_EQ(mul.marks, (std::vector<std::string>{"bf16operation"}));
  const Case& half = by_name(m, "torch.getitem.3");
  EXPECT_EQ(half.inputs.at(1).value.repr(), "(Ellipsis, slice(None, 64, None))");
}

TEST(RealFixtures, TemplatesUseTheRfcFeatures) {
  ManifestSet ts = load_manifests({kFixtures + "/template.yaml"});
  const Manifest& t = only(ts);
  EXPECT_EQ(by_name(t, "mul_basic").dtype, DType::Float16) << "`default:` is read like `defaults:`";
  EXPECT_EQ(by_name(t, "mul_basic").rtol, 5.0e-3);
  const Case& softmax = by_name(t, "softmax_lastdim");
  ASSERT_EQ(softmax.kwargs.size(), 1u);
  EXPECT_EQ(softmax.kwargs[0].second, PyValue::integer(-1));
  EXPECT_EQ(by_name(t, "aten_view").inputs[1].value.repr(), "[2, 32]");
  EXPECT_EQ(by_name(t, "getitem_ellipsis_none_fullslice").inputs[1].value.repr(),
            "(Ellipsis, None, slice(None, None, None))");
  EXPECT_EQ(by_name(t, "op_bool_tensors").inputs[0].tensor.dtype, DType::Bool);

  ManifestSet rs = load_manifests({kFixtures + "/rfc-branch-template.yaml"});
  const Manifest& r = only(rs);
  const Case& view = by_name(r, "view_should_error_on_noncontig");
  ASSERT_TRUE(view.expects_error);
  EXPECT_EQ(view.expects_error->type, "RuntimeError");
  EXPECT_EQ(view.expects_error->match, "view");
  const TensorSpec& sliced = view.inputs[0].tensor;
  EXPECT_EQ(sliced.preset, "noncontig_slice");
  EXPECT_EQ(sliced.shape, (std::vector<std::int64_t>{2, 3, 8}));
  EXPECT_EQ(sliced.stride, (std::vector<std::int64_t>{48, 16, 1}));
  EXPECT_EQ(by_name(r, "contiguous_from_transpose_view").inputs[0].tensor.stride,
            (std::vector<std::int64_t>{24, 1, 3}));
  const Case& rsqrt = by_name(r, "rsqrt_skip_example");
  ASSERT_EQ(rsqrt.skip_if.size(), 1u);
  EXPECT_EQ(rsqrt.skip_if[0].reason, "Spyre fp16 rsqrt not supported yet");
  CondEnv env;
  env.device = "spyre";
  env.dtype = rsqrt.dtype_spelling;
  EXPECT_TRUE(rsqrt.skip_if[0].ast->evaluate(env));
  env.device = "loopback";
  EXPECT_FALSE(rsqrt.skip_if[0].ast->evaluate(env));
  EXPECT_EQ(by_name(r, "mul_tensor_scalar").inputs[0].tensor.init, InitKind::Uniform);
  EXPECT_EQ(by_name(r, "softmax_lastdim").inputs[0].tensor.init, InitKind::Arange);
}

TEST(GoodManifests, TrickyButValidManifestsLoadCleanly) {
  const std::string dir = std::string(OPCHECK_TEST_DIR) + "/good";
  ManifestSet s = load_manifests({dir});
  EXPECT_FALSE(s.diagnostics.has_errors()) << all_diags(s);
  std::size_t yaml_files = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".yaml") ++yaml_files;
  EXPECT_EQ(s.manifests.size(), yaml_files);
  for (const auto& m : s.manifests) EXPECT_FALSE(m.cases.empty()) << m.path;
}
