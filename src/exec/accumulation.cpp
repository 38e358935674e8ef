// The accumulation bound (exec/accumulation.h): three more float64 runs of the call, on ones, on squares and on
// absolute values of its floating inputs, give each element's count of terms, their sum of squares and their sum of
// magnitudes; a few tensor operations per leaf make the bound from them. Nothing runs per element.
#include "exec/accumulation.h"

#include <cmath>

namespace opcheck::exec {
namespace {

bool real_floating(const at::Tensor& t) { return t.defined() && t.is_floating_point(); }

enum class Change { Ones, Squares, Magnitudes };

/// The host inputs with every real floating tensor changed; the others (indices, masks) as they are.
std::vector<at::Tensor> changed_inputs(const std::vector<at::Tensor>& host, Change how) {
  std::vector<at::Tensor> out(host.size());
  for (std::size_t s = 0; s < host.size(); ++s) {
    const at::Tensor& h = host[s];
    if (!real_floating(h)) {
      out[s] = h;
      continue;
    }
    if (how == Change::Ones) {
      out[s] = at::ones_like(h, h.options().dtype(at::kDouble));
      continue;
    }
    // A float64 copy changed in place: one tensor per input, however large (a 1 GB weight becomes 4 GB, not 8).
    // Exact for every floating dtype, and so are the squares of float16 and bfloat16.
    at::Tensor wide = h.to(at::kDouble, /*non_blocking=*/false, /*copy=*/true);
    out[s] = how == Change::Squares ? wide.square_() : wide.abs_();
  }
  return out;
}

/// One leaf's bound, in units of the unit roundoff (see the header): total T, count n, squares Q, magnitudes M.
at::Tensor leaf_bound(const at::Tensor& total, at::Tensor n, at::Tensor q, at::Tensor m, double mean_count) {
  at::Tensor t = total.to(at::kDouble);
  if (mean_count > 0) {  // a mean: its sum has mean_count terms
    n = at::full_like(t, mean_count);
    t = t * mean_count;
    q = q.to(at::kDouble) * mean_count;
    m = m.to(at::kDouble) * mean_count;
  }
  n = n.to(at::kDouble).clamp_min(1.0);
  q = q.to(at::kDouble);
  const at::Tensor t2 = t * t;
  const at::Tensor squares = t2 * (n + 1) * (2 * n + 1) / (6 * n) + (q - t2 / n) * (n + 1) / 6 - q / n;
  const at::Tensor probable = squares.clamp_min(0.0).sqrt_() * kAccumulationBoundMultiple;
  at::Tensor bound = at::minimum(probable, (n - 1) * m.to(at::kDouble).abs());
  bound.masked_fill_(bound.isfinite().logical_not_(), 0.0);  // an overflowing sum widens nothing
  return mean_count > 0 ? bound / mean_count : bound;
}

/// Leaf by leaf over the float64 result and the three runs, which have its structure.
c10::IValue bound_of(const c10::IValue& g, const c10::IValue& n, const c10::IValue& q, const c10::IValue& m,
                     std::int64_t input_numel, bool mean) {
  if (g.isTensor() && n.isTensor() && q.isTensor() && m.isTensor()) {
    const at::Tensor& t = g.toTensor();
    if (!real_floating(t) || t.sizes() != n.toTensor().sizes() || t.sizes() != q.toTensor().sizes() ||
        t.sizes() != m.toTensor().sizes() || t.is_sparse())
      return c10::IValue();
    const double count = mean && t.numel() > 0 ? static_cast<double>(input_numel) / static_cast<double>(t.numel()) : 0;
    return leaf_bound(t, n.toTensor(), q.toTensor(), m.toTensor(), count);
  }
  const auto seq = [](const c10::IValue& v) { return v.isTuple() || v.isList(); };
  if (!seq(g) || !seq(n) || !seq(q) || !seq(m)) return c10::IValue();
  const auto items = [](const c10::IValue& v) {
    return v.isTuple() ? v.toTupleRef().elements().vec() : v.toList().vec();
  };
  const auto gv = items(g), nv = items(n), qv = items(q), mv = items(m);
  if (nv.size() != gv.size() || qv.size() != gv.size() || mv.size() != gv.size()) return c10::IValue();
  std::vector<c10::IValue> out;
  for (std::size_t i = 0; i < gv.size(); ++i) out.push_back(bound_of(gv[i], nv[i], qv[i], mv[i], input_numel, mean));
  return c10::ivalue::Tuple::create(std::move(out));
}

}  // namespace

double accumulation_unit(AccumulatesIn in, at::ScalarType dtype) {
  if (dtype == at::kDouble) return std::ldexp(1.0, -53);
  if (in == AccumulatesIn::Float32AtLeast) return std::ldexp(1.0, -24);
  switch (dtype) {
    case at::kHalf: return std::ldexp(1.0, -11);
    case at::kBFloat16: return std::ldexp(1.0, -8);
    case at::kFloat8_e4m3fn: case at::kFloat8_e4m3fnuz: return std::ldexp(1.0, -4);
    case at::kFloat8_e5m2: case at::kFloat8_e5m2fnuz: return std::ldexp(1.0, -3);
    default: return std::ldexp(1.0, -24);
  }
}

std::optional<RunValues> accumulation_allowance(const AccumulationRule& rule, const std::vector<at::Tensor>& host,
                                                const RunValues& golden, const Float64Run& run, std::string& why) {
  std::int64_t input_numel = -1;
  for (const at::Tensor& h : host) {
    if (h.defined() && h.is_complex()) {
      why = "a complex input";
      return std::nullopt;
    }
    if (input_numel < 0 && real_floating(h)) input_numel = h.numel();
  }
  if (input_numel < 0) {
    why = "no floating input";
    return std::nullopt;
  }
  RunValues ones, squares, magnitudes;
  try {
    ones = run(changed_inputs(host, Change::Ones));
    squares = run(changed_inputs(host, Change::Squares));
    magnitudes = run(changed_inputs(host, Change::Magnitudes));
  } catch (const std::exception& e) {
    const std::string m = e.what();
    why = m.substr(0, m.find('\n'));
    return std::nullopt;
  }
  RunValues out;
  out.output = bound_of(golden.output, ones.output, squares.output, magnitudes.output, input_numel, rule.mean);
  for (std::size_t w = 0; w < golden.written.size(); ++w) {
    const bool all = w < ones.written.size() && w < squares.written.size() && w < magnitudes.written.size();
    const c10::IValue b = all ? bound_of(golden.written[w], ones.written[w], squares.written[w], magnitudes.written[w],
                                         input_numel, rule.mean)
                              : c10::IValue();
    out.written.push_back(b.isTensor() ? b.toTensor() : at::Tensor());
  }
  return out;
}

c10::IValue accumulation_bound_of(const AccumulationRule& rule, std::int64_t input_numel, const c10::IValue& golden,
                                  const c10::IValue& ones, const c10::IValue& squares, const c10::IValue& magnitudes) {
  return bound_of(golden, ones, squares, magnitudes, input_numel, rule.mean);
}

}  // namespace opcheck::exec
