// Internals of the loopback PrivateUse1 device: host memory behind a device key, with injectable faults.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

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

/// What a fault does to an op.
enum class FaultKind { Bias, Ulp, Zeros, Segv, Abort, Hang, Nondet, Oom, Throw, NotImpl, Garbage, Host };

struct Fault {
  FaultKind kind;
  double bias = 0;   // FaultKind::Bias
};

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
