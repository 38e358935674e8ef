#include "exec/engine.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include <ATen/Parallel.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/version.h>

#include "common/op_names.h"
#include "exec/compare.h"
#include "exec/cpu_features.h"
#include "exec/inputs.h"
#include "exec/python_device.h"

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

/// Runs `inv` once on `tensors`, catching what it raises.
RunOutcome run_once(const Invocation& inv, const std::vector<at::Tensor>& tensors, const RunContext& ctx) {
  RunOutcome out;
  try {
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
    if (want && want->isTensor()) {
      const auto target = want->toTensor().scalar_type();
      return t.scalar_type() == target ? t : t.to(target);
    }
    if (fallback && t.scalar_type() == compute) return t.to(*fallback);
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

/// The output of a run moved to the CPU, with what failed if it could not be.
bool outputs_to_host(RunOutcome& o, std::string& error) {
  try {
    o.output = to_host(o.output);
    for (auto& t : o.written) t = t.cpu();
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

c10::IValue to_host(const c10::IValue& v) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    return t.defined() && !t.device().is_cpu() ? t.cpu() : t;
  }
  if (v.isTensorList()) {
    std::vector<at::Tensor> out;
    for (const auto& t : v.toTensorVector()) out.push_back(t.defined() && !t.device().is_cpu() ? t.cpu() : t);
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
    const at::Tensor x = a.toTensor().cpu().contiguous(), y = b.toTensor().cpu().contiguous();
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
}

bool Engine::prepare_worker(int device_index, std::string* error) {
  // Thread pools start here, in the worker, never in a parent that is about to fork.
  if (opts_.intra_op_threads > 0) at::set_num_threads(opts_.intra_op_threads);
  if (wants_python_host(opts_)) {
    // The interpreter starts in each worker, never in the parent that forks them.
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
  return true;
}

Engine::Reference Engine::run_reference(const Case& c, const Invocation& inv, const std::vector<at::Tensor>& host) const {
  const std::set<std::size_t> written(inv.written_slots.begin(), inv.written_slots.end());
  auto attempt = [&](std::optional<at::ScalarType> compute, bool& changed) {
    changed = false;
    std::vector<at::Tensor> tensors(host.size());
    for (std::size_t s = 0; s < host.size(); ++s) {
      const at::Tensor& h = host[s];
      if (compute && upcasts_to(h.scalar_type(), *compute)) {
        tensors[s] = h.to(*compute);  // a fresh tensor: safe to mutate
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
    return run_once(inv, tensors, ctx);
  };

  Reference ref;
  std::optional<at::ScalarType> compute;
  switch (opts_.reference_dtype) {
    case ReferenceDtype::Float32: compute = at::kFloat; break;
    case ReferenceDtype::Float64: compute = at::kDouble; break;
    case ReferenceDtype::Same:
    case ReferenceDtype::Auto: break;
  }
  bool changed = false;
  ref.outcome = attempt(compute, changed);
  if (!compute && opts_.reference_dtype == ReferenceDtype::Auto && ref.outcome.error &&
      is_dtype_gap(*ref.outcome.error)) {
    // The CPU kernel lacks this dtype: compute in float32 and cast back; the case must not fail for that.
    bool up_changed = false;
    RunOutcome up = attempt(at::kFloat, up_changed);
    if (!up.error) {
      compute = at::kFloat;
      changed = up_changed;
      ref.outcome = std::move(up);
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
  // Without meta kernels: the output takes the low-precision dtype the inputs shared.
  std::optional<at::ScalarType> fallback;
  for (std::size_t s = 0; s < host.size(); ++s) {
    if (!upcasts_to(host[s].scalar_type(), *compute)) continue;
    if (!fallback) fallback = host[s].scalar_type();
    else if (*fallback != host[s].scalar_type()) fallback = at::promoteTypes(*fallback, host[s].scalar_type());
  }
  if (!fallback) {
    for (const auto& [k, v] : c.kwargs)
      if (v.kind == PyValue::Kind::DType && upcasts_to(to_scalar_type(v.dtype), *compute)) fallback = to_scalar_type(v.dtype);
  }
  ref.outcome.output = cast_back(ref.outcome.output, have_native ? &native : nullptr, *compute, fallback);
  for (std::size_t k = 0; k < ref.outcome.written.size(); ++k) {
    const auto want = host.at(inv.written_slots[k]).scalar_type();
    if (ref.outcome.written[k].scalar_type() != want) ref.outcome.written[k] = ref.outcome.written[k].to(want);
  }
  return ref;
}

Result Engine::run(const Case& c) {
  Result r;
  r.case_id = c.id;
  // --save-failures: the bundle is staged before anything runs, so a worker that dies on the case leaves it.
  CaseEvidence evidence;
  if (bundles_) bundles_->stage(c);
  try {
    run_case(c, r, bundles_ ? &evidence : nullptr);
  } catch (...) {
    // Every stage catches its own errors; reaching here is a bug in opcheck, reported rather than fatal.
    r.stage = Stage::CRASHED;
    r.message = "opcheck internal error: " + op_error_of(std::current_exception()).text();
  }
  r.outcome = stage_outcome(r.stage);
  if (bundles_) bundles_->finish(c, r, evidence);
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

void Engine::run_case(const Case& c, Result& r, CaseEvidence* ev) {
  // Resolve the op and bind the arguments: nothing is built for a case that cannot run.
  Resolution res = resolver_.resolve(c);
  if (!res.skip_reason.empty()) {
    r.stage = Stage::SKIPPED;
    r.message = res.skip_reason;
    return;
  }
  if (!res.invocation) {
    r.stage = Stage::INVALID_CASE;
    r.message = res.error;
    return;
  }
  const Invocation& inv = *res.invocation;
  const auto& slots = res.call.slots;
  r.resolved_op = inv.resolved_op;
  r.decomposed = inv.decomposed;
  if (ev) {
    ev->slots = slots;
    ev->written_slots = inv.written_slots;
  }

  std::int64_t bytes = 0;
  for (const auto& s : slots) bytes += s.spec->storage_bytes();
  if (opts_.max_case_bytes > 0 && bytes > opts_.max_case_bytes) {
    r.stage = Stage::SKIPPED;
    r.message = "the case's tensors need " + bytes_text(bytes) + ", more than --max-case-bytes (" +
                bytes_text(opts_.max_case_bytes) + ")";
    return;
  }

  // Host inputs.
  auto t0 = Clock::now();
  std::vector<at::Tensor> host(slots.size());
  std::optional<OwnWork> own_inputs(clock_);
  for (std::size_t i = 0; i < slots.size(); ++i) {
    try {
      host[i] = build_tensor(*slots[i].spec, input_seed(c.seed, slots[i].input, slots[i].element));
    } catch (...) {
      r.stage = Stage::FAILED_INPUT;
      r.message = slot_name(c, slots[i]) + ": " + op_error_of(std::current_exception()).message;
      return;
    }
  }
  try {
    for (const auto& t : host) r.input_digests.push_back(tensor_digest(t));
  } catch (...) {
    r.stage = Stage::FAILED_INPUT;
    r.message = "digest of the inputs failed: " + op_error_of(std::current_exception()).message;
    return;
  }
  r.materialize_ms = ms_since(t0);
  own_inputs.reset();
  if (ev) ev->inputs = host;  // shares the tensors: nothing below writes the host inputs

  // Reference on the CPU.
  t0 = Clock::now();
  Reference ref = run_reference(c, inv, host);
  r.reference_ms = ms_since(t0);
  r.reference_upcast = ref.upcast;
  if (ev) ev->reference = ref.outcome;
  if (c.expects_error) {
    std::string why;
    if (!ref.outcome.error) {
      r.stage = Stage::FAILED_REFERENCE;
      r.message = "expected " + describe_expected(*c.expects_error) + ", but the CPU reference did not raise. Fix: "
                  "correct or remove expects_error";
      return;
    }
    if (!error_matches(*ref.outcome.error, *c.expects_error, why)) {
      r.stage = Stage::FAILED_REFERENCE;
      r.message = "expected " + describe_expected(*c.expects_error) + ", but the CPU reference " + why;
      return;
    }
  } else if (ref.outcome.error) {
    r.stage = Stage::FAILED_REFERENCE;
    r.message = "the CPU reference raised " + ref.outcome.error->text();
    return;
  }

  // Device runs: inputs moved once; tensors the op writes are fresh copies for every repeat.
  const at::Device dev = device_.device;
  const bool on_cpu = dev.is_cpu();
  // Compiled runs: the first compiles, the second reuses the compiled code; their difference is the compile time.
  PythonHost* compiler = opts_.compile_backend.empty() ? nullptr : python_host_if_started();
  if (!opts_.compile_backend.empty() && compiler == nullptr) {
    r.stage = Stage::FAILED_COMPILE;
    r.message = "--compile-backend " + opts_.compile_backend + ": this process has no Python host to compile with";
    return;
  }
  struct EndCase {
    PythonHost* host;
    ~EndCase() {
      if (host) host->end_case();
    }
  } end_case{compiler};
  int repeats = opts_.repeat > 0 ? opts_.repeat : (on_cpu ? 1 : 2);
  if (compiler) repeats = std::max(repeats, 2);
  std::vector<double> rep_ms;
  const std::set<std::size_t> written(inv.written_slots.begin(), inv.written_slots.end());
  auto slot_device = [&](std::size_t s) {
    return slots[s].spec->placement == Placement::Host ? at::Device(at::kCPU) : dev;
  };
  t0 = Clock::now();
  std::vector<at::Tensor> moved(host.size());
  try {
    for (std::size_t s = 0; s < host.size(); ++s) {
      if (written.count(s)) continue;
      const at::Device d = slot_device(s);
      moved[s] = d.is_cpu() ? host[s] : copy_with_layout(host[s], d);  // on the CPU: shared, never copied
    }
  } catch (...) {
    r.stage = Stage::FAILED_TRANSFER;
    r.message = "moving inputs to " + dev.str() + " failed: " + op_error_of(std::current_exception()).text();
    r.device_ms = ms_since(t0);
    return;
  }
  RunContext dctx;
  dctx.device = dev;
  RunOutcome first;
  const bool values_defined = !returns_uninitialised(inv.resolved_op);
  const at::Device ref_output_device = ref.outcome.output.isTensor() && ref.outcome.output.toTensor().defined()
                                           ? ref.outcome.output.toTensor().device()
                                           : at::Device(at::kCPU);
  r.values_compared = values_defined;
  for (int rep = 0; rep < repeats; ++rep) {
    std::vector<at::Tensor> tensors = moved;
    try {
      for (auto s : written) tensors[s] = copy_with_layout(host[s], slot_device(s));
    } catch (...) {
      r.stage = Stage::FAILED_TRANSFER;
      r.message = "moving inputs to " + dev.str() + " failed: " + op_error_of(std::current_exception()).text();
      r.device_ms = ms_since(t0) - r.compile_ms;
      return;
    }
    const auto rep_t0 = Clock::now();
    RunOutcome out =
        compiler ? run_compiled(*compiler, canonical_op(c.op), res.call.args, inv, tensors, dev) : run_once(inv, tensors, dctx);
    rep_ms.push_back(ms_since(rep_t0));
    if (compiler) {
      r.compile_ms = rep_ms.size() >= 2 ? std::max(0.0, rep_ms[0] - rep_ms[1]) : rep_ms[0];
      r.device_ms = ms_since(t0) - r.compile_ms;
    }
    if (out.error && out.error->compile_failed) {
      r.stage = Stage::FAILED_COMPILE;
      r.message = "torch.compile(backend=\"" + opts_.compile_backend + "\") of " + c.op + " failed: " +
                  out.error->message;
      return;
    }
    // An uninitialised output must still live where the call put it: on the device under test when it was given a
    // tensor there (new_empty, empty_like), else where a factory call makes it.
    if (!values_defined && !out.error && out.output.isTensor() && out.output.toTensor().defined()) {
      const bool given_device_tensor = std::any_of(tensors.begin(), tensors.end(), [&](const at::Tensor& t) {
        return t.defined() && t.device().type() == dev.type();
      });
      const at::Device want = given_device_tensor ? dev : ref_output_device;
      if (out.output.toTensor().device().type() != want.type()) {
        r.device_ms = ms_since(t0) - r.compile_ms;
        r.stage = Stage::INCORRECT_RESULT;
        r.message = "output: device mismatch: expected a tensor on " + want.str() + ", got one on " +
                    out.output.toTensor().device().str() + " (the values of an uninitialised output are not compared)";
        return;
      }
    }
    if (c.expects_error) {
      r.device_ms = ms_since(t0) - r.compile_ms;
      std::string why;
      if (!out.error) {
        r.stage = Stage::INCORRECT_RESULT;
        r.message = "expected " + describe_expected(*c.expects_error) + " (the CPU reference raised " +
                    ref.outcome.error->text() + "), but the device returned a result";
      } else if (error_matches(*out.error, *c.expects_error, why)) {
        r.stage = Stage::PASSED;
        r.message = "raised " + out.error->text();
      } else {
        r.stage = is_not_supported(*out.error) ? Stage::NOT_SUPPORTED : Stage::FAILED_RUNTIME;
        r.message = "expected " + describe_expected(*c.expects_error) + ", but the device " + why;
      }
      return;
    }
    if (out.error) {
      r.device_ms = ms_since(t0) - r.compile_ms;
      r.stage = is_not_supported(*out.error) ? Stage::NOT_SUPPORTED : Stage::FAILED_RUNTIME;
      r.message = "the device raised " + out.error->text();
      return;
    }
    std::string transfer_error;
    if (!outputs_to_host(out, transfer_error)) {
      r.device_ms = ms_since(t0) - r.compile_ms;
      r.stage = Stage::FAILED_TRANSFER;
      r.message = "moving outputs from " + dev.str() + " failed: " + transfer_error;
      return;
    }
    if (ev) ev->device_runs.push_back(out);
    if (rep == 0 || !values_defined) {  // fresh memory differs from run to run: not nondeterminism
      if (rep == 0) first = std::move(out);
      continue;
    }
    std::string where;
    bool same = bitwise_equal(first.output, out.output, where);
    for (std::size_t k = 0; same && k < out.written.size(); ++k)
      same = bitwise_equal(first.written[k], out.written[k], where,
                           "mutated " + slot_name(c, slots[inv.written_slots[k]]));
    if (!same && !c.nondeterministic_ok) {
      r.device_ms = ms_since(t0) - r.compile_ms;
      r.stage = Stage::NONDETERMINISTIC;
      r.message = "device run " + std::to_string(rep + 1) + " differs bitwise from run 1: " + where +
                  ". Fix: mark the case `nondeterministic: true` if the op is nondeterministic by design";
      return;
    }
  }
  r.device_ms = ms_since(t0) - r.compile_ms;

  // Compare outputs, then every tensor the op mutated.
  t0 = Clock::now();
  const OwnWork own_compare(clock_);
  Tolerance tol = tolerance_of(c);
  tol.values = values_defined;
  std::vector<Comparison> comparisons;
  comparisons.push_back(compare_values(ref.outcome.output, first.output, tol, "output"));
  for (std::size_t k = 0; k < first.written.size(); ++k)
    comparisons.push_back(compare_values(ref.outcome.written[k], first.written[k], tol,
                                         "mutated argument (" + slot_name(c, slots[inv.written_slots[k]]) + ")"));
  r.compare_ms = ms_since(t0);
  const Comparison* figures = &comparisons.front();
  if (ref.outcome.output.isNone() && comparisons.size() > 1) figures = &comparisons[1];
  std::string failures;
  for (const auto& cmp : comparisons) {
    if (cmp.ok) continue;
    if (failures.empty()) figures = &cmp;
    failures += (failures.empty() ? "" : "\n\n") + cmp.message;
  }
  r.figures = figures->figures;
  if (!failures.empty()) {
    r.stage = Stage::INCORRECT_RESULT;
    r.message = failures;
    return;
  }
  r.stage = Stage::PASSED;
}

Result Engine::check_call(const Case& c) {
  Result r;
  r.case_id = c.id;
  try {
    // The same resolution run_case starts with, so validate says what a run would.
    Resolution res = resolver_.resolve(c);
    if (!res.skip_reason.empty()) {
      r.stage = Stage::SKIPPED;
      r.message = res.skip_reason;
    } else if (!res.invocation) {
      r.stage = Stage::INVALID_CASE;
      r.message = res.error;
    } else {
      r.stage = Stage::PASSED;
      r.resolved_op = res.invocation->resolved_op;
    }
  } catch (...) {
    r.stage = Stage::INVALID_CASE;
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
    return new Engine(options, std::move(setup));
  } catch (...) {
    if (error) *error = "setting up the exec layer failed: " + op_error_of(std::current_exception()).text();
    return nullptr;
  }
}
