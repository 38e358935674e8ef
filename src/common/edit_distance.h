// The one edit distance of opcheck's did-you-mean suggestions (manifest keys, model names, op names).
#pragma once

#include <cstddef>
#include <string_view>

namespace opcheck {

/// Optimal string alignment distance: Levenshtein plus adjacent transpositions ("flaot" is one edit from "float"),
/// case-sensitive (callers fold case where it should not count).
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace opcheck
