// Op resolution: every spelling of an op name -> a dispatcher op (overload chosen from the schema), a reference
// decomposition, or one of the few Python-level builtins; plus did-you-mean for names that resolve to nothing.
// op_resolver.cpp routes a name (schema form, a Python-name table row, the default rule) and suggests;
// op_python_names.cpp holds the table (no libtorch), overload_resolution.cpp the overload choice and decompositions,
// builtin_invocations.cpp the builtins.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/op_names.h"
#include "exec/binder.h"
#include "exec/invocation.h"
#include "exec/op_python_names.h"

namespace opcheck::exec {

/// What resolving a case gives: an invocation, or why not.
struct Resolution {
  std::unique_ptr<Invocation> invocation;  // set when the op resolved and the arguments bound
  std::string error;                       // INVALID_CASE: the op or its arguments did not resolve
  VerdictKind kind = VerdictKind::None;    // with `error`: which of those it was
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
  /// A Python name with rows in the Python-name table: the call mapped onto each row's aten op, cheapest binding wins.
  Resolution resolve_table_rows(const OpName& name, const std::vector<const PythonOpRow*>& rows, CaseCall call) const;
  /// Chooses the overload of `qualified` the call binds to best; `hide_python_scalar` drops the .Scalar overloads
  /// of add/sub/mul/div that Python never binds (a number becomes a wrapped-number tensor instead).
  Resolution resolve_overloads(const std::string& qualified, const std::optional<std::string>& overload,
                               CaseCall call, bool hide_python_scalar) const;

  std::map<std::string, std::vector<c10::OperatorHandle>> ops_;  // "aten::add" -> its overloads
};

}  // namespace opcheck::exec
