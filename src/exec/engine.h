// The Executor: per case, resolve -> build inputs -> CPU reference -> device run(s) -> compare -> Result.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "opcheck/exec_api.h"
#include "exec/bundle.h"
#include "exec/device.h"
#include "exec/invocation.h"
#include "exec/op_error.h"
#include "exec/op_resolver.h"
#include "exec/reference_cache.h"

namespace opcheck::exec {

/// What one run of an invocation produced: its output and the tensors it wrote in place, or the error it raised.
struct RunOutcome {
  c10::IValue output;
  std::vector<at::Tensor> written;  // in Invocation::written_slots order
  std::optional<OpError> error;
};

/// What a case produced, kept for its failure bundle (--save-failures): recorded by Engine::run_case as the stages
/// go, so a bundle holds the very tensors of the failing run. Tensors are on the host.
struct CaseEvidence {
  std::vector<TensorSlot> slots;            // the case's tensor slots (set once the op resolved)
  std::vector<at::Tensor> inputs;           // host inputs, one per slot; empty when they could not be built
  std::optional<RunOutcome> reference;      // the CPU reference, once it ran
  std::vector<RunOutcome> device_runs;      // device runs whose outputs reached the host, in order
  std::vector<std::size_t> written_slots;   // slots the op writes in place
};

class CaseRun;

/// The Executor of `opcheck run`, for one device.
class Engine final : public Executor {
 public:
  Engine(const ExecOptions& opts, DeviceSetup device);

  const ExecInfo& info() const override { return info_; }
  Result run(const Case& c) override;
  Result check_call(const Case& c) override;
  /// Starts intra-op threads (ExecOptions::intra_op_threads) and, for device_index >= 0, makes this process drive
  /// that index of the configured backend.
  bool prepare_worker(int device_index, std::string* error) override;
  void set_case_clock(CaseClock* clock) override { clock_ = clock; }
  bool starts_workers() const override;
  int start_worker(WorkerEntry entry, const WorkerChannels& channels, std::string* error) override;

  const OpResolver& resolver() const { return resolver_; }

 private:
  friend class CaseRun;  // run_case's steps

  struct Reference {
    RunOutcome outcome;
    bool upcast = false;
    std::string made;     // how, when not in the call's dtypes (Result::reference_made)
    std::string refused;  // the CPU's own error, when it refused the call in its dtypes and float64 stood in
    std::optional<RunOutcome> golden;  // the float64 run, when the reference was made from it
  };
  /// The CPU reference on the host inputs (copies of the tensors the op writes). One mechanism, the call run on the
  /// CPU with its floating inputs in a wider dtype (compute_in), serves every case where the call's own dtypes will
  /// not do: float32 where the CPU kernel lacks the dtype, float64 where the CPU refuses the call's mixed precision,
  /// and ExecOptions::reference_dtype; outputs are cast back to the op's native dtypes.
  Reference run_reference(const Case& c, const Invocation& inv, const std::vector<at::Tensor>& host) const;
  /// The call on the CPU with floating (complex) inputs narrower than `compute` in `compute` (its complex
  /// counterpart); nullopt runs it as it is. `changed`: whether anything was widened. Outputs are not cast back.
  RunOutcome compute_in(const Case& c, const Invocation& inv, const std::vector<at::Tensor>& host,
                        std::optional<at::ScalarType> compute, bool& changed,
                        std::optional<c10::DispatchKey> kernel_of = std::nullopt) const;
  /// The float64 (complex128) result of the call on the CPU, never cast back: what the judge measures the device and
  /// the reference against (exec/compare.h, kReferenceErrorMultiple).
  RunOutcome run_golden(const Case& c, const Invocation& inv, const std::vector<at::Tensor>& host) const;
  /// The call on the CPU, in its own dtypes, through the kernel the dispatcher computed for the device's backend
  /// `key`: PyTorch's composite kernel, where the device registers none of its own for the op. What the judge
  /// compares a device with when the CPU's own kernel of the op rounds differently from that composite.
  RunOutcome run_composite(const Case& c, const Invocation& inv, const std::vector<at::Tensor>& host,
                           c10::DispatchKey key) const;
  /// Takes the case through its steps (engine.cpp's CaseRun). `ev`, when given, receives what the case produced
  /// (for --save-failures).
  void run_case(const Case& c, Result& r, CaseEvidence* ev);

  ExecOptions opts_;
  DeviceSetup device_;
  ExecInfo info_;
  OpResolver resolver_;
  std::unique_ptr<FailureBundles> bundles_;  // set by ExecOptions::save_failures_dir
  std::unique_ptr<ReferenceCache> reference_cache_;  // set by ExecOptions::reference_cache_dir
  CaseClock* clock_ = nullptr;               // where opcheck's own time is published (worker processes)
};

/// A copy of `t` on `device` with the same sizes, strides and storage offset (expanded and overlapping layouts
/// included): the whole storage span is copied and viewed the same way.
at::Tensor copy_with_layout(const at::Tensor& t, const at::Device& device);
/// A tensor of the device on the host with its strides: .cpu() keeps them only for a dense tensor, and a layout
/// with gaps (empty_strided's strides (7, 8) for size (2, 3)) is part of what an op returns. Conjugate and negative
/// views, and sparse tensors, come back as .cpu() makes them.
at::Tensor host_copy(const at::Tensor& t);

/// Every tensor inside `v` (tensors, lists, tuples) moved to the CPU.
c10::IValue to_host(const c10::IValue& v);

/// Bitwise equality of two outputs (dtype, shape and bytes of every tensor; equality of other leaves). On a
/// difference returns false and says where in `where`.
bool bitwise_equal(const c10::IValue& a, const c10::IValue& b, std::string& where, const std::string& path = "output");

}  // namespace opcheck::exec
