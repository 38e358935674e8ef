#include "opinfo/opinfo_report.h"

#include <fstream>
#include <iterator>
#include <sstream>

namespace opcheck::opinfo {

std::size_t drop_blocks(const std::filesystem::path& path, const std::string& key, const std::set<std::string>& values,
                        const std::set<std::string>& prefixes) {
  std::ifstream in(path);
  std::stringstream out;
  bool dropping = false;
  std::size_t left = 0;
  const std::string start = "  - " + key + ": ";
  auto dropped = [&](const std::string& value) {
    if (values.count(value)) return true;
    auto it = prefixes.upper_bound(value);  // the greatest prefix <= value, if any, is the candidate
    return it != prefixes.begin() && value.rfind(*std::prev(it), 0) == 0;
  };
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  - ", 0) == 0) {
      dropping = line.rfind(start, 0) == 0 && dropped(line.substr(start.size()));
      if (!dropping) ++left;
    } else if (!line.empty() && line[0] != ' ') {
      dropping = false;
    }
    if (!dropping) out << line << "\n";
  }
  in.close();
  std::ofstream(path) << out.str();
  return left;
}

void recount(nlohmann::json& report) {
  nlohmann::json& c = report["counts"];
  long samples = 0, written = 0, as_calls = 0, cases = 0;
  for (const auto& e : report["entries"]) {
    samples += e["samples"].get<long>();
    written += e["written"].get<long>();
    as_calls += e["as_calls"].get<long>();
    cases += e["cases"].get<long>();
  }
  c["samples"] = samples;
  c["written"] = written;
  c["as_calls"] = as_calls;
  c["cases"] = cases;
  c["not_written"] = report["not_written"].size();
  for (auto& [reason, n] : c["by_reason"].items()) n = 0;
  for (const auto& x : report["not_written"]) {
    auto& n = c["by_reason"][x["reason"].get<std::string>()];
    n = n.get<long>() + 1;
  }
}

std::string summary_line(const nlohmann::json& report) {
  const auto& c = report["counts"];
  std::ostringstream os;
  os << c["ops"].get<long>() << " ops, " << c["samples"].get<long>() << " samples, " << c["written"].get<long>()
     << " written as " << c["cases"].get<long>() << " cases (" << c["as_calls"].get<long>()
     << " as their ATen calls), " << c["not_written"].get<long>() << " not written";
  std::string reasons;
  for (const auto& [reason, n] : c["by_reason"].items())
    if (n.get<long>() > 0) reasons += (reasons.empty() ? "" : ", ") + std::to_string(n.get<long>()) + " " + reason;
  if (!reasons.empty()) os << " (" << reasons << ")";
  return os.str();
}

}  // namespace opcheck::opinfo
