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
/// counted as the first floating input's elements over the leaf's. Leaves that are not real floating tensors are None. Returns nullopt with `why` when a run fails
/// or an input is complex.
std::optional<RunValues> accumulation_allowance(const AccumulationRule& rule, const std::vector<at::Tensor>& host,
                                                const RunValues& golden, const Float64Run& run, std::string& why);

}  // namespace opcheck::exec
