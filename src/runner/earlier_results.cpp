#include "runner/earlier_results.h"

#include <filesystem>
#include <set>

#include "report/journal.h"
#include "runner/run_identity.h"

namespace opcheck {

std::vector<const Case*> last_failed_cases(const std::vector<const Case*>& selected,
                                           const std::vector<CaseRecord>& previous, const RunPolicy& policy,
                                           bool& nothing_failed) {
  std::set<std::string> bad;
  for (const auto& r : previous)
    if (fails_run(r.outcome, r.xfail_strictness, policy)) bad.insert(r.id);
  nothing_failed = bad.empty();
  if (nothing_failed) return selected;
  std::vector<const Case*> kept;
  for (const Case* c : selected)
    if (bad.count(c->id)) kept.push_back(c);
  return kept;
}

bool EarlierResults::adopt_journal(std::vector<CaseRecord> records, const std::optional<RunInfo>& written_by,
                                   const RunInfo& now, const std::string& journal_path, std::string& error) {
  if (records.empty()) return true;
  std::string differs;
  if (!written_by) differs = "  the journal has no header saying what wrote it\n";
  else differs = describe_changes(identity_changes(*written_by, now));
  if (!differs.empty()) {
    error = "--resume: " + journal_path + " was written by a different run; its results are not reused. What differs "
            "(then -> now):\n" +
            differs +
            "  Fix: rerun without --resume (a fresh run), or give this run a fresh --artifact-dir; to resume, use the "
            "settings of the run that wrote it";
    return false;
  }
  for (auto& r : records) {
    std::string k = r.id + "\n" + r.key;
    journal_[std::move(k)] = std::move(r);
  }
  return true;
}

void EarlierResults::adopt_cache(const std::string& cache_path, const RunInfo& now, bool serve, std::string& note) {
  serve_cache_ = serve;
  std::error_code ec;
  if (!std::filesystem::exists(cache_path, ec)) return;
  Journal j = read_journal(cache_path);
  if (j.records.empty()) return;
  const std::string differs =
      j.info ? describe_changes(verdict_changes(identity_changes(*j.info, now)))
             : "  the cache has no header saying what wrote it\n";
  if (!differs.empty()) {
    note = cache_path + " holds results of a different run; they are not reused and the cache is rewritten. What "
           "differs (then -> now):\n" + differs;
    return;
  }
  for (auto& r : j.records) {
    std::string k = r.key;
    cache_[std::move(k)] = std::move(r);
  }
}

const Result* EarlierResults::find(const std::string& id, const std::string& key, Source& from) const {
  if (auto it = journal_.find(id + "\n" + key); it != journal_.end()) {
    from = Source::Journal;
    return &it->second.result;
  }
  if (!serve_cache_) return nullptr;
  if (auto hit = cache_.find(key); hit != cache_.end()) {
    from = Source::Cache;
    return &hit->second.result;
  }
  return nullptr;
}

void EarlierResults::write_cache(const std::string& path, const RunInfo& info, const std::vector<CaseRecord>& results) {
  for (const auto& r : results)
    if (r.deduplicated_from.empty() && r.result.stage != Stage::SKIPPED) cache_[r.key] = r;
  namespace fs = std::filesystem;
  const std::string tmp = path + ".tmp";
  fs::remove(tmp);
  {
    JournalWriter w(tmp, &info);
    for (const auto& [key, rec] : cache_) w.append(rec);
    w.close();
  }
  fs::rename(tmp, path);
}

}  // namespace opcheck
