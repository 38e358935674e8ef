// Small text helpers several stages share.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace opcheck {

/// The words of `words` (strings or string_views) with `sep` between them: join({"a", "b"}) == "a, b".
template <class Words>
std::string join(const Words& words, std::string_view sep = ", ") {
  std::string out;
  bool first = true;
  for (const auto& w : words) {
    if (!first) out += sep;
    out += w;
    first = false;
  }
  return out;
}

/// Spaces, tabs, line breaks, vertical tabs and form feeds (C's isspace): what surrounds a line read from a file.
inline constexpr std::string_view kWhitespace = " \t\r\n\v\f";

/// Whether `word` is one of `words` (a key among the keys a mapping allows, a name among known names).
bool is_one_of(std::string_view word, const std::vector<std::string_view>& words);

/// `text` without the characters of `blanks` around it; by default spaces and tabs, as a list item or a flag's value
/// is written.
std::string_view trim_blanks(std::string_view text, std::string_view blanks = " \t");

/// The items of a `sep`-separated list, each without the spaces and tabs around it, empty items left out:
/// split_list("aten::a.x, aten::b,", ',') == {"aten::a.x", "aten::b"}.
std::vector<std::string> split_list(std::string_view text, char sep = ',');

/// How many bytes of a name or value a message quotes (docs/design.md: Hostile sizes).
inline constexpr std::size_t kQuotedBytes = 120;

/// `text` as a message echoes it: whole up to kQuotedBytes bytes, else its first kQuotedBytes bytes, "..." and its
/// full length: clipped(a 120 KB -k expression) == "a or b or ... (122880 bytes)".
std::string clipped(std::string_view text);

}  // namespace opcheck
