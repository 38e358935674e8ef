// The console's progress while a run goes: how many occurrences are done, ok and failed, an ETA and the last id.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "opcheck/report.h"

namespace opcheck {

/// A terminal gets one line rewritten in place at most every 100 ms; a log (stderr not a terminal) gets a line every
/// 5 s. The last occurrence always shows.
class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;
  ProgressLine(std::size_t total, bool terminal, Clock::time_point start = Clock::now());

  /// Counts a finished occurrence (`fails`: it fails the run); returns what to write to stderr now, "" for nothing.
  std::string on_record(const CaseRecord& r, bool fails, Clock::time_point now = Clock::now());
  /// What clears the line once the run is over ("" when nothing was drawn in place).
  std::string clear() const;

 private:
  std::size_t total_;
  bool terminal_;
  Clock::time_point start_;
  Clock::time_point last_;
  std::size_t finished_ = 0;
  std::size_t failed_ = 0;
  bool drawn_ = false;
};

}  // namespace opcheck
