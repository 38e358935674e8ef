// The Python-name table: how the Python-level op names whose signature differs from their aten schema map onto aten
// ops, and the builtins that are no dispatcher op. Data and plain C++ only (no libtorch), read by the op resolver.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/op_names.h"
#include "opcheck/value.h"

namespace opcheck::exec {

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

/// Every row. Only names whose Python signature differs from the aten schema are here; every other torch.X /
/// torch.Tensor.X / torch.nn.functional.X is aten::X with `input` bound as `self`. A name may have several rows:
/// they are alternatives (Python overloads).
const std::vector<PythonOpRow>& python_op_rows();

/// parse_op_name (common/op_names.h), except that a name the Python-name table knows verbatim
/// (torch._C._log_api_usage_once) is taken as written.
OpName normalize_op_name(const std::string& written);

/// The .Scalar overloads of add/sub/mul/div (and their in-place forms), which no Python-name call ever binds.
const std::set<std::string>& python_hidden_overloads();

/// A table cell's `name=literal` list ("train=False, dtype=torch.float32"), the literals read as True/False/None,
/// ints, floats, torch.<dtype>, else strings.
std::vector<std::pair<std::string, PyValue>> parse_assignments(const char* text);

}  // namespace opcheck::exec
