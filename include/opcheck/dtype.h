// Element types as manifests name them, independent of libtorch.
#pragma once

#include <optional>
#include <vector>
#include <string>
#include <string_view>

namespace opcheck {

/// The closed set of tensor element types a manifest may name.
enum class DType {
  Float16,
  BFloat16,
  Float32,
  Float64,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  Bool,
  Complex32,
  Complex64,
  Complex128,
};

/// Parses every accepted spelling: fp16/float16/half/torch.float16/torch.half/f16, bf16/bfloat16,
/// fp32/float32/float/f32, fp64/float64/double/f64, int8/i8, int16/short/i16, int32/int/i32,
/// int64/long/i64, uint8/u8, bool/b8, complex32/c32, complex64/cfloat/c64, complex128/cdouble/c128,
/// each also with a `torch.` prefix.
std::optional<DType> parse_dtype(std::string_view spelling);

/// The canonical short name: fp16 bf16 fp32 fp64 int8 int16 int32 int64 uint8 bool complex32 complex64 complex128.
const char* dtype_name(DType t);

/// torch's name: float16 bfloat16 float32 float64 int8 ... complex128 (torch-spyre's marks and test names use it).
const char* torch_dtype_name(DType t);

/// Bytes per element.
int dtype_size(DType t);

bool dtype_is_floating(DType t);  // fp16, bf16, fp32, fp64
bool dtype_is_complex(DType t);

/// All canonical names, for did-you-mean suggestions.
const std::vector<std::string>& all_dtype_names();

}  // namespace opcheck
