// The judgement of a case's device runs: each run against the reference, the float64 judge and the accumulation
// bound when the tolerance alone fails, the composite kernel's rounding, and runs that differ between themselves.

#include "exec/case_run.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "exec/accumulation.h"
#include "exec/backend_freedoms.h"
#include "exec/compare.h"
#include "exec/device_ops.h"

namespace opcheck::exec {

namespace {

using Clock = std::chrono::steady_clock;

/// A failing comparison in one line: its first line, how many elements missed and the greatest difference.
std::string failure_summary(const Comparison& failed) {
  std::string out = first_line(failed.message);
  const CompareFigures& f = failed.figures;
  if (f.total > 0) out += "; " + std::to_string(f.mismatched) + " of " + std::to_string(f.total) + " elements missed";
  if (f.max_abs_diff) {
    std::ostringstream diff;
    diff << *f.max_abs_diff;
    out += "; Greatest absolute difference: " + diff.str();
  }
  return out;
}

}  // namespace

// Whether two runs have the same bits (output and mutated arguments); else `where` says where they differ. The
// uninitialised tail of a growing resize_ holds what the device's memory held: no difference between runs.
bool CaseRun::same_bits(const RunOutcome& a, const RunOutcome& b, std::string& where) {
  RunValues first{a.output, a.written};
  try {
    align_uninitialised_tail(inv_->resolved_op, named_args(), RunValues{b.output, b.written}, {&first});
  } catch (const std::exception&) {
    first = RunValues{a.output, a.written};  // compared as they are
  }
  bool same = bitwise_equal(first.output, b.output, where);
  for (std::size_t k = 0; same && k < b.written.size(); ++k)
    same = bitwise_equal(first.written[k], b.written[k], where, "mutated " + written_slot_name(k));
  return same;
}

// One rule, whatever ran before in the worker: every run is compared with the reference (a run with run 1's bits
// has run 1's comparison). Any run beyond tolerance is INCORRECT_RESULT, saying so when the runs also differ
// bitwise (a wrong and varying result, such as uninitialised memory, is wrong before it is nondeterministic); only
// runs all within tolerance that differ bitwise are NONDETERMINISTIC. Fresh memory (values not compared) differs
// between runs by nature: those runs are compared on what they define, never with each other.
std::optional<Verdict> CaseRun::judge() {
  std::string differs;  // the first bitwise difference from run 1; empty while every run has run 1's bits
  std::optional<Verdict> wrong;
  for (std::size_t k = 0; k < runs_.size(); ++k) {
    std::string where;
    if (k > 0 && values_defined_) {
      if (same_bits(runs_[0], runs_[k], where)) continue;
      if (differs.empty()) differs = "device run " + std::to_string(k + 1) + " differs bitwise from run 1: " + where;
    }
    if (wrong) continue;  // still looking for a difference between runs, for the message
    wrong = judge_run(k);
  }
  if (wrong && !differs.empty()) {
    const auto eol = std::min(wrong->message.find('\n'), wrong->message.size());
    wrong->message.insert(eol, " (also differs between runs)");
    wrong->message += "\n\nAlso differs between runs: " + differs;
  }
  if (wrong && wrong->stage == Stage::INCORRECT_RESULT) {
    if (std::string transfer = transfer_changes_values(); !transfer.empty())
      wrong->message = "the device's aten::_copy_from changes values: a copy round trip differs\n" + transfer + "\n" +
                       wrong->message;
  }
  if (wrong || differs.empty() || c_.nondeterministic_ok) return wrong;
  if (const std::string why = nondeterministic_by_design(inv_->resolved_op, named_args()); !why.empty()) {
    note(differs + "; every run was judged on its own: " + why);
    return std::nullopt;
  }
  return Verdict{Stage::NONDETERMINISTIC,
                 differs + "; every run is within tolerance of the reference. Fix: mark the case "
                           "`nondeterministic: true` if the op is nondeterministic by design"};
}

// Run k+1 against the reference: outputs first, then every tensor the op mutated. Where the op's result is
// undefined the expected values take the device's allowed choice (backend_freedoms.h); where the tolerance alone
// fails a floating output, the float64 judge decides (compare.h). The case's figures are run 1's, or the first
// failing run's: its first failing comparison's (else the output's, or the first mutated argument's for an op
// that returns nothing).
std::optional<Verdict> CaseRun::judge_run(std::size_t k) {
  std::vector<Comparison> comparisons = compare_run(runs_[k], nullptr);
  const bool wants_golden = std::any_of(comparisons.begin(), comparisons.end(), [](const Comparison& c) {
    return !c.ok && c.wants_golden;
  });
  if (wants_golden && golden()) comparisons = compare_run(runs_[k], &*golden_);
  const bool still_failing = std::any_of(comparisons.begin(), comparisons.end(), [](const Comparison& c) {
    return !c.ok;
  });
  if (still_failing && golden_ && bound_accumulation()) comparisons = compare_run(runs_[k], &*golden_);
  for (const auto& cmp : comparisons)
    for (const auto& n : cmp.notes) note(n);
  const Comparison* figures = &comparisons.front();
  if (ref_.outcome.output.isNone() && comparisons.size() > 1) figures = &comparisons[1];
  std::string failures;
  for (const auto& cmp : comparisons) {
    if (cmp.ok) continue;
    if (failures.empty()) figures = &cmp;
    failures += (failures.empty() ? "" : "\n\n") + cmp.message;
  }
  if (!failures.empty() && within_composite(runs_[k], *figures)) failures.clear();
  if (k == 0 || !failures.empty()) r_.figures = figures->figures;
  if (failures.empty()) return std::nullopt;
  const std::string run_name = k == 0 ? "" : "device run " + std::to_string(k + 1) + ": ";
  return Verdict{Stage::INCORRECT_RESULT, run_name + failures};
}

// One run's comparisons against the reference (and the float64 result, when given), with the op's undefined
// results aligned to the device's allowed choices.
std::vector<Comparison> CaseRun::compare_run(const RunOutcome& run, const RunOutcome* golden,
                                             const RunOutcome* reference) {
  Tolerance tol = tolerance_of(c_);
  tol.values = values_defined_;
  tol.resolved_op = inv_->resolved_op;
  if (!reference) reference = &ref_.outcome;
  RunValues expected{reference->output, reference->written};
  RunValues wide;
  std::vector<RunValues*> aligned{&expected};
  if (golden) {
    wide = RunValues{golden->output, golden->written};
    aligned.push_back(&wide);
  }
  if (values_defined_) {
    const std::string n = align_undefined(inv_->resolved_op, named_args(), RunValues{run.output, run.written}, aligned);
    if (!n.empty()) note(n);
  }
  std::vector<Comparison> comparisons;
  const bool bounded = golden && accumulation_;
  const AccumulationAllowance acc{bounded ? &accumulation_->output : nullptr, accumulation_in_};
  comparisons.push_back(compare_values(expected.output, run.output, tol, "output", golden ? &wide.output : nullptr,
                                       bounded ? &acc : nullptr));
  for (std::size_t w = 0; w < run.written.size(); ++w) {
    const c10::IValue g = golden && w < wide.written.size() ? c10::IValue(wide.written[w]) : c10::IValue();
    const c10::IValue a = bounded && w < accumulation_->written.size() ? c10::IValue(accumulation_->written[w])
                                                                        : c10::IValue();
    const AccumulationAllowance written_acc{&a, accumulation_in_};
    comparisons.push_back(compare_values(expected.written[w], run.written[w], tol,
                                         "mutated argument (" + written_slot_name(w) + ")", golden ? &g : nullptr,
                                         bounded ? &written_acc : nullptr));
  }
  return comparisons;
}

// Where the device ran the op under test as PyTorch's composite kernel (it registers no kernel of its own for it)
// while the CPU has one, the composite's intermediate rounding is PyTorch's, not the device's: a run the CPU's
// kernel fails passes when it is within the tolerance (and the float64 judge) of that composite run on the CPU,
// with a note. A device whose inner ops are wrong differs from the composite as well, and still fails.
bool CaseRun::within_composite(const RunOutcome& run, const Comparison& failed) {
  if (!composite_tried_) {
    composite_tried_ = true;
    if (dev_.type() == at::kCPU || !opts_.compile_backend.empty() || !inv_->runs_kernel_of() || inv_->decomposed)
      return false;
    const c10::DispatchKey key = c10::computeDispatchKey(std::nullopt, std::nullopt, dev_);
    if (device_op_via(inv_->resolved_op, key) != DeviceOpVia::Composite ||
        device_op_via(inv_->resolved_op, c10::DispatchKey::CPU) != DeviceOpVia::Kernel)
      return false;
    RunOutcome composite = engine_.run_composite(c_, *inv_, host_, key);
    if (!composite.error) composite_ = std::move(composite);
  }
  if (!composite_) return false;
  const std::vector<Comparison> comparisons = compare_run(run, golden_ ? &*golden_ : nullptr, &*composite_);
  if (!std::all_of(comparisons.begin(), comparisons.end(), [](const Comparison& c) { return c.ok; })) return false;
  note("the device ran PyTorch's composite kernel of " + inv_->resolved_op + " (it registers none of its own; the "
       "CPU does): its result is within the tolerance of that composite run on the CPU, whose intermediate rounding "
       "differs from the CPU's own kernel. Against the CPU's kernel: " + failure_summary(failed));
  return true;
}

// The float64 result of the call, computed the first time a comparison needs it;
// false, with a note, when the CPU cannot compute it: the tolerance alone then decides.
bool CaseRun::golden() {
  if (golden_) return true;
  if (golden_failed_) return false;
  if (ref_.golden) {
    golden_ = ref_.golden;
    return true;
  }
  // Not kept in --reference-cache: it is computed only for a comparison the tolerance failed, which a nightly
  // meets for few cases, and an entry per such case would mix two kinds of entry in one folder.
  const auto t0 = Clock::now();
  RunOutcome g = engine_.run_golden(c_, *inv_, host_);
  r_.golden_ms = ms_since(t0);
  if (g.error) {
    golden_failed_ = true;
    note("the float64 judge was not applied: the CPU could not compute the call in float64 (" +
         first_line(g.error->text()) + "); the tolerance alone decides");
    return false;
  }
  golden_ = std::move(g);
  return true;
}

// For an op that accumulates (accumulation_rules), the accumulation bound beside the float64 result: three more
// float64 runs of the call (exec/accumulation.h), charged to golden_ms. Computed once, the first time a comparison
// fails the float64 judge without it; false when the op has none or its runs failed (with a note).
bool CaseRun::bound_accumulation() {
  if (accumulation_tried_) return accumulation_.has_value();
  accumulation_tried_ = true;
  const AccumulationRule* rule = accumulation_rule_for(inv_->resolved_op, named_args());
  if (!rule) return false;
  const auto t0 = Clock::now();
  accumulation_in_ = rule->in;
  std::string why;
  // A rule that counts its terms with an argument changed (scatter_reduce's mean counted as its sum) runs that call.
  const std::unique_ptr<Invocation> counting = counting_invocation(*rule, *inv_);
  const auto run_of = [this](const Invocation& inv) {
    return [this, &inv](const std::vector<at::Tensor>& host) {
      RunOutcome o = engine_.run_golden(c_, inv, host);
      if (o.error) throw std::runtime_error(first_line(o.error->text()));
      return RunValues{o.output, o.written};
    };
  };
  const Float64Run run = run_of(*inv_), count_run = counting ? Float64Run(run_of(*counting)) : Float64Run();
  accumulation_ = accumulation_allowance(*rule, host_, RunValues{golden_->output, golden_->written}, run, why,
                                         counting ? &count_run : nullptr);
  r_.golden_ms += ms_since(t0);
  if (!accumulation_)
    note("the accumulation bound was not applied (" + why + "): the float64 judge decides as for any op");
  return accumulation_.has_value();
}

// The call's arguments by name, on the host inputs (for the backend freedoms); computed once.
const NamedArgs& CaseRun::named_args() {
  if (!named_args_) {
    try {
      named_args_ = inv_->named_arguments(host_);
    } catch (...) {
      named_args_ = NamedArgs{};  // arguments the freedoms cannot read: none of them applies
    }
  }
  return *named_args_;
}

void CaseRun::note(const std::string& n) {
  if (std::find(r_.judge_notes.begin(), r_.judge_notes.end(), n) == r_.judge_notes.end()) r_.judge_notes.push_back(n);
}

}  // namespace opcheck::exec
