// What the input recipes (common/init_recipes.h) refuse, asked at load time: `validate` and the loader say what the
// exec layer's builder would refuse when the case runs (xavier on a vector, distinct values a range cannot hold).
#pragma once

#include <string>

#include "opcheck/case.h"

namespace opcheck {

/// The recipe's refusal of `t` (its first), with its fix, over the values the exec layer would build (the shape with
/// expanded, stride-0, dims reduced to 1, or the whole shape for the kinds that take it); "" when it builds.
std::string recipe_problem(const TensorSpec& t, std::string& fix);

}  // namespace opcheck
