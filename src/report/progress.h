// The console's progress while a run goes: how many occurrences are done, counted by outcome as the summary line
// counts them, an ETA and the last id.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "opcheck/report.h"
#include "report/stats.h"

namespace opcheck {

/// A terminal gets one line rewritten in place at most every 100 ms; a log (stderr not a terminal) gets a line every
/// 5 s. The last occurrence always shows, the last of a stopped run too (finish). On a terminal the counts are never
/// cut: a line too wide loses its ETA and id first.
class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;
  ProgressLine(std::size_t total, bool terminal, Clock::time_point start = Clock::now());

  /// Counts a finished occurrence by its outcome; returns what to write to stderr now, "" for nothing. The counts are
  /// said as the summary line says them (outcome_counts_text), so the last line and the summary agree.
  std::string on_record(const CaseRecord& r, Clock::time_point now = Clock::now());
  /// The line of the last occurrence when it has not been shown (a run stopped before its end: --maxfail, a signal),
  /// so that the last state drawn is the tally the summary line says; "" when it has been.
  std::string finish(Clock::time_point now = Clock::now());
  /// What clears the line once the run is over ("" when nothing was drawn in place).
  std::string clear() const;

 private:
  std::string draw(Clock::time_point now);

  std::size_t total_;
  bool terminal_;
  Clock::time_point start_;
  Clock::time_point last_;
  std::size_t finished_ = 0;
  std::size_t shown_ = 0;  // finished_ when the line was last drawn
  std::string last_id_;
  OutcomeCounts counts_;
  bool drawn_ = false;
};

}  // namespace opcheck
