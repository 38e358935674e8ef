#include "exec/engine.h"
#include "exec/startup_process.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <ATen/Parallel.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/version.h>

#include "common/op_names.h"
#include "exec/accumulation.h"
#include "exec/backend_freedoms.h"
#include "exec/compare.h"
#include "exec/cpu_features.h"
#include "exec/device_ops.h"
#include "exec/inputs.h"
#include "exec/module_case.h"
#include "exec/python_device.h"
#include "exec/reference_cache.h"
#include "plan/plan.h"

namespace opcheck::exec {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::string bytes_text(std::int64_t b) {
  char buf[64];
  if (b >= (std::int64_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1 << 30));
  else if (b >= (std::int64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1 << 20));
  else std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(b));
  return buf;
}


/// Whether a floating dtype is computed in `compute` in an upcast run (narrower, or same width but different).
bool upcasts_to(at::ScalarType t, at::ScalarType compute) {
  return at::isFloatingType(t) && t != compute && c10::elementSize(t) <= c10::elementSize(compute);
}

/// The dtype a tensor of dtype `t` is computed in when a run computes in `compute`: `compute` for narrower floating
/// dtypes, its complex counterpart for narrower complex ones; nullopt when `t` stays.
std::optional<at::ScalarType> widened(at::ScalarType t, at::ScalarType compute) {
  if (upcasts_to(t, compute)) return compute;
  if (!at::isComplexType(t)) return std::nullopt;
  const at::ScalarType wide = c10::toComplexType(compute);
  if (t == wide || c10::elementSize(t) > c10::elementSize(wide)) return std::nullopt;
  return wide;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

/// The floating and complex dtypes of a call's tensors, as a sentence names them: "float16 with float32".
std::string floating_dtypes_of(const std::vector<at::Tensor>& host) {
  std::vector<std::string> names;
  for (const auto& t : host) {
    if (!t.is_floating_point() && !t.is_complex()) continue;
    const std::string n = torch_dtype(t.scalar_type()).substr(6);  // "float16" of "torch.float16"
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? " with " : "") + names[i];
  return out.empty() ? "the call" : out;
}

bool value_mentions_dtype_below(const PyValue& v, at::ScalarType compute) {
  if (v.kind == PyValue::Kind::DType) return upcasts_to(to_scalar_type(v.dtype), compute);
  for (const auto& it : v.items)
    if (value_mentions_dtype_below(it, compute)) return true;
  return false;
}

std::string slot_name(const Case& c, const TensorSlot& s) {
  std::string out = "input " + std::to_string(s.input);
  if (c.inputs.at(s.input).kind == Input::Kind::TensorList) out += "[" + std::to_string(s.element) + "]";
  return out;
}

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

/// Runs `inv` once on `tensors`, catching what it raises.
RunOutcome run_once(const Invocation& inv, const std::vector<at::Tensor>& tensors, const RunContext& ctx) {
  RunOutcome out;
  try {
    const OpCallScope call;
    out.output = inv.run(tensors, ctx);
    for (auto s : inv.written_slots) out.written.push_back(tensors.at(s));
  } catch (...) {
    out.error = op_error_of(std::current_exception());
  }
  return out;
}

/// One compiled device run (--compile-backend): the op's Python callable through torch.compile, in the host.
RunOutcome run_compiled(PythonHost& host, const std::string& op, const CallArgs& args, const Invocation& inv,
                        const std::vector<at::Tensor>& tensors, const at::Device& device) {
  RunOutcome out;
  try {
    const OpCallScope call;
    out.output = host.call_compiled(op, args, tensors, device);
    for (auto s : inv.written_slots) out.written.push_back(tensors.at(s));
  } catch (...) {
    out.error = op_error_of(std::current_exception());
  }
  return out;
}

/// Casts floating leaves of an upcast reference output back to the dtypes the op gives natively (`want`, from a
/// meta-device run), or, without that, from the compute dtype back to `fallback`.
c10::IValue cast_back(const c10::IValue& v, const c10::IValue* want, at::ScalarType compute,
                      std::optional<at::ScalarType> fallback) {
  if (v.isTensor()) {
    at::Tensor t = v.toTensor();
    if (!t.defined()) return t;  // no result in this slot (convolution_backward's masked-out gradients)
    if (want && want->isTensor() && want->toTensor().defined()) {
      const auto target = want->toTensor().scalar_type();
      return t.scalar_type() == target ? t : t.to(target);
    }
    if (fallback && t.scalar_type() == compute) return t.to(*fallback);
    if (fallback && t.is_complex() && t.scalar_type() == c10::toComplexType(compute))
      return t.to(c10::toComplexType(*fallback));
    return t;
  }
  auto item_want = [&](std::size_t i, std::size_t n, const std::vector<c10::IValue>* w) -> const c10::IValue* {
    return w && w->size() == n ? &(*w)[i] : nullptr;
  };
  if (v.isTensorList()) {
    auto list = v.toTensorVector();
    std::vector<c10::IValue> w;
    if (want && want->isTensorList())
      for (const auto& t : want->toTensorVector()) w.emplace_back(t);
    std::vector<at::Tensor> out;
    for (std::size_t i = 0; i < list.size(); ++i)
      out.push_back(cast_back(list[i], item_want(i, list.size(), want && want->isTensorList() ? &w : nullptr), compute,
                              fallback).toTensor());
    return out;
  }
  if (v.isTuple()) {
    const auto& items = v.toTupleRef().elements();
    std::vector<c10::IValue> w;
    if (want && want->isTuple()) w.assign(want->toTupleRef().elements().begin(), want->toTupleRef().elements().end());
    std::vector<c10::IValue> out;
    for (std::size_t i = 0; i < items.size(); ++i)
      out.push_back(cast_back(items[i], item_want(i, items.size(), want && want->isTuple() ? &w : nullptr), compute,
                              fallback));
    return c10::ivalue::Tuple::create(std::move(out));
  }
  return v;
}

/// The first defined tensor in `v` (tensors, lists, tuples) that is not on a device of type `want`: its path
/// ("output[1]") in `where` and its device in `got`.
bool leaf_elsewhere(const c10::IValue& v, at::DeviceType want, const std::string& path, std::string& where,
                    at::Device& got) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (!t.defined() || t.device().type() == want) return false;
    where = path;
    got = t.device();
    return true;
  }
  if (!v.isTuple() && !v.isList()) return false;
  const std::vector<c10::IValue> items = v.isTuple() ? v.toTupleRef().elements().vec() : v.toListRef().vec();
  for (std::size_t i = 0; i < items.size(); ++i)
    if (leaf_elsewhere(items[i], want, path + "[" + std::to_string(i) + "]", where, got)) return true;
  return false;
}

