// Comparison of device outputs against reference outputs: allclose, pcc, exact, leaf by leaf.
#pragma once

#include <string>

#include "judge/backend_freedoms_table.h"
#include "opcheck/case.h"
#include "opcheck/result.h"
#include "exec/pch.h"

namespace opcheck::exec {

/// The comparison to apply, resolved from the case (rtol/atol absent => per-dtype defaults of assert_close).
struct Tolerance {
  Comparator kind = Comparator::AllClose;
  std::optional<double> rtol, atol;  // absent => default for the leaf's dtype
  double pcc_min = 0.999;
  bool equal_nan = true;
  bool values = true;  // false: compare what the op defines (shape, dtype, strides), never the values
  std::string resolved_op;  // the op as resolved: its backend freedoms (exec/backend_freedoms.h) apply
};

// The float64 judge (docs/judgement.md): an element of a floating output that misses the tolerance against the CPU
// reference still passes when its distance from the float64 result is within the tolerance of that result, widened
// by kReferenceErrorMultiple (judge/backend_freedoms_table.h) times the CPU reference's own distance from it at
// that element and by one step (unit in the last place) of the output's dtype.

Tolerance tolerance_of(const Case& c);

/// Whether an op (resolved ATen name, e.g. "aten::empty.memory_format") returns fresh, uninitialised memory:
/// empty, empty_like, empty_strided, empty_permuted, new_empty and new_empty_strided (judge/backend_freedoms_table.h,
/// uninitialised_output_ops). Their values mean nothing, so, as PyTorch's own OpInfo tests do, only shape, dtype,
/// strides and device are compared.
bool returns_uninitialised(const std::string& resolved_op);

/// A sparse tensor (COO, CSR, ...) as the dense tensor of its values, a strided one as it is: opcheck judges a
/// sparse output by its values, however the nonzeros are stored.
at::Tensor dense_values(const at::Tensor& t);

/// A dtype as torch prints it: "torch.float16", "torch.complex32", "torch.int64".
std::string torch_dtype(at::ScalarType t);

/// assert_close defaults: fp16 1e-3/1e-5, bf16 1.6e-2/1e-5, fp32 1.3e-6/1e-5, fp64 1e-7/1e-7; 0/0 otherwise.
void default_tolerance(at::ScalarType t, double& rtol, double& atol);

/// The verdict on one output. figures: max_abs_diff/max_rel_diff over all elements (equal pairs count 0, NaN when
/// a NaN mismatches), pcc only under Comparator::Pcc (minimum over leaves), mismatched = allclose/exact
/// mismatches (informational under pcc), total = elements compared. PCC of constant or single-element tensors is
/// undefined: it is 1 when all elements are allclose, else 0 (see test/exec_inputs/README.md).
struct Comparison {
  bool ok = true;
  std::string message;  // assert_close-like: "Mismatched elements: 3 / 64 (4.7%) ... at index (0, 5)"
  CompareFigures figures;
  std::vector<std::string> notes;  // what the judgement took into account: a backend freedom, the float64 judge
  /// A floating leaf missed the tolerance and no float64 result was given: compare again with one (the float64 judge
  /// may pass it). Never set under the exact and pcc comparators, whose rules are their own.
  bool wants_golden = false;
};

/// The accumulation bound beside the float64 result, for an op that sums terms into each element
/// (exec/accumulation.h): `leaves` shaped as the float64 result, per element in units of the unit roundoff of the
/// precision `in` names.
struct AccumulationAllowance {
  const c10::IValue* leaves = nullptr;
  AccumulatesIn in = AccumulatesIn::OutputDtype;
};

/// Compares every leaf of `actual` (tensors, lists/tuples of them, scalars, bools, ints, None) with
/// `expected`: structure and list lengths, then shape, dtype, then values. Tensors may live on any device
/// (they are moved to the CPU). `what` prefixes messages ("output", "mutated argument 0"). `golden`, when given, is
/// the float64 (complex128) result of the same call, shaped as `expected`: floating leaves then pass by the float64
/// judge too (kReferenceErrorMultiple), real ones within `acc`'s accumulation bound too where it is given.
Comparison compare_values(const c10::IValue& expected, const c10::IValue& actual, const Tolerance& tol,
                          const std::string& what = "output", const c10::IValue* golden = nullptr,
                          const AccumulationAllowance* acc = nullptr);

}  // namespace opcheck::exec
