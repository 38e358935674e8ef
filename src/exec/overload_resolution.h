// Overload resolution: which overload of a dispatcher op a call binds to (the cheapest binding wins), and the
// reference decompositions that stand in for an op, or an overload's newer arguments, this libtorch lacks.
// OpResolver::resolve_overloads lives here too.
#pragma once

#include <string>
#include <vector>

#include "exec/decompositions.h"
#include "exec/op_resolver.h"

namespace opcheck::exec {

/// The call bound to a decomposition's schema, or why it does not bind (or uses an argument value it cannot run).
Resolution resolve_decomposition(const Decomposition& d, CaseCall call);

/// `native` when it resolved or `qualified` has no decomposition; else the decomposition's resolution when the call
/// binds there (an older native op whose schema lacks newer arguments), `native`'s error when it does not either.
Resolution with_decomposition_fallback(const std::string& qualified, Resolution native, CaseCall call);

/// The candidate nearest to `word` within a few edits ("" when none is): public names, then shorter, then
/// alphabetically first win ties, so suggestions are stable across runs.
std::string closest_name(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace opcheck::exec
