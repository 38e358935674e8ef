#include "opcheck/case.h"

#include <sys/utsname.h>

#include <cctype>
#include <optional>

#include "common/init_recipes.h"

namespace opcheck {

// The name is the recipe table's (common/init_recipes.cpp), whose names are string literals.
const char* init_kind_name(InitKind k) { return init_recipe(k).name.data(); }

std::string TensorSpec::file_source() const {
  return file_fd >= 0 ? "/proc/self/fd/" + std::to_string(file_fd) : file;
}

std::int64_t TensorSpec::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::int64_t TensorSpec::storage_bytes() const {
  if (numel() == 0) return 0;
  std::int64_t last = storage_offset;
  for (std::size_t i = 0; i < shape.size(); ++i) last += (shape[i] - 1) * (i < stride.size() ? stride[i] : 0);
  return (last + 1) * dtype_size(dtype);
}

bool TensorSpec::is_contiguous() const {
  std::int64_t expected = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && (i >= stride.size() || stride[i] != expected)) return false;
    expected *= shape[i];
  }
  return true;
}

std::string op_mark(std::string_view op) {
  std::string out = "op__";
  for (char c : op) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

std::string platform_mark() {
  static const std::string mark = [] {
    struct utsname u {};
    return std::string("platform__") + (::uname(&u) == 0 ? u.machine : "unknown");
  }();
  return mark;
}

std::vector<std::string> derived_marks(const Case& c) {
  return {op_mark(c.op), std::string("dtype__") + torch_dtype_name(case_dtype(c)), platform_mark()};
}

DType case_dtype(const Case& c) {
  std::optional<DType> first;
  auto look = [&](const TensorSpec& t) {
    if (!first) first = t.dtype;
    return dtype_is_floating(t.dtype) || dtype_is_complex(t.dtype);
  };
  for (const Input& in : c.inputs) {
    if (in.kind == Input::Kind::Tensor && look(in.tensor)) return in.tensor.dtype;
    if (in.kind == Input::Kind::TensorList)
      for (const TensorSpec& t : in.list)
        if (look(t)) return t.dtype;
  }
  if (first) return *first;
  for (const auto& [name, value] : c.kwargs)
    if (name == "dtype" && value.kind == PyValue::Kind::DType) return value.dtype;
  return c.dtype;
}

bool is_derived_mark(std::string_view mark) {
  for (std::string_view prefix : {"op__", "dtype__", "platform__"})
    if (mark.size() > prefix.size() && mark.substr(0, prefix.size()) == prefix) return true;
  return false;
}

}  // namespace opcheck
