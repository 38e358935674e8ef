// The CPU reference: the call run on the CPU in its own dtypes or wider ones (Engine::compute_in, run_reference,
// the float64 and composite runs the judge asks for), read from and kept in --reference-cache, and checked against
// what the case expects of it.

#include "exec/case_run.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "exec/inputs.h"
#include "exec/reference_cache.h"
#include "plan/plan.h"

namespace opcheck::exec {

namespace {

using Clock = std::chrono::steady_clock;

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

}  // namespace

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

// The CPU reference: read from --reference-cache when its entry is there and passes its check, else computed (and
// kept, when the case's reference may be). Cache I/O is opcheck's own work and has its own figure.
std::optional<Verdict> CaseRun::reference() {
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
bool CaseRun::read_cached_reference(const ReferenceCache& cache, std::string& key) {
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
void CaseRun::keep_reference(const ReferenceCache& cache, const std::string& key, bool failed) {
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

std::optional<Verdict> CaseRun::check_reference() {
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
std::string CaseRun::bounds_broken() const {
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

}  // namespace opcheck::exec
