#include "report/console.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <vector>

#include "common/text.h"
#include "common/text_escape.h"
#include "report/failure_groups.h"
#include "report/figures.h"
#include "report/stats.h"

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

namespace {

constexpr const char* kRed = "31";
constexpr const char* kGreen = "32";
constexpr const char* kYellow = "33";

struct CountPart {
  std::int64_t n;
  std::string word;
  const char* color;
};

// The counts in the summary line's order: pytest's, with not supported right after failed (the two device verdicts
// a bring-up team reads first). `info` adds the run's deselected and not-run occurrences (cases not run are skipped
// records, counted apart); the progress line, with none, says the same tally in the same words.
std::vector<CountPart> count_parts(const OutcomeCounts& c, const RunInfo* info) {
  // Not supported is red when it fails the run, yellow (as a skip) when --not-supported-ok forgives it.
  const char* unsupported_color = info && info->policy.not_supported_ok ? kYellow : kRed;
  const std::int64_t not_run = info ? info->not_run : 0;
  std::vector<CountPart> parts = {
      {c.failed, "failed", kRed},
      {c.not_supported, "not supported", unsupported_color},
      {c.passed, "passed", kGreen},
      {c.no_device_op, "passed without the device", kYellow},
      {c.skipped - not_run, "skipped", kYellow},
      {info ? info->deselected : 0, "deselected", kYellow},
      {c.xfailed, "xfailed", kYellow},
      {c.xpassed, "xpassed", kYellow},
      {c.errors, c.errors == 1 ? "error" : "errors", kRed},
  };
  if (not_run > 0) parts.push_back({not_run, "not run (" + not_run_cause(*info) + ")", kYellow});
  return parts;
}

}  // namespace

std::string outcome_counts_text(const OutcomeCounts& c) {
  std::string out;
  for (const CountPart& p : count_parts(c, nullptr))
    if (p.n != 0) out += (out.empty() ? "" : ", ") + std::to_string(p.n) + " " + p.word;
  return out;
}

std::string summary_line(const RunReport& report, bool color) {
  OutcomeCounts c;
  for (const auto& rec : report.cases) c.add(rec.outcome, rec.xfail_strictness);
  const bool red = c.failed || c.errors || (c.not_supported && !report.info.policy.not_supported_ok);
  const char* main = red ? kRed : c.xpassed || c.not_supported ? kYellow : c.passed ? kGreen : kYellow;
  std::string out;
  for (const CountPart& p : count_parts(c, &report.info)) {
    if (p.n == 0) continue;
    if (!out.empty()) out += ", ";
    const std::string text = std::to_string(p.n) + " " + p.word;
    out += color ? markup(text, p.color, std::string(p.color) == main) : text;
  }
  if (out.empty()) out = color ? markup("no tests ran", kYellow, false) : "no tests ran";
  const std::string duration = " in " + format_session_duration(report.info.duration_s);
  out += color ? markup(duration, main, false) : duration;
  // --device auto never chooses in silence: the last line a nightly's log shows says what it ran on, and why.
  const DeviceChoice& choice = report.info.device_choice;
  if (choice.asked == "auto" && !choice.chosen.empty()) {
    const std::string said = " (--device auto chose " + choice.chosen + ": " + choice.why + ")";
    out += color && choice.stand_in ? markup(said, kYellow, false) : said;
  }
  return out;
}

