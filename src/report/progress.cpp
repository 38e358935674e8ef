#include "report/progress.h"

#include "report/console.h"

namespace opcheck {

ProgressLine::ProgressLine(std::size_t total, bool terminal, Clock::time_point start)
    : total_(total), terminal_(terminal), start_(start), last_(start) {}

std::string ProgressLine::on_record(const CaseRecord& r, Clock::time_point now) {
  ++finished_;
  counts_.add(r.outcome, r.xfail_strictness);
  const auto every = terminal_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(5000);
  if (now - last_ < every && finished_ != total_) return {};
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double eta =
      elapsed / static_cast<double>(finished_) * static_cast<double>(total_ - std::min(total_, finished_));
  // The id last: a terminal's line is cut from its end.
  std::string line = std::to_string(finished_) + "/" + std::to_string(total_) + " done: " +
                     outcome_counts_text(counts_) + "; ETA " + format_session_duration(eta) + ", last " + r.id;
  if (!terminal_) return "opcheck: " + line + "\n";
  if (line.size() > 110) line = line.substr(0, 107) + "...";
  drawn_ = true;
  return "\r\033[K" + line;
}

std::string ProgressLine::clear() const { return drawn_ ? "\r\033[K" : ""; }

}  // namespace opcheck
