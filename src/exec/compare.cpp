// Comparison of outputs. Tensors are compared on the CPU in float64 (complex: both parts), in chunks of flat
// elements so a multi-gigabyte output never needs more than a few chunk-sized float64 temporaries.
#include "exec/compare.h"
#include "exec/accumulation.h"
#include "exec/backend_freedoms.h"

#include "exec/op_error.h"
#include "judge/backend_freedoms_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>

namespace opcheck::exec {
namespace {

constexpr std::int64_t kChunk = std::int64_t{1} << 16;  // elements per chunk: float64 buffers stay in cache
constexpr std::size_t kMaxReportedLeaves = 5;

std::string num(double v) { return PyValue::real(v).repr(); }

std::string torch_size(c10::IntArrayRef s) {
  std::string out = "torch.Size([";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "])";
}

/// A flat (row-major) index as one index per dimension.
std::vector<std::int64_t> index_of(std::int64_t flat, c10::IntArrayRef sizes) {
  std::vector<std::int64_t> idx(sizes.size());
  for (std::size_t d = sizes.size(); d-- > 0;) {
    const std::int64_t s = std::max<std::int64_t>(sizes[d], 1);
    idx[d] = flat % s;
    flat /= s;
  }
  return idx;
}

/// A flat index as Python prints a tuple index: (), (5,), (0, 5).
std::string index_text(std::int64_t flat, c10::IntArrayRef sizes) {
  const std::vector<std::int64_t> idx = index_of(flat, sizes);
  std::string out = "(";
  for (std::size_t d = 0; d < idx.size(); ++d) out += (d ? ", " : "") + std::to_string(idx[d]);
  return out + (idx.size() == 1 ? ",)" : ")");
}

std::string percent(std::int64_t part, std::int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return buf;
}

/// NaN-aware maximum: a NaN wins, as torch.max does.
void take_max(double& into, double v) {
  if (std::isnan(into)) return;
  if (std::isnan(v) || v > into) into = v;
}

/// The greatest value of `v` and its flat position; a NaN wins (first one), as torch.max does.
struct Greatest {
  double value = 0;
  std::int64_t index = -1;
  bool offer(double v, std::int64_t at) {  // whether `v` is the greatest now
    if (index >= 0 && std::isnan(value)) return false;
    if (index >= 0 && !std::isnan(v) && v <= value) return false;
    value = v;
    index = at;
    return true;
  }
};

/// What comparing the values of one tensor leaf produced.
struct LeafStats {
  std::int64_t total = 0, mismatched = 0;
  double max_abs = 0, max_rel = 0;  // over every element; "equal" pairs (same inf, NaN with equal_nan) count as 0
  Greatest worst_abs, worst_rel;    // among mismatched elements only, like assert_close's message
  Greatest worst;                   // the greatest |a - e| over every element: where max_abs is (CompareFigures)
  bool identical = false;           // bit-identical: nothing else was computed
  // The float64 judge, when a float64 result was given:
  std::int64_t rescued = 0;            // elements outside the tolerance, within the float64 judge's bound
  std::int64_t reference_further = 0;  // of those, where the CPU reference is further from float64 than the device
  std::int64_t accumulation_rescued = 0;  // of those, the ones 3 times the reference's distance alone leaves out
  Greatest worst_golden;               // among the elements that fail both: the greatest |a - float64|
  double golden_at_worst = 0, reference_error = 0, bound = 0;  // at worst_golden: float64, |e - float64|, the bound
  std::optional<double> allowance_at_worst;  // at worst_golden: the accumulation bound, when the op has one
};

/// An integer tensor with the same bits: the view used by `exact`. Complex tensors become [..., 2] of their parts.
at::Tensor bits_of(at::Tensor t) {
  // A conjugate view (fft.ifft's output) has no real view of its own until its conjugation is applied.
  if (t.is_complex()) t = at::view_as_real(t.resolve_conj());
  switch (t.element_size()) {
    case 1: return t.view(at::kByte);
    case 2: return t.view(at::kShort);
    case 4: return t.view(at::kInt);
    default: return t.view(at::kLong);
  }
}

/// A tensor's values as a flat sequence of real parts: itself, or [re, im, re, im, ...] for complex tensors.
at::Tensor real_parts(const at::Tensor& flat) {
  return flat.is_complex() ? at::view_as_real(flat.resolve_conj()).reshape(-1) : flat;
}

/// Chunk-sized float64 buffers reused for every chunk: fresh multi-megabyte temporaries per op would cost a
/// page-faulting allocation each, which dominates the arithmetic. Ops write into these with out= / in-place forms.
struct Workspace {
  at::Tensor e, a, d, t, r;  // float64
  at::Tensor m;              // bool
  explicit Workspace(std::int64_t n) {  // n: float64 values per chunk
    e = at::empty({n}, at::kDouble);
    a = at::empty({n}, at::kDouble);
    d = at::empty({n}, at::kDouble);
    t = at::empty({n}, at::kDouble);
    r = at::empty({n}, at::kDouble);
    m = at::empty({n}, at::kBool);
  }
};

/// For complex tensors (`parts` == 2): reduces per-part values to per-element ones.
at::Tensor per_element_all(const at::Tensor& t, int parts) { return parts == 2 ? t.view({-1, 2}).all(1) : t; }
at::Tensor per_element_max(const at::Tensor& t, int parts) {
  return parts == 2 ? std::get<0>(t.view({-1, 2}).max(1)) : t;
}

/// A float64 (complex128) result to judge against, and the dtype of the output it stands behind.
struct Golden {
  at::Tensor flat;                   // contiguous, float64 or complex128, shaped as the output flattened
  at::ScalarType dtype = at::kFloat; // the output's dtype: its step (unit in the last place) widens the bound
  at::Tensor allowance;              // the accumulation bound per element (float64, flat), or undefined
};

/// One step (unit in the last place) of `dtype` at each |value| (float64): the spacing of its numbers there.
at::Tensor dtype_step(const at::Tensor& abs_value, at::ScalarType dtype) {
  int digits = 52, emin = -1022;  // bits after the binary point, least normal exponent
  switch (dtype) {
    case at::kHalf: case at::kComplexHalf: digits = 10; emin = -14; break;
    case at::kBFloat16: digits = 7; emin = -126; break;
    case at::kFloat: case at::kComplexFloat: digits = 23; emin = -126; break;
    case at::kFloat8_e4m3fn: case at::kFloat8_e4m3fnuz: digits = 3; emin = -6; break;
    case at::kFloat8_e5m2: case at::kFloat8_e5m2fnuz: digits = 2; emin = -14; break;
    default: break;
  }
  const auto [mantissa, exponent] = at::frexp(abs_value);  // |v| = mantissa * 2^exponent, mantissa in [0.5, 1)
  at::Tensor e = (exponent - 1).clamp_min(emin).to(at::kDouble);
  e.masked_fill_(abs_value.eq(0), emin);
  return at::exp2(e - digits);
}

/// The float64 judge on one chunk: `m` (close to the reference, per part) gains the parts within
/// atol + rtol*|g| + kReferenceErrorMultiple*|e - g| + one step of the dtype of |a - g|, or equal to g; where the op
/// accumulates (`allowance` defined), the larger of kReferenceErrorMultiple*|e - g| and the accumulation bound.
/// Counts what it rescued, and where the reference was the further, into `s`; `start`/`parts` place the chunk.
void judge_chunk(const at::Tensor& e, const at::Tensor& a, const at::Tensor& g, const at::Tensor& allowance,
                 at::Tensor& m, double rtol, double atol, at::ScalarType dtype, int parts, std::int64_t start,
                 LeafStats& s) {
  const at::Tensor dg = (a - g).abs_();
  at::Tensor eg = (e - g).abs_();
  eg.masked_fill_(e.isfinite().logical_not_(), 0.0);  // a reference that overflowed widens nothing
  const at::Tensor ag = g.abs();
  const at::Tensor own = eg * kReferenceErrorMultiple;
  const at::Tensor rest = ag * rtol + atol + dtype_step(ag, dtype);
  const at::Tensor bound = allowance.defined() ? at::maximum(own, allowance) + rest : own + rest;
  const at::Tensor within = dg.le(bound).logical_and_(g.isfinite()).logical_or_(a.eq(g));
  if (allowance.defined())  // the elements only the accumulation bound lets through
    s.accumulation_rescued +=
        within.logical_and(dg.le(own + rest).logical_not_()).logical_and_(m.logical_not()).count_nonzero().item<std::int64_t>();
  const at::Tensor before = per_element_all(m, parts).clone();  // m is about to change, and may be this very tensor
  m.logical_or_(within);
  const at::Tensor after = per_element_all(m, parts);
  const at::Tensor rescued = after.logical_and(before.logical_not());
  s.rescued += rescued.count_nonzero().item<std::int64_t>();
  const at::Tensor further = per_element_max(eg, parts).gt(per_element_max(dg, parts));
  s.reference_further += rescued.logical_and(further).count_nonzero().item<std::int64_t>();
  if (after.all().item<bool>()) return;
  auto [worst, where] = per_element_max(dg, parts).masked_fill(after, -1.0).max(0);
  if (!s.worst_golden.offer(worst.item<double>(), start + where.item<std::int64_t>())) return;
  const std::int64_t i = where.item<std::int64_t>() * parts;  // the first part of a complex element
  s.golden_at_worst = g[i].item<double>();
  s.reference_error = eg[i].item<double>();
  s.bound = bound[i].item<double>();
  if (allowance.defined()) s.allowance_at_worst = allowance[i].item<double>();
}


/// Element-wise allclose statistics over flat, contiguous, same-dtype CPU tensors, in float64.
/// close(a, e) = |a - e| - rtol*|e| <= atol, which is false for every non-finite difference (inf - inf*rtol and
/// NaN are not <= atol), plus "equal" pairs: a == e (same-sign infinities) and, with equal_nan, NaN against NaN.
LeafStats value_stats(const at::Tensor& e_flat, const at::Tensor& a_flat, double rtol, double atol, bool equal_nan,
                      bool bitwise, const Golden* golden = nullptr) {
  LeafStats s;
  s.total = e_flat.numel();
  if (s.total == 0) return s;
  // Identical bits (the usual case for views, copies and CPU-backed devices): every comparator passes with zero
  // differences, in one native pass. NaNs make this shortcut wrong only when NaN must not equal NaN.
  if (equal_nan && at::equal(bits_of(e_flat), bits_of(a_flat))) {
    s.identical = true;
    return s;
  }

  const int parts = e_flat.is_complex() ? 2 : 1;
  const at::Tensor e_parts = real_parts(e_flat), a_parts = real_parts(a_flat);
  const at::Tensor g_parts = golden ? real_parts(golden->flat) : at::Tensor();
  const bool integral = !e_flat.is_floating_point() && !e_flat.is_complex();
  const bool native_equality = bitwise || (integral && rtol == 0 && atol == 0);
  Workspace ws(std::min(kChunk, s.total) * parts);
  for (std::int64_t start = 0; start < s.total; start += kChunk) {
    const std::int64_t len = std::min(kChunk, s.total - start), n = len * parts;
    const at::Tensor ec = e_parts.narrow(0, start * parts, n), ac = a_parts.narrow(0, start * parts, n);
    at::Tensor e = ws.e.narrow(0, 0, n).copy_(ec), a = ws.a.narrow(0, 0, n).copy_(ac);
    at::Tensor d = ws.d.narrow(0, 0, n), r = ws.t.narrow(0, 0, n), m = ws.m.narrow(0, 0, n);
    at::Tensor scratch = ws.r.narrow(0, 0, n);
    at::sub_out(d, a, e).abs_();
    at::abs_out(r, e);  // |e|, then the relative difference
    if (bitwise) at::eq_out(m, bits_of(ac), bits_of(ec));
    else if (native_equality) at::eq_out(m, ac, ec);
    else at::le_out(m, at::sub_out(scratch, d, r, rtol), atol);
    at::div_out(r, d, r);
    if (std::isnan(d.max().item<double>())) {
      // NaN differences: NaN involved, or same-sign infinities. Equal pairs are close and count as 0 difference.
      at::Tensor equal = a.eq(e);
      if (equal_nan) equal.logical_or_(a.isnan().logical_and_(e.isnan()));
      if (!native_equality) m.logical_or_(equal);
      d.masked_fill_(equal, 0.0);
      r.masked_fill_(d.eq(0.0), 0.0);
    } else {
      r.nan_to_num_(0.0, std::numeric_limits<double>::infinity());  // 0/0 where both are 0
    }
    if (golden) {
      const at::Tensor allowance = golden->allowance.defined() ? golden->allowance.narrow(0, start, len) : at::Tensor();
      judge_chunk(e, a, g_parts.narrow(0, start * parts, n).to(at::kDouble), allowance, m, rtol, atol, golden->dtype,
                  parts, start, s);
    }
    const at::Tensor close = per_element_all(m, parts);
    const at::Tensor diff = per_element_max(d, parts), rel = per_element_max(r, parts);
    const std::int64_t bad = len - close.count_nonzero().item<std::int64_t>();
    s.mismatched += bad;
    auto [worst_value, worst_at] = diff.max(0);  // a NaN wins, as in take_max
    take_max(s.max_abs, worst_value.item<double>());
    s.worst.offer(worst_value.item<double>(), start + worst_at.item<std::int64_t>());
    take_max(s.max_rel, rel.max().item<double>());
    if (bad > 0) {
      // Like assert_close: the greatest differences among the mismatched elements only.
      auto [va, ia] = diff.masked_fill(close, 0.0).max(0);
      s.worst_abs.offer(va.item<double>(), start + ia.item<std::int64_t>());
      auto [vr, ir] = rel.masked_fill(close, 0.0).max(0);
      s.worst_rel.offer(vr.item<double>(), start + ir.item<std::int64_t>());
    }
  }
  return s;
}

/// What the Pearson correlation of one leaf produced.
struct PccResult {
  double pcc = 1.0;
  std::string problem;  // non-empty: the comparison fails for this reason, before or instead of the pcc threshold
};

/// Pearson correlation in float64 over the finite elements (complex: real and imaginary parts as separate samples).
/// Non-finite elements must agree exactly (same inf, NaN where NaN when equal_nan) and are left out. When fewer
/// than two finite samples remain, or either side is constant (zero variance), the correlation is undefined:
/// then pcc is 1 if every element is allclose and 0 otherwise (`allclose_ok`).
PccResult pearson(const at::Tensor& e_flat, const at::Tensor& a_flat, bool equal_nan, bool allclose_ok,
                  c10::IntArrayRef sizes) {
  PccResult r;
  const int parts = e_flat.is_complex() ? 2 : 1;
  const at::Tensor e_parts = real_parts(e_flat), a_parts = real_parts(a_flat);
  const std::int64_t total = e_parts.numel();
  Workspace ws(std::min(kChunk * parts, total));
  // Pass 1: sums and counts of the finite samples. A chunk whose sums are finite has only finite samples.
  double n = 0, sum_e = 0, sum_a = 0;
  bool any_nonfinite = false;
  for (std::int64_t start = 0; start < total; start += kChunk * parts) {
    const std::int64_t len = std::min(kChunk * parts, total - start);
    at::Tensor e = ws.e.narrow(0, 0, len).copy_(e_parts.narrow(0, start, len));
    at::Tensor a = ws.a.narrow(0, 0, len).copy_(a_parts.narrow(0, start, len));
    const double se = e.sum().item<double>(), sa = a.sum().item<double>();
    if (std::isfinite(se) && std::isfinite(sa)) {
      n += static_cast<double>(len);
      sum_e += se;
      sum_a += sa;
      continue;
    }
    any_nonfinite = true;
    const at::Tensor finite = e.isfinite().logical_and_(a.isfinite());
    at::Tensor agree = finite.logical_or(a.eq(e));
    if (equal_nan) agree.logical_or_(a.isnan().logical_and_(e.isnan()));
    agree = per_element_all(agree, parts);
    if (!agree.all().item<bool>()) {
      const std::int64_t at = start / parts + agree.logical_not().nonzero().flatten()[0].item<std::int64_t>();
      r.problem = "non-finite values differ at index " + index_text(at, sizes) + " (PCC needs NaN and inf in the same places)";
      r.pcc = 0.0;
      return r;
    }
    n += static_cast<double>(finite.count_nonzero().item<std::int64_t>());
    sum_e += e.masked_select(finite).sum().item<double>();
    sum_a += a.masked_select(finite).sum().item<double>();
  }
  if (n < 2) {
    r.pcc = allclose_ok ? 1.0 : 0.0;
    return r;
  }
  // Pass 2: centred sums of squares and products (two passes keep the float64 sums accurate).
  const double mean_e = sum_e / n, mean_a = sum_a / n;
  double see = 0, saa = 0, sea = 0;
  for (std::int64_t start = 0; start < total; start += kChunk * parts) {
    const std::int64_t len = std::min(kChunk * parts, total - start);
    at::Tensor e = ws.e.narrow(0, 0, len).copy_(e_parts.narrow(0, start, len));
    at::Tensor a = ws.a.narrow(0, 0, len).copy_(a_parts.narrow(0, start, len));
    if (any_nonfinite) {
      const at::Tensor finite = e.isfinite().logical_and_(a.isfinite());
      e = e.masked_select(finite);
      a = a.masked_select(finite);
    }
    e.sub_(mean_e);
    a.sub_(mean_a);
    see += e.dot(e).item<double>();
    saa += a.dot(a).item<double>();
    sea += e.dot(a).item<double>();
  }
  if (see == 0 || saa == 0) {
    r.pcc = allclose_ok ? 1.0 : 0.0;
    return r;
  }
  r.pcc = std::clamp(sea / std::sqrt(see * saa), -1.0, 1.0);
  return r;
}

/// Accumulates figures and failure messages over every leaf of an output.
struct Collector {
  Comparison result;
  std::vector<std::string> failures;
  std::int64_t rescued = 0, reference_further = 0;  // the float64 judge's, over every leaf
  std::int64_t accumulation_rescued = 0;            // of those, the accumulation bound's alone
  bool any_tensor_figures = false;
  Greatest worst;  // the worst element's difference so far, over every leaf (its index counts the offers)

