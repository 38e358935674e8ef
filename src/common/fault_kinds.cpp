#include "common/fault_kinds.h"

#include <algorithm>
#include <sstream>

namespace opcheck {

const std::vector<FaultKindInfo>& fault_kinds() {
  static const std::vector<FaultKindInfo> kinds = {
#define OPCHECK_FAULT_KIND_INFO(e, name, arg, ends, example, help) {FaultKind::e, name, arg, ends, example, help},
      OPCHECK_FAULT_KINDS(OPCHECK_FAULT_KIND_INFO)
#undef OPCHECK_FAULT_KIND_INFO
  };
  return kinds;
}

const FaultKindInfo* fault_kind_named(const std::string& name) {
  for (const auto& k : fault_kinds())
    if (name == k.name) return &k;
  return nullptr;
}

namespace {
std::string spelled(const FaultKindInfo& k) {
  return std::string(k.name) + (k.arg == FaultArg::Number ? ":X" : k.arg == FaultArg::OptionalDtype ? "[:DTYPE]" : "");
}
}  // namespace

std::string fault_kind_list() {
  std::string out;
  for (const auto& k : fault_kinds()) out += (out.empty() ? "" : ", ") + spelled(k);
  return out;
}

std::string fault_kind_help(int indent, int width) {
  // The name in a column wide enough for the longest, the help wrapped at word boundaries beside it.
  std::size_t column = 0;
  for (const auto& k : fault_kinds()) column = std::max(column, spelled(k).size());
  column += 2;
  const std::string pad(std::size_t(indent), ' ');
  std::string out;
  for (const auto& k : fault_kinds()) {
    std::string line = pad + spelled(k);
    line.resize(pad.size() + column, ' ');
    std::istringstream words(k.help);
    std::string word;
    bool first = true;
    while (words >> word) {
      if (!first && line.size() + 1 + word.size() > std::size_t(width)) {
        out += line + "\n";
        line = pad + std::string(column, ' ');
        first = true;
      }
      line += (first ? "" : " ") + word;
      first = false;
    }
    out += line + "\n";
  }
  return out;
}

std::vector<std::string> fault_keys_for(const std::string& name, const std::string& overload) {
  if (overload.empty() || overload == "default") return {name + ".default", name};
  return {name + "." + overload, name};
}

bool fault_op_matches(const std::string& fault_op, const std::string& reached) {
  const auto dot = reached.find('.', reached.find("::"));
  const std::string name = reached.substr(0, dot);
  const std::string overload = dot == std::string::npos ? std::string() : reached.substr(dot + 1);
  for (const auto& key : fault_keys_for(name, overload))
    if (key == fault_op) return true;
  return false;
}

}  // namespace opcheck
