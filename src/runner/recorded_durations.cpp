#include "runner/recorded_durations.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "common/regular_file.h"
#include "common/sha256.h"
#include "report/journal.h"
#include "report/metrics.h"
#include "report/stats.h"

namespace opcheck {
namespace {

constexpr const char* kFix =
    "\n  Fix: pass the metrics file of an earlier run (`opcheck run --metrics-json`, or the merged one of `opcheck "
    "merge`) or its journal (ARTIFACT_DIR/journal.jsonl)";

// A journal starts with its header line; a metrics file is one JSON object over many lines.
bool looks_like_journal(const std::string& text) {
  const auto first = nlohmann::json::parse(text.substr(0, text.find('\n')), nullptr, /*allow_exceptions=*/false);
  return first.is_object() && first.contains("format") && first["format"] == kJournalFormat;
}

void add_records(const std::vector<CaseRecord>& records, double timeout_s, RecordedDurations& out) {
  for (const auto& rec : records) {
    if (rec.key.empty() || !rec.deduplicated_from.empty() || rec.result.stage == Stage::SKIPPED) continue;
    const double s = rec.result.stage == Stage::TIMEOUT ? timeout_s : case_time_ms(rec) / 1000.0;
    // With --no-dedupe one key may have run several times: the longest is what a shard must plan for.
    auto [it, fresh] = out.seconds.emplace(rec.key, s);
    if (!fresh && s > it->second) it->second = s;
  }
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 1 ? "%.3fs" : s < 10 ? "%.2fs" : s < 600 ? "%.1fs" : "%.0fs", s);
  return buf;
}

}  // namespace

bool read_recorded_durations(const std::string& path, double timeout_s, RecordedDurations& out, std::string& error) {
  out = {};
  out.path = path;
  std::string text, why;
  if (!read_regular_file(path, text, why)) {
    error = "--durations-from " + path + ": cannot read it: " + why + kFix;
    return false;
  }
  out.sha256 = sha256_hex(text);
  try {
    if (!looks_like_journal(text)) {
      add_records(parse_metrics(text, path).cases, timeout_s, out);
      return true;
    }
    Journal j = read_journal(path);
    if (j.diagnostics.has_errors()) {
      error = "--durations-from: " + j.diagnostics.items.front().format() + kFix;
      return false;
    }
    add_records(j.records, timeout_s, out);
    return true;
  } catch (const std::exception& e) {
    error = std::string("--durations-from: ") + e.what();
    if (error.find("Fix:") == std::string::npos) error += kFix;
    return false;
  }
}

std::string describe_expected_shards(const RecordedDurations& d, std::size_t recorded, std::size_t estimated,
                                     bool in_seconds, const std::vector<double>& shard_s, int index, int jobs) {
  std::string line = "opcheck: --durations-from " + d.path + " (sha256 " + d.sha256.substr(0, 12) + "): " +
                     std::to_string(recorded) + " of " + std::to_string(recorded + estimated) +
                     " unique cases timed, " + std::to_string(estimated) + " estimated from their size";
  if (!in_seconds) return line + "; none of them is in the file, so the split is by size and no time is expected\n";
  const int total = static_cast<int>(shard_s.size());
  // The cases' own time, as run.cases_wall_s measures it: starting libtorch, the workers and the device is not in it.
  line += std::string("; expected wall time of the cases") + (total > 1 ? " per shard" : "") + " at -j " +
          std::to_string(jobs) + " (start-up not counted):";
  for (int s = 0; s < total; ++s) {
    line += (s ? ", " : " ");
    if (total > 1) line += std::to_string(s) + "/" + std::to_string(total) + (s == index ? " (this) " : " ");
    line += seconds_text(shard_s[static_cast<std::size_t>(s)]);
  }
  return line + "\n";
}

}  // namespace opcheck
