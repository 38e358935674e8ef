#include "runner/earlier_results.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "report/atomic_file.h"
#include "report/json_writer.h"
#include "report/record_json.h"
#include "settings/run_identity.h"

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

bool EarlierResults::adopt_journal(std::vector<CaseRecord> records, const std::vector<int>& unbound_lines,
                                   const std::optional<RunInfo>& written_by, const RunInfo& now,
                                   const std::string& journal_path, std::string& error) {
  if (records.empty() && unbound_lines.empty()) return true;
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
  if (!unbound_lines.empty()) {
    const std::size_t n = unbound_lines.size();
    warnings_.push_back("--resume: " + journal_path + ": " + std::to_string(n) +
                        (n == 1 ? " entry failed its check" : " entries failed their check") + " (first at line " +
                        std::to_string(unbound_lines.front()) +
                        ": edited, corrupt, or moved from another journal); " +
                        (n == 1 ? "its case was" : "their cases were") + " run again");
  }
  for (auto& r : records) {
    std::string k = r.id + "\n" + r.key;
    journal_[std::move(k)] = std::move(r);
  }
  return true;
}

namespace {

constexpr const char* kCacheFormat = "opcheck-results-cache";
constexpr const char* kDigestPrefix = "{\"digest\":\"";
constexpr const char* kRecordKey = "\",\"record\":";
constexpr std::size_t kDigestChars = 64;
// The largest results cache read: over a thousand bytes a unique case, a million cases.
constexpr std::uintmax_t kMaxCacheBytes = std::uintmax_t{1} << 30;

std::string cache_header_line(const RunInfo& info) {
  std::string line;
  JsonWriter w(line);
  w.begin_object().field("format", kCacheFormat).field("version", 1).key("run");
  write_run_info(w, info);
  w.end_object();
  return line;
}

}  // namespace

void EarlierResults::adopt_cache(const std::string& cache_path, const RunInfo& now, bool serve, std::string& note) {
  serve_cache_ = serve;
  std::error_code ec;
  if (!std::filesystem::exists(cache_path, ec)) return;
  // Its size first: a cache is a line per unique case, so one of gigabytes is damaged or not a cache, and reading it
  // whole would hold the run up (and its memory) before the first case.
  const auto bytes = std::filesystem::file_size(cache_path, ec);
  if (!ec && bytes > kMaxCacheBytes) {
    warnings_.push_back("--results-cache " + cache_path + ": it is " + std::to_string(bytes) + " bytes, more than a " +
                        "results cache holds (" + std::to_string(kMaxCacheBytes) + "); it was not read, none of its " +
                        "results are used and every case is run again (the cache is rewritten)");
    return;
  }
  const std::string text = read_file_bytes(cache_path);  // a regular file, opened without blocking
  std::vector<std::string_view> lines;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t nl = std::min(text.find('\n', pos), text.size());
    lines.push_back(std::string_view(text).substr(pos, nl - pos));
    pos = nl + 1;
  }
  if (lines.empty()) return;
  const std::string header(lines[0]);
  std::optional<RunInfo> written_by;
  try {
    const nlohmann::json h = nlohmann::json::parse(header);
    if (h.is_object() && h.value("format", "") == kCacheFormat && h.contains("run"))
      written_by = run_info_from_json(h["run"], JsonWhere{cache_path + ":1", "/run"});
  } catch (const std::exception&) {
  }
  if (!written_by) {
    warnings_.push_back("--results-cache " + cache_path +
                        ": its first line is not an opcheck results-cache header (a cache of an older opcheck, or "
                        "another file); none of its results are used and every case is run again");
    return;
  }
  const std::string differs = describe_changes(verdict_changes(identity_changes(*written_by, now)));
  if (!differs.empty()) {
    note = cache_path + " holds results of a different run; they are not reused and the cache is rewritten. What "
           "differs (then -> now):\n" + differs;
    return;
  }
  std::size_t rejected = 0, first_bad = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line.empty()) continue;
    const std::size_t prefix = std::strlen(kDigestPrefix), key = std::strlen(kRecordKey);
    const bool framed = line.size() > prefix + kDigestChars + key && line.substr(0, prefix) == kDigestPrefix &&
                        line.substr(prefix + kDigestChars, key) == kRecordKey && line.back() == '}';
    const std::string_view record =
        framed ? line.substr(prefix + kDigestChars + key, line.size() - prefix - kDigestChars - key - 1) : line;
    try {
      if (!framed || line.substr(prefix, kDigestChars) != record_digest(header, record))
        throw std::runtime_error("digest");
      CaseRecord r = case_record_from_json(nlohmann::json::parse(record), JsonWhere{cache_path, ""});
      std::string k = r.key;
      cache_[std::move(k)] = std::move(r);
    } catch (const std::exception&) {
      if (!rejected++) first_bad = i + 1;
    }
  }
  if (rejected)
    warnings_.push_back("--results-cache " + cache_path + ": " + std::to_string(rejected) + " entr" +
                        (rejected == 1 ? "y" : "ies") + " failed their check (first at line " +
                        std::to_string(first_bad) +
                        ": edited, corrupt or written under another run); their cases were run again");
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
  const std::string header = cache_header_line(info);
  write_file_atomically(path, [&](TextOut& out) {
    out.buf += header + "\n";
    for (const auto& [key, rec] : cache_) {
      CaseRecord stored = rec;
      stored.result.result_from_cache = false;  // facts of the run that serves it, not of the result
      stored.result.result_from_journal = false;
      const std::string record = case_record_json_line(stored);
      out.buf += kDigestPrefix + record_digest(header, record) + kRecordKey + record + "}\n";
      out.spill();
    }
  });
}

}  // namespace opcheck