  void fail(std::string msg) {
    result.ok = false;
    failures.push_back(std::move(msg));
  }
  void add_figures(const LeafStats& s) {
    auto& f = result.figures;
    f.total += s.total;
    f.mismatched += s.mismatched;
    double abs = f.max_abs_diff.value_or(0), rel = f.max_rel_diff.value_or(0);
    take_max(abs, s.max_abs);
    take_max(rel, s.max_rel);
    f.max_abs_diff = abs;
    f.max_rel_diff = rel;
  }
  /// The worst element follows max_abs_diff: the leaf with the greatest difference (a NaN first) places it.
  void offer_worst(double diff, std::vector<std::int64_t> index, double device, double reference,
                   std::optional<double> golden = std::nullopt) {
    if (!worst.offer(diff, worst.index + 1)) return;
    auto& f = result.figures;
    f.worst_index = std::move(index);
    f.worst_device = device;
    f.worst_reference = reference;
    f.worst_golden = golden;
  }
  void note(std::string n) {
    if (std::find(result.notes.begin(), result.notes.end(), n) == result.notes.end()) result.notes.push_back(std::move(n));
  }
  void add_pcc(double pcc) {
    auto& f = result.figures;
    f.pcc = f.pcc ? std::min(*f.pcc, pcc) : pcc;
  }
};

/// Case/manifest tolerances apply to floating and complex leaves only: manifests set them for their fp16/bf16
/// outputs, and an integer or bool output (indices, masks, counts) off by one is never "close".
void tolerances_for(const Tolerance& tol, at::ScalarType t, double& rtol, double& atol) {
  default_tolerance(t, rtol, atol);
  if (!at::isFloatingType(t) && !at::isComplexType(t)) return;
  if (tol.rtol) rtol = *tol.rtol;
  if (tol.atol) atol = *tol.atol;
}

std::string mismatch_message(const std::string& what, const char* headline, const LeafStats& s, c10::IntArrayRef sizes,
                             double rtol, double atol, bool show_allowed) {
  std::ostringstream os;
  os << what << ": " << headline << "\n\nMismatched elements: " << s.mismatched << " / " << s.total << " ("
     << percent(s.mismatched, s.total) << ")";
  if (s.worst_abs.index >= 0)
    os << "\nGreatest absolute difference: " << num(s.worst_abs.value) << " at index " << index_text(s.worst_abs.index, sizes)
       << (show_allowed ? " (up to " + num(atol) + " allowed)" : "");
  if (s.worst_rel.index >= 0)
    os << "\nGreatest relative difference: " << num(s.worst_rel.value) << " at index " << index_text(s.worst_rel.index, sizes)
       << (show_allowed ? " (up to " + num(rtol) + " allowed)" : "");
  return os.str();
}

/// What the float64 judge adds to a failure message: the worst element against float64, with both errors and the
/// bound they were held to.
std::string golden_lines(const LeafStats& s, c10::IntArrayRef sizes, const at::Tensor& ef, const at::Tensor& af,
                         at::ScalarType dtype) {
  if (s.worst_golden.index < 0) return {};
  const std::int64_t i = s.worst_golden.index;
  const double d = ef.is_complex() ? at::real(af[i]).item<double>() : af[i].item<double>();
  const double r = ef.is_complex() ? at::real(ef[i]).item<double>() : ef[i].item<double>();
  return "\nAgainst float64 at index " + index_text(i, sizes) + ": device " + num(d) + ", CPU reference " + num(r) +
         ", float64 " + num(s.golden_at_worst) + "; the device is " + num(s.worst_golden.value) +
         " from float64, the CPU reference " + num(s.reference_error) + " (up to " + num(s.bound) +
         " allowed: the tolerance at float64, " +
         (s.allowance_at_worst ? "the larger of " + num(kReferenceErrorMultiple) +
                                     " times the CPU reference's distance and the accumulation bound " +
                                     num(*s.allowance_at_worst) + ","
                               : num(kReferenceErrorMultiple) + " times the CPU reference's distance") +
         " and one " + c10::toString(dtype) + " step)";
}

/// The float64 result's leaf for an output leaf: usable when it is a float64/complex128 tensor of the same shape. The
/// accumulation bound's leaf `acc` (in units of the accumulation's unit roundoff) joins it for a real leaf.
std::optional<Golden> golden_leaf(const c10::IValue* g, const at::Tensor& e, const c10::IValue* acc, AccumulatesIn in) {
  if (!g || !g->isTensor() || !g->toTensor().defined()) return std::nullopt;
  const at::Tensor t = dense_values(g->toTensor());
  if (t.sizes() != e.sizes() || (t.scalar_type() != at::kDouble && t.scalar_type() != at::kComplexDouble)) return std::nullopt;
  if (t.is_complex() != e.is_complex()) return std::nullopt;
  Golden out{t.reshape(-1).contiguous(), e.scalar_type(), {}};
  if (acc && acc->isTensor() && acc->toTensor().defined() && acc->toTensor().sizes() == e.sizes() && !e.is_complex())
    out.allowance = acc->toTensor().reshape(-1).to(at::kDouble).contiguous() * accumulation_unit(in, e.scalar_type());
  return out;
}

// ---- The comparators' verdicts ------------------------------------------------------------------------------------
// A comparator's name, settings and flags (bitwise, float64 judge) are its kComparators entry (opcheck/comparators.h);
// here is its verdict on a tensor leaf, registered under the same id. The repro script's twin is the entry's
// python_verdict.

/// One tensor leaf as a verdict sees it, once its element statistics are in.
struct Leaf {
  const std::string& what;
  const LeafStats& s;
  const at::Tensor& ef;  // reference, flat
  const at::Tensor& af;  // device, flat
  c10::IntArrayRef sizes;
  at::ScalarType dtype;
  double rtol, atol;
  const Tolerance& tol;
  const Golden* golden;  // the float64 result, when the float64 judge was given one
};
using LeafVerdict = void (*)(const Leaf&, Collector&);

/// allclose and exact: every element within the tolerance (bit for bit under a bitwise comparator), or passed by the
/// float64 judge.
void tolerance_verdict(const Leaf& l, Collector& out) {
  if (l.s.mismatched == 0) return;
  if (comparator_spec(l.tol.kind).bitwise) {
    out.fail(mismatch_message(l.what, "Tensor-likes are not bitwise equal!", l.s, l.sizes, 0, 0, false));
    return;
  }
  out.fail(mismatch_message(l.what, "Tensor-likes are not close!", l.s, l.sizes, l.rtol, l.atol, true) +
           (l.golden ? golden_lines(l.s, l.sizes, l.ef, l.af, l.dtype) : std::string()));
}

/// pcc: the Pearson correlation at least pcc_min; mismatched elements are shown for information.
void pcc_verdict(const Leaf& l, Collector& out) {
  const PccResult p = l.s.identical ? PccResult{} : pearson(l.ef, l.af, l.tol.equal_nan, l.s.mismatched == 0, l.sizes);
  out.add_pcc(p.pcc);
  if (!p.problem.empty()) {
    out.fail(l.what + ": " + p.problem);
  } else if (p.pcc < l.tol.pcc_min) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "PCC %.6f is below the required %s", p.pcc, num(l.tol.pcc_min).c_str());
    out.fail(mismatch_message(l.what, buf, l.s, l.sizes, l.rtol, l.atol, /*show_allowed=*/false) +
             "\n(mismatched elements and differences are those of allclose, shown for information)");
  }
}