std::string warnings_summary(const RunInfo& info, std::size_t shown, std::size_t about_inputs) {
  const std::size_t n = info.warnings.size();
  if (n == 0) return {};
  const std::size_t inputs = std::min(about_inputs, n), at_run_time = n - inputs;
  const std::string count = std::to_string(n) + " ";
  std::string out;
  if (at_run_time == 0)
    out = count + (n == 1 ? "warning" : "warnings") + " (opcheck validate lists them):\n";
  else if (inputs == 0)
    out = count + (n == 1 ? "run-time warning" : "run-time warnings") + " (the metrics' run.warnings hold them):\n";
  else
    out = count + "warnings (" + std::to_string(inputs) + " about the inputs, which opcheck validate lists; " +
          std::to_string(at_run_time) + " at run time, in the metrics' run.warnings):\n";
  // Under the "N warnings" heading a warning without a file ("opcheck: warning: -m names mark ...") drops its
  // "opcheck: warning: " prefix, which would say "warning" a second time; a located one keeps its file:line.
  static const std::string unlocated = "opcheck: warning: ";
  for (std::size_t i = 0; i < std::min(n, shown); ++i) {
    std::string line = first_line(info.warnings[i]);
    if (line.compare(0, unlocated.size(), unlocated) == 0) line.erase(0, unlocated.size());
    out += "  " + line + "\n";
  }
  if (n > shown) out += "  ... and " + std::to_string(n - shown) + " more\n";
  return printable_lines(out);
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

bool parse_traceback_style(const std::string& text, TracebackStyle& out) {
  if (text == "auto") out = TracebackStyle::Auto;
  else if (text == "short") out = TracebackStyle::Short;
  else if (text == "long") out = TracebackStyle::Long;
  else if (text == "no") out = TracebackStyle::No;
  else return false;
  return true;
}

bool parse_report_chars(const std::string& chars, std::string& out, std::string& error) {
  // pytest's getreportopt: 'a' and 'A' replace what came before, 'N' clears it, F and S are old spellings.
  std::string opts;
  for (char ch : chars) {
    if (ch == 'F' || ch == 'S') ch = static_cast<char>(ch - 'A' + 'a');
    if (ch == 'a') opts = "sxXEf";
    else if (ch == 'A') opts = "PpsxXEf";
    else if (ch == 'N') opts.clear();
    else if (std::string("fEsxXpPw").find(ch) == std::string::npos) {
      error = "-r: unknown report char '" + std::string(1, ch) +
              "'. Fix: combine f (failed), E (error), s (skipped), x (xfailed), X (xpassed), p (passed), "
              "a (all but passed), A (all), N (none), e.g. -rfE or -rA";
      return false;
    } else if (opts.find(ch) == std::string::npos) {
      opts += ch;
    }
  }
  out = opts;
  return true;
}

namespace {

// Not split_list (common/text.h): a message's indentation and its blank lines between paragraphs are part of how it
// reads, so lines keep their spaces and only the blank lines at the end go.
std::vector<std::string> message_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  while (!lines.empty() && lines.back().find_first_not_of(" \t\r") == std::string::npos) lines.pop_back();
  return lines;
}

// The message in one line for the short summary. A first line that ends in ':' announces what follows (the reasons
// no overload binds, say): those lines come along, joined, up to a length a summary line can carry.
// A first line longer than a summary line should be (a dispatcher's list of backends) is cut, on a character
// boundary; the failures section has all of it.
constexpr std::size_t kMax = 400;

std::string cut_to(std::string text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t cut = max - 4;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + " ...";
}

std::string summary_detail(const std::string& message) {
  const auto lines = message_lines(message);
  if (lines.empty()) return {};
  std::string out = lines[0];
  const auto last = out.find_last_not_of(" \t\r");
  if (last == std::string::npos || out[last] != ':') return cut_to(out, kMax);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto b = lines[i].find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    const std::string piece = lines[i].substr(b, lines[i].find_last_not_of(" \t\r") - b + 1);
    if (out.size() + piece.size() + 1 > kMax) {
      out += " ...";
      break;
    }
    out += (out.back() == ':' ? " " : "; ") + piece;
  }
  return out;
}

// A message's first line alone, for verdicts whose first line says everything (NOT_SUPPORTED).
std::string first_line_cut(const std::string& message) {
  const auto lines = message_lines(message);
  return lines.empty() ? std::string() : cut_to(lines[0], kMax);
}

// A not_supported case in the short summary: its first line says which op has no kernel for which device.
std::string unsupported_line(const CaseRecord& rec) {
  return "NOT_SUPPORTED " + rec.id + (rec.result.message.empty() ? "" : " - " + first_line_cut(rec.result.message));
}

std::string xfail_reason(const CaseRecord& rec) {
  return rec.status_reason.empty() ? summary_detail(rec.result.message) : rec.status_reason;
}

std::string ms_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f ms", ms);
  return buf;
}

// --tb=long: every op that reached the device, how, and how often; the ops of the call itself marked.
std::string device_ops_line(const std::vector<DeviceOp>& ops) {
  if (ops.empty()) return {};
  std::string out = "device ops:";
  for (std::size_t i = 0; i < ops.size(); ++i)
    out += std::string(i ? ", " : " ") + ops[i].op + " (" + device_op_via_name(ops[i].via) + ", " +
           std::to_string(ops[i].calls) + (ops[i].calls == 1 ? " call" : " calls") +
           (ops[i].in_call ? "" : ", transfer") + ")";
  return out + "\n";
}

