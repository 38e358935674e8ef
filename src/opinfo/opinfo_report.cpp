#include "opinfo/opinfo_report.h"

#include <fstream>
#include <iterator>
#include <map>
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

void drop_unbound(const std::vector<UnboundCase>& cases, const std::filesystem::path& dir, nlohmann::json& report,
                  nlohmann::json& whole_unbound) {
  // A case that is one ATen call of a sample (`<entry>.<dtype>.<sample>.call<k>`) takes the sample's other calls
  // with it: a sample is written whole or not at all.
  std::map<std::string, std::set<std::string>> by_file, prefixes_of_file;  // manifest path -> case names / prefixes
  std::set<std::string> ids, id_prefixes;
  std::map<std::string, std::string> message;  // "model::<entry>.<dtype>.<sample>" -> why
  for (const auto& d : cases) {
    const auto sep = d.id.find("::");
    std::string sample_id = d.id;
    const auto last = sample_id.rfind('.');
    if (sample_id.compare(last + 1, 4, "call") == 0) {
      sample_id.erase(last);
      prefixes_of_file[d.file].insert(sample_id.substr(sep + 2) + ".call");
      id_prefixes.insert("\"" + sample_id + ".call");
    } else {
      by_file[d.file].insert(d.id.substr(sep + 2));
      ids.insert("\"" + d.id + "\"");
    }
    message.emplace(sample_id, d.message);  // the first of a sample's calls that does not bind
  }
  std::map<std::string, std::size_t> left;  // manifest path -> cases left
  for (const auto& [file, names] : by_file) left[file] = 0;
  for (const auto& [file, p] : prefixes_of_file) left[file] = 0;
  for (auto& [file, n] : left) n = drop_blocks(file, "name", by_file[file], prefixes_of_file[file]);
  if ((!ids.empty() || !id_prefixes.empty()) && std::filesystem::exists(dir / "opcheck.yaml"))
    drop_blocks(dir / "opcheck.yaml", "id", ids, id_prefixes);
  // Each dropped sample becomes a not-written sample of its entry, in the entry's count.
  std::map<std::string, nlohmann::json*> entry_of_model;
  for (auto& e : report["entries"]) entry_of_model[e["model"].get<std::string>()] = &e;
  for (const auto& [id, text] : message) {
    const auto sep = id.find("::");
    const std::string model = id.substr(0, sep), name = id.substr(sep + 2);
    nlohmann::json* e = entry_of_model.count(model) ? entry_of_model[model] : nullptr;
    if (e == nullptr) continue;
    // name = <entry>.<dtype>.<sample>
    const auto last = name.rfind('.');
    const auto dtype_dot = name.rfind('.', last - 1);
    (*e)["written"] = (*e)["written"].get<int>() - 1;
    if (id_prefixes.count("\"" + id + ".call"))
      (*e)["as_calls"] = (*e)["as_calls"].get<int>() - 1;
    else
      whole_unbound[(*e)["name"].get<std::string>()][name.substr(dtype_dot + 1, last - dtype_dot - 1)]
                   [name.substr(last + 1)] = text;
    report["not_written"].push_back({{"entry", (*e)["name"]},
                                      {"dtype", name.substr(dtype_dot + 1, last - dtype_dot - 1)},
                                      {"sample", std::stoi(name.substr(last + 1))},
                                      {"reason", "unbound_call"},
                                      {"detail", text}});
  }
  // The entries' case counts from what is left; a manifest left without cases is removed (an empty case list is no
  // manifest).
  for (const auto& [file, n] : left) {
    const std::string model = std::filesystem::path(file).stem().string();
    if (entry_of_model.count(model)) (*entry_of_model[model])["cases"] = n;
    if (n == 0) std::filesystem::remove(file);
  }
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
  if (c.contains("expectations")) {
    const auto& e = c["expectations"];
    os << "; " << e["total"].get<long>() << " OpInfo skips and xfails, " << e["dropped"].get<long>()
       << " dropped (their cases pass opcheck's check of the CPU against itself), " << e["applied"].get<long>()
       << " applied";
  }
  return os.str();
}

}  // namespace opcheck::opinfo
