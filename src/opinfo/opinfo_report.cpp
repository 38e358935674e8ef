#include "opinfo/opinfo_report.h"

#include <fstream>
#include <sstream>

namespace opcheck::opinfo {

void drop_blocks(const std::filesystem::path& path, const std::string& key, const std::set<std::string>& values) {
  std::ifstream in(path);
  std::stringstream out;
  bool dropping = false;
  const std::string start = "  - " + key + ": ";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  - ", 0) == 0) dropping = line.rfind(start, 0) == 0 && values.count(line.substr(start.size()));
    else if (!line.empty() && line[0] != ' ') dropping = false;
    if (!dropping) out << line << "\n";
  }
  in.close();
  std::ofstream(path) << out.str();
}

void recount(nlohmann::json& report) {
  nlohmann::json& c = report["counts"];
  long samples = 0, written = 0;
  for (const auto& e : report["entries"]) {
    samples += e["samples"].get<long>();
    written += e["written"].get<long>();
  }
  c["samples"] = samples;
  c["written"] = written;
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
     << " cases written, " << c["not_written"].get<long>() << " not written";
  std::string reasons;
  for (const auto& [reason, n] : c["by_reason"].items())
    if (n.get<long>() > 0) reasons += (reasons.empty() ? "" : ", ") + std::to_string(n.get<long>()) + " " + reason;
  if (!reasons.empty()) os << " (" << reasons << ")";
  return os.str();
}

}  // namespace opcheck::opinfo
