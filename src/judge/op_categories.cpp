#include "judge/op_categories.h"

namespace opcheck {

const std::vector<OpCategoryEntry>& op_category_table() {
  static const std::vector<OpCategoryEntry> table = {
      // Allocations. Their outputs hold whatever the memory held, as torch.empty's docs say ("uninitialized data").
      {"aten::empty", kAllocation | kUninitialisedOutput, "torch.empty: uninitialised storage"},
      {"aten::empty_like", kAllocation | kUninitialisedOutput, "torch.empty_like: uninitialised storage"},
      {"aten::empty_strided", kAllocation | kUninitialisedOutput, "torch.empty_strided: uninitialised storage"},
      {"aten::empty_permuted", kAllocation | kUninitialisedOutput, "torch.empty_permuted: uninitialised storage"},
      {"aten::new_empty", kAllocation | kUninitialisedOutput, "Tensor.new_empty: uninitialised storage"},
      {"aten::new_empty_strided", kAllocation | kUninitialisedOutput,
       "Tensor.new_empty_strided: uninitialised storage"},
      {"aten::empty_quantized", kAllocation | kUninitialisedOutput, "a quantized empty: uninitialised storage"},
      {"aten::_empty_affine_quantized", kAllocation | kUninitialisedOutput,
       "a quantized empty: uninitialised storage"},
      {"aten::_empty_per_channel_affine_quantized", kAllocation | kUninitialisedOutput,
       "a quantized empty: uninitialised storage"},
      // Its grown tail is uninitialised, its old elements are kept: the judge compares the part it defines
      // (docs/judgement.md). Not plumbing: a device that loses the old elements computed wrong.
      {"aten::resize_", kResize, "grows or shrinks a tensor in place, keeping its old elements; out= kernels call it"},
      // Views: another shape over the same storage, or a copy where a view is impossible (reshape).
      {"aten::view", kView, "another shape over the same storage"},
      {"aten::as_strided", kView, "another shape and strides over the same storage"},
      {"aten::_reshape_alias", kView, "reshape's view, as the dispatcher records it"},
      {"aten::reshape", kView, "a view where the strides allow, else a copy"},
      {"aten::_unsafe_view", kView, "a view that autograd does not track (matmul's reshapes)"},
      {"aten::alias", kView, "the same tensor under another name"},
      {"aten::detach", kView, "the same storage without autograd history"},
      {"aten::lift_fresh", kView, "a fresh tensor handed to the dispatcher as it is (torch.tensor)"},
      {"aten::expand", kView, "a broadcast view with stride 0"},
      // Transfers: what moves tensors to, from and between kernels.
      {"aten::_copy_from", kTransfer, "a copy between devices: every fallback's argument and result"},
      {"aten::_copy_from_and_resize", kTransfer, "a copy between devices into an output it resizes"},
      {"aten::copy_", kTransfer, "a copy into an existing tensor"},
      {"aten::_to_copy", kTransfer, "Tensor.to's copy to another device or dtype"},
      {"aten::to", kTransfer, "Tensor.to: a copy to another device or dtype"},
      // Scalar reads.
      {"aten::_local_scalar_dense", kScalarRead, "Tensor.item(): one element read to the host"},
  };
  return table;
}

unsigned op_categories(const std::string& op) {
  std::string name = op.substr(0, op.find('.'));  // as op_without_overload: a namespace is spelt with "::"
  if (name.find("::") == std::string::npos) name = "aten::" + name;
  for (const auto& e : op_category_table())
    if (name == e.op) return e.categories;
  return 0;
}

bool is_plumbing_op(const std::string& op) { return (op_categories(op) & kPlumbing) != 0; }

std::vector<std::string> ops_in(unsigned categories) {
  std::vector<std::string> out;
  for (const auto& e : op_category_table())
    if ((e.categories & categories) != 0) out.push_back(e.op);
  return out;
}

}  // namespace opcheck