/// The dispatch key a device's kernels are registered under, with the backend's name where the key does not say
/// it: "CPU", "PrivateUse1 (pyloop)".
std::string dispatch_key_text(const at::Device& device, const std::string& name) {
  std::string key = c10::toString(c10::computeDispatchKey(std::nullopt, at::kStrided, device));
  std::string lower = key;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
  if (!name.empty() && name != lower) key += " (" + name + ")";
  return key;
}

/// The output of a run moved to the CPU, with what failed if it could not be.
bool outputs_to_host(RunOutcome& o, std::string& error) {
  try {
    o.output = to_host(o.output);
    for (auto& t : o.written) t = host_copy(t);
    return true;
  } catch (...) {
    error = op_error_of(std::current_exception()).text();
    return false;
  }
}

}  // namespace

at::Tensor copy_with_layout(const at::Tensor& t, const at::Device& device) {
  if (t.numel() == 0) return at::empty_strided(t.sizes(), t.strides(), t.options().device(device));
  if (t.is_contiguous() && t.storage_offset() == 0) {
    at::Tensor out = at::empty(t.sizes(), t.options().device(device));
    out.copy_(t);
    return out;
  }
  std::int64_t extent = t.storage_offset() + 1;
  for (std::int64_t d = 0; d < t.dim(); ++d) extent += (t.size(d) - 1) * t.stride(d);
  const at::Tensor span = t.as_strided({extent}, {1}, 0);
  at::Tensor base = at::empty({extent}, t.options().device(device));
  base.copy_(span);
  return base.as_strided(t.sizes(), t.strides(), t.storage_offset());
}

at::Tensor host_copy(const at::Tensor& t) {
  if (!t.defined() || t.device().is_cpu()) return t;
  if (t.layout() != at::kStrided || t.is_non_overlapping_and_dense() || t.is_conj() || t.is_neg()) return t.cpu();
  return copy_with_layout(t, at::kCPU);
}

c10::IValue to_host(const c10::IValue& v) {
  if (v.isTensor()) return host_copy(v.toTensor());
  if (v.isTensorList()) {
    std::vector<at::Tensor> out;
    for (const auto& t : v.toTensorVector()) out.push_back(host_copy(t));
    return out;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> out;
    for (const auto& it : v.toTupleRef().elements()) out.push_back(to_host(it));
    return c10::ivalue::Tuple::create(std::move(out));
  }
  if (v.isList()) {
    c10::impl::GenericList out(v.toList().elementType());
    for (const auto& it : v.toListRef()) out.push_back(to_host(it));
    return out;
  }
  return v;
}

bool bitwise_equal(const c10::IValue& a, const c10::IValue& b, std::string& where, const std::string& path) {
  if (a.isTensor() && b.isTensor()) {
    if (!a.toTensor().defined() || !b.toTensor().defined()) {
      if (a.toTensor().defined() == b.toTensor().defined()) return true;
      where = path + ": an undefined tensor in one run, a defined one in another";
      return false;
    }
    at::Tensor x = a.toTensor().cpu(), y = b.toTensor().cpu();
    if (x.layout() != y.layout()) {
      where = path + ": layout differs between runs";
      return false;
    }
    // A sparse output: its values (how it stores them may vary run to run).
    x = dense_values(x).contiguous();
    y = dense_values(y).contiguous();
    if (x.scalar_type() != y.scalar_type() || x.sizes() != y.sizes()) {
      where = path + ": dtype or shape differs between runs";
      return false;
    }
    const auto n = static_cast<std::size_t>(x.numel()) * x.element_size();
    if (n && std::memcmp(x.data_ptr(), y.data_ptr(), n) != 0) {
      const std::int64_t differing = x.reshape({-1}).view(at::kByte).ne(y.reshape({-1}).view(at::kByte)).sum().item<std::int64_t>();
      where = path + ": " + std::to_string(differing) + " of " + std::to_string(n) + " bytes differ";
      return false;
    }
    return true;
  }
  if (a.isTensorList() && b.isTensorList()) {
    const auto x = a.toTensorVector(), y = b.toTensorVector();
    if (x.size() != y.size()) {
      where = path + ": list length differs between runs";
      return false;
    }
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!bitwise_equal(x[i], y[i], where, path + "[" + std::to_string(i) + "]")) return false;
    return true;
  }
  if (a.isTuple() && b.isTuple()) {
    const auto& x = a.toTupleRef().elements();
    const auto& y = b.toTupleRef().elements();
    if (x.size() != y.size()) {
      where = path + ": tuple length differs between runs";
      return false;
    }
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!bitwise_equal(x[i], y[i], where, path + "[" + std::to_string(i) + "]")) return false;
    return true;
  }
  if (a.isDouble() && b.isDouble()) {
    const double x = a.toDouble(), y = b.toDouble();
    if (std::memcmp(&x, &y, sizeof x) == 0) return true;
    where = path + ": " + std::to_string(x) + " vs " + std::to_string(y);
    return false;
  }
  if (a.tagKind() != b.tagKind()) {
    where = path + ": a " + a.tagKind() + " in one run, a " + b.tagKind() + " in another";
    return false;
  }
  if (a.isInt() || a.isBool() || a.isNone() || a.isString()) {
    if (a == b) return true;
    where = path + ": values differ between runs";
    return false;
  }
  return true;
}

