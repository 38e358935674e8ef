// The one table of op categories against this torch's dispatcher and the device-op note: every entry names a real
// ATen op, and the note leaves out exactly the table's plumbing (a resize is named: it must keep the old elements).
#include <gtest/gtest.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include <set>
#include <string>

#include "exec/device_ops.h"
#include "judge/op_categories.h"

namespace opcheck {
namespace {

TEST(OpCategories, EveryEntryIsAnOpOfThisTorch) {
  std::set<std::string> names;
  for (const auto& n : c10::Dispatcher::singleton().getAllOpNames()) names.insert(n.name);
  for (const auto& e : op_category_table()) EXPECT_TRUE(names.count(e.op)) << e.op << " is no op of this torch";
}

TEST(OpCategories, TheDeviceOpNoteLeavesOutThePlumbingOfTheTableAndNothingElse) {
  for (const auto& e : op_category_table()) {
    const std::string op = std::string(e.op) + (std::string(e.op) == "aten::empty" ? ".memory_format" : "");
    const std::vector<DeviceOp> ops = {{op, DeviceOpVia::Kernel, 1, true},
                                       {"aten::mul.Tensor", DeviceOpVia::Fallback, 1, true}};
    const std::string note = exec::device_ops_note("aten::mul.Tensor", ops);
    EXPECT_NE(note.find("aten::mul.Tensor"), std::string::npos) << note;
    if (is_plumbing_op(op)) {
      EXPECT_EQ(note.find(op + " "), std::string::npos) << op << " is plumbing, yet in the note: " << note;
    } else {
      EXPECT_NE(note.find(op + " "), std::string::npos) << op << " is no plumbing, yet left out: " << note;
    }
    // As the op under test, it is named.
    const std::string own = exec::device_ops_note(op, {{op, DeviceOpVia::Fallback, 1, true}});
    EXPECT_NE(own.find(op + " "), std::string::npos) << op << ": " << own;
  }
  // An op outside the table is named.
  const std::string note = exec::device_ops_note(
      "aten::mul.Tensor", {{"aten::clone", DeviceOpVia::Fallback, 1, true}, {"aten::mul.Tensor", DeviceOpVia::Fallback, 1, true}});
  EXPECT_NE(note.find("aten::clone "), std::string::npos) << note;
}

}  // namespace
}  // namespace opcheck
