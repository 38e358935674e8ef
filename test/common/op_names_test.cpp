// One table of op spellings (the dedupe key's, the resolver's and the Python host's), one edit distance, one
// meaning of `--device auto`.
#include <cstdlib>

#include <gtest/gtest.h>

#include "common/edit_distance.h"
#include "common/op_names.h"
#include "plan/plan.h"
#include "settings/device_choice.h"

namespace opcheck {
namespace {

TEST(CanonicalOp, EverySpellingOfOneFunctionIsOneName) {
  const std::vector<std::pair<std::vector<const char*>, const char*>> groups = {
      {{"F.silu", "torch.nn.functional.silu", "torch._C._nn.silu", " F.silu "}, "torch.nn.functional.silu"},
      {{"torch.add", "torch.Tensor.add", "Tensor.add", "torch._C._VariableFunctions.add", "operator.add",
        "_operator.add", "torch.__add__", "torch.Tensor.__add__"},
       "torch.add"},
      {{"operator.truediv", "torch.truediv", "torch.Tensor.__truediv__", "torch.__div__", "torch.div"}, "torch.div"},
      {{"operator.and_", "torch.and_", "torch.Tensor.__and__"}, "torch.__and__"},
      {{"operator.getitem", "torch.Tensor.__getitem__", "torch.getitem"}, "torch.getitem"},
      {{"operator.iadd", "torch.Tensor.__iadd__", "torch.Tensor.add_"}, "torch.add_"},
      {{"torch.functional.split", "torch.split"}, "torch.split"},
      {{"aten::add.Tensor", "aten.add.Tensor", "torch.ops.aten.add.Tensor"}, "aten::add.Tensor"},
      {{"aten::relu", "aten.relu.default", "torch.ops.aten.relu.default"}, "aten::relu"},
  };
  for (const auto& [spellings, canonical] : groups)
    for (const char* s : spellings) EXPECT_EQ(canonical_op(s), canonical) << s;
  // Other functions stay apart.
  EXPECT_NE(canonical_op("torch.__and__"), canonical_op("torch.bitwise_and"));
  EXPECT_NE(canonical_op("torch.__radd__"), canonical_op("torch.add"));  // reflected: operands trade places
  EXPECT_EQ(canonical_op("torch._C._log_api_usage_once"), "torch._C._log_api_usage_once");  // kept as written
}

TEST(CanonicalOp, AliasesTargetTheDefaultRuleOfTheirFunction) {
  const OpName n = parse_op_name("torch.Tensor.__mod__");
  EXPECT_EQ(n.form, OpName::Form::Python);
  EXPECT_EQ(n.python, "torch.remainder");
  EXPECT_EQ(n.qualified, "aten::remainder");
  EXPECT_EQ(n.written_prefix, "torch.Tensor.");
  EXPECT_EQ(parse_op_name("torch.special.erf").qualified, "aten::special_erf");
  EXPECT_EQ(parse_op_name("add").form, OpName::Form::Invalid);
  EXPECT_NE(parse_op_name("add").error.find("torch.add"), std::string::npos);
}

Case silu(const std::string& op) {
  Case c;
  c.id = "m::" + op;
  c.op = op;
  Input in;
  in.kind = Input::Kind::Tensor;
  in.tensor.shape = {4};
  c.inputs.push_back(in);
  return c;
}

TEST(CanonicalOp, OneFunctionOneDedupeKey) {
  EXPECT_EQ(dedupe_key(silu("F.silu")), dedupe_key(silu("torch.nn.functional.silu")));
  EXPECT_NE(dedupe_key(silu("F.silu")), dedupe_key(silu("F.gelu")));
  EXPECT_EQ(dedupe_key(silu("F.silu")).rfind("k4:", 0), 0u);
}

TEST(EditDistance, CountsTranspositionsAsOneEdit) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("float", "float"), 0u);
  EXPECT_EQ(edit_distance("flaot", "float"), 1u);    // transposition
  EXPECT_EQ(edit_distance("flot", "float"), 1u);     // insertion
  EXPECT_EQ(edit_distance("floaat", "float"), 1u);   // deletion
  EXPECT_EQ(edit_distance("flost", "float"), 1u);    // substitution
  EXPECT_EQ(edit_distance("gpt_oss", "granite"), 6u);
  EXPECT_EQ(edit_distance("ca", "abc"), 3u);  // optimal string alignment: no edit of a transposed pair
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("Float", "float"), 1u);    // case-sensitive
}

TEST(DeviceChoice, AutoIsTheImportsDeviceThenTheLibraryThenLoopback) {
  std::string why;
  EXPECT_EQ(resolve_auto_device("auto", "", false, &why), "loopback");
  EXPECT_NE(why.find("loopback"), std::string::npos);
  EXPECT_EQ(resolve_auto_device("", "/x/libspyre.so", false, &why), "privateuseone");
  EXPECT_EQ(why, "auto: device library configured");
  EXPECT_EQ(resolve_auto_device("auto", "", true), "privateuseone");
  EXPECT_EQ(resolve_auto_device("cpu", "/x/libspyre.so", true, &why), "cpu");
  EXPECT_EQ(why, "");
}

TEST(DeviceChoice, AutoTakesTheLibraryThenTheInstalledBackendThenLoopback) {
  const std::vector<std::string> installed = {"x = pkg:_autoload (pkg 0.1)"};
  std::string why;
  EXPECT_EQ(resolve_auto_device("auto", "", false, &why, installed), "privateuseone");
  EXPECT_EQ(why, "auto: the installed torch.backends entry point x = pkg:_autoload (pkg 0.1)");
  EXPECT_EQ(resolve_auto_device("auto", "/x/libspyre.so", false, &why, installed), "privateuseone");
  EXPECT_EQ(why, "auto: device library configured");
  EXPECT_EQ(resolve_auto_device("spyre", "", false, &why, installed), "spyre");
  // Which names may be an installed backend: any but cpu and loopback, and none when a library or modules name it.
  EXPECT_TRUE(may_be_installed_backend("auto", "", false));
  EXPECT_TRUE(may_be_installed_backend("opencl:1", "", false));
  EXPECT_FALSE(may_be_installed_backend("CPU", "", false));
  EXPECT_FALSE(may_be_installed_backend("loopback:0", "", false));
  EXPECT_FALSE(may_be_installed_backend("auto", "/x/libspyre.so", false));
  EXPECT_FALSE(may_be_installed_backend("spyre", "", true));
  EXPECT_TRUE(backend_autoload_off("0"));
  EXPECT_FALSE(backend_autoload_off("1"));
  EXPECT_FALSE(backend_autoload_off(nullptr));
  EXPECT_FALSE(list_installed_backends("/no/such/python", true).note.empty());
  EXPECT_TRUE(list_installed_backends("/no/such/python", true).entry_points.empty());
}

}  // namespace
}  // namespace opcheck