struct RegisteredVerdict {
  Comparator id;
  LeafVerdict verdict;
};
constexpr RegisteredVerdict kVerdicts[] = {
    {Comparator::AllClose, tolerance_verdict},
    {Comparator::Pcc, pcc_verdict},
    {Comparator::Exact, tolerance_verdict},
};

constexpr bool every_comparator_has_a_verdict() {
  for (const ComparatorSpec& c : kComparators) {
    int found = 0;
    for (const RegisteredVerdict& v : kVerdicts) found += v.id == c.id ? 1 : 0;
    if (found != 1) return false;
  }
  return true;
}
static_assert(every_comparator_has_a_verdict(),
              "every comparator of kComparators (opcheck/comparators.h) registers exactly one verdict in kVerdicts");

constexpr LeafVerdict verdict_of(Comparator c) {
  for (const RegisteredVerdict& v : kVerdicts)
    if (v.id == c) return v.verdict;
  return tolerance_verdict;
}

/// As Python prints a layout (torch.sparse_coo).
std::string layout_name(c10::Layout l) {
  switch (l) {
    case at::kStrided: return "torch.strided";
    case at::kSparse: return "torch.sparse_coo";
    case at::kSparseCsr: return "torch.sparse_csr";
    case at::kSparseCsc: return "torch.sparse_csc";
    case at::kSparseBsr: return "torch.sparse_bsr";
    case at::kSparseBsc: return "torch.sparse_bsc";
    case at::kMkldnn: return "torch._mkldnn";
    case at::kJagged: return "torch.jagged";
    default: return "layout " + std::to_string(static_cast<int>(l));
  }
}

