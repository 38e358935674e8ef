#include "report/progress.h"

#include "report/console.h"

namespace opcheck {

ProgressLine::ProgressLine(std::size_t total, bool terminal, Clock::time_point start)
    : total_(total), terminal_(terminal), start_(start), last_(start) {}

std::string ProgressLine::on_record(const CaseRecord& r, Clock::time_point now) {
  ++finished_;
  counts_.add(r.outcome, r.xfail_strictness);
  last_id_ = r.id;
  const auto every = terminal_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(5000);
  if (now - last_ < every && finished_ != total_) return {};
  return draw(now);
}

std::string ProgressLine::finish(Clock::time_point now) {
  if (finished_ == shown_) return {};
  return draw(now);
}

std::string ProgressLine::draw(Clock::time_point now) {
  last_ = now;
  shown_ = finished_;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double eta =
      elapsed / static_cast<double>(finished_) * static_cast<double>(total_ - std::min(total_, finished_));
  // The counts whole, whatever they take; then the ETA and the id, which a terminal's line cuts from its end.
  const std::string counts = std::to_string(finished_) + "/" + std::to_string(total_) + " done: " +
                             outcome_counts_text(counts_);
  std::string line = counts + "; ETA " + format_session_duration(eta) + ", last " + last_id_;
  if (!terminal_) return "opcheck: " + line + "\n";
  constexpr std::size_t kWidth = 110;
  if (line.size() > kWidth) line = counts.size() + 3 <= kWidth ? line.substr(0, kWidth - 3) + "..." : counts;
  drawn_ = true;
  return "\r\033[K" + line;
}

std::string ProgressLine::clear() const { return drawn_ ? "\r\033[K" : ""; }

ConsoleCases::ConsoleCases(std::ostream& out, std::ostream& err, std::size_t total, Options options)
    : out_(out), err_(err), options_(options),
      progress_(total, options.progress && !options.verbose && !options.quiet) {}

void ConsoleCases::case_finished(const CaseRecord& record) {
  // Failures are listed together at the end; -v shows every case as it finishes.
  if (options_.verbose) out_ << case_line(record, options_.color) << std::flush;
  if (options_.verbose || options_.quiet) return;
  const std::string line = progress_.on_record(record);
  if (!line.empty()) err_ << line << std::flush;
}

std::string ConsoleCases::end_of_cases() {
  std::string out = progress_.finish();  // before clear(): drawing the last state may be what needs clearing
  return out + progress_.clear();
}

}  // namespace opcheck
