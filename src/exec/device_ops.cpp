#include "exec/device_ops.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>

#include <ATen/record_function.h>
#include <c10/core/TensorOptions.h>

#include "common/text.h"
#include "judge/op_categories.h"

namespace opcheck::exec {
namespace {

struct SeenOp {
  c10::OperatorName name;
  std::int64_t calls = 0;
  bool in_call = false;
};

// The recorder active on this thread. RecordFunction takes a plain function pointer, so the callback finds its state
// here; one recorder at a time (a nested one leaves the outer one recording).
struct OpCollector {
  c10::DeviceType type = c10::DeviceType::CPU;
  c10::BackendComponent backend = c10::BackendComponent::InvalidBit;
  std::vector<SeenOp> seen;  // few per case: a linear search beats hashing the names
  // The device ops active now, innermost last: their index in `seen` and the exceptions in flight when they began.
  std::vector<std::pair<std::size_t, int>> active;
  // The op an exception left first (the innermost active when it was thrown), while no op has ended normally since:
  // an exception that some op caught is no longer the case's error.
  std::optional<std::size_t> raised;
  bool unwinding = false;  // the last op to end was left by an exception
};

// Marks the ops whose end the recorder follows (a device op); the others get no context.
struct DeviceOpContext : at::ObserverContext {};

thread_local OpCollector* t_collector = nullptr;
thread_local bool t_in_call = false;

bool tensor_on_device(const at::Tensor& t, const OpCollector& c) {
  if (!t.defined()) return false;
  const c10::DispatchKeySet ks = t.key_set();
  // Fake and functional tensors claim the device while torch.compile traces; nothing of theirs runs there.
  return ks.has_backend(c.backend) && !ks.has(c10::DispatchKey::Python) && !ks.has(c10::DispatchKey::Functionalize);
}

bool reaches_device(const c10::IValue& v, const OpCollector& c) {
  if (v.isTensor()) return tensor_on_device(v.toTensor(), c);
  if (v.isDevice()) return v.toDevice().type() == c.type;  // a factory call making a tensor there
  if (v.isList()) {
    for (const c10::IValue& item : v.toListRef())
      if (reaches_device(item, c)) return true;
  }
  return false;
}

std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction& fn) {
  OpCollector* c = t_collector;
  if (c == nullptr) return nullptr;
  bool reaches = false;
  for (const c10::IValue& v : fn.inputs())
    if ((reaches = reaches_device(v, *c))) break;
  if (!reaches) return nullptr;
  std::optional<c10::OperatorName> name = fn.operator_name();
  if (!name) return nullptr;
  std::size_t index = 0;
  while (index < c->seen.size() && !(c->seen[index].name == *name)) ++index;
  if (index == c->seen.size()) c->seen.push_back(SeenOp{std::move(*name), 0, false});
  ++c->seen[index].calls;
  c->seen[index].in_call = c->seen[index].in_call || t_in_call;
  c->active.emplace_back(index, std::uncaught_exceptions());
  return std::make_unique<DeviceOpContext>();
}

// RecordFunction ends its op from its destructor, also while an exception unwinds the dispatcher's frames: the first
// op left that way is the innermost one active when the error was thrown.
void on_op_end(const at::RecordFunction&, at::ObserverContext* ctx) {
  OpCollector* c = t_collector;
  if (c == nullptr || ctx == nullptr || c->active.empty()) return;
  const auto [index, uncaught_at_start] = c->active.back();
  c->active.pop_back();
  if (std::uncaught_exceptions() > uncaught_at_start) {
    if (!c->unwinding) c->raised = index;
    c->unwinding = true;
  } else {
    c->raised.reset();
    c->unwinding = false;
  }
}

std::string op_text(const c10::OperatorName& n) {
  return n.overload_name.empty() ? n.name : n.name + "." + n.overload_name;
}

c10::OperatorName operator_name_of(const std::string& op) {
  const auto dot = op.find('.', op.find("::"));
  if (dot == std::string::npos) return {op, ""};
  return {op.substr(0, dot), op.substr(dot + 1)};
}

}  // namespace

