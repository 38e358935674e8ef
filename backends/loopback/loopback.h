// Internals of the loopback PrivateUse1 device: host memory behind a device key, with injectable faults.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include "common/fault_kinds.h"  // FaultKind: the table of kinds

namespace opcheck::loopback {

/// How many loopback devices exist (OPCHECK_LOOPBACK_DEVICES, default 4).
c10::DeviceIndex device_count();

/// The index the device guard currently points at on this thread.
c10::DeviceIndex current_device();

/// The allocator behind every loopback tensor (also registered with REGISTER_ALLOCATOR).
c10::Allocator* allocator();

/// Bytes currently allocated on one loopback device (or all of them for -1).
std::int64_t live_bytes(int device);

/// A CPU tensor that aliases the memory of `t` (same sizes, strides and bytes). `t` may live on the loopback device
/// or already on the CPU. Loopback memory is host memory, so CPU kernels can read and write it in place.
at::Tensor host_alias(const at::Tensor& t);

struct Fault {
  FaultKind kind;
  double number = 0;  // FaultKind::Bias: what is added; FaultKind::Off: the relative move
  c10::optional<at::ScalarType> dtype;  // FaultKind::NotImpl: only calls with a tensor of this dtype raise
};

/// A behaviour of a real accelerator the loopback takes on when OPCHECK_LOOPBACK_MODE names it (bits, combinable).
enum class Mode : unsigned {
  ForkSensitive = 1,      // a process forked after the device was used fails on first use, as CUDA does
  Precise = 2,            // floating ops computed in float64 (complex128), rounded once to the output dtype
  StatsFp32 = 4,          // norm ops' saved statistics in float32 for fp16/bf16 input, as CUDA returns them
  AnyWriter = 8,          // repeated-index writes applied in reverse order; ties in sort/topk broken the other way
  ShuffleAccumulate = 16  // index accumulations in a different order on every call
};

/// Parses an OPCHECK_LOOPBACK_MODE value ("precise,fork_sensitive"). Returns false and sets `error` (naming the
/// variable, the bad word and the known modes) for an unknown mode.
bool parse_modes(const std::string& spec, unsigned& bits, std::string& error);

/// The known modes, comma-separated.
std::string mode_list();

/// Whether OPCHECK_LOOPBACK_MODE (read once, on first use) turns `m` on.
bool mode_on(Mode m);

/// What was wrong with OPCHECK_LOOPBACK_MODE, or "".
const std::string& mode_error();

/// Marks the device used by this process. Under fork_sensitive, throws CUDA's "initialization error" in a process
/// forked from one that had used the device.
void note_device_use();

/// Under fork_sensitive: whether this process was forked from one that had used the device (and so may not use it);
/// marks the device used by this process otherwise. Never throws.
bool used_in_parent_before_fork();

/// Under any_writer or shuffle_accumulate: puts the writes (or the tie candidates) of `op` in another order in its
/// host arguments, and returns what maps its host returns back (tie-broken indices), or an empty function.
std::function<void(torch::jit::Stack&)> reorder_writes(const c10::OperatorHandle& op, torch::jit::Stack& host);

/// Under stats_fp32, for a norm op (forward or backward) with fp16/bf16 input: true, and the dtypes of its returns
/// as CUDA gives them (saved statistics in float32); the op is then computed in float32 (float64 under precise).
bool stats_fp32_dtypes(const c10::OperatorHandle& op, const std::vector<c10::IValue>& args,
                       std::vector<c10::optional<at::ScalarType>>& out);

/// Parses an OPCHECK_LOOPBACK_FAULTS spec ("aten::add.Tensor=bias:1e-2;aten::exp=segv"). Returns false and sets
/// `error` for an invalid spec; only then is `error` touched.
bool parse_faults(const std::string& spec, std::vector<std::pair<std::string, Fault>>& out, std::string& error);

/// Replaces the active fault table (the env spec at load; tests may swap it). Returns false and keeps the
/// old table on a bad spec.
bool set_faults(const std::string& spec, std::string& error);

/// The error found when the env spec was parsed at load, or "".
const std::string& load_error();

/// Applies the fault configured for one operator around its execution. Construct before running the op
/// (crashes, hangs, thrown errors and armed allocation failures happen here), call `after` on the stack's returns.
class FaultScope {
 public:
  FaultScope(const c10::OperatorName& op);
  FaultScope(const char* name, const char* overload);
  ~FaultScope();
  FaultScope(const FaultScope&) = delete;
  FaultScope& operator=(const FaultScope&) = delete;

  /// The faults that depend on the op's arguments (contiguous_only, notimpl:DTYPE): raises when they apply.
  void check(const std::vector<c10::IValue>& args) const;
  /// Whether the op's fault is `kind`.
  bool is(FaultKind kind) const { return fault_ != nullptr && fault_->kind == kind; }
  /// Corrupts the op's tensor results in place (value faults) and raises an injected OOM the op did not hit.
  void after(const at::Tensor& result);
  /// The same for a boxed op's returns; `host` replaces each returned tensor by a host copy.
  void after(torch::jit::Stack& stack, std::size_t num_returns);
  /// `after`, then the tensor the kernel returns: a host copy under `host`.
  at::Tensor result(const at::Tensor& t);

 private:
  void begin();
  std::string op_;
  const Fault* fault_ = nullptr;
  std::shared_ptr<const void> keep_;
};

/// Whether loopback registers a kernel of its own for `op` ("ns::name" or "ns::name.overload"). Such kernels
/// apply faults themselves; every other faulted op gets the fault-aware CPU fallback as its kernel.
bool has_own_kernel(const std::string& op);

/// The boxed fallback (CPU execution, fp16/bf16 upcast, faults by operator name).
void cpu_fallback_with_faults(const c10::OperatorHandle& op, torch::jit::Stack* stack);

/// True while an injected out-of-memory is armed for the current op on this thread.
bool allocation_failure_armed();
void disarm_allocation_failure();

}  // namespace opcheck::loopback