Engine::Engine(const ExecOptions& opts, DeviceSetup device) : opts_(opts), device_(std::move(device)) {
  info_.torch_version = TORCH_VERSION;
  info_.device = device_.device.str();
  info_.device_name = device_.name;
  info_.device_lib = device_.lib;
  info_.device_lib_sha256 = device_.lib_sha256;
  info_.log_line = device_.log_line;
  info_.enabled_ops = device_.enabled_ops;
  info_.torch_path = OPCHECK_TORCH_PREFIX;
  info_.python_modules = device_.python_modules;
  info_.compile_backend = opts_.compile_backend;
  if (!device_.python_device.empty()) info_.device = device_.python_device;
  if (!opts_.save_failures_dir.empty())
    bundles_ = std::make_unique<FailureBundles>(opts_.save_failures_dir, opts_, info_);
  if (!opts_.reference_cache_dir.empty())
    reference_cache_ = std::make_unique<ReferenceCache>(opts_.reference_cache_dir, opts_.reference_cache_max_bytes,
                                                        opts_.reference_cache_max_entry_bytes);
}

bool Engine::starts_workers() const {
  // An installed backend has no --device-import.
  return startup_process_running() && (wants_python_host(opts_) || !device_.python_device.empty());
}

int Engine::start_worker(WorkerEntry entry, const WorkerChannels& channels, std::string* error) {
  std::string why;
  const int pid = start_worker_from_startup(entry, channels, why);
  if (pid < 0 && error != nullptr) *error = why;
  return pid;
}

bool Engine::prepare_worker(int device_index, std::string* error) {
  // Thread pools start here, in the worker, never in a parent that is about to fork.
  if (opts_.intra_op_threads > 0) at::set_num_threads(opts_.intra_op_threads);
  if (wants_python_host(opts_) || !device_.python_device.empty()) {
    // A worker from the start-up process has the interpreter already; one forked by the pool (--no-isolation runs
    // in the pool's own process) starts its own.
    PythonHostFacts facts;
    std::string why;
    if (python_host(python_host_config(opts_), facts, why) == nullptr) {
      if (error) *error = why;
      return false;
    }
  }
  std::string why;
  if (!use_device_index(device_, device_index, why)) {
    if (error) *error = why;
    return false;
  }
  if (device_index >= 0) info_.device = device_.device.str();
  if (reference_cache_) libtorch_build_digest();  // part of every cache key: read once, before the first case
  return true;
}

RunOutcome Engine::compute_in(const Case& c, const Invocation& inv, const std::vector<at::Tensor>& host,
                              std::optional<at::ScalarType> compute, bool& changed,
                              std::optional<c10::DispatchKey> kernel_of) const {
  const std::set<std::size_t> written(inv.written_slots.begin(), inv.written_slots.end());
  changed = false;
  std::vector<at::Tensor> tensors(host.size());
  for (std::size_t s = 0; s < host.size(); ++s) {
    const at::Tensor& h = host[s];
    const std::optional<at::ScalarType> to = compute ? widened(h.scalar_type(), *compute) : std::nullopt;
    if (to) {
      tensors[s] = h.to(*to);  // a fresh tensor: safe to mutate
      changed = true;
    } else {
      tensors[s] = written.count(s) ? copy_with_layout(h, at::kCPU) : h;
    }
  }
  if (compute) {
    for (const auto& in : c.inputs)
      if (in.kind == Input::Kind::Value && value_mentions_dtype_below(in.value, *compute)) changed = true;
    for (const auto& [k, v] : c.kwargs)
      if (value_mentions_dtype_below(v, *compute)) changed = true;
  }
  RunContext ctx;
  ctx.compute_dtype = compute;
  ctx.kernel_of = kernel_of;
  return run_once(inv, tensors, ctx);
}

Engine::Reference Engine::run_reference(const Case& c, const Invocation& inv, const std::vector<at::Tensor>& host) const {
  Reference ref;
  std::optional<at::ScalarType> compute;
  switch (opts_.reference_dtype) {
    case ReferenceDtype::Float32: compute = at::kFloat; ref.made = "float32 (--reference-dtype float32)"; break;
    case ReferenceDtype::Float64: compute = at::kDouble; ref.made = "float64 (--reference-dtype float64)"; break;
    case ReferenceDtype::Same:
    case ReferenceDtype::Auto: break;
  }
  bool changed = false;
  ref.outcome = compute_in(c, inv, host, compute, changed);
  if (!compute && opts_.reference_dtype == ReferenceDtype::Auto && ref.outcome.error &&
      is_dtype_gap(*ref.outcome.error)) {
    // The CPU kernel lacks this dtype: compute in float32 and cast back; the case must not fail for that.
    bool up_changed = false;
    RunOutcome up = compute_in(c, inv, host, at::kFloat, up_changed);
    if (!up.error) {
      compute = at::kFloat;
      changed = up_changed;
      ref.outcome = std::move(up);
      ref.made = "float32 (the CPU lacks a kernel for the call's dtype)";
    }
  }
  if (!compute && opts_.reference_dtype != ReferenceDtype::Same && ref.outcome.error && !c.expects_error) {
    // The CPU refuses the call's precision (mixed dtypes, a conversion or a dtype its kernel lacks) where a device
    // runs it: the reference is the call in float64, cast to the dtypes the call implies.
    bool wide_changed = false;
    RunOutcome wide = compute_in(c, inv, host, at::kDouble, wide_changed);
    if (!wide.error && wide_changed) {
      ref.refused = first_line(ref.outcome.error->text());
      ref.made = "float64 (the CPU refused " + floating_dtypes_of(host) + ": " + ref.refused + ")";
      ref.golden = wide;
      compute = at::kDouble;
      changed = true;
      ref.outcome = std::move(wide);
    }
  }
  if (!compute || !changed || ref.outcome.error) return ref;

  ref.upcast = true;
  // The dtypes the op gives natively: from a run on the meta device (shapes and dtypes only, no data).
  c10::IValue native;
  bool have_native = false;
  try {
    std::vector<at::Tensor> meta(host.size());
    for (std::size_t s = 0; s < host.size(); ++s)
      meta[s] = at::empty_strided(host[s].sizes(), host[s].strides(), host[s].options().device(at::kMeta));
    RunContext ctx;
    ctx.device = at::Device(at::kMeta);
    native = inv.run(meta, ctx);
    have_native = true;
  } catch (...) {
    have_native = false;
  }
  // Without meta kernels (many have theirs in Python only): the output takes the precision the call is in, the
  // narrowest floating dtype among its widened inputs and dtype arguments (float16 for a float16 input with float32
  // statistics, as a device gives it); two of one width (float16, bfloat16) promote.
  std::optional<at::ScalarType> fallback;
  auto narrowest = [&](at::ScalarType t) {
    if (!fallback || c10::elementSize(t) < c10::elementSize(*fallback)) fallback = t;
    else if (*fallback != t && c10::elementSize(t) == c10::elementSize(*fallback)) fallback = at::promoteTypes(*fallback, t);
  };
  for (const at::Tensor& h : host) {
    if (upcasts_to(h.scalar_type(), *compute)) narrowest(h.scalar_type());
    else if (widened(h.scalar_type(), *compute)) narrowest(c10::toRealValueType(h.scalar_type()));
  }
  for (const auto& in : c.inputs)
    if (in.kind == Input::Kind::Value && in.value.kind == PyValue::Kind::DType &&
        upcasts_to(to_scalar_type(in.value.dtype), *compute))
      narrowest(to_scalar_type(in.value.dtype));
  for (const auto& [k, v] : c.kwargs)
    if (v.kind == PyValue::Kind::DType && upcasts_to(to_scalar_type(v.dtype), *compute)) narrowest(to_scalar_type(v.dtype));
  ref.outcome.output = cast_back(ref.outcome.output, have_native ? &native : nullptr, *compute, fallback);
  for (std::size_t k = 0; k < ref.outcome.written.size(); ++k) {
    const auto want = host.at(inv.written_slots[k]).scalar_type();
    if (ref.outcome.written[k].scalar_type() != want) ref.outcome.written[k] = ref.outcome.written[k].to(want);
  }
  return ref;
}

