#include "report/merge.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <set>

#include "common/sha256.h"
#include "report/report_error.h"
#include "report/report_format.h"
#include "settings/run_identity.h"
#include "settings/run_settings.h"

namespace opcheck {
namespace {

// "2026-11-21T05:29:50Z" or with fractional seconds / "+00:00"; seconds since the epoch, empty when unparsable.
std::optional<double> parse_utc(const std::string& s) {
  int y, mo, d, h, mi;
  double sec;
  if (std::sscanf(s.c_str(), "%d-%d-%dT%d:%d:%lf", &y, &mo, &d, &h, &mi, &sec) != 6) return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = 0;
  return static_cast<double>(timegm(&tm)) + sec;
}

// "\n  shard 2: nightly/s1.json" for each shard an error names, when the files are known.
std::string shard_files(const std::vector<std::string>& files, std::initializer_list<std::size_t> shards) {
  std::string out;
  for (std::size_t i : shards)
    if (i < files.size()) out += "\n  shard " + std::to_string(i + 1) + ": " + files[i];
  return out;
}

std::string file_name(const std::vector<std::string>& files, std::size_t s) {
  return s < files.size() ? files[s] : "shard " + std::to_string(s + 1);
}

// Every part of the run identity is the same in every shard (the runner's comparison, as --resume and the results
// cache make it): the first part that differs is named, with both files.
void require_same_identity(const std::vector<RunReport>& shards, const std::vector<std::string>& files) {
  for (std::size_t i = 1; i < shards.size(); ++i) {
    const std::vector<IdentityChange> changes = identity_changes(shards[0].info, shards[i].info);
    if (changes.empty()) continue;
    const IdentityChange& c = changes.front();
    throw ReportError("opcheck merge: error: shard " + std::to_string(i + 1) + " ran with " + c.what + " \"" + c.now +
                      "\" but shard 1 with \"" + c.then + "\"" + shard_files(files, {i, 0}) +
                      "\n  Fix: merge only the shards of one run");
  }
}

// Every shard read the same manifests: the same paths with the same digests (or, run from another folder, the same
// files by digest). A shard of another manifest is named by its file.
void require_same_manifests(const std::vector<RunReport>& shards, const std::vector<std::string>& files) {
  const auto digests = [](const RunInfo& info) {
    std::multiset<std::string> out;
    for (const auto& [path, digest] : info.manifests) out.insert(digest);
    return out;
  };
  const auto& first = shards[0].info.manifests;
  for (std::size_t i = 1; i < shards.size(); ++i) {
    const auto& these = shards[i].info.manifests;
    if (these == first || digests(shards[i].info) == digests(shards[0].info)) continue;
    std::string what;
    for (const auto& [path, digest] : these) {
      const auto it = first.find(path);
      if (it == first.end()) what = "read " + path + ", which shard 1 did not";
      else if (it->second != digest) what = "read " + path + " with sha256 " + digest + " but shard 1 with " + it->second;
      if (!what.empty()) break;
    }
    if (what.empty())
      for (const auto& [path, digest] : first)
        if (!these.count(path)) {
          what = "did not read " + path + ", which shard 1 read";
          break;
        }
    throw ReportError(file_name(files, i) + ": error: /run/manifests: shard " +
                      std::to_string(i + 1) + " " + what + shard_files(files, {i, 0}) +
                      "\n  Fix: merge only the shards of one run, each run on the same manifests");
  }
}

// The shards ran one selection (the same occurrence ids before --shard).
void require_same_selection(const std::vector<RunReport>& shards, const std::vector<std::string>& files) {
  const std::string& first = shards[0].info.selection_sha256;
  for (std::size_t i = 1; i < shards.size(); ++i) {
    const std::string& these = shards[i].info.selection_sha256;
    if (first.empty() || these.empty() || these == first) continue;
    throw ReportError(file_name(files, i) + ": error: /run/selection_sha256: shard " + std::to_string(i + 1) +
                      " ran another selection of cases than shard 1" + shard_files(files, {i, 0}) +
                      "\n  Fix: run every shard with the same manifests and selection flags (--model, -k, -m, ids)");
  }
}

// Shard `s` holds the case list it planned: an emptied or edited list is refused.
void require_planned_cases(const RunReport& shard, const std::vector<std::string>& files, std::size_t s) {
  if (shard.info.cases_sha256.empty()) return;  // a file of an earlier opcheck
  std::vector<std::string> ids;
  for (const auto& rec : shard.cases)
    if (rec.index >= 0) ids.push_back(rec.id);
  if (case_list_sha256(ids) != shard.info.cases_sha256)
    throw ReportError(file_name(files, s) + ": error: /cases: the case list (" + std::to_string(ids.size()) +
                      " occurrences) is not the one the run planned (run.cases_sha256)" +
                      "\n  Fix: the file was truncated or edited: use the metrics file `opcheck run` wrote");
}

// One machine running everything would not have been given --shard, nor the first shard's report paths (which
// the reports shown would then seem to be): every report format's flag (report_formats()).
std::vector<std::string> one_machine_argv(const std::vector<std::string>& shard_argv) {
  static const std::set<std::string> kPerShard = [] {
    std::set<std::string> flags = {"--shard", "--artifact-dir", "--durations-from"};
    for (const ReportFormat* f : report_formats()) flags.insert(f->flag);
    return flags;
  }();
  std::vector<std::string> argv;
  for (std::size_t i = 0; i < shard_argv.size(); ++i) {
    const std::string& a = shard_argv[i];
    if (kPerShard.count(a)) { ++i; continue; }
    if (kPerShard.count(a.substr(0, a.find('=')))) continue;
    argv.push_back(a);
  }
  return argv;
}

[[noreturn]] void refuse(const std::string& what, const std::string& fix) {
  throw ReportError("opcheck merge: error: " + what + "\n  Fix: " + fix);
}

// The merged run's case list digest; a whole set of shards holds its selection, each occurrence once. Shards of an
// earlier opcheck record no plan, and the merge then records none either.
void record_merged_plan(const std::vector<RunReport>& shards, RunReport& out) {
  std::vector<std::string> placed;
  for (const auto& rec : out.cases)
    if (rec.index >= 0) placed.push_back(rec.id);
  const bool planned = std::all_of(shards.begin(), shards.end(), [](const RunReport& s) {
    return !s.info.cases_sha256.empty();
  });
  RunInfo& info = out.info;
  info.cases_sha256 = planned ? case_list_sha256(placed) : std::string();
  if (planned && !info.selection_sha256.empty() && info.shard.empty() && info.cases_sha256 != info.selection_sha256)
    refuse("the shards hold " + std::to_string(placed.size()) + " occurrences, which are not the selection they ran",
           "merge every shard of one run, each its own metrics file as `opcheck run` wrote it");
}

}  // namespace

std::string case_list_sha256(std::vector<std::string> ids) {
  std::sort(ids.begin(), ids.end());
  Sha256 h;
  for (const auto& id : ids) {
    h.update(id);
    h.update("\n");
  }
  return h.hex_digest();
}

RunReport merge_reports(const std::vector<RunReport>& shards, bool allow_partial, std::string* partial,
                        const std::vector<std::string>& files) {
  RunReport out;
  if (shards.empty()) return out;
  require_same_identity(shards, files);
  require_same_manifests(shards, files);
  require_same_selection(shards, files);

  RunInfo& info = out.info;
  info = shards[0].info;
  info.enabled_ops.clear();
  info.manifests.clear();
  info.warnings.clear();
  info.not_run = 0;
  info.stopped_by.clear();
  std::vector<std::string> enabled;  // union in order of first appearance, so identical shards keep their order
  std::vector<std::string> hosts, shard_specs, stop_reasons;
  std::optional<double> start, end;
  double longest = 0;
  std::map<std::string, std::size_t> seen_ids;  // id -> shard number (1-based)

  for (std::size_t s = 0; s < shards.size(); ++s) {
    const RunInfo& si = shards[s].info;
    for (const auto& [path, digest] : si.manifests) {
      auto [it, inserted] = info.manifests.emplace(path, digest);
      if (!inserted && it->second != digest)
        throw ReportError(path + ": error: shard " + std::to_string(s + 1) + " read this manifest with sha256 " + digest +
                          " but an earlier shard read " + it->second +
                          "\n  Fix: the manifest changed between shard runs; rerun the shards on one checkout");
    }
    for (const auto& op : si.enabled_ops)
      if (std::find(enabled.begin(), enabled.end(), op) == enabled.end()) enabled.push_back(op);
    if (!si.host.empty() && std::find(hosts.begin(), hosts.end(), si.host) == hosts.end()) hosts.push_back(si.host);
    if (!si.shard.empty()) shard_specs.push_back(si.shard);
    for (const auto& w : si.warnings)
      if (std::find(info.warnings.begin(), info.warnings.end(), w) == info.warnings.end()) info.warnings.push_back(w);
    info.not_run += si.not_run;
    info.shrunk.insert(si.shrunk.begin(), si.shrunk.end());
    if (info.stopped_by.empty()) info.stopped_by = si.stopped_by;
    if (si.interrupted) {
      info.interrupted = true;
      if (!si.stop_reason.empty() && std::find(stop_reasons.begin(), stop_reasons.end(), si.stop_reason) == stop_reasons.end())
        stop_reasons.push_back(si.stop_reason);
    }
    longest = std::max(longest, si.duration_s);
    if (auto t = parse_utc(si.started_at)) {
      if (!start || *t < *start) {
        start = t;
        info.started_at = si.started_at;
      }
      if (!end || *t + si.duration_s > *end) end = *t + si.duration_s;
    }
    for (const auto& rec : shards[s].cases) {
      auto [it, inserted] = seen_ids.emplace(rec.id, s + 1);
      // Every shard loads every manifest, so each reports the same load errors (unplaced, INVALID_CASE): once.
      const bool load_error = rec.index < 0 && rec.result.stage == Stage::INVALID_CASE;
      if (!inserted && load_error) continue;
      if (!inserted && it->second == s + 1)
        throw ReportError("opcheck merge: error: case " + rec.id + " appears twice in shard " + std::to_string(s + 1) +
                          shard_files(files, {s}) +
                          "\n  Fix: the file was edited or two runs were joined; merge the files `opcheck run` wrote");
      if (!inserted)
        throw ReportError("opcheck merge: error: case " + rec.id + " is in shard " + std::to_string(it->second) +
                          " and in shard " + std::to_string(s + 1) + shard_files(files, {it->second - 1, s}) +
                          "\n  Fix: pass each shard's metrics file once, and only shards of one --shard I/N split");
      out.cases.push_back(rec);
    }
    require_planned_cases(shards[s], files, s);
  }

  info.argv = one_machine_argv(info.argv);
  info.enabled_ops = enabled;
  info.host.clear();
  for (std::size_t i = 0; i < hosts.size(); ++i) info.host += (i ? "," : "") + hosts[i];
  info.stop_reason.clear();
  for (std::size_t i = 0; i < stop_reasons.size(); ++i) info.stop_reason += (i ? "; " : "") + stop_reasons[i];
  info.duration_s = start && end ? *end - *start : longest;

  // A complete I/N set is the whole run. A set that mixes splits (or whole runs with shards) or holds a shard twice is
  // refused; an incomplete one only with allow_partial, and then the merged run says which shards it holds.
  std::set<int> indexes;
  int total = 0;
  if (!shard_specs.empty()) {
    if (shard_specs.size() != shards.size())
      refuse("some files are shards (" + shard_specs.front() + ") and " +
                 std::to_string(shards.size() - shard_specs.size()) + " are whole runs (no --shard)",
             "merge the shards of one --shard I/N split only");
    for (const auto& spec : shard_specs) {
      int i = 0, n = 0;
      std::string why;  // the spec as `run --shard` reads it
      if (!resolve_shard(spec, [](const std::string&) { return std::nullopt; }, i, n, why))
        refuse("shard \"" + spec + "\" is not I/N with 0 <= I < N", "merge files written by `opcheck run --shard I/N`");
      if (total != 0 && n != total)
        refuse("the files come from different splits (" + std::to_string(total) + " and " + std::to_string(n) +
                   " shards)",
               "merge the shards of one --shard I/N split only");
      total = n;
      if (!indexes.insert(i).second) refuse("shard " + spec + " is given twice", "pass each shard's metrics file once");
    }
  }
  info.shard.clear();
  info.shard_count = static_cast<std::int64_t>(shards.size());
  info.shard_longest_s = longest;
  info.shard_sum_s = 0;
  for (const auto& s : shards) info.shard_sum_s += s.info.duration_s;
  if (total > 0 && static_cast<int>(indexes.size()) != total) {
    std::string missing;
    for (int i = 0; i < total; ++i)
      if (!indexes.count(i)) missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(total);
    std::sort(shard_specs.begin(), shard_specs.end());
    std::string have;
    for (std::size_t i = 0; i < shard_specs.size(); ++i) have += (i ? ", " : "") + shard_specs[i];
    if (!allow_partial)
      refuse("incomplete shard set: " + std::to_string(indexes.size()) + " of " + std::to_string(total) +
                 " shards (" + have + "); missing " + missing,
             "pass every shard's metrics file, or --allow-partial to merge only these");
    // The files say they are partial, not only the console: a warning, and the missing shards' occurrences not run.
    std::int64_t merged = 0;
    for (const auto& rec : out.cases) merged += rec.index >= 0;
    const std::int64_t whole = shards[0].info.selection_occurrences;
    const std::string note = "partial merge: " + std::to_string(indexes.size()) + " of " + std::to_string(total) +
                             " shards (" + have + "); missing " + missing +
                             (whole > merged ? ", whose " + std::to_string(whole - merged) +
                                                   " occurrences are not run and not in these reports"
                                             : ", whose occurrences are not in these reports");
    info.warnings.insert(info.warnings.begin(), note);
    if (whole > merged) info.not_run += whole - merged;
    if (partial) *partial = note;
    for (std::size_t i = 0; i < shard_specs.size(); ++i) info.shard += (i ? "," : "") + shard_specs[i];
  }

  record_merged_plan(shards, out);
  std::stable_sort(out.cases.begin(), out.cases.end(), [](const CaseRecord& a, const CaseRecord& b) {
    if (a.index != b.index) return a.index < b.index;
    if (a.file != b.file) return a.file < b.file;
    if (a.line != b.line) return a.line < b.line;
    return a.id < b.id;
  });
  return out;
}

}  // namespace opcheck
