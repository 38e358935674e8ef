#include "report/console.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/stats.h"
#include "report/text_escape.h"

namespace opcheck {

std::string format_session_duration(double seconds) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.2fs", seconds);
  std::string out = buf;
  if (seconds >= 60) {
    // pytest appends str(timedelta(seconds=int(seconds))): H:MM:SS, with "N day(s), " past a day.
    auto total = static_cast<long long>(seconds);
    const long long days = total / 86400;
    total %= 86400;
    std::string td;
    if (days > 0) td = std::to_string(days) + (days == 1 ? " day, " : " days, ");
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", total / 3600, (total % 3600) / 60, total % 60);
    out += " (" + td + buf + ")";
  }
  return out;
}

namespace {

// pytest's TerminalWriter.markup: colour code, then bold, then the text, then a reset.
std::string markup(const std::string& text, const char* color, bool bold) {
  return std::string("\x1b[") + color + "m" + (bold ? "\x1b[1m" : "") + text + "\x1b[0m";
}

}  // namespace

std::string summary_line(const RunReport& report, bool color) {
  OutcomeCounts c;
  for (const auto& rec : report.cases) c.add(rec.outcome);
  constexpr const char* kRed = "31";
  constexpr const char* kGreen = "32";
  constexpr const char* kYellow = "33";
  const char* main = c.failed || c.errors ? kRed : c.xpassed ? kYellow : c.passed ? kGreen : kYellow;
  std::string out;
  auto part = [&](std::int64_t n, const std::string& word, const char* part_color) {
    if (n == 0) return;
    if (!out.empty()) out += ", ";
    const std::string text = std::to_string(n) + " " + word;
    out += color ? markup(text, part_color, std::string(part_color) == main) : text;
  };
  part(c.failed, "failed", kRed);
  part(c.passed, "passed", kGreen);
  part(c.skipped, "skipped", kYellow);
  part(report.info.deselected, "deselected", kYellow);
  part(c.xfailed, "xfailed", kYellow);
  part(c.xpassed, "xpassed", kYellow);
  part(c.errors, c.errors == 1 ? "error" : "errors", kRed);
  if (report.info.not_run > 0)
    part(report.info.not_run,
         "not run (" + (report.info.stopped_by.empty() ? std::string("stopped") : report.info.stopped_by) + ")",
         kYellow);
  if (out.empty()) out = color ? markup("no tests ran", kYellow, false) : "no tests ran";
  const std::string duration = " in " + format_session_duration(report.info.duration_s);
  return out + (color ? markup(duration, main, false) : duration);
}

namespace {
/// `title` centred in a rule of `sep` characters, `width` wide, as pytest's terminal writer draws it.
std::string rule_line(const std::string& title, int width, char sep = '=') {
  if (title.empty()) return std::string(static_cast<std::size_t>(std::max(width, 0)), sep);
  const int n = std::max((width - static_cast<int>(title.size()) - 2) / 2, 1);
  const std::string fill(static_cast<std::size_t>(n), sep);
  std::string line = fill + " " + title + " " + fill;
  if (static_cast<int>(line.size()) + 1 <= width) line += sep;
  return line;
}
}  // namespace

std::string failures_section(const RunReport& report) {
  std::string out;
  for (const auto& rec : report.cases) {
    if (!fails_run(rec, report.info)) continue;
    const char* word = nullptr;
    std::string detail;
    switch (rec.outcome) {
      case Outcome::Failed: word = "FAILED"; detail = first_line(rec.result.message); break;
      case Outcome::Error: word = "ERROR"; detail = first_line(rec.result.message); break;
      case Outcome::XPassed:
        word = "XPASS";
        detail = "[XPASS(strict)] " + (rec.status_reason.empty() ? first_line(rec.result.message) : rec.status_reason);
        break;
      default: continue;
    }
    out += std::string(word) + " " + rec.id + " [" + stage_name(rec.result.stage) + "]";
    if (!detail.empty()) out += " - " + detail;
    out += "\n";
  }
  return xml_visible(out);  // control characters in ids and messages are shown, never run by the terminal
}

std::string durations_section(const RunReport& report, int n) {
  std::vector<const CaseRecord*> ran;
  for (const auto& rec : report.cases)
    if (rec.deduplicated_from.empty() && rec.result.stage != Stage::SKIPPED) ran.push_back(&rec);
  std::stable_sort(ran.begin(), ran.end(),
                   [](const CaseRecord* a, const CaseRecord* b) { return case_time_ms(*a) > case_time_ms(*b); });
  const std::size_t shown = n > 0 ? std::min(ran.size(), static_cast<std::size_t>(n)) : ran.size();
  std::string out = rule_line(n > 0 ? "slowest " + std::to_string(n) + " durations" : "slowest durations", 80) + "\n";
  char buf[32];
  for (std::size_t i = 0; i < shown; ++i) {
    std::snprintf(buf, sizeof buf, "%.2fs ", case_time_ms(*ran[i]) / 1000.0);
    out += buf + ran[i]->id + "\n";
  }
  return xml_visible(out);
}

}  // namespace opcheck
