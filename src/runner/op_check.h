// `validate --ops`: every case's op resolved and its arguments bound through the exec layer, before anything runs.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "opcheck/diagnostic.h"
#include "opcheck/exec_api.h"

namespace opcheck {

/// Checks the call of every case with `ex` (Executor::check_call). Each case whose op does not resolve or whose
/// arguments do not bind becomes an error located at the case (file:line, case id) with the run's own message and
/// did-you-mean, and a Fix: hint. Returns how many cases were checked.
std::size_t check_case_ops(Executor& ex, const std::vector<const Case*>& cases, DiagnosticList& out);

/// Which of `names` (op names, as a case would write them) name no op `ex` can resolve, whatever the arguments: the
/// call's verdict is of a kind that says so (names_no_op: an unknown op, or not an op name), never read from its
/// message. `import-opinfo` writes the samples of such a name as the ATen calls they make.
std::vector<std::string> unresolved_op_names(Executor& ex, const std::vector<std::string>& names);

}  // namespace opcheck
