// What PyTorch leaves to a backend, named once, each entry with the PyTorch behaviour it encodes: outputs whose dtype
// a backend may widen, ops whose results differ between runs by design, and results PyTorch leaves undefined
// (positions written more than once, indices of tied elements). The judge (engine.cpp, CaseRun::judge) asks this
// file and nothing else; docs/judgement.md explains the rule as a whole.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "judge/backend_freedoms_table.h"
#include "exec/invocation.h"

namespace opcheck::exec {

/// The argument `name` of `args`, or nullptr.
const c10::IValue* named_arg(const NamedArgs& args, const std::string& name);

/// Whether output `what` ("output[1]") of `resolved_op` may come back in `device`'s dtype where the CPU gives
/// `reference`'s: the sentence for the record, or "" when no freedom applies (the dtype mismatch fails).
std::string widened_output(const std::string& resolved_op, const std::string& what, at::ScalarType reference,
                           at::ScalarType device);

/// Where PyTorch documents `resolved_op` (called with `args`) as nondeterministic on some backend, or its CPU kernel
/// varies between runs, a sentence saying so; "" otherwise. Runs of such an op may differ: each is judged on its own,
/// and their differences are a note, never NONDETERMINISTIC.
std::string nondeterministic_by_design(const std::string& resolved_op, const NamedArgs& args);

/// The accumulation rule (judge/backend_freedoms_table.h, accumulation_rules) of `resolved_op` called with `args`:
/// the first of its op whose condition holds, or nullptr.
const AccumulationRule* accumulation_rule_for(const std::string& resolved_op, const NamedArgs& args);

/// One run's results as the judge compares them: the output and the tensors the op wrote in place.
struct RunValues {
  c10::IValue output;
  std::vector<at::Tensor> written;
};

/// Where `resolved_op` grows a tensor and leaves its new elements uninitialised (a growing resize_, resize_as_:
/// uninitialised_tail_rules in judge/backend_freedoms_table.h), the tensors of `expected` take the device's values
/// at those elements: the ones at storage positions (from the tensor's storage offset) past the storage `self` had
/// before the call (`args` hold the call's inputs as they were), so only the old elements are compared by value and
/// the new ones by shape and dtype. The returned sentence says how many were left to the device, "" when none were
/// (any other op, or a tensor that did not grow).
std::string align_uninitialised_tail(const std::string& resolved_op, const NamedArgs& args, const RunValues& device,
                                     std::vector<RunValues*> expected);

/// Where `resolved_op`'s result is undefined, the expected values take the device's choice when it is one PyTorch
/// allows: a position written more than once (index_copy, index_put and put without accumulate, scatter without
/// reduce) takes the device's value when it equals one of the values written there; an index output of topk, sort
/// (not stable), max/min/median/kthvalue/mode with a dim, argmax and argmin takes the device's index when it points
/// at an element equal to the one the reference's points at; torch.unique's values (_unique2, unique_dim) with
/// sorted=False take the device's order when they are the reference's values reordered, their inverse indices and
/// counts compared in that order; the uninitialised tail of a growing resize_ takes the device's values
/// (align_uninitialised_tail). `expected` (the reference, and the float64 result
/// when there is one) are returned changed accordingly; the returned sentence says how many positions took the
/// device's choice, "" when none did.
std::string align_undefined(const std::string& resolved_op, const NamedArgs& args, const RunValues& device,
                            std::vector<RunValues*> expected);

}  // namespace opcheck::exec
