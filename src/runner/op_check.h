// `validate --ops`: every case's op resolved and its arguments bound through the exec layer, before anything runs.
#pragma once

#include <cstddef>
#include <vector>

#include "opcheck/diagnostic.h"
#include "opcheck/exec_api.h"

namespace opcheck {

/// Checks the call of every case with `ex` (Executor::check_call). Each case whose op does not resolve or whose
/// arguments do not bind becomes an error located at the case (file:line, case id) with the run's own message and
/// did-you-mean, and a Fix: hint. Returns how many cases were checked.
std::size_t check_case_ops(Executor& ex, const std::vector<const Case*>& cases, DiagnosticList& out);

}  // namespace opcheck