// One entry of the failures section.
std::string failure_entry(const CaseRecord& rec, const FailureReportOptions& o, const std::set<std::string>& shown) {
  const bool long_style = o.style == TracebackStyle::Long;
  std::string out = rule_line(rec.id, o.width, '_') + "\n";
  std::string where = rec.file.empty() ? std::string("(no file)") : rec.file;
  if (rec.line > 0) where += ":" + std::to_string(rec.line);
  out += where + ":" + (rec.op.empty() ? std::string() : " " + rec.op);
  if (!rec.result.resolved_op.empty() && rec.result.resolved_op != rec.op)
    out += " -> " + rec.result.resolved_op + (rec.result.decomposed ? " (decomposed)" : "");
  out += std::string(" [") + stage_name(rec.result.stage) + "]";
  if (const std::string dtype = record_dtype(rec); !dtype.empty()) out += " " + dtype;
  out += "\n";
  if (!rec.call.empty()) out += "call: " + rec.call + "\n";
  if (rec.outcome == Outcome::XPassed)
    out += "[XPASS(strict)] expected to fail" + (rec.status_reason.empty() ? "" : " (" + rec.status_reason + ")") +
           ", but passed\n";
  if (!rec.deduplicated_from.empty() && shown.count(rec.deduplicated_from)) {
    out += "the same call as " + rec.deduplicated_from + ": its failure is shown above\n";
  } else {
    if (!rec.deduplicated_from.empty()) out += "the same call as " + rec.deduplicated_from + "\n";
    const auto lines = message_lines(rec.result.message);
    // A missing kernel's message is the dispatcher's account of every backend after its first line, which says it
    // all: --tb short shows that line alone.
    const std::size_t short_lines = rec.outcome == Outcome::NotSupported ? 1 : kShortMessageLines;
    const std::size_t limit = long_style ? lines.size() : std::min<std::size_t>(lines.size(), short_lines);
    for (std::size_t i = 0; i < limit; ++i) out += lines[i] + "\n";
    if (limit < lines.size())
      out += "... " + std::to_string(lines.size() - limit) + " more line" + (lines.size() - limit == 1 ? "" : "s") +
             " (--tb=long shows them)\n";
    const std::string worst = worst_element_text(rec.result.figures);
    if (!worst.empty()) out += worst + "\n";
    if (!rec.result.reference_made.empty()) out += "reference: " + rec.result.reference_made + "\n";
    for (const auto& n : rec.result.judge_notes) out += "judge: " + n + "\n";
    for (const CaseLabel& l : rec.labels)  // a known bug's tracker link beside its failure (kCaseFields' shown)
      if (l.field->shown) out += std::string(l.field->record_label) + ": " + printable_text(l.value) + "\n";
    if (long_style) {
      const std::string figures = figures_text(rec.result.figures);
      if (!figures.empty()) out += "figures: " + figures + "\n";
      if (!rec.result.values_compared) out += "values not compared (the op returns uninitialised memory)\n";
      out += "times: materialize " + ms_text(rec.result.materialize_ms) + ", reference " +
             ms_text(rec.result.reference_ms) + ", device " + ms_text(rec.result.device_ms) + ", compare " +
             ms_text(rec.result.compare_ms) +
             (rec.result.compile_ms > 0 ? ", compile " + ms_text(rec.result.compile_ms) : std::string()) +
             (rec.result.golden_ms > 0 ? ", float64 " + ms_text(rec.result.golden_ms) : std::string()) + "\n";
      out += device_ops_line(rec.result.device_ops);
      if (!rec.status.empty())
        out += "status: " + rec.status + (rec.status_reason.empty() ? "" : " (" + rec.status_reason + ")") + "\n";
      if (!rec.key.empty()) out += "dedupe key: " + rec.key + "\n";
      if (!rec.result.captured_stderr.empty()) {
        out += rule_line("captured stderr", o.width, '-') + "\n" + rec.result.captured_stderr;
        if (rec.result.captured_stderr.back() != '\n') out += "\n";
      }
    }
  }
  if (o.repro_command) {
    const std::string cmd = o.repro_command(rec);
    if (!cmd.empty()) out += "rerun: " + cmd + "\n";
  }
  return out;
}

}  // namespace

