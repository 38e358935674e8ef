// The run journal: one JSON line per CaseRecord, appended as results arrive, so a killed run loses at most the
// results not yet flushed and `--resume` can rebuild what was done.
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "opcheck/diagnostic.h"
#include "opcheck/report.h"

namespace opcheck {

inline constexpr const char* kJournalFormat = "opcheck-journal";

/// Appends records to a journal file. Lines collect in memory until flush() (the runner calls it after each
/// batch of results it receives from the workers), 64 KiB of them, or close(); what reached the OS survives a
/// killed process. fsync (survives a power cut) runs at most every `fsync_interval_s` while lines are written.
class JournalWriter {
 public:
  /// Creates the file, or opens it for appending. A last line cut short by a killed run is cut off first so the
  /// next record starts on a line of its own. `header`, when given, is written as the first line of a new or
  /// empty journal. Throws ReportError when the file cannot be opened.
  explicit JournalWriter(const std::string& path, const RunInfo* header = nullptr, double fsync_interval_s = 2.0);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  /// Adds one record as one line. Safe to call from several threads. Throws ReportError on a write failure.
  void append(const CaseRecord& rec);
  /// Hands the lines appended so far to the OS. Throws ReportError on a write failure.
  void flush();
  /// Flushes and closes; further appends throw. Called by the destructor (which swallows errors).
  void close();
  const std::string& path() const { return path_; }

 private:
  static constexpr std::size_t kFlushBytes = 64 * 1024;
  void write_pending();
  std::string path_;
  std::string header_line_;  // the file's first line, which each record's binding covers
  std::string pending_;  // complete lines not yet written
  std::FILE* file_ = nullptr;
  std::chrono::steady_clock::duration fsync_interval_;
  std::chrono::steady_clock::time_point last_sync_;
  std::mutex mu_;
};

/// What a journal held.
struct Journal {
  std::optional<RunInfo> info;     // the header line, when the journal has one
  std::vector<CaseRecord> records; // in the order they were written, each with its binding checked
  /// Lines of readable records whose binding failed: edited by hand, moved from another journal or under another
  /// header, or written without one. Not in `records`: a resumed run runs their cases again and says so.
  std::vector<int> unbound_lines;
  bool truncated_tail = false;     // the last line had no newline (the run was killed mid-write); it was ignored
  DiagnosticList diagnostics;      // complete lines that could not be read (path:line: what); their records are lost
};

/// Reads a journal, tolerating a truncated last line. Throws ReportError only when the file cannot be read.
Journal read_journal(const std::string& path);

}  // namespace opcheck
