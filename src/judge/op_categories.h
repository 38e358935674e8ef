// The one table of op categories: which ATen ops allocate, view, move or read tensors, and which leave their output
// unwritten, each with the reason. The device-op note (src/exec/device_ops.cpp), the failure groups
// (src/report/failure_groups.cpp), the judge (src/exec/compare.cpp, through uninitialised_output_ops) and the OpInfo
// importer (the uninitialised ops reach its Python through OPCHECK_OPINFO_UNINITIALISED_OPS) all read it. Plain C++.
//
// Plumbing is defined here once: an op that allocates, views, transfers or reads a scalar, which every call makes to
// move tensors to and from a kernel (a CPU fallback moves every argument). It is left out of a failure's device-op
// note and is blamed by a failure group only as the op under test, or for an error of its own.
#pragma once

#include <string>
#include <vector>

namespace opcheck {

/// Bits: an op may be in several categories (empty is an allocation whose output is uninitialised). A resize is
/// no plumbing: it must keep the old elements, and a device that loses them (a growing resize_ inside cat's out=
/// result) is the op to blame.
enum OpCategory : unsigned {
  kAllocation = 1u << 0,           // makes storage (empty, new_empty, resize_)
  kView = 1u << 1,                 // returns its input's storage under another shape (view, as_strided, expand)
  kTransfer = 1u << 2,             // copies between tensors or devices (_copy_from, _to_copy)
  kScalarRead = 1u << 3,           // reads one element to the host (_local_scalar_dense: Tensor.item())
  kUninitialisedOutput = 1u << 4,  // its output's values are whatever the memory held: judged by shape, dtype, strides
  kResize = 1u << 5,               // changes a tensor's size in place, keeping its old elements
};

constexpr unsigned kPlumbing = kAllocation | kView | kTransfer | kScalarRead;

struct OpCategoryEntry {
  const char* op;  // "aten::empty": every overload of the name
  unsigned categories;
  const char* reason;
};

/// Every entry, in the table's order.
const std::vector<OpCategoryEntry>& op_category_table();

/// The categories of `op` ("aten::empty.memory_format", "aten::empty", "empty" for aten), 0 for an op in none.
unsigned op_categories(const std::string& op);

/// Whether `op` is plumbing (kPlumbing above).
bool is_plumbing_op(const std::string& op);

/// The ops of the table in any of `categories`, as "aten::name", in the table's order.
std::vector<std::string> ops_in(unsigned categories);

}  // namespace opcheck
