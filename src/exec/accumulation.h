// The accumulation bound of the float64 judge (docs/judgement.md): for an op that sums terms into each output element
// (judge/backend_freedoms_table.h, accumulation_rules), how far a sum of those terms in another order may be from
// the float64 result, computed from the call's inputs rather than from the CPU's error at that element.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "exec/backend_freedoms.h"
#include "exec/pch.h"
#include "judge/backend_freedoms_table.h"

namespace opcheck::exec {

/// The unit roundoff of the precision an op that accumulates `in` sums an output of `dtype` in: 2^-11 for float16,
/// 2^-8 bfloat16, 2^-24 float32, 2^-53 float64 (Float32AtLeast: 2^-24 for the 16-bit dtypes too).
double accumulation_unit(AccumulatesIn in, at::ScalarType dtype);

/// Runs the call in float64 on host inputs (the engine's float64 result, on inputs of its choosing).
using Float64Run = std::function<RunValues(const std::vector<at::Tensor>& host)>;

/// The accumulation bound of each real floating leaf of `golden` (the float64 result of the call on `host`), in units
/// of the unit roundoff: per element with n terms x_1..x_n (counted by running the call on ones), total T (the
/// float64 result), Q = sum of x_k^2 (the call on the squared inputs) and M = sum of |x_k| (the call on the absolute
/// values),
///
///     min( kAccumulationBoundMultiple * sqrt(E[S_2^2 + ... + S_n^2]),  (n - 1) * M )
///
/// where S_k are the partial sums of the terms in a random order, E[...] = T^2 (n+1)(2n+1)/(6n) + (Q - T^2/n)(n+1)/6
/// - Q/n, and (n - 1) * M is the classic bound of recursive summation in any order (Higham, Accuracy and Stability
/// of Numerical Algorithms, section 4.2, to first order in the unit roundoff). For a `mean` rule the terms are
/// counted as the first floating input's elements over the leaf's, or, with `counted_with`, by `count_run` (the call
/// with that argument changed) on ones. A product's bound is relative: |T| min(kAccumulationBoundMultiple sqrt(n - 1),
/// n - 1), its n - 1 roundings each within the unit roundoff of the partial product. Leaves that are not real
/// floating tensors are None. Returns nullopt with `why` when a run fails, an input is complex, or a rule that counts
/// with a changed argument has no `count_run`.
std::optional<RunValues> accumulation_allowance(const AccumulationRule& rule, const std::vector<at::Tensor>& host,
                                                const RunValues& golden, const Float64Run& run, std::string& why,
                                                const Float64Run* count_run = nullptr);

/// `inv` with the argument of `rule.counted_with` ("reduce=sum": a string; "scale_grad_by_freq=False": a bool) set,
/// or nullptr when the rule has none or the call cannot be changed so.
std::unique_ptr<Invocation> counting_invocation(const AccumulationRule& rule, const Invocation& inv);

/// The bound of one output (a tensor, or a tuple or list of them) from the three runs made already, as
/// accumulation_allowance makes it leaf by leaf: `golden` the float64 result, `ones`, `squares` and `magnitudes` the
/// call on the changed inputs, `input_numel` the count of the first floating input's elements (a module trace's
/// calls are run so in Python: src/pyhost/_opcheck_accumulation.py).
c10::IValue accumulation_bound_of(const AccumulationRule& rule, std::int64_t input_numel, const c10::IValue& golden,
                                  const c10::IValue& ones, const c10::IValue& squares, const c10::IValue& magnitudes);

}  // namespace opcheck::exec
