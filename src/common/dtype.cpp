#include "opcheck/dtype.h"

#include <array>
#include <utility>

namespace opcheck {
namespace {
struct Spelling {
  const char* name;
  DType type;
};
// Every accepted spelling without the optional `torch.` prefix.
constexpr std::array<Spelling, 38> kSpellings{{
    {"fp16", DType::Float16},     {"float16", DType::Float16},   {"half", DType::Float16},
    {"f16", DType::Float16},      {"bf16", DType::BFloat16},     {"bfloat16", DType::BFloat16},
    {"fp32", DType::Float32},     {"float32", DType::Float32},   {"float", DType::Float32},
    {"f32", DType::Float32},      {"fp64", DType::Float64},      {"float64", DType::Float64},
    {"double", DType::Float64},   {"f64", DType::Float64},       {"int8", DType::Int8},
    {"i8", DType::Int8},          {"int16", DType::Int16},       {"short", DType::Int16},
    {"i16", DType::Int16},        {"int32", DType::Int32},       {"int", DType::Int32},
    {"i32", DType::Int32},        {"int64", DType::Int64},       {"long", DType::Int64},
    {"i64", DType::Int64},        {"uint8", DType::UInt8},       {"u8", DType::UInt8},
    {"bool", DType::Bool},        {"b8", DType::Bool},           {"complex32", DType::Complex32},
    {"chalf", DType::Complex32},  {"c32", DType::Complex32},     {"complex64", DType::Complex64},
    {"cfloat", DType::Complex64}, {"c64", DType::Complex64},     {"complex128", DType::Complex128},
    {"cdouble", DType::Complex128}, {"c128", DType::Complex128},
}};
}  // namespace

std::optional<DType> parse_dtype(std::string_view s) {
  if (s.substr(0, 6) == "torch.") s.remove_prefix(6);
  for (const auto& sp : kSpellings)
    if (s == sp.name) return sp.type;
  return std::nullopt;
}

const char* torch_dtype_name(DType t) {
  switch (t) {
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    default: return dtype_name(t);  // the other canonical names are torch's own
  }
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float16: return "fp16";
    case DType::BFloat16: return "bf16";
    case DType::Float32: return "fp32";
    case DType::Float64: return "fp64";
    case DType::Int8: return "int8";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::UInt8: return "uint8";
    case DType::Bool: return "bool";
    case DType::Complex32: return "complex32";
    case DType::Complex64: return "complex64";
    case DType::Complex128: return "complex128";
  }
  return "?";
}

int dtype_size(DType t) {
  switch (t) {
    case DType::Bool: case DType::Int8: case DType::UInt8: return 1;
    case DType::Float16: case DType::BFloat16: case DType::Int16: return 2;
    case DType::Float32: case DType::Int32: case DType::Complex32: return 4;
    case DType::Float64: case DType::Int64: case DType::Complex64: return 8;
    case DType::Complex128: return 16;
  }
  return 0;
}

bool dtype_is_floating(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}
bool dtype_is_complex(DType t) { return t == DType::Complex32 || t == DType::Complex64 || t == DType::Complex128; }

const std::vector<std::string>& all_dtype_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& sp : kSpellings) {
      v.emplace_back(sp.name);
      v.emplace_back(std::string("torch.") + sp.name);
    }
    return v;
  }();
  return names;
}

}  // namespace opcheck
