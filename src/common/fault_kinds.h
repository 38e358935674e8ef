// The loopback device's fault kinds (OPCHECK_LOOPBACK_FAULTS='OP=KIND[:ARG];...'), each declared once: its name, the
// argument it takes, what it does and what verdict it proves, whether it ends the worker, and an entry that shows it
// firing. The loopback parses the variable with this table and does what a kind says in one switch
// (backends/loopback/faults.cpp); `run --help`, the never-fired warning and the tests read the table. Plain C++, no
// torch: the runner and the device library both compile it.
//
// Adding a kind: one OPCHECK_FAULT_KIND line below, its behaviour in faults.cpp (corrupt() for an output change,
// FaultScope::begin()/check() for a raise), and its sentence in docs/devices.md. The test fault_kinds_tests walks the
// table: it parses each example, checks its help and doc line, and fires it on the loopback.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace opcheck {

/// What follows a kind's name after ':'.
enum class FaultArg {
  None,           // nothing: `zeros`
  Number,         // a finite number, required: `bias:1e-2`
  OptionalDtype,  // a dtype as c10 or torch names it, optional: `notimpl`, `notimpl:Half`
};

// X(Enumerator, "name", FaultArg, ends_worker, "example entry", "help")
// ends_worker: the fault kills or wedges the worker, which takes the case's record of what it reached along.
#define OPCHECK_FAULT_KINDS(X)                                                                                          \
  X(Bias, "bias", FaultArg::Number, false, "aten::exp=bias:1e-2",                                                     \
    "adds X to every float or complex output element (INCORRECT_RESULT)")                                            \
  X(Off, "off", FaultArg::Number, false, "aten::exp=off:1e-2",                                                        \
    "moves the first output element by X relative (at least X for |value| < 1) and by at least 4 units in the last "  \
    "place of its dtype: one wrong element under any tolerance (INCORRECT_RESULT)")                                  \
  X(Ulp, "ulp", FaultArg::None, false, "aten::exp=ulp",                                                               \
    "flips the lowest bit of the first output element (INCORRECT_RESULT under compare: exact and on integer "       \
    "outputs; within default float tolerances it passes)")                                                            \
  X(Zeros, "zeros", FaultArg::None, false, "aten::exp=zeros", "zeroes the outputs (INCORRECT_RESULT)")                \
  X(Nondet, "nondet", FaultArg::None, false, "aten::exp=nondet",                                                      \
    "flips the lowest bit of a different element on every call (NONDETERMINISTIC: the runs differ, each within "    \
    "default tolerances of a float output)")                                                                          \
  X(Garbage, "garbage", FaultArg::None, false, "aten::exp=garbage",                                                   \
    "leaves the outputs as bytes that vary per call (INCORRECT_RESULT, also differs between runs)")                  \
  X(Host, "host", FaultArg::None, false, "aten::exp=host",                                                            \
    "returns the outputs on the host, not the device (INCORRECT_RESULT, naming both devices)")                       \
  X(Segv, "segv", FaultArg::None, true, "aten::exp=segv", "raises SIGSEGV (CRASHED)")                                 \
  X(Abort, "abort", FaultArg::None, true, "aten::exp=abort", "calls abort() (CRASHED)")                               \
  X(Hang, "hang", FaultArg::None, true, "aten::exp=hang", "never returns (TIMEOUT)")                                   \
  X(Oom, "oom", FaultArg::None, true, "aten::exp=oom",                                                               \
    "fails the op's next device allocation (CRASHED or FAILED_RUNTIME, as it surfaces)")                             \
  X(Throw, "throw", FaultArg::None, false, "aten::exp=throw", "raises a c10::Error (FAILED_RUNTIME)")                 \
  X(NotImpl, "notimpl", FaultArg::OptionalDtype, false, "aten::exp=notimpl:Float",                                    \
    "raises NotImplementedError (NOT_SUPPORTED); notimpl:DTYPE only for a tensor of that dtype (notimpl:Half), as a " \
    "kernel registered for some dtypes")                                                                              \
  X(ContiguousOnly, "contiguous_only", FaultArg::None, false, "aten::_copy_from=contiguous_only",                      \
    "raises for a non-contiguous tensor argument (FAILED_RUNTIME or FAILED_TRANSFER)")                               \
  X(IgnoreDtype, "ignore_dtype", FaultArg::None, false, "aten::_copy_from=ignore_dtype",                              \
    "aten::_copy_from only: copies the bytes without converting the dtype (INCORRECT_RESULT)")

/// What a fault does to an op: one enumerator per table entry, in the table's order.
enum class FaultKind {
#define OPCHECK_FAULT_KIND_ENUM(e, name, arg, ends, example, help) e,
  OPCHECK_FAULT_KINDS(OPCHECK_FAULT_KIND_ENUM)
#undef OPCHECK_FAULT_KIND_ENUM
};

struct FaultKindInfo {
  FaultKind kind;
  const char* name;
  FaultArg arg;
  bool ends_worker;
  const char* example;  // an OPCHECK_LOOPBACK_FAULTS entry that fires it on a float32 case of the op it names
  const char* help;
};

/// Every kind, in the table's order.
const std::vector<FaultKindInfo>& fault_kinds();

/// The kind named `name` ("bias"), or nullptr.
const FaultKindInfo* fault_kind_named(const std::string& name);

/// The kinds as an error's Fix lists them: "bias:X, off:X, ulp, ..., notimpl[:DTYPE], ...".
std::string fault_kind_list();

/// The help block `run --help` prints: one line (or a few, wrapped at `width`) per kind, indented by `indent`.
std::string fault_kind_help(int indent, int width);

/// The one rule that matches a fault's OP to an op the device reached: OP with an overload ("aten::add.Tensor")
/// names that overload (".default" the one without a name), OP without one ("aten::add") every overload. The keys a
/// device looks a reached op up under, most specific first: for ("aten::add", "Tensor") "aten::add.Tensor" then
/// "aten::add"; for ("aten::mm", "") "aten::mm.default" then "aten::mm".
std::vector<std::string> fault_keys_for(const std::string& name, const std::string& overload);

/// Whether a fault written for `fault_op` fires on `reached` ("aten::mm", "aten::add.Tensor"), by that rule.
bool fault_op_matches(const std::string& fault_op, const std::string& reached);

}  // namespace opcheck
