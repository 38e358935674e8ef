#include "repro/bundle_layout.h"

#include "common/regular_file.h"
#include "common/sha256.h"
#include "common/text_escape.h"

namespace opcheck::repro {

std::string bundle_folder_name(const std::string& case_id) {
  std::string out;
  // A `__` already in the id would read like a `::`: mark it so the digest tells the two apart.
  bool lossy = case_id.find("__") != std::string::npos;
  for (std::size_t i = 0; i < case_id.size(); ++i) {
    const char ch = case_id[i];
    if (ch == ':' && i + 1 < case_id.size() && case_id[i + 1] == ':') {
      out += "__";
      ++i;
    } else if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
               ch == '_' || ch == '-') {
      out += ch;
    } else {
      out += '_';
      lossy = true;
    }
  }
  if (out.empty() || out[0] == '.') {
    out.insert(out.begin(), '_');
    lossy = true;
  }
  if (out.size() > 120) {
    out.resize(120);
    lossy = true;
  }
  if (lossy) out += "-" + sha256_hex(case_id).substr(0, 8);
  return out;
}

std::string bundle_input_file(std::size_t input, std::size_t element, bool list) {
  return "inputs/" + std::to_string(input) + (list ? "_" + std::to_string(element) : std::string()) + ".pt";
}

std::vector<std::string> input_words(const std::vector<std::string>& manifests, const std::string& config) {
  std::vector<std::string> words;
  for (const auto& m : manifests) words.insert(words.end(), {"--manifests", absolute_path(m)});
  if (!config.empty()) words.insert(words.end(), {"--config", absolute_path(config)});
  return words;
}

std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=,+@%-") ==
                        std::string::npos)
    return s;
  if (first_control_character(s) == std::string::npos) {
    std::string out = "'";
    for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return out + "'";
  }
  // A line break or escape sequence inside quotes would still reach the terminal, or end the line a `#` comment
  // or the console's `rerun:` line holds: bash's $'...' keeps the word on one line and in ASCII, every byte exact.
  std::string out = "$'";
  for (unsigned char ch : s) {
    if (ch == '\'' || ch == '\\') {
      out += '\\';
      out += char(ch);
    } else if (ch < 0x20 || ch >= 0x7f) {  // C1 controls are UTF-8 sequences: every non-ASCII byte
      static const char* const kHex = "0123456789abcdef";
      out += {'\\', 'x', kHex[ch >> 4], kHex[ch & 15]};
    } else {
      out += char(ch);
    }
  }
  return out + "'";
}

}  // namespace opcheck::repro
