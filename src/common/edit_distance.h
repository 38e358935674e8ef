// The one edit distance of opcheck's did-you-mean suggestions (manifest keys, model names, op names).
#pragma once

#include <cstddef>
#include <string_view>

namespace opcheck {

/// Did-you-mean is offered for names up to this many bytes: a longer one is not a typo, and the distance costs its
/// length times each candidate's (a generated 1 MB op name would take minutes).
constexpr std::size_t kMaxSpelledNameLength = 200;

/// Optimal string alignment distance: Levenshtein plus adjacent transpositions ("flaot" is one edit from "float"),
/// case-sensitive (callers fold case where it should not count).
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace opcheck