void compare_tensors(const at::Tensor& expected_in, const at::Tensor& actual_in, const Tolerance& tol,
                     const std::string& what, Collector& out, const c10::IValue* golden, const c10::IValue* acc,
                     AccumulatesIn in) {
  at::Tensor e, a;
  try {
    e = expected_in.cpu();
    a = actual_in.cpu();
    // A sparse output (to_sparse's COO, a CSR result) is judged by its layout and then by its values as a dense
    // tensor: how the device stores the nonzeros (coalesced or not, in which order) is its freedom.
    if (e.layout() != a.layout()) {
      out.fail(what + ": layout mismatch: expected " + layout_name(e.layout()) + ", got " + layout_name(a.layout()));
      return;
    }
    e = dense_values(e);
    a = dense_values(a);
  } catch (const std::exception& ex) {
    std::string m = ex.what();
    out.fail(what + ": could not copy the tensor to the CPU for comparison: " + m.substr(0, m.find('\n')));
    return;
  }
  if (e.sizes() != a.sizes()) {
    out.fail(what + ": shape mismatch: expected " + torch_size(e.sizes()) + ", got " + torch_size(a.sizes()));
    return;
  }
  if (e.scalar_type() != a.scalar_type()) {
    const std::string freedom = widened_output(tol.resolved_op, what, e.scalar_type(), a.scalar_type());
    if (freedom.empty()) {
      out.fail(what + ": dtype mismatch: expected " + torch_dtype(e.scalar_type()) + ", got " +
               torch_dtype(a.scalar_type()));
      return;
    }
    out.note(freedom);
    a = a.to(e.scalar_type());  // its values, rounded as the CPU's dtype holds them
  }
  if (!tol.values) {
    // Strides matter only where a dim has more than one element (PyTorch's own stride checks skip size-1 dims).
    for (std::int64_t d = 0; d < e.dim(); ++d)
      if (e.size(d) > 1 && e.stride(d) != a.stride(d)) {
        auto tuple = [](c10::IntArrayRef v) {  // as Tensor.stride() prints
          std::string t = "(";
          for (std::size_t i = 0; i < v.size(); ++i) t += (i ? ", " : "") + std::to_string(v[i]);
          return t + (v.size() == 1 ? ",)" : ")");
        };
        out.fail(what + ": stride mismatch: expected " + tuple(e.strides()) + ", got " + tuple(a.strides()) +
                 " (the values of an uninitialised output are not compared)");
        return;
      }
    return;
  }
  double rtol = 0, atol = 0;
  tolerances_for(tol, e.scalar_type(), rtol, atol);
  const at::Tensor ef = e.reshape(-1).contiguous(), af = a.reshape(-1).contiguous();
  const ComparatorSpec& spec = comparator_spec(tol.kind);
  const bool judged = spec.float64_judge && (e.is_floating_point() || e.is_complex());
  const std::optional<Golden> g = judged ? golden_leaf(golden, e, acc, in) : std::nullopt;
  const LeafStats s = value_stats(ef, af, rtol, atol, tol.equal_nan, spec.bitwise, g ? &*g : nullptr);
  out.add_figures(s);
  out.rescued += s.rescued;
  out.reference_further += s.reference_further;
  out.accumulation_rescued += s.accumulation_rescued;
  if (judged && !g && s.mismatched > 0) out.result.wants_golden = true;
  if (s.worst.index >= 0 && !ef.is_complex()) {  // a complex element has two differences: no one value to show
    out.offer_worst(s.worst.value, index_of(s.worst.index, e.sizes()), af[s.worst.index].item<double>(),
                    ef[s.worst.index].item<double>(),
                    g ? std::optional<double>(g->flat[s.worst.index].item<double>()) : std::nullopt);
  }
  verdict_of(tol.kind)(Leaf{what, s, ef, af, e.sizes(), e.scalar_type(), rtol, atol, tol, g ? &*g : nullptr}, out);
}

