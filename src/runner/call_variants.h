// Variants of one op call, for `opcheck shrink` (smaller calls) and `opcheck sweep` (the same call across dtypes,
// layouts and shapes). Pure edits of a Case: nothing runs here, and every variant is a whole Case a run can take.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "opcheck/case.h"

namespace opcheck {

/// Elements of every tensor input of the call (tensor lists included): how big a call is, as shrink measures it.
std::int64_t input_elements(const Case& c);

/// How far a call is from the simplest one of its size, compared after input_elements: one point per tensor that is
/// not contiguous, per tensor whose values are not zeros, ones or small integers (two for a file or data tensor),
/// per keyword argument and per float argument other than 1.0.
std::int64_t call_complexity(const Case& c);

/// A candidate call and the edit that made it from its parent, for messages ("dims 2880->1 at -1").
struct CallVariant {
  Case call;
  std::string edit;
};

/// Every one-step simplification of `c` that shrink tries next: a size set to 1, halved or less one in every dim of
/// that size (what inputs share: broadcast partners, matmul's inner dims), in every tensor whose dim at one position
/// counted from the right (as broadcasting aligns them) has the largest size there, and in one dim of one tensor;
/// leading size-1 dims dropped; a strided tensor made
/// contiguous; values made zeros, ones or small integers (file and data tensors first, whose shape cannot shrink
/// before); keyword arguments dropped (their defaults); float arguments set to 1.0. Every variant is strictly smaller
/// by (input_elements, call_complexity).
std::vector<CallVariant> shrink_steps(const Case& c);

/// One axis of a sweep: what a variant row shows in each column.
struct SweepVariant {
  Case call;
  std::string dtype;   // the tensor inputs' dtypes, "bf16" or "bf16+fp32"
  std::string layout;  // contiguous, transposed, sliced, offset, or "as written"
  std::string shape;   // the tensor inputs' shapes, "[1,11,32] [32]"
};

/// The sweep of `c`, at most `max_variants` rows, the original call first: every dtype of kSweepDtypes (given to the
/// case and to its tensors of a floating dtype or the case's; integer tensors get small random integers) crossed with
/// every layout (as written, contiguous, transposed last two dims, sliced with step 2 on the last dim, storage offset
/// 3), then the shapes around the original (each dim position ±1, the powers of two below and above, 1) in the
/// original dtype and layout. `left_out` counts the variants the bound cut. Variant ids are `name[dtype,layout,shape]`.
std::vector<SweepVariant> sweep_variants(const Case& c, std::size_t max_variants, std::size_t& left_out);

/// The dtypes a sweep tries: the float types a device offers and the common integer ones.
extern const std::vector<DType> kSweepDtypes;

/// The distinct dtypes of the tensor inputs in order, "bf16+fp32" (the case's dtype when it has no tensor).
std::string dtypes_text(const Case& c);

/// The shapes of the tensor inputs: "[1,11,32] [32]".
std::string shapes_text(const Case& c);

}  // namespace opcheck