DeviceOpsRecorder::DeviceOpsRecorder(const at::Device& device, std::vector<DeviceOp>& out) : out_(out) {
  if (t_collector != nullptr) return;
  auto c = std::make_unique<OpCollector>();
  c->type = device.type();
  c->backend = c10::toBackendComponent(c10::computeDispatchKey(std::nullopt, std::nullopt, device));
  // Inputs are needed to tell the device's ops from the CPU's; outputs are not (a factory names its device).
  handle_ = at::addThreadLocalCallback(
      at::RecordFunctionCallback(&on_op_start, &on_op_end).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
  t_collector = c.release();  // owned by the destructor from here on
  active_ = true;
}

DeviceOpsRecorder::~DeviceOpsRecorder() {
  if (!active_) return;
  at::removeCallback(handle_);
  std::unique_ptr<OpCollector> c(t_collector);
  t_collector = nullptr;
  const c10::DispatchKey key = c10::computeDispatchKey(std::nullopt, std::nullopt, c10::Device(c->type));
  for (std::size_t i = 0; i < c->seen.size(); ++i) {
    SeenOp& s = c->seen[i];
    std::string op = op_text(s.name);
    const bool raised = c->raised == i;
    if (raised)
      for (DeviceOp& d : out_) d.raised = false;
    auto it = std::find_if(out_.begin(), out_.end(), [&](const DeviceOp& d) { return d.op == op; });
    if (it != out_.end()) {
      it->calls += s.calls;
      it->in_call = it->in_call || s.in_call;
      it->raised = it->raised || raised;
      continue;
    }
    // Kernels are registered when the device is set up, before any case: each op is looked up once per worker.
    static thread_local std::unordered_map<std::string, DeviceOpVia> known;
    auto k = known.find(op);
    if (k == known.end()) k = known.emplace(op, device_op_via(op, key)).first;
    out_.push_back(DeviceOp{std::move(op), k->second, s.calls, s.in_call, raised});
  }
}

std::string raised_device_op() {
  const OpCollector* c = t_collector;
  if (c == nullptr || !c->raised) return {};
  return op_text(c->seen[*c->raised].name);
}

OpCallScope::OpCallScope() : outer_(t_in_call) { t_in_call = true; }
OpCallScope::~OpCallScope() { t_in_call = outer_; }

DeviceOpVia device_op_via(const std::string& op, c10::DispatchKey key) {
  const std::optional<c10::OperatorHandle> h = c10::Dispatcher::singleton().findOp(operator_name_of(op));
  if (!h) return DeviceOpVia::Fallback;
  if (h->hasKernelForDispatchKey(key)) return DeviceOpVia::Kernel;
  for (c10::DispatchKey composite :
       {c10::DispatchKey::CompositeImplicitAutograd, c10::DispatchKey::CompositeExplicitAutograd,
        c10::DispatchKey::CompositeExplicitAutogradNonFunctional})
    if (h->hasKernelForDispatchKey(composite)) return DeviceOpVia::Composite;
  return DeviceOpVia::Fallback;
}

std::string device_ops_note(const std::string& resolved_op, const std::vector<DeviceOp>& ops) {
  const std::vector<std::string> resolved = split_list(resolved_op);
  auto on_own_kernel = [&](const std::string& r) {
    return std::any_of(ops.begin(), ops.end(),
                       [&](const DeviceOp& d) { return d.op == r && d.via == DeviceOpVia::Kernel; });
  };
  const bool own_kernels = !resolved.empty() && std::all_of(resolved.begin(), resolved.end(), on_own_kernel);
  if (own_kernels) return {};
  // A long decomposition stays readable: the first ops, then how many more (the record keeps them all).
  constexpr std::size_t kShown = 12;
  std::string list;
  std::size_t listed = 0, more = 0;
  for (const DeviceOp& d : ops) {
    if (!d.in_call || (is_plumbing_op(d.op) && std::find(resolved.begin(), resolved.end(), d.op) == resolved.end()))
      continue;
    if (listed == kShown) {
      ++more;
      continue;
    }
    list += (listed++ ? ", " : "") + d.op + " (" + device_op_via_name(d.via) + ")";
  }
  if (list.empty()) return {};
  if (more) list += ", and " + std::to_string(more) + " more";
  return "on the device: " + list;
}

void settle_device_pass(Result& r, const at::Device& device, const std::string& name) {
  if (r.stage != Stage::PASSED || device.is_cpu()) return;
  if (std::any_of(r.device_ops.begin(), r.device_ops.end(), [](const DeviceOp& d) { return d.in_call; })) return;
  r.stage = Stage::NO_DEVICE_OP;
  r.message = "passed without the device: no op of the call ran on " + name +
              (r.device_ops.empty() ? " (nothing reached it)" : " (only its inputs or outputs moved there)") +
              ", so the verdict says nothing about the device";
}

}  // namespace opcheck::exec