/// Python-style name of an IValue's kind, for structure mismatches.
std::string kind_of(const c10::IValue& v) {
  if (v.isTensor()) return "Tensor";
  if (v.isTuple()) return "tuple";
  if (v.isList()) return "list";
  if (v.isNone()) return "None";
  if (v.isBool()) return "bool";
  if (v.isInt()) return "int";
  if (v.isDouble()) return "float";
  if (v.isComplexDouble()) return "complex";
  if (v.isString()) return "str";
  return v.tagKind();
}

std::string ivalue_text(const c10::IValue& v) {
  if (v.isDouble()) return num(v.toDouble());
  if (v.isBool()) return v.toBool() ? "True" : "False";
  std::ostringstream os;
  os << v;
  return os.str();
}

std::vector<c10::IValue> elements_of(const c10::IValue& v) {
  if (v.isTuple()) return v.toTupleRef().elements().vec();
  return v.toList().vec();
}

void compare_scalar_numbers(double e, double a, const Tolerance& tol, const std::string& what, Collector& out) {
  LeafStats s;
  s.total = 1;
  double rtol = 0, atol = 0;
  tolerances_for(tol, at::kDouble, rtol, atol);
  const bool equal = a == e || (tol.equal_nan && std::isnan(a) && std::isnan(e));
  const double diff = equal ? 0.0 : std::abs(a - e);
  const double rel = equal ? 0.0 : diff / std::abs(e);
  bool close = equal;
  const bool bitwise = comparator_spec(tol.kind).bitwise;
  if (bitwise) close = std::memcmp(&a, &e, sizeof a) == 0;  // bit-identical: 0.0 != -0.0
  else if (!equal) close = diff <= atol + rtol * std::abs(e);
  s.max_abs = diff;
  s.max_rel = rel;
  s.mismatched = close ? 0 : 1;
  out.add_figures(s);
  out.offer_worst(diff, {}, a, e);
  if (!close)
    out.fail(what + ": scalars are not " + (bitwise ? "equal" : "close") + ": expected " + num(e) +
             ", got " + num(a) + " (absolute difference " + num(diff) + ", up to " + num(atol) +
             " allowed; relative difference " + num(rel) + ", up to " + num(rtol) + " allowed)");
}

