// A stop asked for by a signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT or SIGUSR1, runner/run_session.h), which long front-half loops
// look at so that a run stops within 2 s even while it loads a large manifest.
#pragma once

#include <csignal>

namespace opcheck {

/// The signals that stop a run as Ctrl-C does, its reports written: Ctrl-C, a CI runner's SIGTERM, a closed terminal's
/// SIGHUP, Ctrl-\'s SIGQUIT and SIGUSR1 (whose defaults would end opcheck at once with no report). The run handles
/// them; its workers ignore them (the run ends its cases) and a start-up process takes their default (the import
/// ends). SIGUSR2 is not one: a Python-hosted worker's faulthandler takes it (its stacks before a timeout's SIGKILL).
inline constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1};

/// The flag a stop signal's handler sets (async-signal-safe to set; constant-initialised, so safe to read early).
inline volatile std::sig_atomic_t& stop_request_flag() {
  static volatile std::sig_atomic_t requested = 0;
  return requested;
}

/// Whether a stop was asked for: a loop that sees it ends early, and the run reports what it had.
inline bool stop_requested() { return stop_request_flag() != 0; }

}  // namespace opcheck
