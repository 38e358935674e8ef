// The one table of op spellings: every way a manifest may name an op, folded to one name per function. The plan's
// dedupe key, the exec layer's op resolver and the Python device host all take an op's name from here, so two
// spellings share a key exactly when they resolve to the same op.
#pragma once

#include <optional>
#include <string>

namespace opcheck {

/// An op name after spelling normalization.
struct OpName {
  /// Schema: `aten::add.Tensor`, `aten.add`, `torch.ops.aten.add.default`. Python: `torch.add`, `torch.Tensor.add`,
  /// `operator.add`, `torch.nn.functional.silu`, ...
  enum class Form { Schema, Python, Invalid };
  Form form = Form::Invalid;
  std::string qualified;                // Schema: "aten::add"; Python: the default-rule target ("aten::silu")
  std::optional<std::string> overload;  // Schema form only: set when the name fixes one ("" = the default overload)
  std::string python;                   // Python form: canonical name ("torch.add", "torch.nn.functional.silu")
  std::string written_prefix;           // as written, up to the last name ("torch.Tensor.", "aten::"), for suggestions
  std::string error;                    // Form::Invalid
};

/// Reads every accepted spelling. Python forms canonicalize torch.Tensor.X, operator.X, torch.functional.X and
/// torch._C._VariableFunctions.X to torch.X, and F.X / torch._C._nn.X to torch.nn.functional.X; then an alias (an
/// operator or dunder spelling of a torch function: torch.__eq__, torch.truediv, operator.and_) becomes the function
/// it calls (torch.eq, torch.div, torch.__and__).
OpName parse_op_name(const std::string& written);

/// The one spelling of an op: `ns::name.overload` (`.default` dropped) for schema names, the canonical Python name
/// (aliases folded) for Python names; a name that does not parse is kept as written, trimmed.
std::string canonical_op(const std::string& written);

/// Whether an ATen op ("aten::_copy_from", "aten::to.dtype") moves values between tensors: to the device, back, or to
/// another dtype there (_copy_from, _copy_from_and_resize, copy_, _to_copy, to). An error one of them raises is a
/// failed transfer (FAILED_TRANSFER) wherever it ran: moving the inputs, the outputs, or inside the call.
bool is_transfer_op(const std::string& op);

}  // namespace opcheck