RunOutcome Engine::run_golden(const Case& c, const Invocation& inv, const std::vector<at::Tensor>& host) const {
  bool changed = false;
  return compute_in(c, inv, host, at::kDouble, changed);
}

RunOutcome Engine::run_composite(const Case& c, const Invocation& inv, const std::vector<at::Tensor>& host,
                                 c10::DispatchKey key) const {
  bool changed = false;
  return compute_in(c, inv, host, std::nullopt, changed, key);
}

Result Engine::run(const Case& c) {
  Result r;
  r.case_id = c.id;
  // --save-failures: the bundle is staged before anything runs, so a worker that dies on the case leaves it.
  CaseEvidence evidence;
  // A module case leaves no bundle of its own: its traced op calls are op cases (docs/modules.md).
  FailureBundles* bundles = c.is_module() ? nullptr : bundles_.get();
  if (bundles) bundles->stage(c);
  try {
    run_case(c, r, bundles ? &evidence : nullptr);
  } catch (...) {
    if (is_allocation_failure(std::current_exception())) {
      // opcheck's own work (the host copy of an output, its comparison) needs more memory than there is: the case
      // is too large for this machine, which is no finding about the device.
      r.stage = Stage::INVALID_CASE;
      r.kind = VerdictKind::TooLargeForMachine;
      r.message = own_allocation_failure(c, r.phase, op_error_of(std::current_exception()).message);
    } else {
      // Every stage catches its own errors; reaching here is a bug in opcheck, reported rather than fatal.
      r.stage = Stage::CRASHED;
      r.message = "opcheck internal error: " + op_error_of(std::current_exception()).text();
    }
  }
  r.outcome = stage_outcome(r.stage);
  if (bundles) bundles->finish(c, r, evidence);
  return r;
}

