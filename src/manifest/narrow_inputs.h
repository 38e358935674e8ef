// The load stage's last step: random index and mask inputs drawn within what their op allows (common/input_bounds.h).
#pragma once

#include "opcheck/case.h"

namespace opcheck {

/// Narrows every random input (rand, uniform, randint) that an op uses as an index to the indexed dim, and caps every
/// random masked_scatter mask at the elements its source holds, draws the random index of an op whose result is
/// undefined where indices repeat without repeats, and makes a random softmax-backward `output` a real softmax, by
/// rewriting the spec's init_args, so the dedupe key,
/// list-cases, repro bundles and the built bytes all see the range that is drawn. Each change is a warning at the
/// tensor's line naming the case, the argument and the bound. Pinned values (data, file) are never changed.
void narrow_random_inputs(ManifestSet& set);

}  // namespace opcheck