bool is_undefined_tensor(const c10::IValue& v) { return v.isTensor() && !v.toTensor().defined(); }

/// What a slot that may hold no tensor holds, for messages: "an undefined tensor", "None", "a torch.float32 tensor
/// of shape torch.Size([2, 3])".
std::string holding(const c10::IValue& v) {
  if (is_undefined_tensor(v)) return "an undefined tensor";
  if (v.isNone()) return "None";
  if (!v.isTensor()) return "a " + kind_of(v);
  const at::Tensor& t = v.toTensor();
  return "a " + torch_dtype(t.scalar_type()) + " tensor of shape " + torch_size(t.sizes());
}

/// An undefined tensor (an op's "no result" for a Tensor return, e.g. convolution_backward's masked-out gradients;
/// Python shows it as None) equals an undefined tensor or None and differs from anything else. Returns false when
/// neither side is an undefined tensor (the leaf is compared as usual).
bool compare_undefined(const c10::IValue& e, const c10::IValue& a, const std::string& what, Collector& out) {
  if (!is_undefined_tensor(e) && !is_undefined_tensor(a)) return false;
  const auto absent = [](const c10::IValue& v) { return v.isNone() || is_undefined_tensor(v); };
  if (!absent(e) || !absent(a)) out.fail(what + ": expected " + holding(e) + ", got " + holding(a));
  return true;
}