namespace {

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
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
  }
  CaseClock* clock_;
};

}  // namespace

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

  std::optional<Verdict> steps() {
    if (auto v = resolve()) return v;
    if (auto v = check_size()) return v;
    auto t0 = Clock::now();
    {
      enter(CasePhase::Inputs);
      const OwnWork own(engine_.clock_);
      if (auto v = build_inputs()) return v;  // inputs that could not be built have no time
      r_.materialize_ms = ms_since(t0);
    }
    // The device runs first (on a device other than the CPU, for a case that expects no error): a call the device
    // cannot run at all is NOT_SUPPORTED without a reference. Any other end of the device runs still waits for the
    // reference, so a bad call (FAILED_REFERENCE) is told from a device bug as before.
    const bool device_first = !c_.expects_error && !dev_.is_cpu();
    if (!device_first) {
      enter(CasePhase::Reference);
      if (auto v = reference()) return v;
    }
    enter(CasePhase::Device);
    std::optional<Verdict> device = find_compiler();
    if (!device) {
      t0 = Clock::now();
      device = recording_device_ops(dev_, r_.device_ops, [&] { return run_on_device(); });
      r_.device_ms = ms_since(t0) - r_.compile_ms;  // however the runs ended
    }
    if (device_first) {
      if (device && device->stage == Stage::NOT_SUPPORTED && !needs_reference()) return device;
      enter(CasePhase::Reference);
      if (auto v = reference()) return v;
      if (device && raised_ && !ref_.refused.empty()) return refused_too(*raised_);
    }
    if (device) return device;
    t0 = Clock::now();
    enter(CasePhase::Compare);
    const OwnWork own(engine_.clock_);
    std::optional<Verdict> verdict = judge();
    r_.compare_ms = ms_since(t0) - r_.golden_ms;  // the float64 result has its own figure
    return verdict;
  }

 private:
  // The record says where the case ended, and so does the shared clock, for a worker that dies on the way.
  void enter(CasePhase phase) {
    r_.phase = phase;
    if (engine_.clock_) engine_.clock_->phase.store(static_cast<int>(phase), std::memory_order_release);
  }

  // Resolves the op and binds the arguments: nothing is built for a case that cannot run.
  std::optional<Verdict> resolve() {
    res_ = engine_.resolver_.resolve(c_);
    if (!res_.skip_reason.empty()) return Verdict{Stage::SKIPPED, res_.skip_reason};
    if (!res_.invocation) return Verdict{Stage::INVALID_CASE, res_.error, res_.kind};
    inv_ = res_.invocation.get();
    r_.resolved_op = inv_->resolved_op;
    r_.decomposed = inv_->decomposed;
    if (ev_) {
      ev_->slots = res_.call.slots;
      ev_->written_slots = inv_->written_slots;
    }
    return std::nullopt;
  }

  std::optional<Verdict> check_size() const {
    std::int64_t bytes = 0;
    for (const auto& s : slots()) bytes += s.spec->storage_bytes();
    if (opts_.max_case_bytes <= 0 || bytes <= opts_.max_case_bytes) return std::nullopt;
    return Verdict{Stage::SKIPPED, "the case's tensors need " + bytes_text(bytes) + ", more than --max-case-bytes (" +
                                       bytes_text(opts_.max_case_bytes) + ")"};
  }

  std::optional<Verdict> build_inputs() {
    const auto& s = slots();
    host_.resize(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
      try {
        host_[i] = build_tensor(*s[i].spec, input_seed(c_.seed, s[i].input, s[i].element));
      } catch (...) {
        return Verdict{Stage::FAILED_INPUT, slot_name(c_, s[i]) + ": " + op_error_of(std::current_exception()).message};
      }
    }
    try {
      for (const auto& t : host_) r_.input_digests.push_back(tensor_digest(t));
    } catch (...) {
      return Verdict{Stage::FAILED_INPUT,
                     "digest of the inputs failed: " + op_error_of(std::current_exception()).message};
    }
    if (ev_) ev_->inputs = host_;  // shares the tensors: nothing below writes the host inputs
    return std::nullopt;
  }

  // The CPU reference: read from --reference-cache when its entry is there and passes its check, else computed (and
  // kept, when the case's reference may be). Cache I/O is opcheck's own work and has its own figure.
  std::optional<Verdict> reference() {
    const ReferenceCache* cache = engine_.reference_cache_.get();
    std::string key;
    if (cache && read_cached_reference(*cache, key)) return check_reference();
    const auto t0 = Clock::now();
    ref_ = engine_.run_reference(c_, *inv_, host_);
    r_.reference_ms = ms_since(t0);
    std::optional<Verdict> verdict = check_reference();
    if (cache) keep_reference(*cache, key, verdict.has_value());
    return verdict;
  }

  // True with ref_ set when the cache holds the case's reference; else `key` is where to keep it ("" = never kept).
  bool read_cached_reference(const ReferenceCache& cache, std::string& key) {
    const OwnWork own(engine_.clock_);
    const auto t0 = Clock::now();
    r_.reference_source = "computed";
    r_.reference_cache_note = not_cacheable_reason(c_, inv_->resolved_op);
    if (!r_.reference_cache_note.empty()) {
      r_.reference_source = "not_cacheable";
      return false;
    }
    try {
      key = reference_key(dedupe_key(c_), inv_->resolved_op, r_.input_digests, opts_.reference_dtype);
    } catch (...) {  // a file input that changed or went away since the inputs were built: computed, never kept
      r_.reference_source = "not_cacheable";
      r_.reference_cache_note = "its key could not be made: " + op_error_of(std::current_exception()).message;
      return false;
    }
    CacheRead read = cache.read(key);
    r_.reference_cache_ms = ms_since(t0);
    if (read.status == CacheRead::Status::Rejected) {
      r_.reference_source = "recomputed";
      r_.reference_cache_warning = read.problem;
    }
    if (read.status != CacheRead::Status::Hit) return false;
    r_.reference_source = "cache";
    ref_.outcome.output = std::move(read.reference.output);
    ref_.outcome.written = std::move(read.reference.written);
    ref_.upcast = read.reference.upcast;
    // A reference the CPU refused in the call's dtypes is never kept: a cached one was made as run_reference says.
    if (opts_.reference_dtype == ReferenceDtype::Float32) ref_.made = "float32 (--reference-dtype float32)";
    else if (opts_.reference_dtype == ReferenceDtype::Float64) ref_.made = "float64 (--reference-dtype float64)";
    else if (ref_.upcast) ref_.made = "float32 (the CPU lacks a kernel for the call's dtype)";
    return true;
  }

  // Keeps a computed reference under `key`; one that raised is never kept (nor is one whose case is not cacheable).
  void keep_reference(const ReferenceCache& cache, const std::string& key, bool failed) {
    if (key.empty()) return;
    if (failed || ref_.outcome.error) {
      r_.reference_source = "not_cacheable";
      r_.reference_cache_note = "the CPU reference failed: a failure is never kept";
      return;
    }
    if (!ref_.refused.empty()) {
      r_.reference_source = "not_cacheable";
      r_.reference_cache_note = "the CPU refused the call in its dtypes: its float64 reference is made every time";
      return;
    }
    const OwnWork own(engine_.clock_);
    const auto t0 = Clock::now();
    const CacheStore s = cache.store(key, CachedReference{ref_.outcome.output, ref_.outcome.written, ref_.upcast});
    r_.reference_cache_ms += ms_since(t0);
    r_.reference_stored = s.stored;
    r_.reference_evicted = s.evicted;
    if (s.stored) return;
    if (s.failed) r_.reference_cache_warning += (r_.reference_cache_warning.empty() ? "" : "; ") + s.not_stored;
    else r_.reference_cache_note = "not kept: " + s.not_stored;
  }

  std::optional<Verdict> check_reference() {
    r_.reference_upcast = ref_.upcast;
    r_.reference_made = ref_.made;
    if (ev_) ev_->reference = ref_.outcome;
    const std::optional<OpError>& error = ref_.outcome.error;
    if (!c_.expects_error) {
      if (!error) return std::nullopt;
      return Verdict{Stage::FAILED_REFERENCE, "the CPU reference raised " + error->text() + bounds_broken()};
    }
    const std::string expected = "expected " + describe_expected(*c_.expects_error);
    if (!error)
      return Verdict{Stage::FAILED_REFERENCE,
                     expected + ", but the CPU reference did not raise. Fix: correct or remove expects_error"};
    std::string why;
    if (!error_matches(*error, *c_.expects_error, why))
      return Verdict{Stage::FAILED_REFERENCE, expected + ", but the CPU reference " + why};
    return std::nullopt;
  }

  // The inputs that break what the op accepts of them (pinned values: random ones were narrowed at load), so a
  // reference that raised on them says which argument and which bound.
  std::string bounds_broken() const {
    std::string out;
    for (const InputBound& b : input_bounds(c_)) {
      const TensorSpec* spec = &b.spec(c_);
      for (std::size_t s = 0; s < slots().size(); ++s) {
        if (slots()[s].spec != spec || s >= host_.size()) continue;
        try {
          if (std::string p = bound_problem(b, host_[s]); !p.empty()) out += "; " + p;
        } catch (const std::exception&) {
          // The explanation is a courtesy: the reference's own error stands without it.
        }
      }
    }
    if (out.empty()) return out;
    return out + ". Fix: give " + (out.find(" true values") != std::string::npos ? "values" : "indices") +
           " within the bound, or draw them at random (init: randint or rand) to have them narrowed to it";
  }

  // Compiled runs: the first compiles, the second reuses the compiled code; their difference is the compile time.
  std::optional<Verdict> find_compiler() {
    if (opts_.compile_backend.empty()) return std::nullopt;
    // Found once, before any case (setup_device): a compile that cannot generate code for the device is not tried.
    if (!engine_.device_.compile_unsupported.empty())
      return Verdict{Stage::NOT_SUPPORTED, engine_.device_.compile_unsupported};
    compiler_ = python_host_if_started();
    if (compiler_) return std::nullopt;
    return Verdict{Stage::FAILED_COMPILE,
                   "--compile-backend " + opts_.compile_backend + ": this process has no Python host to compile with"};
  }

  // Device runs: inputs moved once; tensors the op writes are fresh copies for every repeat.
  std::optional<Verdict> run_on_device() {
    int repeats = opts_.repeat > 0 ? opts_.repeat : (dev_.is_cpu() ? 1 : 2);
    if (compiler_) repeats = std::max(repeats, 2);
    written_.insert(inv_->written_slots.begin(), inv_->written_slots.end());
    moved_.resize(host_.size());
    try {
      for (std::size_t s = 0; s < host_.size(); ++s) {
        if (written_.count(s)) continue;
        const at::Device d = slot_device(s);
        moved_[s] = d.is_cpu() ? host_[s] : copy_with_layout(host_[s], d);  // on the CPU: shared, never copied
      }
    } catch (...) {
      return inputs_not_moved();
    }
    values_defined_ = !returns_uninitialised(inv_->resolved_op);
    r_.values_compared = values_defined_;
    for (int rep = 0; rep < repeats; ++rep)
      if (auto v = device_run()) return v;
    return std::nullopt;
  }

  // One device run, kept on the host for judge(); a run that raises, or puts its output elsewhere, ends the case.
  std::optional<Verdict> device_run() {
    std::vector<at::Tensor> tensors = moved_;
    try {
      for (auto s : written_) tensors[s] = copy_with_layout(host_[s], slot_device(s));
    } catch (...) {
      return inputs_not_moved();
    }
    const auto rep_t0 = Clock::now();
    RunOutcome out;
    if (compiler_) {
      out = run_compiled(*compiler_, canonical_op(c_.op), res_.call.args, *inv_, tensors, dev_);
    } else {
      RunContext ctx;
      ctx.device = dev_;
      out = run_once(*inv_, tensors, ctx);
    }
    rep_ms_.push_back(ms_since(rep_t0));
    if (compiler_) r_.compile_ms = rep_ms_.size() >= 2 ? std::max(0.0, rep_ms_[0] - rep_ms_[1]) : rep_ms_[0];
    if (out.error && out.error->compile_failed)
      return Verdict{Stage::FAILED_COMPILE, "torch.compile(backend=\"" + opts_.compile_backend + "\") of " + c_.op +
                                                " failed: " + out.error->message};
    if (auto v = check_output_device(out, tensors)) return v;
    if (c_.expects_error) return expected_error(out);
    if (out.error && !ref_.refused.empty()) return refused_too(*out.error);
    if (out.error) {
      raised_ = out.error;  // judged again once the reference is known (steps)
      return device_error(*out.error, "the device raised " + out.error->text());
    }
    std::string transfer_error;
    if (!outputs_to_host(out, transfer_error))
      return Verdict{Stage::FAILED_TRANSFER, "moving outputs from " + dev_.str() + " failed: " + transfer_error};
    if (ev_) ev_->device_runs.push_back(out);
    runs_.push_back(std::move(out));
    return std::nullopt;
  }

  Verdict refused_too(const OpError& error) const {
    return Verdict{Stage::NOT_SUPPORTED, "the device refuses the call as the CPU does (" + ref_.refused +
                                             "); its reference was computed in float64\n\nthe device raised " +
                                             error.text()};
  }

  // Whether a NOT_SUPPORTED device run still needs the reference: where the kernel missing is the CPU's (a device
  // that runs the CPU's kernels, as the loopback does, says so), the call may be one the CPU refuses too, which the
  // reference tells (FAILED_REFERENCE, or its float64 reference).
  bool needs_reference() const {
    return raised_ && raised_->message.find("from the 'CPU' backend") != std::string::npos;
  }

  // NOT_SUPPORTED leads with what a team acts on (the op, the dispatch key, the error's first line); the whole
  // error (a dispatcher account runs to kilobytes) follows a blank line, for --tb long and the record.
  Verdict device_error(const OpError& error, const std::string& text) const {
    if (!is_not_supported(error)) return Verdict{Stage::FAILED_RUNTIME, text};
    const std::string headline =
        not_supported_headline(error, inv_->resolved_op, raised_device_op(), dispatch_key_text(dev_, engine_.device_.name));
    return Verdict{Stage::NOT_SUPPORTED, headline + "\n\n" + text};
  }

  Verdict inputs_not_moved() const {
    return Verdict{Stage::FAILED_TRANSFER,
                   "moving inputs to " + dev_.str() + " failed: " + op_error_of(std::current_exception()).text()};
  }

  // Every tensor a device run returns must be where a correct run puts it (expected_output_device): a kernel that
  // hands back host memory would otherwise pass, its values compared as if they were the device's.
  std::optional<Verdict> check_output_device(const RunOutcome& out, const std::vector<at::Tensor>& tensors) const {
    if (out.error) return std::nullopt;
    const at::Device want = expected_output_device(tensors);
    std::string where;
    at::Device got(at::kCPU);
    if (!leaf_elsewhere(out.output, want.type(), "output", where, got)) return std::nullopt;
    return Verdict{Stage::INCORRECT_RESULT,
                   where + ": device mismatch: expected a tensor on " + want.str() +
                       (want.type() == dev_.type() ? " (the device under test)" : "") + ", got one on " + got.str() +
                       (values_defined_ ? "" : " (the values of an uninitialised output are not compared)")};
  }

  // Where a correct run puts its outputs: where a device argument says (`device='cuda'` is the device under test,
  // `'cpu'` the host; the device wins when both are named); else on the device under test when the call gave it a
  // tensor there, else on the host (a literal, or inputs all placed on the host), as the reference does.
  at::Device expected_output_device(const std::vector<at::Tensor>& tensors) const {
    RunContext ctx;
    ctx.device = dev_;
    bool names_device = false, names_host = false;
    const auto look = [&](const ArgRef& a) {
      if (a.kind != ArgRef::Kind::Value) return;
      if (const std::optional<at::Device> d = device_of(a.value, ctx)) (d->is_cpu() ? names_host : names_device) = true;
    };
    for (const ArgRef& a : res_.call.args.positional) look(a);
    for (const auto& kw : res_.call.args.keywords) look(kw.second);
    if (names_device) return dev_;
    if (names_host) return at::Device(at::kCPU);
    const bool given_device_tensor = std::any_of(tensors.begin(), tensors.end(), [&](const at::Tensor& t) {
      return t.defined() && t.device().type() == dev_.type();
    });
    return given_device_tensor ? dev_ : at::Device(at::kCPU);
  }

  Verdict expected_error(const RunOutcome& out) const {
    const std::string expected = "expected " + describe_expected(*c_.expects_error);
    if (!out.error)
      return Verdict{Stage::INCORRECT_RESULT, expected + " (the CPU reference raised " +
                                                  ref_.outcome.error->text() + "), but the device returned a result"};
    std::string why;
    if (error_matches(*out.error, *c_.expects_error, why)) return Verdict{Stage::PASSED, "raised " + out.error->text()};
    return device_error(*out.error, expected + ", but the device " + why);
  }

  // A wrong result may come from the transfer rather than the op: the call's inputs and the reference's outputs,
  // copied to the device and back, must come back with the host's bits; and where the call copied on the device
  // (a `.to(dtype)`, a mask made float), small probes converted there between the case's own dtypes (those of its
  // inputs and outputs), then with bool, int64 and float32, must match the host's conversion. Says how the first that
  // does not differs, naming only the case's own dtypes; "" when all do (or the check itself raised: a transfer that
  // raises is the op's own verdict's business).
  std::string transfer_changes_values() const {
    std::vector<at::Tensor> outputs;
    std::function<void(const c10::IValue&)> leaves = [&](const c10::IValue& v) {
      if (v.isTensor() && v.toTensor().defined()) outputs.push_back(v.toTensor());
      if (v.isTensorList())
        for (const at::Tensor& t : v.toTensorVector()) leaves(t);
      if (v.isTuple())
        for (const c10::IValue& e : v.toTupleRef().elements()) leaves(e);
      if (v.isList())
        for (const c10::IValue& e : v.toListRef()) leaves(e);
    };
    leaves(ref_.outcome.output);
    const bool copied_in_call = std::any_of(r_.device_ops.begin(), r_.device_ops.end(), [](const DeviceOp& d) {
      return d.in_call && (d.op == "aten::_copy_from" || d.op == "aten::_copy_from_and_resize");
    });
    auto name = [](at::ScalarType t) { return torch_dtype(t).substr(6); };
    try {
      const at::NoGradGuard no_grad;
      std::string where;
      std::vector<at::Tensor> all = host_;
      all.insert(all.end(), outputs.begin(), outputs.end());
      std::vector<at::ScalarType> dtypes;  // the case's own, inputs first
      for (const at::Tensor& t : all) {
        if (!t.defined() || !t.device().is_cpu()) continue;
        if (std::find(dtypes.begin(), dtypes.end(), t.scalar_type()) == dtypes.end()) dtypes.push_back(t.scalar_type());
        if (t.numel() > 0 && !bitwise_equal(t, t.to(dev_).cpu(), where, "the copy"))
          return name(t.scalar_type()) + " to " + dev_.str() + " and back: " + where;
      }
      if (!copied_in_call) return {};
      // Then the dtypes a call converts between inside it (a bool mask made float, an int64 index): probed after the
      // case's own pairs, and never named, since they are not the case's.
      const auto own_end = static_cast<std::ptrdiff_t>(dtypes.size());
      for (at::ScalarType t : {at::kBool, at::kLong, at::kFloat})
        if (std::find(dtypes.begin(), dtypes.end(), t) == dtypes.end()) dtypes.push_back(t);
      auto own = [&](at::ScalarType t) { return std::find(dtypes.begin(), dtypes.begin() + own_end, t) != dtypes.begin() + own_end; };
      for (const bool own_pairs : {true, false})
        for (at::ScalarType from : dtypes) {
          const at::Tensor probe = at::arange(4, at::TensorOptions().dtype(at::kLong)).remainder(from == at::kBool ? 2 : 4).to(from);
          for (at::ScalarType to : dtypes) {
            // A float to an integer is undefined out of range: only conversions to floating dtypes are held to bits.
            if (to == from || !(at::isFloatingType(to) || at::isComplexType(to)) || (own(from) && own(to)) != own_pairs)
              continue;
            if (!bitwise_equal(probe.to(to), probe.to(dev_).to(to).cpu(), where, "the copy"))
              return (own(from) ? name(from) : std::string("a dtype the call makes inside")) + " converted to " +
                     (own(to) ? name(to) : std::string("another dtype")) + " on " + dev_.str() + ": " + where;
          }
        }
    } catch (const std::exception&) {
      // A transfer that raises is not what this check looks for: the op's own verdict stands.
    }
    return {};
  }

  // Whether two runs have the same bits (output and mutated arguments); else `where` says where they differ. The
  // uninitialised tail of a growing resize_ holds what the device's memory held: no difference between runs.
  bool same_bits(const RunOutcome& a, const RunOutcome& b, std::string& where) {
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
  std::optional<Verdict> judge() {
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
  std::optional<Verdict> judge_run(std::size_t k) {
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
  std::vector<Comparison> compare_run(const RunOutcome& run, const RunOutcome* golden,
                                      const RunOutcome* reference = nullptr) {
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
  bool within_composite(const RunOutcome& run, const Comparison& failed) {
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
  bool golden() {
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
  bool bound_accumulation() {
    if (accumulation_tried_) return accumulation_.has_value();
    accumulation_tried_ = true;
    const AccumulationRule* rule = accumulation_rule(inv_->resolved_op);
    if (!rule) return false;
    const auto t0 = Clock::now();
    accumulation_in_ = rule->in;
    std::string why;
    const Float64Run run = [this](const std::vector<at::Tensor>& host) {
      RunOutcome o = engine_.run_golden(c_, *inv_, host);
      if (o.error) throw std::runtime_error(first_line(o.error->text()));
      return RunValues{o.output, o.written};
    };
    accumulation_ = accumulation_allowance(*rule, host_, RunValues{golden_->output, golden_->written}, run, why);
    r_.golden_ms += ms_since(t0);
    if (!accumulation_)
      note("the accumulation bound was not applied (" + why + "): the float64 judge decides as for any op");
    return accumulation_.has_value();
  }

  // The call's arguments by name, on the host inputs (for the backend freedoms); computed once.
  const NamedArgs& named_args() {
    if (!named_args_) {
      try {
        named_args_ = inv_->named_arguments(host_);
      } catch (...) {
        named_args_ = NamedArgs{};  // arguments the freedoms cannot read: none of them applies
      }
    }
    return *named_args_;
  }

  void note(const std::string& n) {
    if (std::find(r_.judge_notes.begin(), r_.judge_notes.end(), n) == r_.judge_notes.end()) r_.judge_notes.push_back(n);
  }

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

// The case's one stage, decided where it ends: every report (case line, metrics, JUnit, failure groups, shrink) reads
// it. A device error a transfer op raised (the dispatcher's innermost op when it was thrown) is FAILED_TRANSFER
// whether it moved the inputs, the outputs, or ran inside the call.
static void settle_stage(Result& r) {
  if (r.stage != Stage::FAILED_RUNTIME) return;
  for (const DeviceOp& d : r.device_ops)
    if (d.raised && is_transfer_op(d.op)) r.stage = Stage::FAILED_TRANSFER;
}

void Engine::run_case(const Case& c, Result& r, CaseEvidence* ev) {
  if (c.is_module()) {  // a module case: built and run by the Python host, judged leaf by leaf (exec/module_case.h)
    run_module_case(opts_, device_.device, device_.compile_unsupported, c, r);
    settle_stage(r);
    return;
  }
  CaseRun run(*this, c, r, ev);
  if (std::optional<Verdict> verdict = run.steps()) {
    r.stage = verdict->stage;
    r.kind = verdict->kind;
    r.message = std::move(verdict->message);
    // A decomposition or the fallback that ran instead of the device's kernel is said, not left to be guessed.
    const std::string note = device_ops_note(r.resolved_op, r.device_ops);
    if (stage_outcome(r.stage) == Outcome::Failed && !note.empty()) r.message += "\n" + note;
    settle_stage(r);
    return;
  }
  r.stage = Stage::PASSED;
  settle_device_pass(r, device_.device, device_.name);
}

Result Engine::check_call(const Case& c) {
  Result r;
  r.case_id = c.id;
  if (c.is_module()) {
    r.stage = Stage::SKIPPED;
    r.message = "a module case: its module is imported and built when it runs";
    r.outcome = stage_outcome(r.stage);
    return r;
  }
  try {
    // The same resolution run_case starts with, so validate says what a run would.
    Resolution res = resolver_.resolve(c);
    if (!res.skip_reason.empty()) {
      r.stage = Stage::SKIPPED;
      r.message = res.skip_reason;
    } else if (!res.invocation) {
      r.stage = Stage::INVALID_CASE;
      r.kind = res.kind;
      r.message = res.error;
    } else {
      r.stage = Stage::PASSED;
      r.resolved_op = res.invocation->resolved_op;
    }
  } catch (...) {
    r.stage = Stage::INVALID_CASE;
    r.kind = VerdictKind::InternalError;
    r.message = "opcheck internal error: " + op_error_of(std::current_exception()).text();
  }
  r.outcome = stage_outcome(r.stage);
  return r;
}

}  // namespace opcheck::exec

extern "C" opcheck::Executor* opcheck_create_executor(const opcheck::ExecOptions* opts, std::string* error) {
  using namespace opcheck::exec;
  prepare_cpu();
  const opcheck::ExecOptions options = opts ? *opts : opcheck::ExecOptions{};
  DeviceSetup setup;
  std::string why;
  try {
    if (!setup_device(options, setup, why)) {
      if (error) *error = why;
      return nullptr;
    }
    auto* engine = new Engine(options, std::move(setup));
    // The start-up process served the device probe; workers that host no Python need it no longer.
    if (!engine->starts_workers()) stop_startup_process();
    return engine;
  } catch (...) {
    if (error) *error = "setting up the exec layer failed: " + op_error_of(std::current_exception()).text();
    return nullptr;
  }
}
