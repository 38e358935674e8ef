// One op case on its way through Engine::run_case (engine.cpp). CaseRun's steps are defined by job:
// engine_steps.cpp (their order, resolution, inputs), engine_reference.cpp (the CPU reference and its cache),
// engine_device_run.cpp (the device runs and their repeats), engine_transfer.cpp (placement and transfer of
// tensors) and engine_judge.cpp (the comparison and the float64 judge). Internal to the exec layer.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "exec/accumulation.h"
#include "exec/backend_freedoms.h"
#include "exec/compare.h"
#include "exec/engine.h"
#include "exec/python_host.h"

namespace opcheck::exec {

inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

inline std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

/// A tensor slot as messages name it: "input 2", "input 1[0]" (engine_steps.cpp).
std::string slot_name(const Case& c, const TensorSlot& s);

/// Runs `inv` once on `tensors`, catching what it raises (engine_device_run.cpp).
RunOutcome run_once(const Invocation& inv, const std::vector<at::Tensor>& tensors, const RunContext& ctx);
/// The output of a run moved to the CPU, with what failed if it could not be (engine_transfer.cpp).
bool outputs_to_host(RunOutcome& o, std::string& error);

// Marks opcheck's own work (inputs, digests, comparison) on the case clock for as long as it lives, so the worker
// pool does not charge it to the case's timeout.
class OwnWork {
 public:
  explicit OwnWork(CaseClock* clock) : clock_(clock) {
    if (clock_) clock_->own_since_ns.store(now_ns(), std::memory_order_release);
  }
  ~OwnWork() {
    if (!clock_) return;
    const std::int64_t since = clock_->own_since_ns.exchange(0, std::memory_order_acq_rel);
    if (since) clock_->own_ns.fetch_add(now_ns() - since, std::memory_order_acq_rel);
  }
  OwnWork(const OwnWork&) = delete;
  OwnWork& operator=(const OwnWork&) = delete;

 private:
  static std::int64_t now_ns() {
    const auto since_epoch = std::chrono::steady_clock::now().time_since_epoch();
    return std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count();
  }
  CaseClock* clock_;
};

/// What ends a case before its last step: the stage (a failure, or PASSED when the device raised the error the case
/// expects) and its message.
struct Verdict {
  Stage stage;
  std::string message;
  VerdictKind kind = VerdictKind::None;
};

/// One case on its way through Engine::run_case: each step returns the verdict that ends the case, or nothing when
/// the case goes on; steps() runs them in order and is the one place that times them.
class CaseRun {
 public:
  CaseRun(const Engine& engine, const Case& c, Result& r, CaseEvidence* ev)
      : engine_(engine), opts_(engine.opts_), c_(c), r_(r), ev_(ev), dev_(engine.device_.device) {}
  // A compiled case's host forgets the case (its compiled code) once the case is over, however it ended.
  ~CaseRun() {
    if (compiler_) compiler_->end_case();
  }
  CaseRun(const CaseRun&) = delete;
  CaseRun& operator=(const CaseRun&) = delete;

  std::optional<Verdict> steps();

 private:
  // engine_steps.cpp
  void enter(CasePhase phase);
  std::optional<Verdict> resolve();
  std::optional<Verdict> check_size() const;
  std::optional<Verdict> build_inputs();

  // engine_reference.cpp
  std::optional<Verdict> reference();
  bool read_cached_reference(const ReferenceCache& cache, std::string& key);
  void keep_reference(const ReferenceCache& cache, const std::string& key, bool failed);
  std::optional<Verdict> check_reference();
  std::string bounds_broken() const;

  // engine_device_run.cpp
  std::optional<Verdict> find_compiler();
  std::optional<Verdict> run_on_device();
  std::optional<Verdict> device_run();
  Verdict refused_too(const OpError& error) const;
  bool needs_reference() const;
  Verdict device_error(const OpError& error, const std::string& text) const;
  Verdict inputs_not_moved() const;
  Verdict expected_error(const RunOutcome& out) const;

  // engine_transfer.cpp
  std::optional<Verdict> check_output_device(const RunOutcome& out, const std::vector<at::Tensor>& tensors) const;
  at::Device expected_output_device(const std::vector<at::Tensor>& tensors) const;
  std::string transfer_changes_values() const;

  // engine_judge.cpp
  bool same_bits(const RunOutcome& a, const RunOutcome& b, std::string& where);
  std::optional<Verdict> judge();
  std::optional<Verdict> judge_run(std::size_t k);
  std::vector<Comparison> compare_run(const RunOutcome& run, const RunOutcome* golden,
                                      const RunOutcome* reference = nullptr);
  bool within_composite(const RunOutcome& run, const Comparison& failed);
  bool golden();
  bool bound_accumulation();
  const NamedArgs& named_args();
  void note(const std::string& n);

  const std::vector<TensorSlot>& slots() const { return res_.call.slots; }
  std::string written_slot_name(std::size_t k) const { return slot_name(c_, slots()[inv_->written_slots[k]]); }
  at::Device slot_device(std::size_t s) const {
    return slots()[s].spec->placement == Placement::Host ? at::Device(at::kCPU) : dev_;
  }

  const Engine& engine_;
  const ExecOptions& opts_;
  const Case& c_;
  Result& r_;
  CaseEvidence* ev_;
  const at::Device dev_;
  Resolution res_;
  const Invocation* inv_ = nullptr;
  std::vector<at::Tensor> host_;  // the inputs on the host, one per tensor slot
  Engine::Reference ref_;
  PythonHost* compiler_ = nullptr;  // --compile-backend's host
  std::set<std::size_t> written_;   // slots the op writes: copied afresh for every device run
  std::vector<at::Tensor> moved_;   // the inputs the op only reads, where the device run takes them
  bool values_defined_ = true;
  std::vector<double> rep_ms_;    // each device run's own time
  std::vector<RunOutcome> runs_;  // every device run, on the host
  std::optional<OpError> raised_;  // what the device run that ended the runs raised
  std::optional<RunOutcome> golden_;    // the float64 result, once a comparison needed it
  std::optional<RunValues> accumulation_;  // beside it, the accumulation bound of an op that accumulates
  bool accumulation_tried_ = false;        // bound_accumulation ran once
  AccumulatesIn accumulation_in_ = AccumulatesIn::OutputDtype;
  bool composite_tried_ = false;         // within_composite looked at the op once
  std::optional<RunOutcome> composite_;  // the device's composite kernel run on the CPU, when it applies and ran
  bool golden_failed_ = false;          // the CPU could not compute it
  std::optional<NamedArgs> named_args_;
};

}  // namespace opcheck::exec
