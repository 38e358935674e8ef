#include "common/text.h"

#include <algorithm>

namespace opcheck {

bool is_one_of(std::string_view word, const std::vector<std::string_view>& words) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

std::string_view trim_blanks(std::string_view text, std::string_view blanks) {
  const auto b = text.find_first_not_of(blanks);
  if (b == std::string_view::npos) return {};
  return text.substr(b, text.find_last_not_of(blanks) - b + 1);
}

std::vector<std::string> split_list(std::string_view text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(sep, start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = trim_blanks(text.substr(start, end - start));
    if (!item.empty()) out.emplace_back(item);
    start = end + 1;
  }
  return out;
}

std::string clipped(std::string_view text) {
  if (text.size() <= kQuotedBytes) return std::string(text);
  return std::string(text.substr(0, kQuotedBytes)) + "... (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace opcheck
