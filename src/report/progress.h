// The console's progress while a run goes: how many occurrences are done, counted by outcome as the summary line
// counts them, an ETA and the last id.
#pragma once

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

#include "opcheck/report.h"
#include "report/report_format.h"
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

/// The console's listener on a run's event list: with -v a line per finished occurrence on `out` (case_line), else,
/// unless quiet, the progress line on `err`. The console's closing sections are the runner's (runner/run.cpp): they
/// interleave with the run's own lines (the --baseline comparison before the summary line, the journal's error).
class ConsoleCases : public ReportListener {
 public:
  struct Options {
    bool verbose = false;   // -v: a line per case
    bool quiet = false;     // -q: neither lines nor progress
    bool color = false;     // colour on `out`
    bool progress = false;  // `err` is a terminal: the progress line is drawn in place
  };
  ConsoleCases(std::ostream& out, std::ostream& err, std::size_t total, Options options);
  void case_finished(const CaseRecord& record) override;
  /// Once the last case finished: the progress line's last state (ProgressLine::finish), then what clears it.
  std::string end_of_cases();

 private:
  std::ostream& out_;
  std::ostream& err_;
  Options options_;
  ProgressLine progress_;
};

}  // namespace opcheck
