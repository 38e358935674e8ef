// Did-you-mean suggestions for misspelled keys, names and dtypes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace opcheck {

/// The candidate a typo of `word` most likely meant, or "" when none is close enough.
std::string closest_spelling(std::string_view word, const std::vector<std::string_view>& candidates);
std::string closest_spelling(std::string_view word, const std::vector<std::string>& candidates);

/// Whether `a` and `b` differ in letter case only: the cheapest typo of all, which closest_spelling counts as none.
bool equal_ignoring_case(std::string_view a, std::string_view b);

/// " (did you mean 'x'?)" for the closest candidate, or "" when there is none.
std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& candidates);
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace opcheck
