// A manifest of >= 150 distinct aten ops by schema name: every one binds, runs on cpu and passes.
#include <gtest/gtest.h>

#include "corpus_dir.h"

#include <fstream>
#include <set>

#include "opcheck/case.h"
#include "test_support.h"

namespace opcheck {
namespace {

TEST(AtenOps, EveryCasePassesOnCpu) {
  const ManifestSet set = load_manifests({std::string(OPCHECK_TEST_DIR) + "/aten_ops.yaml"});
  ASSERT_FALSE(set.diagnostics.has_errors()) << set.diagnostics.items.at(0).format();
  ASSERT_EQ(set.manifests.size(), 1u);
  const auto& cases = set.manifests[0].cases;

  std::set<std::string> ops;
  for (const auto& c : cases) {
    EXPECT_EQ(c.op.rfind("aten::", 0), 0u) << c.op;
    ops.insert(c.op);
  }
  EXPECT_GE(ops.size(), 150u);
  EXPECT_EQ(ops.size(), cases.size()) << "one case per op";

  auto exec = test::make_executor();
  int passed = 0;
  for (const auto& c : cases) {
    const Result r = exec->run(c);
    EXPECT_EQ(r.stage, Stage::PASSED) << c.op << ": " << stage_name(r.stage) << ": " << r.message;
    if (c.op.find('.') != std::string::npos) {
      EXPECT_EQ(r.resolved_op, c.op);
    } else {
      EXPECT_EQ(r.resolved_op.rfind(c.op, 0), 0u) << c.op << " resolved to " << r.resolved_op;
    }
    passed += r.stage == Stage::PASSED;
  }
  std::printf("aten_ops.yaml: %zu distinct ops, %d passed\n", ops.size(), passed);
}

}  // namespace
}  // namespace opcheck

namespace opcheck {
namespace {

// Every op name of the real torch-spyre manifests, called the way the models call it, passes on cpu; the list is
// checked against docs/real-op-names.md when the shared docs are present.
TEST(RealNames, EveryRealNamePassesOnCpu) {
  const ManifestSet set = load_manifests({std::string(OPCHECK_TEST_DIR) + "/python_names.yaml"});
  ASSERT_FALSE(set.diagnostics.has_errors()) << set.diagnostics.items.at(0).format();
  ASSERT_EQ(set.manifests.size(), 1u);
  std::set<std::string> ops;
  for (const auto& c : set.manifests[0].cases) ops.insert(c.op);

  std::ifstream doc(opcheck::test::corpus_dir() + "/../docs/real-op-names.md");
  std::string line;
  int listed = 0;
  while (std::getline(doc, line)) {
    const auto a = line.find("| `"), b = line.rfind("` |");
    if (line.rfind("| ", 0) != 0 || a == std::string::npos || b == std::string::npos || b <= a + 3) continue;
    const std::string op = line.substr(a + 3, b - a - 3);
    ++listed;
    EXPECT_TRUE(ops.count(op)) << op << " (from real-op-names.md) has no case in python_names.yaml";
  }
  if (doc.is_open()) {
    EXPECT_GE(listed, 80);
  }

  auto exec = test::make_executor();
  for (const auto& c : set.manifests[0].cases) {
    const Result r = exec->run(c);
    const Stage want = c.op == "torch._C._log_api_usage_once" ? Stage::SKIPPED : Stage::PASSED;
    EXPECT_EQ(r.stage, want) << c.id << " (" << c.op << "): " << stage_name(r.stage) << ": " << r.message;
  }
}

}  // namespace
}  // namespace opcheck
