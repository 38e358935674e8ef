#include "opinfo/expectation_check.h"

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "opcheck/case.h"
#include "runner/worker_pool.h"

namespace opcheck::opinfo {
namespace {

namespace fs = std::filesystem;

/// A case id as the importer writes it in a rule of DIR/opcheck.yaml: glob characters escaped, then JSON-quoted.
std::string rule_id_text(const std::string& id) {
  std::string escaped;
  for (char ch : id) {
    if (ch == '*' || ch == '?' || ch == '[' || ch == ']' || ch == '\\') escaped += '\\';
    escaped += ch;
  }
  return nlohmann::json(escaped).dump();
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

/// DIR/opcheck.yaml again, with the rules of the applied expectations only (the importer's header comment kept).
void rewrite_status_config(const fs::path& path, const nlohmann::json& expectations) {
  std::string head;
  {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line) && line.rfind('#', 0) == 0;) head += line + "\n";
  }
  head += "# A skip or xfail whose case passes opcheck's check of the CPU against itself is not here: its failure is\n"
          "# PyTorch's test harness's (opinfo-report.json lists it under expectations, applied: false).\n";
  std::string rules;
  for (const auto& e : expectations) {
    if (!e["applied"].get<bool>()) continue;
    const bool xfail = e["status"] == "xfail";
    rules += "  - id: " + rule_id_text(e["case"].get<std::string>()) + "\n    status: " + (xfail ? "xfail" : "skip") +
             "\n" + (xfail ? "    strict: false\n" : "") + "    reason: " + e["reason"].dump() + "\n";
  }
  std::ofstream(path) << head << (rules.empty() ? "rules: []\n" : "rules:\n" + rules);
}

void set_counts(nlohmann::json& report, const ExpectationCounts& n) {
  report["counts"]["expectations"] = {{"total", n.total}, {"dropped", n.dropped}, {"applied", n.applied}};
}

}  // namespace

void leave_expectations_unchecked(nlohmann::json& report, const char* why) {
  ExpectationCounts n;
  for (auto& e : report["expectations"]) {
    e["applied"] = true;
    e["decision"] = std::string("applied, not checked: ") + why;
    ++n.total;
    ++n.applied;
  }
  set_counts(report, n);
}

ExpectationCounts check_expectations(const std::function<std::unique_ptr<Executor>(std::string&)>& make_executor,
                                     const fs::path& dir, nlohmann::json& report, int jobs) {
  nlohmann::json& all = report["expectations"];
  if (!all.is_array()) all = nlohmann::json::array();
  // The cases still written: the manifests of the models that hold an expectation.
  std::set<std::string> models;
  for (const auto& e : all) {
    const std::string id = e["case"].get<std::string>();
    models.insert(id.substr(0, id.find("::")));
  }
  std::vector<std::string> paths;
  for (const auto& m : models)
    if (fs::exists(dir / (m + ".yaml"))) paths.push_back((dir / (m + ".yaml")).string());
  const ManifestSet set = paths.empty() ? ManifestSet{} : load_manifests(paths);
  std::map<std::string, const Case*> by_id;
  for (const auto& m : set.manifests)
    for (const auto& c : m.cases) by_id[c.id] = &c;
  nlohmann::json kept = nlohmann::json::array();
  std::vector<const Case*> to_run;
  std::map<std::string, std::size_t> run_index;  // case id -> index into to_run
  for (auto& e : all) {
    const std::string id = e["case"].get<std::string>();
    if (!by_id.count(id)) continue;  // taken out by the bind check, with its sample
    if (e["check"] == "run" && !run_index.count(id)) {
      run_index[id] = to_run.size();
      to_run.push_back(by_id[id]);
    }
    kept.push_back(e);
  }
  all = std::move(kept);
  std::vector<Result> results(to_run.size());
  std::string setup_error;
  if (!to_run.empty()) {
    std::unique_ptr<Executor> ex = make_executor(setup_error);
    if (ex) {
      PoolOptions opts;
      opts.workers = jobs > 0 ? jobs : 2;
      run_cases(*ex, to_run, opts, [&](std::size_t i, Result r) { results[i] = std::move(r); });
    }
  }
  ExpectationCounts n;
  for (auto& e : all) {
    ++n.total;
    const std::string id = e["case"].get<std::string>();
    const bool ran = run_index.count(id) && setup_error.empty();
    if (e["check"] != "run") {
      e["applied"] = true;
      e["decision"] = "applied without a check: " + e["check"].get<std::string>();
    } else if (!ran) {
      e["applied"] = true;
      e["decision"] = "applied, not checked: the CPU executor could not be set up (" + first_line(setup_error) + ")";
    } else if (const Result& r = results[run_index[id]]; r.stage == Stage::PASSED) {
      e["applied"] = false;
      e["decision"] = "dropped: the case passes opcheck's check of the CPU against itself, so the failure OpInfo "
                      "expects is one of PyTorch's test harness, not of the op";
    } else {
      e["applied"] = true;
      e["decision"] = std::string("applied: opcheck's check of the CPU against itself gives ") +
                      stage_name(r.stage) + (r.message.empty() ? "" : ": " + first_line(r.message));
    }
    ++(e["applied"].get<bool>() ? n.applied : n.dropped);
  }
  if (n.dropped > 0) rewrite_status_config(dir / "opcheck.yaml", all);
  set_counts(report, n);
  return n;
}

}  // namespace opcheck::opinfo
