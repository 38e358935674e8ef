// The tables of what PyTorch leaves to a backend, with no libtorch: the judge in the exec layer
// (exec/backend_freedoms.cpp) applies them, and repro scripts (repro/script.cpp) carry them, so that both judge by
// one list. Each entry cites the PyTorch behaviour it encodes; docs/judgement.md explains the rule as a whole.
#pragma once

#include <string>
#include <vector>

namespace opcheck {

/// How many times the CPU reference's own distance from the float64 result an element may be away from it (besides
/// the tolerance and one step of its dtype): 3 is the largest multiple torch._dynamo.utils.same allows a result
/// against float64 (for float16/bfloat16, and for tensors under 1,000 elements, where an RMSE says little), and an
/// element is the smallest tensor there is.
constexpr double kReferenceErrorMultiple = 3.0;

/// Outputs a backend may return in float32 where the CPU gives float16 or bfloat16.
struct WidenedOutputRule {
  const char* op;     // "aten::native_layer_norm": any overload
  int outputs[2];     // their places in the op's returns
  const char* rule;   // the PyTorch behaviour it encodes
};
const std::vector<WidenedOutputRule>& widened_output_rules();

/// Ops PyTorch documents as nondeterministic on some backend, or whose CPU kernel varies between runs: their runs
/// may differ.
struct NondeterministicRule {
  const char* op;         // any overload
  const char* only_with;  // a bool argument that must be true ("accumulate"), a string argument that is this value
                          // or None ("driver=gelsy"), or nullptr
  const char* doc;        // torch.use_deterministic_algorithms' words, or what the CPU kernel does
  bool documented = true;  // doc quotes torch.use_deterministic_algorithms (else it is opcheck's finding)
};
const std::vector<NondeterministicRule>& nondeterministic_rules();

/// Ops whose result PyTorch leaves undefined where an index repeats (which of the writes to a position wins): a
/// position written more than once passes when the device's value is one of the values written there.
struct RepeatedWriteRule {
  const char* op;    // any overload
  const char* rule;  // the PyTorch behaviour it encodes
};
const std::vector<RepeatedWriteRule>& repeated_write_rules();
/// Whether a resolved op ("aten::index_copy_.default") is one of repeated_write_rules().
bool leaves_repeated_writes_undefined(const std::string& resolved_op);

/// Index outputs whose indices PyTorch leaves unspecified among equal elements (ties): an index passes when it points
/// at an element equal to the one the reference's index points at.
struct TiedIndexRule {
  const char* op;    // "aten::topk": any overload; "aten::max.dim": that overload only
  int output;        // the index output's place in the op's returns
  bool reduced;      // the op reduces the dim its indices index (keepdim=False drops it from the output)
  const char* rule;  // the PyTorch behaviour it encodes
};
const std::vector<TiedIndexRule>& tied_index_rules();
/// The rule of a resolved op ("aten::max.dim", "aten::topk.values"), or nullptr.
const TiedIndexRule* tied_index_rule(const std::string& resolved_op);

/// Ops that return unique values in an order PyTorch leaves undefined unless sorted=True: values (slices along
/// `dim` for unique_dim), inverse indices and counts pass in the device's order when they match the reference's
/// element for element once the values are matched up.
struct UnorderedUniqueRule {
  const char* op;    // any overload
  const char* rule;  // the PyTorch behaviour it encodes
};
const std::vector<UnorderedUniqueRule>& unordered_unique_rules();
/// The rule of a resolved op ("aten::_unique2"), or nullptr.
const UnorderedUniqueRule* unordered_unique_rule(const std::string& resolved_op);

/// Ops that return fresh memory they never write (empty and its kin): their values mean nothing, so only the
/// output's shape, dtype, strides and device are compared, as PyTorch's own OpInfo tests do. import-opinfo hands the
/// list to its importer (OPCHECK_OPINFO_UNINITIALISED_OPS), which writes their samples instead of finding their
/// outputs unjudgeable.
const std::vector<std::string>& uninitialised_output_ops();

/// Ops that grow a tensor in place and leave its new elements uninitialised: the elements past the storage the
/// tensor had before the call (its old elements, in storage order, when it was contiguous) hold whatever the
/// allocator gave. Those are compared by shape, dtype and strides only; the old ones by value.
struct UninitialisedTailRule {
  const char* op;    // any overload
  const char* rule;  // the PyTorch behaviour it encodes
};
const std::vector<UninitialisedTailRule>& uninitialised_tail_rules();
/// The rule of a resolved op ("aten::resize_.default"), or nullptr.
const UninitialisedTailRule* uninitialised_tail_rule(const std::string& resolved_op);

/// How many times the accumulation scale an element of an accumulating op may be away from the float64 result
/// (docs/judgement.md, "the accumulation bound"): lambda in lambda * u * sqrt(E[sum of squared partial sums]), where
/// Azuma's inequality bounds a sum of independent rounding errors |delta_k * S_k| <= u * |S_k| by that with
/// probability at least 1 - 2 exp(-lambda^2 / 2) (3.7e-6 at 5), and a rounding error's standard deviation is at most
/// u / sqrt(3), so 5 is 8.7 standard deviations.
constexpr double kAccumulationBoundMultiple = 5.0;

/// The precision an op's sums are rounded in as it accumulates: its output's dtype (atomic adds into the output, as
/// CUDA's index and scatter accumulations do), or float32 at least (PyTorch's opmath type: reductions and matrix
/// products of float16/bfloat16 accumulate in float32 on the CPU and on CUDA).
enum class AccumulatesIn { OutputDtype, Float32AtLeast };

/// Ops that sum terms into each output element, in an order PyTorch leaves to the backend: an element passes the
/// float64 judge within the accumulation bound of a sum of its terms in any order (docs/judgement.md).
struct AccumulationRule {
  const char* op;        // any overload
  AccumulatesIn in;      // the precision of its partial sums
  bool mean;             // it divides each sum by its count: the terms are the input's elements over the output's,
                         // or the count of the run on ones with `counted_with`
  const char* rule;      // the PyTorch behaviour it encodes
  const char* only_with = nullptr;     // a condition on the call, as NondeterministicRule's ("reduce=mean"), or none
  const char* counted_with = nullptr;  // the terms are counted by the run on ones with this argument so
                                       // ("reduce=sum", "scale_grad_by_freq=False"), or by the run on ones as it is
  bool product = false;  // the terms are multiplied, not added: the bound is relative, u |g| min(5 sqrt(n-1), n-1)
};
const std::vector<AccumulationRule>& accumulation_rules();
/// The first rule of a resolved op ("aten::index_add_.default"), whatever its condition, or nullptr (the exec layer's
/// accumulation_rule_for reads the call's arguments for the condition).
const AccumulationRule* accumulation_rule(const std::string& resolved_op);

/// "aten::max" from "aten::max.dim": the op without its overload.
std::string op_without_overload(const std::string& resolved_op);

}  // namespace opcheck
