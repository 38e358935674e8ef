#include "repro/bundle_layout.h"

#include "common/sha256.h"

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

std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=,+@%-") ==
                        std::string::npos)
    return s;
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

}  // namespace opcheck::repro
