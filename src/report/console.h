// The console's closing lines, worded (and coloured) exactly as pytest words them.
#pragma once

#include <exception>
#include <functional>
#include <string>

#include "opcheck/diagnostic.h"
#include "opcheck/exec_api.h"
#include "opcheck/report.h"
#include "report/stats.h"

namespace opcheck {

/// Diagnostics as the console shows them, one per line. With errors_only, warnings about the manifests are counted
/// in one closing line that points at `opcheck validate` (listing commands stay readable; validate shows everything);
/// a warning about the command line itself (an -m mark nothing has) is always shown.
std::string diagnostics_text(const DiagnosticList& d, bool errors_only = false);

/// A failure as one console line: a message that is already located ("path: error: what") as it is, anything else
/// as "opcheck: error: <context>what". Never two "error:" prefixes.
std::string error_text(const std::exception& e, const std::string& context = {});

/// pytest's summary line without the `=` rule: "2 failed, 1 passed, 1 skipped, 1 xfailed, 1 xpassed, 1 error in 0.02s".
/// Order and words follow pytest (failed, passed, skipped, deselected, xfailed, xpassed, error(s)), with
/// "N not supported" right after failed; zero counts are left out; "no tests ran in 0.00s" when nothing is counted.
/// With `color`, each count gets pytest's ANSI colour (failed/error red, passed green, the rest yellow; not supported
/// red when it fails the run, yellow under --not-supported-ok; bold for the line's main colour) and the time the main
/// colour: red when anything failed the run, else yellow when anything xpassed or was not supported, else green when
/// anything passed.
std::string summary_line(const RunReport& report, bool color = false);

/// The outcome counts of `c` in the summary line's order and words, uncoloured, zero counts left out: "6 failed,
/// 4 not supported, 21 passed" ("" when nothing is counted). The progress line says its tally so.
std::string outcome_counts_text(const OutcomeCounts& c);

/// The run's warnings before its summary line, introduced by where they come from: "3 warnings (opcheck validate
/// lists them):" when all `about_inputs` of them are the manifests' and the config's, "2 run-time warnings ..." when
/// none is (a journal that could not be written, a corrupt cache entry, a fault that never fired), both counts when
/// mixed; then the first line of the first `shown` of them and how many more there are. Empty without warnings.
std::string warnings_summary(const RunInfo& info, std::size_t shown = 3, std::size_t about_inputs = std::size_t(-1));
/// The line a run starts with: the device (the executor's own account when it gives one) and how much work:
/// "opcheck: device loopback (privateuseone:0); 180 cases, 149 unique[, shard 1/3 of 149]".
std::string run_banner(const ExecInfo& info, std::size_t cases, std::size_t unique, int shard_index, int shard_total,
                       std::size_t all_unique);

/// One line for a finished occurrence (-v): "FAILED model::case [STAGE] first line of the message", with
/// "(same as ID)" for a deduplicated one. Ids and messages are shown with their control characters made visible.
std::string case_line(const CaseRecord& r, bool color);

/// pytest's duration text: "0.02s", and past a minute "75.12s (0:01:15)".
std::string format_session_duration(double seconds);

/// How much of each failure the failures section shows (pytest's --tb).
enum class TracebackStyle {
  Auto,   // Short, except for a large red run (over kBlocksUpTo failures): one Short block per failure group
  Short,  // the header, the location, the op, the message up to kShortMessageLines lines, the repro command
  Long,   // everything the record carries: the whole message, figures, timings, the case's captured stderr
  No,     // no failures section
};

/// Lines of a message --tb=short shows before it says how many more --tb=long would show.
constexpr int kShortMessageLines = 15;

/// Failing occurrences --tb auto shows a block each for; over it, a block per failure group (its example).
constexpr std::size_t kBlocksUpTo = 20;

/// "auto", "short", "long", "no" -> the style; false for anything else.
bool parse_traceback_style(const std::string& text, TracebackStyle& out);

/// pytest's -r chars, expanded as pytest expands them: f failed, E error, s skipped, x xfailed, X xpassed, p and P
/// passed, a all but passed ("sxXEf"), A all ("PpsxXEf"), N none; w (warnings) is accepted and shows nothing here.
/// Returns the chars to report, in order, each once; false with `error` set for a char pytest does not know.
bool parse_report_chars(const std::string& chars, std::string& out, std::string& error);

/// What the failures section is drawn with.
struct FailureReportOptions {
  TracebackStyle style = TracebackStyle::Auto;
  /// The command that reruns one case (`opcheck repro ID ...`), quoted for a shell; none when unset or empty.
  std::function<std::string(const CaseRecord&)> repro_command;
  int width = 80;  // of the rule lines
};

/// pytest's FAILURES and ERRORS sections: for each occurrence that fails the run (errors first, as pytest lists
/// them), a rule line titled with its id, then its file:line, its op and the overload it resolved to, its stage,
/// the message with its figures (mismatched elements, greatest differences and what was allowed, the mutated
/// argument), and the command that reruns it. Occurrences deduplicated from one already shown name it instead of
/// repeating it. With TracebackStyle::Auto and more than kBlocksUpTo of them, only each failure group's example
/// gets its block, and a closing line says so: the short summary has a line for every failure, and --tb short a
/// block. Empty with TracebackStyle::No or when nothing failed.
std::string failure_details(const RunReport& report, const FailureReportOptions& options);

/// The run's failure groups (report/failure_groups.h), largest first, before the failures one by one: a rule line
/// "N failure groups", then per group "#1 151 occurrences (140 unique) STAGE in OP: masked error", the ops, models
/// and dtypes it spans and its example case. Empty when nothing failed.
std::string failure_groups_section(const RunReport& report, int width = 80);

/// pytest's "short test summary info": a rule line, then one line per occurrence whose outcome `chars` (from
/// parse_report_chars) asks for, grouped by char in its order: "FAILED model::name [STAGE] - message",
/// "ERROR ...", "SKIPPED ... - reason", "XFAIL ... - reason", "XPASS ...", "PASSED model::name". A strict XPASS
/// fails the run and is listed under f; a message whose first line ends in ':' continues with the lines it
/// introduces, so "do not bind to any overload of aten::softmax:" keeps its reasons. Empty when no line is asked for.
std::string short_summary(const RunReport& report, const std::string& chars, int width = 80);

/// pytest's --durations=N: a rule line, then the `n` slowest occurrences that ran (0: all), slowest first, as
/// "1.23s model::name"; deduplicated occurrences took no time of their own and are left out.
std::string durations_section(const RunReport& report, int n);

}  // namespace opcheck
