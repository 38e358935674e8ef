// An op call resolved and bound to a case's arguments, ready to run on the reference or the device.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "exec/binder.h"

namespace opcheck::exec {

/// A call's arguments by schema name, as one run gives them to the op.
using NamedArgs = std::vector<std::pair<std::string, c10::IValue>>;

/// One resolved call. Implementations: a dispatcher op, a decomposition, indexing, a Python-number builtin.
class Invocation {
 public:
  virtual ~Invocation() = default;

  /// Runs the call on this run's tensors (one per slot). Returns the output: one value, a tuple for several
  /// returns, None for none. Throws whatever the op throws.
  virtual c10::IValue run(const std::vector<at::Tensor>& tensors, const RunContext& ctx) const = 0;

  /// The call's arguments by schema name on `tensors` (host tensors: the CPU run's context), for the judge's
  /// backend freedoms (exec/backend_freedoms.h). Empty for calls that are no single dispatcher op.
  virtual NamedArgs named_arguments(const std::vector<at::Tensor>& tensors) const { return {}; }

  /// Whether run() honours RunContext::kernel_of: true for a call that is one dispatcher op.
  virtual bool runs_kernel_of() const { return false; }

  /// The call with its argument `name` (a schema name) given `value` instead: the accumulation bound counts some ops'
  /// terms so (AccumulationRule::counted_with). nullptr for a call that is no single dispatcher op, or has no such
  /// argument.
  virtual std::unique_ptr<Invocation> with_argument(const std::string& name, const PyValue& value) const {
    return nullptr;
  }

  std::string resolved_op;                 // "aten::add.Tensor"; the ops used, for a decomposition
  bool decomposed = false;                 // a reference decomposition stands in for an op libtorch lacks
  std::vector<std::size_t> written_slots;  // tensors the call mutates in place (compared after the run too)
};

}  // namespace opcheck::exec
