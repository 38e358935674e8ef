// Outcomes, stages and the Result of one executed case: the vocabulary every report speaks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opcheck/comparators.h"

namespace opcheck {

/// The closed outcome vocabulary (pytest's words, and lit's UNSUPPORTED as not_supported: the device has no kernel for
/// the call, which a team bringing up a device must tell apart from a wrong one), and no_device_op: the call passed
/// but ran no op on the device under test (`sym_sum`, a call whose inputs all stay on the host), so it says nothing
/// about the device: it is neither a pass nor a failure, in no pass rate, a skip for JUnit. New outcomes go last so
/// that the numbers of the others (the worker wire, journals) keep their values.
enum class Outcome { Passed, Failed, Error, Skipped, XFailed, XPassed, NotSupported, NoDeviceOp };
constexpr Outcome kLastOutcome = Outcome::NoDeviceOp;  // the range every reader of a stored outcome checks

/// Where a case ended; the stage decides the outcome (see stage_outcome).
enum class Stage {
  PASSED,
  INCORRECT_RESULT,
  NONDETERMINISTIC,
  FAILED_TRANSFER,
  FAILED_RUNTIME,
  CRASHED,
  TIMEOUT,
  NOT_SUPPORTED,
  FAILED_COMPILE,  // torch.compile of the device call failed (--compile-backend); the compiled code never ran
  INVALID_CASE,
  FAILED_INPUT,
  FAILED_REFERENCE,
  SKIPPED,
  FAILED_SETUP,  // the device under test could not be set up (import, library, registration): no case ran
  /// The call passed, but no op of it ran on the device under test (its device runs reached the device with no op of
  /// the call: `sym_sum`, inputs that all stay on the host). Never on `--device cpu`, where the host is the device.
  NO_DEVICE_OP,
};

/// The last stage of the enum: loops over every stage run from PASSED to it.
inline constexpr Stage kLastStage = Stage::NO_DEVICE_OP;

/// What kind of verdict a result is within its stage, where a consumer needs more than the stage: `validate --ops`
/// gives each kind of INVALID_CASE its own Fix, `import-opinfo` writes the samples of an op opcheck does not know as
/// their ATen calls. Set where the result is made (the exec layer; the runner for cases that did not load), carried
/// on the worker wire and in the journal and metrics (`verdict_kind`), so that no consumer reads it from the message.
/// New kinds go last, so that the numbers of the others (the worker wire) keep their values.
enum class VerdictKind {
  None,                // nothing to say beyond the stage
  UnknownOp,           // INVALID_CASE: a well-formed op name that no op, decomposition or builtin has
  BadOpName,           // INVALID_CASE: not an op name at all (its characters or its form)
  NoSuchOverload,      // INVALID_CASE: the op exists, the overload named does not
  ArgumentsDoNotBind,  // INVALID_CASE: the op exists, the arguments fit none of its overloads
  DecompositionLimit,  // INVALID_CASE: the op's reference decomposition does not support a value the case gives
  TooLargeForMachine,  // INVALID_CASE: opcheck cannot allocate its own copies and comparisons of the case
  NotLoaded,           // INVALID_CASE: the case, or its manifest, did not load
  InternalError,       // INVALID_CASE: resolving the case hit a bug in opcheck, reported rather than fatal
};

/// One kind: its enum value, its spelling in the journal and the metrics, and the stage it is a kind of.
struct VerdictKindSpec {
  VerdictKind id;
  const char* name;
  Stage stage;
};

inline constexpr VerdictKindSpec kVerdictKinds[] = {
    {VerdictKind::None, "", Stage::PASSED},  // any stage: written as no key at all
    {VerdictKind::UnknownOp, "unknown_op", Stage::INVALID_CASE},
    {VerdictKind::BadOpName, "bad_op_name", Stage::INVALID_CASE},
    {VerdictKind::NoSuchOverload, "no_such_overload", Stage::INVALID_CASE},
    {VerdictKind::ArgumentsDoNotBind, "arguments_do_not_bind", Stage::INVALID_CASE},
    {VerdictKind::DecompositionLimit, "decomposition_limit", Stage::INVALID_CASE},
    {VerdictKind::TooLargeForMachine, "too_large_for_machine", Stage::INVALID_CASE},
    {VerdictKind::NotLoaded, "not_loaded", Stage::INVALID_CASE},
    {VerdictKind::InternalError, "internal_error", Stage::INVALID_CASE},
};
inline constexpr std::size_t kVerdictKindCount = sizeof(kVerdictKinds) / sizeof(kVerdictKinds[0]);
inline constexpr VerdictKind kLastVerdictKind = VerdictKind::InternalError;  // the range a stored kind is checked in

constexpr bool verdict_kinds_in_enum_order() {
  if (kVerdictKindCount != static_cast<std::size_t>(kLastVerdictKind) + 1) return false;
  for (std::size_t i = 0; i < kVerdictKindCount; ++i)
    if (static_cast<std::size_t>(kVerdictKinds[i].id) != i) return false;
  return true;
}
static_assert(verdict_kinds_in_enum_order(), "kVerdictKinds must list every VerdictKind once, in enum order");

/// "unknown_op", ...; "" for VerdictKind::None.
constexpr const char* verdict_kind_name(VerdictKind k) { return kVerdictKinds[static_cast<std::size_t>(k)].name; }
/// A kind's spelling back to the enum ("" is None); false for anything else.
bool parse_verdict_kind(std::string_view s, VerdictKind& out);
/// Whether the result says its op name names no op opcheck can resolve (unknown, or not an op name at all), whatever
/// the arguments: the names `import-opinfo` writes as the ATen calls their samples make.
constexpr bool names_no_op(VerdictKind k) { return k == VerdictKind::UnknownOp || k == VerdictKind::BadOpName; }

/// "passed", "failed", "error", "skipped", "xfailed", "xpassed", "not_supported", "no_device_op"
const char* outcome_name(Outcome o);
const char* stage_name(Stage s);      // "PASSED", "INCORRECT_RESULT", ...
bool parse_outcome(const std::string& s, Outcome& out);
bool parse_stage(const std::string& s, Stage& out);
/// The outcome a stage means before xfail is applied: PASSED->passed, SKIPPED->skipped, NOT_SUPPORTED->not_supported,
/// NO_DEVICE_OP->no_device_op, INVALID_CASE/FAILED_INPUT/FAILED_REFERENCE/FAILED_SETUP->error, everything else->failed.
Outcome stage_outcome(Stage s);

/// The part of a case that was running when it ended: opcheck building its inputs, the CPU reference, the device
/// runs, or opcheck comparing. A worker lost in the inputs or the reference (often to the out-of-memory killer) is
/// opcheck's failure, not the device's. None: the case ended before its inputs (resolution, size check).
enum class CasePhase { None, Inputs, Reference, Device, Compare };
constexpr CasePhase kLastCasePhase = CasePhase::Compare;
const char* case_phase_name(CasePhase p);  // "", "inputs", "reference", "device", "compare"
bool parse_case_phase(const std::string& s, CasePhase& out);

/// A comparator's spelling (its kComparators entry's name): what manifests, the status config, repro scripts and the
/// dedupe key use.
const char* comparator_name(Comparator c);
/// A comparator's spelling back to the enum; false for anything else.
bool parse_comparator(std::string_view s, Comparator& out);
/// The spellings, in enum order, for messages and did-you-mean.
const std::vector<std::string_view>& all_comparator_names();

/// How an expected failure is held. Strict (pytest's xfail_strict; every xfail is strict today): an unexpected pass
/// fails the run. NonStrict: an unexpected pass is reported as xpassed and does not.
enum class XfailStrictness { Strict, NonStrict };

/// What a run forgives, from its flags.
struct RunPolicy {
  bool xpass_ok = false;          // --xpass-ok: no unexpected pass fails the run
  bool not_supported_ok = false;  // --not-supported-ok: a call the device has no kernel for does not fail the run
};

/// Whether an occurrence with this outcome fails the run: failed and error always, not_supported unless the run
/// forgives it (--not-supported-ok), xpassed when its xfail is strict and the run does not forgive it. The one
/// definition of failure: exit codes, --maxfail, console, reports, diff and --last-failed all ask it.
bool fails_run(Outcome o, XfailStrictness strictness, const RunPolicy& policy);

/// Figures from comparing one run against the reference. Each has one definition, which every report uses:
struct CompareFigures {
  std::optional<double> max_abs_diff;  // greatest |device - reference| over all compared elements
  std::optional<double> max_rel_diff;  // greatest |device - reference| / |reference| over all compared elements
  std::optional<double> pcc;           // Pearson correlation (the lowest over the outputs), pcc comparator only
  std::int64_t mismatched = 0;         // elements outside the tolerance
  std::int64_t total = 0;              // elements compared
  /// The worst element (the greatest absolute difference) when the comparison located it: its index in the
  /// output and both values. Present when worst_device and worst_reference are; a 0-d output has an empty index.
  std::vector<std::int64_t> worst_index;
  std::optional<double> worst_device, worst_reference;
  /// The float64 result at worst_index, when the float64 judge ran (exec/judge.h): the value both are measured against.
  std::optional<double> worst_golden;
  bool has_worst() const { return worst_device.has_value() && worst_reference.has_value(); }
};

/// How an op reached the device under test: its own kernel for the device's dispatch key, the device's boxed CPU
/// fallback, or a decomposition (a CompositeImplicitAutograd / CompositeExplicitAutograd kernel, whose inner ops are
/// listed too).
enum class DeviceOpVia { Kernel, Fallback, Composite };

/// "kernel", "fallback", "composite": the spelling of the reports.
inline const char* device_op_via_name(DeviceOpVia v) {
  switch (v) {
    case DeviceOpVia::Kernel: return "kernel";
    case DeviceOpVia::Fallback: return "fallback";
    case DeviceOpVia::Composite: return "composite";
  }
  return "kernel";
}

inline bool parse_device_op_via(std::string_view s, DeviceOpVia& out) {
  for (DeviceOpVia v : {DeviceOpVia::Kernel, DeviceOpVia::Fallback, DeviceOpVia::Composite})
    if (s == device_op_via_name(v)) {
      out = v;
      return true;
    }
  return false;
}

/// One ATen op that reached the device under test during a case's device runs (a tensor argument on the device, or
/// the device as an argument).
struct DeviceOp {
  std::string op;  // "aten::add.Tensor"; the default overload without a suffix ("aten::mm")
  DeviceOpVia via = DeviceOpVia::Kernel;
  std::int64_t calls = 0;  // over every device run of the case, input and output transfers included
  bool in_call = false;    // reached while the case's op ran; false: only while its inputs or outputs moved
  /// The op that raised the case's device error: the innermost op active on the device, as the dispatcher saw it,
  /// when the error was thrown. At most one op of a case has it.
  bool raised = false;
};

/// What executing one unique case produced.
struct Result {
  std::string case_id;
  Stage stage = Stage::PASSED;
  VerdictKind kind = VerdictKind::None;  // the kind of verdict within the stage, for consumers that need one
  Outcome outcome = Outcome::Passed;
  std::string message;           // assert_close-like explanation for failures, reason for skips
  std::string resolved_op;       // e.g. "aten::add.Tensor"; several joined with ", " for decompositions
  bool decomposed = false;
  bool reference_upcast = false;
  /// How the reference was made when not in the call's own dtypes: "float32 (the CPU lacks ...)", "float64 (the CPU
  /// refused ...)", "float64 (--reference-dtype float64)"; "" = the CPU in the call's dtypes.
  std::string reference_made;
  /// What the judgement took into account beyond the tolerance (exec/judge.h): the float64 judge and which side it
  /// found further from float64, a backend freedom, undefined results, runs that may differ. One sentence each.
  std::vector<std::string> judge_notes;
  bool values_compared = true;   // false for ops returning uninitialised memory: only shape, dtype, strides, device
  CompareFigures figures;
  double materialize_ms = 0, reference_ms = 0, device_ms = 0, compare_ms = 0;
  double golden_ms = 0;   // the float64 result the judge measures both against (computed only when it is needed)
  double compile_ms = 0;  // --compile-backend: compiling the device call (its first run less a cached run)
  std::vector<std::string> input_digests;  // sha256 of each input tensor's logical bytes, in input order
  std::string captured_stderr;
  std::vector<DeviceOp> device_ops;  // what reached the device, first seen first; empty when no device run happened
  /// --reference-cache (src/exec/reference_cache.h): where the reference came from: "" (no cache in the run, or the
  /// case never reached its reference), "cache" (read from it), "computed" (not there), "recomputed" (its entry
  /// failed its check: reference_cache_warning says how), "not_cacheable" (computed: the case's reference is never
  /// kept; reference_cache_note says why).
  std::string reference_source;
  double reference_cache_ms = 0;       // reading and checking the entry, or storing it and evicting; not in reference_ms
  bool reference_stored = false;       // the computed reference was written to the cache
  std::int64_t reference_evicted = 0;  // entries this case's store evicted (least recently used first)
  std::string reference_cache_note;    // why a reference was not kept (not cacheable, above the entry limit)
  std::string reference_cache_warning;  // an entry that failed its check, or a cache that could not be written
  CasePhase phase = CasePhase::None;  // the part of the case that was running when it ended
  bool result_from_cache = false;     // served from --results-cache (--reuse-results): this run did not run it
  bool result_from_journal = false;   // served from the resumed journal (--resume): this run did not run it
  /// A module case whose failure was traced (docs/modules.md): the op inside it that is wrong with right inputs, the
  /// first of them when several are; "" otherwise. Its failure group is that op's.
  std::string traced_op;
  /// A module case: how its module was built, as JSON (its sizes and where each came from, its parameter count and
  /// dtype, the arguments passed as None, each traced call's verdict); "" for an op case.
  std::string module_record;
};

}  // namespace opcheck
