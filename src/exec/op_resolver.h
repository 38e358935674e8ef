// Op resolution: every spelling of an op name -> a dispatcher op (overload chosen from the schema), a reference
// decomposition, or one of the few Python-level builtins; plus did-you-mean for names that resolve to nothing.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/op_names.h"
#include "exec/binder.h"
#include "exec/invocation.h"

namespace opcheck::exec {

/// parse_op_name (common/op_names.h), except that a name the Python-name table knows verbatim
/// (torch._C._log_api_usage_once) is taken as written.
OpName normalize_op_name(const std::string& written);

/// Builtins that are not dispatcher ops.
enum class Builtin { None, GetItem, SetItem, SymSum, TensorLiteral, NotATensorOp };

/// One row of the Python-name table: how a Python-level name maps onto an aten op when its signature differs from
/// the schema. Data only; the binder does the work. Lists are comma separated.
struct PythonOpRow {
  const char* python;        // canonical Python name
  const char* signature;     // the Python signature in schema syntax; "" = the call binds straight to the aten schema
  const char* aten;          // target "aten::name" or "aten::name.overload"; "" for builtins
  const char* renames;       // "python_arg:aten_arg" pairs
  const char* dropped;       // Python arguments the aten op has no use for, accepted with any value
  const char* must_default;  // Python arguments opcheck supports only at their default value
  const char* fixed;         // aten keyword values the row sets: "train=False", "dtype=torch.float32"
  bool swap_operands;        // reflected operators (__radd__): the first two positional arguments trade places
  Builtin builtin;
};

/// What resolving a case gives: an invocation, or why not.
struct Resolution {
  std::unique_ptr<Invocation> invocation;  // set when the op resolved and the arguments bound
  std::string error;                       // INVALID_CASE: the op or its arguments did not resolve
  std::string skip_reason;                 // not a tensor op (torch._C._log_api_usage_once)
  CaseCall call;                           // the case's tensor slots and arguments
};

/// Resolves op names against the dispatcher of the linked libtorch (indexed once) and opcheck's tables.
class OpResolver {
 public:
  OpResolver();

  Resolution resolve(const Case& c) const;
  Resolution resolve(const std::string& op, CaseCall call) const;

  /// The closest known spelling for an op that does not exist ("torch.floor" for "torch.flor"), or "".
  std::string suggest(const OpName& name) const;

  /// Every overload of a qualified op ("aten::view"), default overload first; empty when the op does not exist.
  std::vector<c10::OperatorHandle> overloads(const std::string& qualified) const;

 private:
  Resolution resolve_schema_form(const OpName& name, CaseCall call) const;
  Resolution resolve_python_form(const OpName& name, CaseCall call) const;
  /// Chooses the overload of `qualified` the call binds to best; `hide_python_scalar` drops the .Scalar overloads
  /// of add/sub/mul/div that Python never binds (a number becomes a wrapped-number tensor instead).
  Resolution resolve_overloads(const std::string& qualified, const std::optional<std::string>& overload,
                               CaseCall call, bool hide_python_scalar) const;

  std::map<std::string, std::vector<c10::OperatorHandle>> ops_;  // "aten::add" -> its overloads
};

}  // namespace opcheck::exec
