// What reached the device under test during a case's device runs: every dispatcher op with a tensor on the device (or
// the device as an argument), how the dispatcher served it (the device's kernel, its boxed fallback, a decomposition),
// and whether it ran as part of the op's own call or while inputs and outputs moved.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "exec/pch.h"
#include "opcheck/result.h"

namespace opcheck::exec {

/// Records, on this thread and for as long as it lives, the dispatcher ops that reach `device`, through a
/// thread-local RecordFunction callback: kernels registered from C++ or from Python (torch.library) and compiled code
/// alike call ops through the dispatcher. Tensors of a tracing mode (fake or functional tensors, which claim the
/// device while torch.compile traces) do not count: nothing runs on the device for them. The destructor classifies
/// the ops and appends them to `out` (each op once, first seen first), the one that raised the case's error marked.
class DeviceOpsRecorder {
 public:
  DeviceOpsRecorder(const at::Device& device, std::vector<DeviceOp>& out);
  ~DeviceOpsRecorder();
  DeviceOpsRecorder(const DeviceOpsRecorder&) = delete;
  DeviceOpsRecorder& operator=(const DeviceOpsRecorder&) = delete;

 private:
  std::vector<DeviceOp>& out_;
  std::uint64_t handle_ = 0;
  bool active_ = false;
};

/// The op that raised the error now leaving the device runs, as the active recorder on this thread saw it: the
/// innermost op active on the device when it was thrown ("aten::fill_.Scalar"); "" when none (no recorder, or the
/// error was raised outside any device op). The recorder marks it `raised` in what it appends.
std::string raised_device_op();

/// Runs `f` (a case's device runs) under a DeviceOpsRecorder and returns what it returns.
template <class F>
auto recording_device_ops(const at::Device& device, std::vector<DeviceOp>& out, F&& f) {
  const DeviceOpsRecorder recorder(device, out);
  return std::forward<F>(f)();
}

/// Marks, for as long as it lives on this thread, the op's own call: ops a recorder sees meanwhile are `in_call`
/// (the others only moved inputs and outputs).
class OpCallScope {
 public:
  OpCallScope();
  ~OpCallScope();
  OpCallScope(const OpCallScope&) = delete;
  OpCallScope& operator=(const OpCallScope&) = delete;

 private:
  bool outer_;
};

/// How the dispatcher serves `op` ("aten::add.Tensor") for `key` (the device's dispatch key): a kernel registered for
/// exactly that key, else a CompositeImplicitAutograd/CompositeExplicitAutograd kernel, else the key's fallback.
DeviceOpVia device_op_via(const std::string& op, c10::DispatchKey key);

/// For a failure whose op did not run on a kernel of the device's own (one of the resolved ops, "aten::a, aten::b", is
/// not among the ops with via kernel): "on the device: aten::native_batch_norm (kernel), aten::addcmul (fallback)",
/// the ops of the op's own call without the allocations, copies and views that move tensors around them. "" when the
/// op did run on its kernel, or nothing else of the call reached the device.
std::string device_ops_note(const std::string& resolved_op, const std::vector<DeviceOp>& ops);

/// A case that passed although no op of its call ran on `device` (nothing reached it, as for `sym_sum` or a call whose
/// inputs all stay on the host, or only transfers did) is NO_DEVICE_OP, with a message naming the device as `name`:
/// its verdict is no device result. Not on the CPU, where the host is the device under test and every call runs on it.
void settle_device_pass(Result& r, const at::Device& device, const std::string& name);

}  // namespace opcheck::exec
