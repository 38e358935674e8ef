#include "common/spelling.h"

#include <algorithm>
#include <cctype>

#include "common/edit_distance.h"

namespace opcheck {

namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

template <typename Range>
std::string closest(std::string_view word, const Range& candidates) {
  if (word.empty() || word.size() > kMaxSpelledNameLength) return {};
  const std::string lw = lower(word);
  std::string best;
  int best_d = 1 << 30;
  for (const auto& c : candidates) {
    std::string_view cand(c);
    if (cand == word) continue;
    // Case differences are the cheapest typo of all.
    int d = lower(cand) == lw ? 0 : static_cast<int>(edit_distance(lw, lower(cand)));
    // Allow more edits for longer words, but never so many that unrelated short words match.
    std::size_t len = std::max(word.size(), cand.size());
    int allowed = len <= 3 ? 1 : len <= 6 ? 2 : 3;
    if (d <= allowed && d < best_d) {
      best_d = d;
      best = std::string(cand);
    }
  }
  if (!best.empty() || word.size() < 4) return best;
  // A truncated or extended spelling (`transpose` for `transpose_view`) is too far by edits but still obvious.
  for (const auto& c : candidates) {
    std::string lc = lower(std::string_view(c));
    if (lc.size() != lw.size() && (lc.rfind(lw, 0) == 0 || lw.rfind(lc, 0) == 0))
      return std::string(std::string_view(c));
  }
  return best;
}
}  // namespace

bool equal_ignoring_case(std::string_view a, std::string_view b) { return lower(a) == lower(b); }

std::string closest_spelling(std::string_view word, const std::vector<std::string_view>& candidates) {
  return closest(word, candidates);
}
std::string closest_spelling(std::string_view word, const std::vector<std::string>& candidates) {
  return closest(word, candidates);
}

std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& candidates) {
  std::string c = closest_spelling(word, candidates);
  return c.empty() ? std::string() : " (did you mean '" + c + "'?)";
}
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string c = closest_spelling(word, candidates);
  return c.empty() ? std::string() : " (did you mean '" + c + "'?)";
}

}  // namespace opcheck