void compare_leaf(const c10::IValue& e, const c10::IValue& a, const Tolerance& tol, const std::string& what,
                  Collector& out, const c10::IValue* g, const AccumulationAllowance* acc) {
  if (compare_undefined(e, a, what, out)) return;
  const bool e_seq = e.isTuple() || e.isList(), a_seq = a.isTuple() || a.isList();
  if (e.isTensor() || a.isTensor() || e_seq || a_seq) {
    if (e.isTensor() && a.isTensor())
      return compare_tensors(e.toTensor(), a.toTensor(), tol, what, out, g, acc ? acc->leaves : nullptr,
                             acc ? acc->in : AccumulatesIn::OutputDtype);
    if (e_seq && a_seq) {
      // Lists and tuples are both sequences here, as for assert_close; their lengths and elements must match.
      const auto ev = elements_of(e), av = elements_of(a);
      if (ev.size() != av.size()) {
        out.fail(what + ": length mismatch: expected a " + kind_of(e) + " of " + std::to_string(ev.size()) +
                 " elements, got " + std::to_string(av.size()));
        return;
      }
      std::vector<c10::IValue> gv, accv;
      if (g && (g->isTuple() || g->isList())) gv = elements_of(*g);
      if (acc && acc->leaves && (acc->leaves->isTuple() || acc->leaves->isList())) accv = elements_of(*acc->leaves);
      for (std::size_t i = 0; i < ev.size(); ++i) {
        const AccumulationAllowance leaf{accv.size() == ev.size() ? &accv[i] : nullptr, acc ? acc->in : AccumulatesIn{}};
        compare_leaf(ev[i], av[i], tol, what + "[" + std::to_string(i) + "]", out,
                     gv.size() == ev.size() ? &gv[i] : nullptr, &leaf);
      }
      return;
    }
    out.fail(what + ": type mismatch: expected a " + kind_of(e) + ", got a " + kind_of(a));
    return;
  }
  // Numbers: an int where a float is expected (or the reverse) is a type mismatch, as Python's types differ.
  if (e.isDouble() && a.isDouble()) return compare_scalar_numbers(e.toDouble(), a.toDouble(), tol, what, out);
  if (e.isComplexDouble() && a.isComplexDouble()) {
    const auto ec = e.toComplexDouble(), ac = a.toComplexDouble();
    compare_scalar_numbers(ec.real(), ac.real(), tol, what + ".real", out);
    compare_scalar_numbers(ec.imag(), ac.imag(), tol, what + ".imag", out);
    return;
  }
  if (kind_of(e) != kind_of(a)) {
    out.fail(what + ": type mismatch: expected a " + kind_of(e) + " (" + ivalue_text(e) + "), got a " + kind_of(a) +
             " (" + ivalue_text(a) + ")");
    return;
  }
  bool same = false;
  try {
    same = e == a;
  } catch (const std::exception&) {
    same = ivalue_text(e) == ivalue_text(a);
  }
  LeafStats s;
  s.total = 1;
  s.mismatched = same ? 0 : 1;
  if (e.isInt() || e.isBool()) {
    const double d = std::abs(static_cast<double>(a.isInt() ? a.toInt() : a.toBool()) -
                              static_cast<double>(e.isInt() ? e.toInt() : e.toBool()));
    s.max_abs = d;
  }
  out.add_figures(s);
  if (!same) out.fail(what + ": values differ: expected " + ivalue_text(e) + ", got " + ivalue_text(a));
}

}  // namespace

