// Binding a case's arguments to an op schema: matching costs for overload choice, and boxed stacks for running.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "opcheck/case.h"
#include "exec/pch.h"

#include <ATen/TensorIndexing.h>

namespace opcheck::exec {

/// One tensor of a case: a `tensor` input, or one element of a `tensor_list` input.
struct TensorSlot {
  std::size_t input = 0;    // index of the case input
  std::size_t element = 0;  // index inside a tensor_list (0 for a plain tensor)
  const TensorSpec* spec = nullptr;
};

/// One argument as a call gives it, before it meets a schema: tensors are referred to by slot, values are literals.
struct ArgRef {
  enum class Kind { Tensor, TensorList, Value };
  Kind kind = Kind::Value;
  std::vector<std::size_t> slots;  // Tensor: exactly one slot; TensorList: one per element
  PyValue value;                   // Kind::Value

  static ArgRef of_value(PyValue v) { ArgRef a; a.value = std::move(v); return a; }
  static ArgRef of_tensor(std::size_t slot) { ArgRef a; a.kind = Kind::Tensor; a.slots = {slot}; return a; }
  static ArgRef of_list(std::vector<std::size_t> slots) {
    ArgRef a; a.kind = Kind::TensorList; a.slots = std::move(slots); return a;
  }
  /// Python-like description for messages: "Tensor", "list[Tensor]", "int", "tuple", ...
  std::string describe() const;
};

/// A call as written: positional arguments, then keyword arguments in order.
struct CallArgs {
  std::vector<ArgRef> positional;
  std::vector<std::pair<std::string, ArgRef>> keywords;
  /// Set for calls mapped from a Python signature: None given for a non-optional parameter means "its default"
  /// (F.embedding's padding_idx=None is aten::embedding's padding_idx=-1).
  bool none_means_default = false;

  /// "(Tensor, int, dim=int)" for messages.
  std::string describe() const;
};

/// The tensor slots of a case and its call as written (inputs positional, attrs/kwmap as keywords).
struct CaseCall {
  std::vector<TensorSlot> slots;
  CallArgs args;
};
CaseCall case_call(const Case& c);

/// Arguments matched to one schema: one entry per schema argument; nullopt means "the schema's default".
struct Binding {
  std::vector<std::optional<ArgRef>> args;
  int cost = 0;  // sum of conversion costs: 0 = every argument matched exactly; lower wins overload choice
};

/// Binds `call` to `schema` the way PyTorch's Python argument parser matches one signature: positional then keyword
/// arguments (`input`/`tensor` also name `self`), defaults for the rest, varargs packing of trailing ints into an
/// int[] parameter (`t.view(2, 3)`) and of trailing tensors into a Tensor[] one. Returns nullopt and sets `why` when
/// the arguments do not fit.
std::optional<Binding> bind_to_schema(const c10::FunctionSchema& schema, const CallArgs& call,
                                      const std::vector<TensorSlot>& slots, std::string& why);

/// How one run materializes arguments.
struct RunContext {
  at::Device device = at::Device(at::kCPU);  // what a non-host Device argument (`cuda:0`) means in this run
  /// Set in an upcast reference run: floating ScalarType arguments narrower than this become this type, so that
  /// `dtype=torch.float16` keywords do not undo the upcast.
  std::optional<at::ScalarType> compute_dtype;
  /// Set to run, on these (host) tensors, the kernel the dispatcher computed for this backend key instead of the
  /// tensors' own: PyTorch's composite kernel a device runs where it has no kernel of its own. Only a call that is
  /// one dispatcher op honours it (Invocation::runs_kernel_of).
  std::optional<c10::DispatchKey> kernel_of;
};

/// Builds the boxed stack of a binding. `tensors` holds this run's tensor for every slot. Throws std::runtime_error
/// when a value cannot become the schema's type (a bound call only fails here for values checked at run time).
c10::Stack make_stack(const c10::FunctionSchema& schema, const Binding& binding, const std::vector<at::Tensor>& tensors,
                      const RunContext& ctx);

/// Converts one argument to an IValue of `type` (the schema argument's real type; `n` its fixed list length).
c10::IValue to_ivalue(const ArgRef& arg, const c10::TypePtr& type, c10::optional<int32_t> n,
                      const std::vector<at::Tensor>& tensors, const RunContext& ctx);

/// A Python number as PyTorch's argument parser passes it for a Tensor parameter: a 0-dim CPU "wrapped number"
/// tensor (bool -> bool, int -> int64, float -> float64) that type promotion treats like a Scalar.
at::Tensor wrapped_number(const PyValue& v);

/// A tensor from a Python literal (`torch.tensor([[1, 2], [3, 4]])`): dtype inferred like Python (bool, int64,
/// float32) unless given. Throws std::invalid_argument for ragged or non-numeric data.
at::Tensor tensor_of_literal(const PyValue& v, std::optional<at::ScalarType> dtype);

/// The device a Device/str value names in this run: host spellings stay on the CPU, the rest mean ctx.device.
std::optional<at::Device> device_of(const PyValue& v, const RunContext& ctx);

/// The at::indexing form of a Python subscript: ints, slices, None, Ellipsis, bools, int/bool lists (advanced
/// indices) and tensors; a tuple gives one index per element. Throws std::invalid_argument for anything else.
std::vector<at::indexing::TensorIndex> subscript_of(const ArgRef& index, const std::vector<at::Tensor>& tensors,
                                                    const at::Device& device);

/// A schema default or literal IValue as a PyValue (None, bool, int, float, str, int/float lists, ScalarType).
std::optional<PyValue> pyvalue_of(const c10::IValue& v, const c10::TypePtr& type);

}  // namespace opcheck::exec
