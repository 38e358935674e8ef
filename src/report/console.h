// The console's closing lines, worded (and coloured) exactly as pytest words them.
#pragma once

#include <string>

#include "opcheck/report.h"

namespace opcheck {

/// pytest's summary line without the `=` rule: "2 failed, 1 passed, 1 skipped, 1 xfailed, 1 xpassed, 1 error in 0.02s".
/// Order and words follow pytest (failed, passed, skipped, deselected, xfailed, xpassed, error(s)); zero counts are
/// left out; "no tests ran in 0.00s" when nothing is counted. With `color`, each count gets pytest's ANSI colour
/// (failed/error red, passed green, the rest yellow; bold for the line's main colour) and the time the main colour:
/// red when anything failed or errored, else yellow when anything xpassed, else green when anything passed.
std::string summary_line(const RunReport& report, bool color = false);

/// pytest's duration text: "0.02s", and past a minute "75.12s (0:01:15)".
std::string format_session_duration(double seconds);

/// One line per failed, errored or xpassed occurrence, in report order, like pytest's short test summary:
/// "FAILED model::name [INCORRECT_RESULT] - first line of the message". Empty when there is none.
std::string failures_section(const RunReport& report);

/// pytest's --durations=N: a rule line, then the `n` slowest occurrences that ran (0: all), slowest first, as
/// "1.23s model::name"; deduplicated occurrences took no time of their own and are left out.
std::string durations_section(const RunReport& report, int n);

}  // namespace opcheck
