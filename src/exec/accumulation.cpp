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

/// How a rule's terms are counted and combined (AccumulationRule).
struct Terms {
  std::int64_t input_numel = 0;  // the first floating input's elements: a mean's terms, over the leaf's
  bool mean = false, counted = false, product = false;
};

/// One leaf's bound, in units of the unit roundoff (see the header): total T, count n, squares Q, magnitudes M.
at::Tensor leaf_bound(const at::Tensor& total, at::Tensor n, at::Tensor q, at::Tensor m, const Terms& how) {
  at::Tensor t = total.to(at::kDouble);
  n = n.to(at::kDouble);
  if (how.product) {  // n - 1 roundings, each relative to its partial product: relative to the product as a whole
    const at::Tensor k = (n - 1).clamp_min(0.0);
    at::Tensor bound = at::minimum(k.sqrt() * kAccumulationBoundMultiple, k) * t.abs();
    bound.masked_fill_(bound.isfinite().logical_not_(), 0.0);
    return bound;
  }
  at::Tensor count;  // a mean's count of terms per element: the sum is the mean times it
  if (how.mean && how.counted) count = n.clamp_min(1.0);
  else if (how.mean && t.numel() > 0)
    count = at::full_like(t, static_cast<double>(how.input_numel) / static_cast<double>(t.numel()));
  q = q.to(at::kDouble);
  m = m.to(at::kDouble);
  if (count.defined()) {
    n = count;
    t = t * count;
    q = q * count;
    m = m * count;
  }
  n = n.clamp_min(1.0);
  const at::Tensor t2 = t * t;
  const at::Tensor squares = t2 * (n + 1) * (2 * n + 1) / (6 * n) + (q - t2 / n) * (n + 1) / 6 - q / n;
  const at::Tensor probable = squares.clamp_min(0.0).sqrt_() * kAccumulationBoundMultiple;
  at::Tensor bound = at::minimum(probable, (n - 1) * m.abs());
  bound.masked_fill_(bound.isfinite().logical_not_(), 0.0);  // an overflowing sum widens nothing
  return count.defined() ? bound / count : bound;
}

/// Leaf by leaf over the float64 result and the three runs, which have its structure.
c10::IValue bound_of(const c10::IValue& g, const c10::IValue& n, const c10::IValue& q, const c10::IValue& m,
                     const Terms& how) {
  if (g.isTensor() && n.isTensor() && q.isTensor() && m.isTensor()) {
    const at::Tensor& t = g.toTensor();
    if (!real_floating(t) || t.sizes() != n.toTensor().sizes() || t.sizes() != q.toTensor().sizes() ||
        t.sizes() != m.toTensor().sizes() || t.is_sparse())
      return c10::IValue();
    return leaf_bound(t, n.toTensor(), q.toTensor(), m.toTensor(), how);
  }
  const auto seq = [](const c10::IValue& v) { return v.isTuple() || v.isList(); };
  if (!seq(g) || !seq(n) || !seq(q) || !seq(m)) return c10::IValue();
  const auto items = [](const c10::IValue& v) {
    return v.isTuple() ? v.toTupleRef().elements().vec() : v.toList().vec();
  };
  const auto gv = items(g), nv = items(n), qv = items(q), mv = items(m);
  if (nv.size() != gv.size() || qv.size() != gv.size() || mv.size() != gv.size()) return c10::IValue();
  std::vector<c10::IValue> out;
  for (std::size_t i = 0; i < gv.size(); ++i) out.push_back(bound_of(gv[i], nv[i], qv[i], mv[i], how));
  return c10::ivalue::Tuple::create(std::move(out));
}

Terms terms_of(const AccumulationRule& rule, std::int64_t input_numel) {
  return Terms{input_numel, rule.mean, rule.counted_with != nullptr, rule.product};
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
                                                const RunValues& golden, const Float64Run& run, std::string& why,
                                                const Float64Run* count_run) {
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
  if (rule.counted_with && !count_run) {
    why = std::string("the call cannot be run with ") + rule.counted_with + " to count its terms";
    return std::nullopt;
  }
  RunValues ones, squares, magnitudes;
  try {
    ones = (rule.counted_with ? *count_run : run)(changed_inputs(host, Change::Ones));
    // A product's bound needs only the count of its factors.
    squares = rule.product ? ones : run(changed_inputs(host, Change::Squares));
    magnitudes = rule.product ? ones : run(changed_inputs(host, Change::Magnitudes));
  } catch (const std::exception& e) {
    const std::string m = e.what();
    why = m.substr(0, m.find('\n'));
    return std::nullopt;
  }
  const Terms how = terms_of(rule, input_numel);
  RunValues out;
  out.output = bound_of(golden.output, ones.output, squares.output, magnitudes.output, how);
  for (std::size_t w = 0; w < golden.written.size(); ++w) {
    const bool all = w < ones.written.size() && w < squares.written.size() && w < magnitudes.written.size();
    const c10::IValue b = all ? bound_of(golden.written[w], ones.written[w], squares.written[w], magnitudes.written[w],
                                         how)
                              : c10::IValue();
    out.written.push_back(b.isTensor() ? b.toTensor() : at::Tensor());
  }
  return out;
}

c10::IValue accumulation_bound_of(const AccumulationRule& rule, std::int64_t input_numel, const c10::IValue& golden,
                                  const c10::IValue& ones, const c10::IValue& squares, const c10::IValue& magnitudes) {
  return bound_of(golden, ones, squares, magnitudes, terms_of(rule, input_numel));
}

std::unique_ptr<Invocation> counting_invocation(const AccumulationRule& rule, const Invocation& inv) {
  if (!rule.counted_with) return nullptr;
  const std::string spec = rule.counted_with;
  const std::size_t eq = spec.find('=');
  if (eq == std::string::npos) return nullptr;
  const std::string name = spec.substr(0, eq), value = spec.substr(eq + 1);
  const PyValue v = value == "True" || value == "False" ? PyValue::boolean(value == "True") : PyValue::string(value);
  return inv.with_argument(name, v);
}

}  // namespace opcheck::exec