std::string failure_details(const RunReport& report, const FailureReportOptions& options) {
  if (options.style == TracebackStyle::No) return {};
  std::size_t failing = 0;
  for (const auto& rec : report.cases) failing += fails_run(rec, report.info) ? 1 : 0;
  // A large red run: a block per root cause (its example), not thousands of blocks.
  const bool per_group = options.style == TracebackStyle::Auto && failing > kBlocksUpTo;
  std::set<std::string> examples;
  std::size_t groups = 0;
  if (per_group)
    for (const FailureGroup& g : group_failures(report)) {
      examples.insert(g.example);
      ++groups;
    }
  std::string errors, failures;
  std::set<std::string> shown;
  std::size_t blocks = 0;
  for (const auto& rec : report.cases) {
    if (!fails_run(rec, report.info)) continue;
    if (per_group && !examples.count(rec.id)) continue;
    (rec.outcome == Outcome::Error ? errors : failures) += failure_entry(rec, options, shown);
    if (rec.deduplicated_from.empty()) shown.insert(rec.id);
    ++blocks;
  }
  std::string out;
  if (!errors.empty()) out += rule_line("ERRORS", options.width) + "\n" + errors;
  if (!failures.empty()) out += rule_line("FAILURES", options.width) + "\n" + failures;
  if (per_group)
    out += "opcheck: " + std::to_string(failing) + " failures in " + std::to_string(groups) + " failure group" +
           (groups == 1 ? "" : "s") + ": a block for each group's example above (" + std::to_string(blocks) +
           "), a line for every failure in the short test summary; --tb short shows a block for each failure, "
           "--tb long everything the reports carry\n";
  return printable_lines(out);  // control and format characters in ids and messages are shown, never run by the terminal
}

std::string failure_groups_section(const RunReport& report, int width) {
  const std::vector<FailureGroup> groups = group_failures(report);
  if (groups.empty()) return {};
  auto some = [](const std::vector<std::string>& v) {
    constexpr std::size_t kShown = 6;
    std::string s = join(std::vector<std::string>(v.begin(), v.begin() + std::min(v.size(), kShown)));
    return v.size() > kShown ? s + " and " + std::to_string(v.size() - kShown) + " more" : s;
  };
  std::string out = rule_line(std::to_string(groups.size()) + " failure group" + (groups.size() == 1 ? "" : "s"), width) + "\n";
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const FailureGroup& g = groups[i];
    // A missing kernel's text names the kernel, its dtype, the device and the backends that have it: the line adds
    // the cases' dtypes and shows the example's own first line (the group's text masks the kernel's dtype).
    std::string what = std::string(" in ") + g.op + ": ", text = g.text;
    if (g.stage == Stage::NOT_SUPPORTED) {
      what = std::string(" [") + join(g.dtypes) + "]: ";
      for (const CaseRecord& rec : report.cases)
        if (rec.id == g.example && !rec.result.message.empty()) text = rec.result.message;
    }
    out += "#" + std::to_string(i + 1) + " " + std::to_string(g.count) + (g.count == 1 ? " occurrence" : " occurrences") +
           " (" + std::to_string(g.unique) + " unique) " + stage_name(g.stage) + what + first_line_cut(text) + "\n";
    out += "   ops: " + some(g.ops) + "; models: " + some(g.models) + "; dtypes: " + some(g.dtypes) + "\n";
    if (g.differs_between_runs)
      out += "   " + std::to_string(g.differs_between_runs) + " of them also differ between runs\n";
    out += "   example: " + g.example + (g.minimal.empty() ? "" : "; minimal: " + g.minimal) + "\n";
  }
  return printable_lines(out);
}

