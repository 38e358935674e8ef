// The case wire (runner/result_wire.h encode_case/decode_case): how a worker started by a Python device's start-up
// process, which shares no memory with the pool, gets the cases it runs.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "opcheck/case.h"
#include "plan/plan.h"
#include "runner/result_wire.h"

namespace opcheck {
namespace {

std::string where(const SourceLoc& l) { return l.file + ":" + std::to_string(l.line) + ":" + std::to_string(l.col); }

Case through_the_wire(const Case& c) {
  std::vector<std::uint8_t> bytes;
  encode_case(c, bytes);
  Case back;
  std::string error;
  EXPECT_TRUE(decode_case(bytes.data(), bytes.size(), back, error)) << c.id << ": " << error;
  return back;
}

// Every case of the bundled manifests and the torch-spyre-dialect fixtures computes the same after the wire: the dedupe key
// (every field that decides what a case computes and how it is judged) is the same, and so is what the reports and
// bundles name (id, locations, marks, description, conditions' text, timeout, upstream test).
TEST(CaseWire, EveryBundledAndFixtureCaseArrivesUnchanged) {
  const ManifestSet set = load_manifests({std::string(OPCHECK_TEST_DIR) + "/../../manifests",
                                          std::string(OPCHECK_TEST_FIXTURES) + "/torch-spyre",
                                          std::string(OPCHECK_TEST_FIXTURES) + "/torch-spyre-modules"});
  std::size_t checked = 0, modules = 0, keywords = 0;
  for (const auto& m : set.manifests) {
    for (const auto& c : m.cases) {
      const Case back = through_the_wire(c);
      EXPECT_EQ(dedupe_key(back), dedupe_key(c)) << c.id;
      EXPECT_EQ(back.id, c.id);
      EXPECT_EQ(back.model + "|" + back.variant + "|" + back.name + "|" + back.op,
                c.model + "|" + c.variant + "|" + c.name + "|" + c.op);
      EXPECT_EQ(where(back.loc), where(c.loc)) << c.id;
      ASSERT_EQ(back.inputs.size(), c.inputs.size()) << c.id;
      for (std::size_t i = 0; i < c.inputs.size(); ++i) {
        EXPECT_EQ(where(back.inputs[i].loc), where(c.inputs[i].loc)) << c.id;
        EXPECT_EQ(where(back.inputs[i].tensor.loc), where(c.inputs[i].tensor.loc)) << c.id;
        EXPECT_EQ(back.inputs[i].tensor.preset, c.inputs[i].tensor.preset) << c.id;
        EXPECT_EQ(back.inputs[i].keyword, c.inputs[i].keyword) << c.id;
        keywords += !c.inputs[i].keyword.empty();
      }
      ASSERT_EQ(back.is_module(), c.is_module()) << c.id;
      if (c.is_module()) {  // every field of the module, as its table declares them
        ++modules;
        for (const ModuleField& f : kModuleFields) EXPECT_TRUE(field_equal(*back.module, *c.module, f)) << f.name;
      }
      for (const CaseField& f : kCaseFields)  // every case field, as its table declares them
        EXPECT_TRUE(field_equal<CaseSettings>(back, c, f)) << c.id << ": " << f.name;
      EXPECT_EQ(back.dtype_spelling, c.dtype_spelling) << c.id;
      ASSERT_EQ(back.skip_if.size(), c.skip_if.size()) << c.id;
      for (std::size_t i = 0; i < c.skip_if.size(); ++i)
        EXPECT_EQ(back.skip_if[i].expr + back.skip_if[i].reason, c.skip_if[i].expr + c.skip_if[i].reason);
      ASSERT_EQ(back.xfail_if.size(), c.xfail_if.size()) << c.id;
      for (std::size_t i = 0; i < c.xfail_if.size(); ++i)
        EXPECT_EQ(back.xfail_if[i].strict, c.xfail_if[i].strict) << c.id;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100u) << "the bundled manifests and fixtures were not found";
  EXPECT_EQ(modules, 63u) << "the module fixtures (51) and the shipped module template (12) were not found";
  EXPECT_GT(keywords, 40u);
}

// A case the wire cannot carry whole is refused, never run as something else.
TEST(CaseWire, ATruncatedCaseIsRefused) {
  const ManifestSet set = load_manifests({std::string(OPCHECK_TEST_DIR) + "/../../manifests"});
  ASSERT_FALSE(set.manifests.empty());
  ASSERT_FALSE(set.manifests.front().cases.empty());
  std::vector<std::uint8_t> bytes;
  encode_case(set.manifests.front().cases.front(), bytes);
  Case back;
  std::string error;
  EXPECT_FALSE(decode_case(bytes.data(), bytes.size() - 1, back, error));
  EXPECT_NE(error.find("malformed"), std::string::npos) << error;
  bytes.push_back(0);
  EXPECT_FALSE(decode_case(bytes.data(), bytes.size(), back, error));
}

}  // namespace
}  // namespace opcheck
