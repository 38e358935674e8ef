// Input building: deterministic host tensors from TensorSpecs, reproducible bit for bit in Python.
#pragma once

#include <cstdint>
#include <string>

#include "common/input_bounds.h"
#include "opcheck/case.h"
#include "exec/pch.h"

namespace opcheck::exec {

/// Builds the host (CPU) tensor a spec describes. Values follow torch.testing.make_tensor's recipes after
/// torch.manual_seed(seed) on a CPU generator, generated in logical order over the logical shape and then
/// placed into storage with the spec's stride and storage_offset. Throws std::runtime_error (with a message
/// naming what is wrong) when the spec cannot be built (bad data shape, unreadable file, ...).
///
/// Random values are drawn directly in the target dtype, e.g. for `rand` with low/high in Python:
///   torch.manual_seed(seed); r = torch.rand(shape, dtype=dtype); t = high * r + low * (1 - r)
/// Every recipe, the layout rules (stride-0 dims generated at size 1, then expanded; unreached storage zeroed)
/// and the digest are specified in test/exec_inputs/README.md and checked against Python byte for byte.
at::Tensor build_tensor(const TensorSpec& spec, std::int64_t seed);

/// The seed of positional input `input_index` (and of element `list_index` of a tensor_list): seed + 1000*i + j.
inline std::int64_t input_seed(std::int64_t case_seed, std::size_t input_index, std::size_t list_index = 0) {
  return case_seed + 1000 * static_cast<std::int64_t>(input_index) + static_cast<std::int64_t>(list_index);
}

/// sha256 of the tensor's logical bytes (contiguous copy, native dtype, little-endian); for a view that repeats its
/// storage (stride-0 dims), of its layout and the storage span it reaches, so the work is bounded by the bytes behind it.
std::string tensor_digest(const at::Tensor& t);

/// What built input `t` holds that its op does not accept (common/input_bounds.h): "index holds 15, outside [0, 11),
/// the size of dim 0 of self"; empty when it keeps to the bound.
std::string bound_problem(const InputBound& b, const at::Tensor& t);

/// Maps opcheck's DType to libtorch's.
at::ScalarType to_scalar_type(DType t);

}  // namespace opcheck::exec
