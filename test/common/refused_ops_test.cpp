// The refused-op list: every spelling of a refused op is refused, ops that compute are not, and docs/design.md lists
// every entry (the schema walk against torch is test/exec/refused_ops_test.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/refused_ops.h"

namespace opcheck {
namespace {

TEST(RefusedOps, EverySpellingOfARefusedOpIsRefusedWithItsReason) {
  for (const char* op : {"torch.from_file", "torch.Tensor.from_file", "aten::from_file", "aten::from_file.out",
                         "aten.from_file.default", "torch.ops.aten.from_file.default", "torch.UntypedStorage.from_file",
                         "torch.save", "torch.Tensor.save", "aten::save", "torch.load", "torch.manual_seed",
                         "torch.cuda.manual_seed_all", "torch.set_default_dtype", "torch.set_num_threads",
                         "c10d::allreduce_", "profiler::_record_function_enter_new", "prim::Print"}) {
    const auto why = refused_op_reason(op);
    ASSERT_TRUE(why) << op << " is not refused";
    EXPECT_FALSE(why->empty()) << op;
  }
  EXPECT_EQ(refused_op_reason("aten::from_file.out").value_or(""),
            "reads a file, and with shared=True creates or extends it");
}

TEST(RefusedOps, OpsThatComputeAreNotRefused) {
  for (const char* op : {"torch.add", "aten::add.Tensor", "torch.Tensor.set_", "aten::set_.source_Tensor",
                         "torch.einsum", "torch.nn.functional.silu", "torch.seeded_thing", "aten::is_set_to",
                         "torch.Tensor.record", "mylib::from_files"})
    EXPECT_FALSE(refused_op_reason(op)) << op << " is refused: " << refused_op_reason(op).value_or("");
  EXPECT_TRUE(allowed_op_reason("aten::set_.source_Storage_storage_offset"));
  EXPECT_TRUE(allowed_op_reason("aten::einsum"));
  EXPECT_FALSE(allowed_op_reason("aten::from_file"));
  EXPECT_FALSE(allowed_op_reason("aten::set_.source_Tensor"));
}

TEST(RefusedOps, TheDocsListEveryDecidedOp) {
  std::ifstream in(std::string(OPCHECK_TEST_DIR) + "/../../docs/design.md");
  ASSERT_TRUE(in) << "cannot read docs/design.md beside the sources";
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const auto section = readme.find("## Reliability: what is refused, what is reported");
  ASSERT_NE(section, std::string::npos) << "docs/design.md has no Reliability section";
  const std::string body = readme.substr(section, readme.find("\n## ", section + 1) - section);
  for (const auto& d : decided_ops()) {
    std::string name = d.name;
    if (name.back() == '*') name.pop_back();                                  // aten::set.source_Storage*
    if (name.size() > 2 && name.compare(name.size() - 2, 2, "::") == 0) name += "*";  // c10d:: -> c10d::*
    if (!d.refused) continue;
    EXPECT_NE(body.find("`" + name), std::string::npos) << d.name << " is refused but not in docs/design.md";
  }
}

}  // namespace
}  // namespace opcheck
