#include "common/text.h"

namespace opcheck {

std::vector<std::string> split_list(std::string_view text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(sep, start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(start, end - start);
    const auto b = item.find_first_not_of(' ');
    if (b != std::string_view::npos) out.emplace_back(item.substr(b, item.find_last_not_of(' ') - b + 1));
    start = end + 1;
  }
  return out;
}

}  // namespace opcheck
