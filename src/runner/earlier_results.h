// Results of earlier runs that a run serves instead of running a case again: the journal of a killed run (--resume)
// and the verdicts cache by dedupe key (--results-cache). Both are used only under the run's identity.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "opcheck/case.h"
#include "opcheck/report.h"

namespace opcheck {

/// --last-failed (pytest's --lf): the cases of `selected` whose occurrence failed the run in `previous` (a journal's
/// records), in selection order; all of `selected` when none did, with `nothing_failed` set.
std::vector<const Case*> last_failed_cases(const std::vector<const Case*>& selected,
                                           const std::vector<CaseRecord>& previous, const RunPolicy& policy,
                                           bool& nothing_failed);

class EarlierResults {
 public:
  /// --resume: takes the journal's records (each with its binding checked; `unbound_lines` are the lines of those
  /// that failed it, whose cases run again, which warnings() says). Returns false, with `error` saying which part of
  /// the identity differs (then -> now) and how to go on, when the journal was written under another identity (or
  /// has no header).
  bool adopt_journal(std::vector<CaseRecord> records, const std::vector<int>& unbound_lines,
                     const std::optional<RunInfo>& written_by, const RunInfo& now, const std::string& journal_path,
                     std::string& error);

  /// --results-cache: reads the cache file, if there is one, and takes its records when it was written under the same
  /// identity; otherwise `note` says what differs, and the cache is rebuilt from this run's results. Each record
  /// carries a digest of its bytes and the header (the run identity); one that fails it is not taken (its case runs
  /// again) and warnings() says so. `serve` (--reuse-results): find() serves them. Throws ReportError when the file
  /// cannot be read (a FIFO or device is refused, never waited on).
  void adopt_cache(const std::string& cache_path, const RunInfo& now, bool serve, std::string& note);

  /// Whether find() can serve anything (else callers skip computing dedupe keys).
  bool can_serve() const { return !journal_.empty() || (serve_cache_ && !cache_.empty()); }

  enum class Source { Journal, Cache };
  /// The result to serve for the unique case `id` with dedupe key `key`, or nullptr: the journal's record of the same
  /// case and key first, then (with serve) the cache's record of the key.
  const Result* find(const std::string& id, const std::string& key, Source& from) const;

  /// True when the adopted journal already holds this record (same occurrence, same key): a resumed run appends only
  /// new results to its journal.
  bool journaled(const CaseRecord& r) const { return journal_.count(r.id + "\n" + r.key) != 0; }

  /// What reading the journal and the cache found wrong: the run's warnings (run.warnings).
  const std::vector<std::string>& warnings() const { return warnings_; }

  /// Writes the cache: the adopted records updated with this run's results (occurrences that ran; condition skips
  /// are decided per occurrence and never cached). Throws on a write failure.
  void write_cache(const std::string& path, const RunInfo& info, const std::vector<CaseRecord>& results);

 private:
  std::map<std::string, CaseRecord> journal_;  // id + "\n" + key
  std::map<std::string, CaseRecord> cache_;    // key
  bool serve_cache_ = false;
  std::vector<std::string> warnings_;
};

}  // namespace opcheck
