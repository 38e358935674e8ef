#include "exec/op_python_names.h"

#include <cstdlib>

#include "common/text.h"
#include "opcheck/dtype.h"

namespace opcheck::exec {

const std::vector<PythonOpRow>& python_op_rows() {
  static const std::vector<PythonOpRow> rows = {
      // Conversions: Tensor.float() and friends are to(dtype).
      {"torch.float", "float(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.float32", false, Builtin::None},
      {"torch.double", "double(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.float64", false, Builtin::None},
      {"torch.half", "half(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.float16", false, Builtin::None},
      {"torch.bfloat16", "bfloat16(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.bfloat16", false, Builtin::None},
      {"torch.long", "long(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.int64", false, Builtin::None},
      {"torch.int", "int(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.int32", false, Builtin::None},
      {"torch.short", "short(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.int16", false, Builtin::None},
      {"torch.char", "char(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.int8", false, Builtin::None},
      {"torch.byte", "byte(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.uint8", false, Builtin::None},
      {"torch.bool", "bool(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.bool", false, Builtin::None},
      {"torch.cfloat", "cfloat(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.complex64", false, Builtin::None},
      {"torch.cdouble", "cdouble(Tensor self, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "dtype=torch.complex128", false, Builtin::None},
      // Tensor.to's three Python signatures.
      {"torch.to", "to(Tensor self, Device? device=None, ScalarType? dtype=None, bool non_blocking=False, bool copy=False, *, MemoryFormat? memory_format=None)", "aten::to.dtype_layout", "", "", "", "", false, Builtin::None},
      {"torch.to", "to(Tensor self, ScalarType dtype, bool non_blocking=False, bool copy=False, *, MemoryFormat? memory_format=None)", "aten::to.dtype", "", "", "", "", false, Builtin::None},
      {"torch.to", "to(Tensor self, Tensor other, bool non_blocking=False, bool copy=False, *, MemoryFormat? memory_format=None)", "aten::to.other", "", "", "", "", false, Builtin::None},
      // torch.nn.functional names whose signature differs from the schema.
      {"torch.nn.functional.embedding", "embedding(Tensor input, Tensor weight, int? padding_idx=None, float? max_norm=None, float norm_type=2.0, bool scale_grad_by_freq=False, bool sparse=False)", "aten::embedding", "input:indices", "norm_type", "max_norm", "", false, Builtin::None},
      // F.batch_norm puts the running statistics before weight and bias; aten::batch_norm has them after.
      {"torch.nn.functional.batch_norm", "batch_norm(Tensor input, Tensor? running_mean, Tensor? running_var, Tensor? weight=None, Tensor? bias=None, bool training=False, float momentum=0.1, float eps=1e-05)", "aten::batch_norm", "", "", "", "cudnn_enabled=True", false, Builtin::None},
      {"torch.nn.functional.softmax", "softmax(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None)", "aten::softmax.int", "input:self", "_stacklevel", "", "", false, Builtin::None},
      {"torch.nn.functional.log_softmax", "log_softmax(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None)", "aten::log_softmax.int", "input:self", "_stacklevel", "", "", false, Builtin::None},
      {"torch.nn.functional.softmin", "softmin(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None)", "aten::softmax.int", "input:self", "_stacklevel", "", "", false, Builtin::None},
      // Dropout runs with training off: results must be deterministic to be compared.
      {"torch.nn.functional.dropout", "dropout(Tensor input, float p=0.5, bool training=True, bool inplace=False)", "aten::dropout", "", "training,inplace", "", "train=False", false, Builtin::None},
      {"torch.nn.functional.dropout1d", "dropout1d(Tensor input, float p=0.5, bool training=True, bool inplace=False)", "aten::feature_dropout", "", "training,inplace", "", "train=False", false, Builtin::None},
      {"torch.nn.functional.dropout2d", "dropout2d(Tensor input, float p=0.5, bool training=True, bool inplace=False)", "aten::feature_dropout", "", "training,inplace", "", "train=False", false, Builtin::None},
      {"torch.nn.functional.dropout3d", "dropout3d(Tensor input, float p=0.5, bool training=True, bool inplace=False)", "aten::feature_dropout", "", "training,inplace", "", "train=False", false, Builtin::None},
      {"torch.nn.functional.alpha_dropout", "alpha_dropout(Tensor input, float p=0.5, bool training=False, bool inplace=False)", "aten::alpha_dropout", "", "training,inplace", "", "train=False", false, Builtin::None},
      {"torch.nn.functional.feature_alpha_dropout", "feature_alpha_dropout(Tensor input, float p=0.5, bool training=False, bool inplace=False)", "aten::feature_alpha_dropout", "", "training,inplace", "", "train=False", false, Builtin::None},
      // torch.split(tensor, split_size_or_sections, dim): one Python name for split.Tensor and split.sizes.
      {"torch.split", "", "aten::split", "split_size_or_sections:split_size", "", "", "", false, Builtin::None},
      // Reflected operators (x.__radd__(y) is y + x); the other operator and dunder spellings are aliases
      // (common/op_names.cpp) of the torch function they call.
      {"torch.__radd__", "", "aten::add", "", "", "", "", true, Builtin::None},
      {"torch.__rmul__", "", "aten::mul", "", "", "", "", true, Builtin::None},
      {"torch.__rtruediv__", "", "aten::div", "", "", "", "", true, Builtin::None},
      {"torch.__rfloordiv__", "", "aten::floor_divide", "", "", "", "", true, Builtin::None},
      {"torch.__rmod__", "", "aten::remainder", "", "", "", "", true, Builtin::None},
      {"torch.__rpow__", "", "aten::pow", "", "", "", "", true, Builtin::None},
      {"torch.__rmatmul__", "", "aten::matmul", "", "", "", "", true, Builtin::None},
      // Builtins that are not dispatcher ops.
      {"torch.getitem", "", "", "", "", "", "", false, Builtin::GetItem},
      {"torch.setitem", "", "", "", "", "", "", false, Builtin::SetItem},
      {"torch.sym_sum", "", "", "", "", "", "", false, Builtin::SymSum},
      {"torch.tensor", "", "", "", "", "", "", false, Builtin::TensorLiteral},
      {"torch.as_tensor", "", "", "", "", "", "", false, Builtin::TensorLiteral},
      {"torch._C._log_api_usage_once", "", "", "", "", "", "", false, Builtin::NotATensorOp},
  };
  return rows;
}

// Python binds a number passed to add/sub/mul/div as a wrapped-number tensor: their .Scalar overloads have no
// Python binding (PyTorch's codegen skips them), so a Python-name call never picks them.
const std::set<std::string>& python_hidden_overloads() {
  static const std::set<std::string> hidden = {"aten::add.Scalar", "aten::sub.Scalar", "aten::mul.Scalar",
                                               "aten::div.Scalar", "aten::add_.Scalar", "aten::sub_.Scalar",
                                               "aten::mul_.Scalar", "aten::div_.Scalar"};
  return hidden;
}

namespace {

/// The small literal language of table cells: True/False/None, ints, floats, torch.<dtype>, else a string.
PyValue parse_cell_literal(const std::string& s) {
  if (s == "True") return PyValue::boolean(true);
  if (s == "False") return PyValue::boolean(false);
  if (s == "None") return PyValue::none();
  if (auto d = parse_dtype(s); d && s.rfind("torch.", 0) == 0) return PyValue::of_dtype(*d);
  char* end = nullptr;
  const long long i = std::strtoll(s.c_str(), &end, 10);
  if (end && *end == '\0' && !s.empty()) return PyValue::integer(i);
  const double f = std::strtod(s.c_str(), &end);
  if (end && *end == '\0' && !s.empty()) return PyValue::real(f);
  return PyValue::string(s);
}

}  // namespace

std::vector<std::pair<std::string, PyValue>> parse_assignments(const char* text) {
  std::vector<std::pair<std::string, PyValue>> out;
  for (const auto& item : split_list(text ? text : "")) {
    const auto eq = item.find('=');
    out.emplace_back(item.substr(0, eq), parse_cell_literal(item.substr(eq + 1)));
  }
  return out;
}

OpName normalize_op_name(const std::string& written) {
  // Names the table knows verbatim (torch._C._log_api_usage_once) win over the spelling rules.
  for (const auto& row : python_op_rows())
    if (written == row.python) {
      OpName out;
      out.form = OpName::Form::Python;
      out.python = written;
      out.written_prefix = written.substr(0, written.rfind('.') + 1);
      return out;
    }
  return parse_op_name(written);
}

}  // namespace opcheck::exec
