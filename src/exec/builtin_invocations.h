// The Python-level builtins that are no dispatcher op (getitem, setitem, sym_sum, torch.tensor, API-usage logging):
// their argument checks and the invocations that run them.
#pragma once

#include <string>

#include "exec/op_python_names.h"
#include "exec/op_resolver.h"

namespace opcheck::exec {

/// Resolves a call of `python` (a table row whose `builtin` is not None): an invocation, an INVALID_CASE error for
/// arguments the builtin cannot take, or a skip for what is not a tensor op.
Resolution resolve_builtin(Builtin builtin, const std::string& python, CaseCall call);

}  // namespace opcheck::exec