std::string torch_dtype(at::ScalarType t) {
  std::string n = c10::toString(t);  // "Half", "BFloat16", "Float", ...
  switch (t) {
    case at::kHalf: return "torch.float16";
    case at::kBFloat16: return "torch.bfloat16";
    case at::kFloat: return "torch.float32";
    case at::kDouble: return "torch.float64";
    case at::kChar: return "torch.int8";
    case at::kShort: return "torch.int16";
    case at::kInt: return "torch.int32";
    case at::kLong: return "torch.int64";
    case at::kByte: return "torch.uint8";
    case at::kBool: return "torch.bool";
    case at::kComplexHalf: return "torch.complex32";
    case at::kComplexFloat: return "torch.complex64";
    case at::kComplexDouble: return "torch.complex128";
    default: return "torch." + n;
  }
}

void default_tolerance(at::ScalarType t, double& rtol, double& atol) {
  switch (t) {
    case at::kHalf: case at::kComplexHalf: rtol = 1e-3; atol = 1e-5; return;
    case at::kBFloat16: rtol = 1.6e-2; atol = 1e-5; return;
    case at::kFloat: case at::kComplexFloat: rtol = 1.3e-6; atol = 1e-5; return;
    case at::kDouble: case at::kComplexDouble: rtol = 1e-7; atol = 1e-7; return;
    default: rtol = 0; atol = 0; return;
  }
}

bool returns_uninitialised(const std::string& resolved_op) {
  const std::vector<std::string>& ops = uninitialised_output_ops();
  return std::find(ops.begin(), ops.end(), op_without_overload(resolved_op)) != ops.end();
}

at::Tensor dense_values(const at::Tensor& t) { return t.layout() == at::kStrided ? t : t.to_dense(); }

Tolerance tolerance_of(const Case& c) {
  Tolerance t;
  t.kind = c.compare;
  t.rtol = c.rtol;
  t.atol = c.atol;
  t.pcc_min = c.pcc_min;
  t.equal_nan = c.equal_nan;
  return t;
}

Comparison compare_values(const c10::IValue& expected, const c10::IValue& actual, const Tolerance& tol,
                          const std::string& what, const c10::IValue* golden, const AccumulationAllowance* acc) {
  Collector out;
  try {
    compare_leaf(expected, actual, tol, what, out, golden, acc);
  } catch (const std::exception& ex) {
    // opcheck's own memory running out is not the device's result being wrong: the case says so (Engine::run).
    if (is_allocation_failure(std::current_exception())) throw;
    std::string m = ex.what();
    out.fail(what + ": the comparison could not run: " + m.substr(0, m.find('\n')));
  }
  if (!out.failures.empty()) {
    std::string msg;
    const std::size_t shown = std::min(out.failures.size(), kMaxReportedLeaves);
    for (std::size_t i = 0; i < shown; ++i) msg += (i ? "\n\n" : "") + out.failures[i];
    if (out.failures.size() > shown)
      msg += "\n\n(" + std::to_string(out.failures.size() - shown) + " more mismatched leaves not shown)";
    out.result.message = std::move(msg);
  }
  if (out.rescued > 0)
    out.note(what + ": the float64 judge passed " + std::to_string(out.rescued) +
             " element(s) outside the tolerance of the CPU reference; the CPU reference was the further from float64 "
             "at " + std::to_string(out.reference_further) + " of them" +
             (out.accumulation_rescued > 0 ? "; " + std::to_string(out.accumulation_rescued) +
                                                 " of them only within the accumulation bound of a sum of their terms "
                                                 "in any order"
                                           : std::string()));
  return out.result;
}

}  // namespace opcheck::exec
