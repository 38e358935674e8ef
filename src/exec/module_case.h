// Module cases (docs/modules.md): a module built from its class, one forward run on the CPU, on the device under
// test and in float64 by the Python host (src/pyhost/_opcheck_module.py), every output judged by the rule op outputs
// have (exec/compare.h); a failing module is traced to the ops inside it that are wrong with right inputs.
#pragma once

#include "opcheck/case.h"
#include "opcheck/exec_api.h"
#include "exec/pch.h"

namespace opcheck::exec {

/// Runs module case `c` (c.module set) on `device`, filling `r` (stage, message, figures, device ops, the module
/// record, the traced op). `compile_unsupported`: why --compile-backend cannot generate code for the device ("" when
/// it can), found once before any case. Never throws for a bad case.
void run_module_case(const ExecOptions& opts, const at::Device& device, const std::string& compile_unsupported,
                     const Case& c, Result& r);

/// The module memory budget a run uses when --module-memory-budget is not given: half the machine's memory.
std::int64_t default_module_memory_budget();

}  // namespace opcheck::exec