std::string short_summary(const RunReport& report, const std::string& chars, int width) {
  std::string out;
  for (char ch : chars) {
    for (const auto& rec : report.cases) {
      const bool fails = fails_run(rec, report.info);
      std::string line;
      switch (ch) {
        case 'f':
          if (rec.outcome == Outcome::NotSupported && fails)
            line = unsupported_line(rec);
          else if (rec.outcome == Outcome::Failed)
            line = "FAILED " + rec.id + " [" + stage_name(rec.result.stage) + "]" +
                   (rec.result.message.empty() ? "" : " - " + summary_detail(rec.result.message));
          else if (rec.outcome == Outcome::XPassed && fails)
            line = "XPASS " + rec.id + " [" + stage_name(rec.result.stage) + "] - [XPASS(strict)] " + xfail_reason(rec);
          break;
        case 'E':
          if (rec.outcome == Outcome::Error)
            line = "ERROR " + rec.id + " [" + stage_name(rec.result.stage) + "]" +
                   (rec.result.message.empty() ? "" : " - " + summary_detail(rec.result.message));
          break;
        case 's':
          if (rec.outcome == Outcome::Skipped) {
            const std::string reason =
                rec.result.message.empty() ? rec.status_reason : summary_detail(rec.result.message);
            line = "SKIPPED " + rec.id + (reason.empty() ? "" : " - " + reason);
          } else if (rec.outcome == Outcome::NotSupported && !fails) {  // forgiven by --not-supported-ok: a skip
            line = unsupported_line(rec);
          } else if (rec.outcome == Outcome::NoDeviceOp) {  // a pass that says nothing about the device: a skip
            line = "NO_DEVICE " + rec.id + " - " + first_line_cut(rec.result.message);
          }
          break;
        case 'x':
          if (rec.outcome == Outcome::XFailed) line = "XFAIL " + rec.id + " - " + xfail_reason(rec);
          break;
        case 'X':
          if (rec.outcome == Outcome::XPassed && !fails) line = "XPASS " + rec.id + " - " + xfail_reason(rec);
          break;
        case 'p':
        case 'P':
          if (rec.outcome == Outcome::Passed && (ch == 'p' || chars.find('p') == std::string::npos))
            line = "PASSED " + rec.id;
          break;
        default: break;
      }
      if (line.empty()) continue;
      if (!rec.deduplicated_from.empty()) line += " (same as " + rec.deduplicated_from + ")";
      out += line + "\n";
    }
  }
  if (out.empty()) return {};
  return printable_lines(rule_line("short test summary info", width) + "\n" + out);
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
  return printable_lines(out);
}

std::string case_line(const CaseRecord& r, bool color) {
  // Indexed by Outcome.
  static const char* words[] = {"PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS", "NOT_SUPPORTED", "NO_DEVICE"};
  static const char* colors[] = {"\033[32m", "\033[31m", "\033[31m", "\033[33m",
                                 "\033[33m", "\033[31m", "\033[31m", "\033[33m"};
  static_assert(sizeof words / sizeof *words == static_cast<std::size_t>(kLastOutcome) + 1, "a word per outcome");
  const auto o = static_cast<std::size_t>(r.outcome);
  std::string line = color ? std::string(colors[o]) + words[o] + "\033[0m" : words[o];
  // Ids and messages are data: control characters in them are shown, never sent to the terminal.
  line += " " + printable_text(r.id);
  if (r.outcome != Outcome::Passed) {
    line += std::string(" [") + stage_name(r.result.stage) + "]";
    const std::string& m = r.result.message;
    if (!m.empty()) line += " " + printable_text(m.substr(0, m.find('\n')));
  }
  if (!r.deduplicated_from.empty()) line += " (same as " + printable_text(r.deduplicated_from) + ")";
  return line + "\n";
}

std::string run_banner(const ExecInfo& info, std::size_t cases, std::size_t unique, int shard_index, int shard_total,
                       std::size_t all_unique) {
  const std::string device = !info.log_line.empty() ? info.log_line
                                                    : "device " + info.device_name + " (" + info.device +
                                                          (info.device_lib.empty() ? "" : ", " + info.device_lib) + ")";
  std::string line = "opcheck: " + device + "; " + std::to_string(cases) + (cases == 1 ? " case, " : " cases, ") + std::to_string(unique) +
                     " unique";
  if (shard_total > 1)
    line += ", shard " + std::to_string(shard_index) + "/" + std::to_string(shard_total) + " of " +
            std::to_string(all_unique);
  return line + "\n";
}

std::string diagnostics_text(const DiagnosticList& d, bool errors_only) {
  std::string out;
  std::size_t hidden = 0;
  for (const auto& item : d.items) {
    if (errors_only && item.severity == Diagnostic::Severity::Warning && !item.loc.file.empty()) {
      ++hidden;
      continue;
    }
    // Paths, names and messages are data: their control characters are shown, never run by the terminal.
    Diagnostic shown = item;
    shown.loc.file = printable_text(item.loc.file);
    shown.case_id = printable_text(item.case_id);
    shown.message = printable_lines(item.message);
    shown.fix = printable_lines(item.fix);
    out += shown.format() + "\n";
  }
  if (hidden)
    out += "opcheck: " + std::to_string(hidden) + " warning" + (hidden == 1 ? "" : "s") +
           " about the manifests; `opcheck validate` lists them\n";
  return out;
}

std::string error_text(const std::exception& e, const std::string& context) {
  const std::string what = printable_lines(e.what());
  if (what.find(": error: ") != std::string::npos) return what + "\n";
  return "opcheck: error: " + context + what + "\n";
}

}  // namespace opcheck
