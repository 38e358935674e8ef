// Input recipes: the one description of each `init:` kind — its manifest name, the init_args it takes, whether it
// draws random numbers, the torch calls that make its values and how their arguments come from the spec, and the
// specs opcheck refuses. Two builders produce from it: the exec layer's libtorch calls (src/exec/inputs.cpp) and the
// Python text of `repro --python` scripts (src/repro/script.cpp), so a kind cannot be built one way and written
// another. No libtorch here.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "opcheck/case.h"

namespace opcheck {

/// One init kind.
struct InitRecipe {
  InitKind kind;
  std::string_view name;               // as manifests write it: `init: NAME`
  std::vector<std::string_view> args;  // the init_args keys it takes
  bool seeded;      // draws random numbers: torch.manual_seed(case seed + 1000 * input + element) comes first
  bool full_shape;  // values over the whole logical shape (checked constant along expanded dims), not over the
                    // shape with expanded (stride-0) dims reduced to 1
};

/// Every init kind, one row each, in the order of InitKind.
const std::vector<InitRecipe>& init_recipes();
const InitRecipe& init_recipe(InitKind kind);

namespace recipe_detail {

/// torch.finfo(dtype).max for floating dtypes (complex: of the real part); DBL_MAX otherwise.
double finfo_max(DType t);
/// torch.iinfo(dtype) (min, max) for integer dtypes; int64's otherwise.
std::pair<std::int64_t, std::int64_t> iinfo_range(DType t);
/// The real dtype of a complex one's parts (complex32 -> float16, ...).
DType real_part(DType t);

const PyValue* find_arg(const TensorSpec& t, std::string_view key);

template <class Builder>
void check_arg_keys(const TensorSpec& t, Builder& b) {
  const auto& accepted = init_recipe(t.init).args;
  for (const auto& [k, v] : t.init_args) {
    if (std::find(accepted.begin(), accepted.end(), k) != accepted.end()) continue;
    std::string list;
    for (auto a : accepted) list += (list.empty() ? "" : ", ") + std::string(a);
    b.fail("unknown init_args key '" + k + "'" +
               (list.empty() ? " (this init takes no init_args)." : " (accepted: " + list + ")."),
           list.empty() ? "remove init_args." : "use one of the accepted keys.");
  }
}

/// A numeric init_args value as Python passes it (int stays int, float stays float, a bool is an int); nullopt when
/// absent or None.
template <class Builder>
std::optional<PyValue> number_arg(const TensorSpec& t, std::string_view key, Builder& b) {
  const PyValue* v = find_arg(t, key);
  if (!v || v->kind == PyValue::Kind::None) return std::nullopt;
  if (v->kind == PyValue::Kind::Bool) return PyValue::integer(v->b ? 1 : 0);
  if (v->kind != PyValue::Kind::Int && v->kind != PyValue::Kind::Float)
    b.fail("init_args." + std::string(key) + " must be a number, got " + v->repr() + ".", "");
  return *v;
}

template <class Builder>
std::optional<std::int64_t> int_arg(const TensorSpec& t, std::string_view key, Builder& b) {
  auto v = number_arg(t, key, b);
  if (!v) return std::nullopt;
  if (v->kind == PyValue::Kind::Int) return v->i;
  const double d = v->as_double();
  if (!(std::isfinite(d) && d == std::floor(d) && std::abs(d) < 9.2e18))
    b.fail("init_args." + std::string(key) + " must be an integer, got " + PyValue::real(d).repr() + ".", "");
  return static_cast<std::int64_t>(d);
}

/// make_tensor's _modify_low_high for floating dtypes: defaults 0 and 1, NaN and order checks, clamped to the finite
/// range. Python's min/max keep the argument (int stays int) unless the finfo bound wins, which is then a float.
template <class Builder>
std::pair<PyValue, PyValue> float_bounds(const TensorSpec& t, DType value_type, Builder& b) {
  const PyValue lo = number_arg(t, "low", b).value_or(PyValue::integer(0));
  const PyValue hi = number_arg(t, "high", b).value_or(PyValue::integer(1));
  const double l = lo.as_double(), h = hi.as_double();
  if (std::isnan(l) || std::isnan(h)) b.fail("init_args low/high must not be nan.", "");
  if (l > h)
    b.fail("init_args.low (" + PyValue::real(l).repr() + ") is greater than high (" + PyValue::real(h).repr() + ").",
           "swap low and high.");
  const double top = finfo_max(value_type);
  auto clamp = [&](const PyValue& v) {
    const double d = v.as_double();
    return d < -top ? PyValue::real(-top) : d > top ? PyValue::real(top) : v;
  };
  return {clamp(lo), clamp(hi)};
}

/// make_tensor's _modify_low_high for integer dtypes: clamped to the iinfo range, then floor(low), ceil(high).
template <class Builder>
std::pair<std::int64_t, std::int64_t> int_bounds(const TensorSpec& t, Builder& b) {
  const PyValue lo = number_arg(t, "low", b).value_or(PyValue::integer(0));
  const PyValue hi = number_arg(t, "high", b).value_or(PyValue::integer(1));
  if (std::isnan(lo.as_double()) || std::isnan(hi.as_double())) b.fail("init_args low/high must not be nan.", "");
  // Plain variables, not a structured binding: C++17 lambdas cannot capture those.
  const std::pair<std::int64_t, std::int64_t> range = iinfo_range(t.dtype);
  const std::int64_t lowest = range.first, highest = range.second;
  auto to_int = [&](const PyValue& v, bool up) -> std::int64_t {
    if (v.kind == PyValue::Kind::Int) return std::clamp(v.i, lowest, highest);
    const double d = up ? std::ceil(v.as_double()) : std::floor(v.as_double());
    if (d <= static_cast<double>(lowest)) return lowest;
    if (d >= static_cast<double>(highest)) return highest;
    return static_cast<std::int64_t>(d);
  };
  const std::int64_t l = to_int(lo, false), h = to_int(hi, true);
  if (l >= h)
    b.fail("an integer tensor needs low < high, got [" + std::to_string(l) + ", " + std::to_string(h) + ").",
           "give init_args {low: L, high: H} with L < H.");
  return {l, h};
}

/// A dim init_args value (distinct_along, softmax_along, ...) as a dim of `shape`, negative dims counted from the
/// end; nullopt when absent.
template <class Builder>
std::optional<std::int64_t> dim_arg(const TensorSpec& t, std::string_view key, const std::vector<std::int64_t>& shape,
                                    Builder& b) {
  const PyValue* v = find_arg(t, key);
  if (!v || v->kind == PyValue::Kind::None) return std::nullopt;
  const auto rank = static_cast<std::int64_t>(shape.size());
  if (v->kind != PyValue::Kind::Int || v->i < -std::max<std::int64_t>(rank, 1) || v->i >= std::max<std::int64_t>(rank, 1))
    b.fail("init_args." + std::string(key) + " must be a dim of the tensor's " + std::to_string(rank) +
               " dims, got " + v->repr() + ".",
           "give a dim in [" + std::to_string(-rank) + ", " + std::to_string(rank) + ").");
  return v->i < 0 ? v->i + std::max<std::int64_t>(rank, 1) : v->i;
}

/// Where values are drawn without repeats: kAllElements (init_args.distinct: true), a dim (distinct_along: d: no two
/// values equal along d), or nullopt. Checked: an integer dtype, and enough values in [low, high) for the count.
constexpr std::int64_t kAllElements = -1;
template <class Builder>
std::optional<std::int64_t> distinct_scope(const TensorSpec& t, const std::vector<std::int64_t>& shape,
                                           std::int64_t low, std::int64_t high, Builder& b) {
  const PyValue* all = find_arg(t, "distinct");
  const auto along = dim_arg(t, "distinct_along", shape, b);
  if (all && all->kind != PyValue::Kind::Bool) b.fail("init_args.distinct must be true or false.", "");
  if (all && all->b && along)
    b.fail("init_args.distinct and distinct_along both say where values may not repeat.", "keep one of them.");
  if (!along && !(all && all->b)) return std::nullopt;
  const bool whole = !along || shape.empty();  // a scalar's one value is its only line
  std::int64_t count = 1;
  if (!whole) count = shape[static_cast<std::size_t>(*along)];
  else
    for (auto d : shape) count *= d;
  if (count > high - low)
    b.fail("cannot draw " + std::to_string(count) + " distinct values " +
               (whole ? std::string() : "along dim " + std::to_string(*along) + " ") + "from [" +
               std::to_string(low) + ", " + std::to_string(high) + "), which holds " + std::to_string(high - low) + ".",
           "widen low/high, draw fewer values, or drop distinct.");
  return whole ? kAllElements : *along;
}

/// The softmax (log: log_softmax) a floating draw is passed through: {dim, log}, or nullopt.
template <class Builder>
std::optional<std::pair<std::int64_t, bool>> softmax_of(const TensorSpec& t, const std::vector<std::int64_t>& shape,
                                                        Builder& b) {
  const auto plain = dim_arg(t, "softmax_along", shape, b), log = dim_arg(t, "log_softmax_along", shape, b);
  if (!plain && !log) return std::nullopt;
  if (plain && log) b.fail("init_args.softmax_along and log_softmax_along both transform the values.", "keep one.");
  if (!dtype_is_floating(t.dtype))
    b.fail("softmax_along and log_softmax_along need a real floating dtype.", "drop them, or use fp16/bf16/fp32/fp64.");
  return std::make_pair(plain ? *plain : *log, !plain);
}

}  // namespace recipe_detail

/// The values of spec `t` over `shape` (the spec's logical shape with expanded dims reduced to 1, or for a
/// full_shape kind the whole shape), made by `b` after torch.manual_seed(seed) for a seeded kind. A Builder has
/// `Values` and, each the Python named in the comment:
///   fail(what, fix)                         a spec opcheck refuses (the exec builder throws; a script carries on)
///   rand(shape, dtype)                      torch.rand(shape, dtype=dtype)
///   randint(low, high, shape, dtype)        torch.randint(low, high, shape, dtype=dtype)
///   randint_cast(low, high, shape, dtype)   torch.randint(low, high, shape).to(dtype)  (dtypes randint refuses)
///   at_most_true(m, n)                      m & (m.reshape(-1).cumsum(0) <= n).reshape(m.shape)  (the first n trues)
///   distinct(low, high, shape, dim, dtype)  distinct(low, high, shape, dim, dtype) of the repro assets (distinct.py):
///                                           values in [low, high), none equal along dim (kAllElements: none at all)
///   softmax(v, dim, log)                    torch.softmax(v, dim) (log: torch.log_softmax(v, dim))
///   scaled(r, low, high)                    high * r + low * (1 - r)
///   complex(re, im)                         torch.complex(re, im)
///   randn(shape, dtype)                     torch.randn(shape, dtype=dtype)
///   times(v, s) / plus(v, s)                v * s / v + s
///   zeros(shape, dtype) / ones(...)         torch.zeros / torch.ones(shape, dtype=dtype)
///   arange(n, shape, dtype)                 torch.arange(n).reshape(shape).to(dtype)
///   xavier(shape, dtype, gain)              torch.nn.init.xavier_uniform_(torch.empty(shape, dtype=dtype), gain=gain)
///   full(shape, fill_value, dtype)          torch.full(shape, fill_value, dtype=dtype)  (fill_value null: missing)
///   data(data, dtype)                       torch.tensor(data, dtype=dtype)
///   file(path, key)                         the tensor in a .pt/.npy/.safetensors file (key null: the only one)
///   eye(n, dtype)                           torch.eye(n, dtype=dtype)
/// Every kind is handled here and nowhere else: a kind added to InitKind and not here fails to compile.
template <class Builder>
typename Builder::Values init_values(const TensorSpec& t, const std::vector<std::int64_t>& shape, Builder& b) {
  using namespace recipe_detail;
  recipe_detail::check_arg_keys(t, b);
  const DType dtype = t.dtype;
  const bool floating = dtype_is_floating(dtype), complex = dtype_is_complex(dtype);
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
  switch (t.init) {
    case InitKind::Rand:
    case InitKind::Uniform: {
      const auto max_true = int_arg(t, "max_true", b);
      if (dtype == DType::Bool) {
        if (t.init_args.size() > (max_true ? 1u : 0u))
          b.fail("a bool tensor takes no low/high (it is 50 % true).", "remove low and high.");
        if (max_true && *max_true < 0) b.fail("init_args.max_true must not be negative.", "");
        auto mask = b.randint(0, 2, shape, DType::Bool);
        if (!max_true) return mask;
        return b.at_most_true(std::move(mask), *max_true);
      }
      if (max_true) b.fail("init_args.max_true is for bool tensors (a mask's true values).", "remove max_true.");
      if (!floating && !complex) {
        const auto [lo, hi] = int_bounds(t, b);
        if (const auto scope = distinct_scope(t, shape, lo, hi, b)) return b.distinct(lo, hi, shape, *scope, dtype);
        return b.randint(lo, hi, shape, dtype);
      }
      if (find_arg(t, "distinct") || find_arg(t, "distinct_along"))
        b.fail("distinct and distinct_along are for integer tensors (indices).", "drop them.");
      const auto softmax = softmax_of(t, shape, b);
      const bool scaled = find_arg(t, "low") || find_arg(t, "high");
      auto part = [&](DType part_type) {
        auto r = b.rand(shape, part_type);
        if (!scaled) return r;
        const auto [lo, hi] = float_bounds(t, part_type, b);
        return b.scaled(std::move(r), lo, hi);
      };
      if (!complex) return softmax ? b.softmax(part(dtype), softmax->first, softmax->second) : part(dtype);
      // make_tensor: the real and the imaginary part drawn one after the other in the matching real dtype.
      auto re = part(real_part(dtype));
      auto im = part(real_part(dtype));
      return b.complex(std::move(re), std::move(im));
    }
    case InitKind::Randn: {
      if (!floating && !complex)
        b.fail("randn needs a floating or complex dtype.", "use init: randint for integer and bool tensors.");
      auto v = b.randn(shape, dtype);
      if (auto s = number_arg(t, "std", b)) v = b.times(std::move(v), *s);
      if (auto m = number_arg(t, "mean", b)) v = b.plus(std::move(v), *m);
      if (const auto softmax = softmax_of(t, shape, b)) return b.softmax(std::move(v), softmax->first, softmax->second);
      return v;
    }
    case InitKind::Randint: {
      const auto high = int_arg(t, "high", b);
      if (!high) b.fail("randint needs init_args.high (exclusive upper bound).", "add init_args: {high: N}.");
      const std::int64_t lo = int_arg(t, "low", b).value_or(0), hi = high.value_or(1);
      if (high && lo >= hi)
        b.fail("randint needs low < high, got [" + std::to_string(lo) + ", " + std::to_string(hi) + ").", "");
      if (complex) return b.randint_cast(lo, hi, shape, dtype);
      if (const auto scope = distinct_scope(t, shape, lo, hi, b)) return b.distinct(lo, hi, shape, *scope, dtype);
      return b.randint(lo, hi, shape, dtype);
    }
    case InitKind::Zeros: return b.zeros(shape, dtype);
    case InitKind::Ones: return b.ones(shape, dtype);
    case InitKind::Arange: {
      std::int64_t n = 1;
      for (auto d : shape) n *= d;
      return b.arange(n, shape, dtype);
    }
    case InitKind::Xavier: {
      std::int64_t n = 1;
      for (auto d : shape) n *= d;
      if (n > 0 && shape.size() < 2)
        b.fail("xavier needs at least 2 dimensions (fan in and fan out), the tensor has " +
                   std::to_string(shape.size()) + ".",
               "use init: rand for vectors and scalars.");
      if (n > 0 && !floating && !complex) b.fail("xavier needs a floating dtype.", "use init: randint for integers.");
      const double gain = number_arg(t, "gain", b).value_or(PyValue::real(1.0)).as_double();
      return b.xavier(shape, dtype, gain);
    }
    case InitKind::Full: {
      if (!number_arg(t, "fill_value", b))
        b.fail("full needs init_args.fill_value.", "add init_args: {fill_value: 0.5}.");
      return b.full(shape, find_arg(t, "fill_value"), dtype);
    }
    case InitKind::Data: return b.data(t.data, dtype);
    case InitKind::File: return b.file(t.file, find_arg(t, "key"));
    case InitKind::Eye: {
      if (t.shape.size() != 2 || t.shape[0] != t.shape[1]) {
        std::string s = "[";
        for (std::size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
        b.fail("eye needs a square 2-D shape, got " + s + "].", "give shape [n, n].");
      }
      return b.eye(t.shape.empty() ? 0 : t.shape[0], dtype);
    }
  }
#pragma GCC diagnostic pop
  b.fail("unhandled init kind.", "");
  return b.zeros(shape, dtype);
}

}  // namespace opcheck
