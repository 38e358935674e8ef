#include "manifest/narrow_inputs.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/input_bounds.h"

namespace opcheck {
namespace {

const PyValue* find_arg(const TensorSpec& t, const std::string& key) {
  for (const auto& [k, v] : t.init_args)
    if (k == key) return &v;
  return nullptr;
}

/// An integer init_args value as the recipe reads it (a float rounded outward as make_tensor does); nullopt when
/// absent, and `bad` when it is not a number (the input builder reports that).
std::optional<std::int64_t> int_value(const TensorSpec& t, const std::string& key, bool round_up, bool& bad) {
  const PyValue* v = find_arg(t, key);
  if (!v || v->kind == PyValue::Kind::None) return std::nullopt;
  if (v->kind == PyValue::Kind::Int) return v->i;
  if (v->kind == PyValue::Kind::Bool) return v->b ? 1 : 0;
  const double d = v->kind == PyValue::Kind::Float ? (round_up ? std::ceil(v->f) : std::floor(v->f)) : NAN;
  if (!std::isfinite(d) || std::abs(d) > 9e18) {
    bad = true;
    return std::nullopt;
  }
  return static_cast<std::int64_t>(d);
}

/// Replaces or adds init_args[key], keeping init_args sorted by key as the loader leaves them.
void set_arg(TensorSpec& t, const std::string& key, PyValue value) {
  auto at = std::find_if(t.init_args.begin(), t.init_args.end(), [&](const auto& kv) { return kv.first >= key; });
  if (at != t.init_args.end() && at->first == key) at->second = std::move(value);
  else t.init_args.insert(at, {key, std::move(value)});
}
void set_arg(TensorSpec& t, const std::string& key, std::int64_t value) { set_arg(t, key, PyValue::integer(value)); }

SourceLoc where(const Case& c, const TensorSpec& t) { return t.loc.line > 0 ? t.loc : c.loc; }

void narrow_index(Case& c, const InputBound& b, DiagnosticList& diags) {
  TensorSpec& t = b.spec(c);
  bool bad = false;
  const std::int64_t lo = int_value(t, "low", false, bad).value_or(0);
  const auto written_hi = int_value(t, "high", true, bad);
  if (bad || (t.init == InitKind::Randint && !written_hi)) return;  // the input builder names what is wrong
  const std::int64_t hi = written_hi.value_or(1);
  if (lo >= hi) return;  // an empty range: the input builder says so, rather than a narrowing hiding it
  const std::string init = init_kind_name(t.init);
  if (b.high <= 0) {
    diags.warning(where(c, t),
                  b.arg + ": " + init + " values cannot index " + b.what + ", which is 0; the op will raise", c.id,
                  "give the indexed tensor a non-empty dim, or the index tensor no elements");
    return;
  }
  // Negative indices stay only where the manifest's range asks for them and the op takes them.
  const std::int64_t new_lo = std::clamp(lo, std::max<std::int64_t>(b.low, lo < 0 ? b.low : 0), b.high - 1);
  const std::int64_t new_hi = std::clamp(hi, new_lo + 1, b.high);
  if (new_lo == lo && new_hi == hi) return;
  std::string changes;
  if (new_lo != lo) {
    set_arg(t, "low", new_lo);
    changes = "low " + std::to_string(lo) + " narrowed to " + std::to_string(new_lo) + ", ";
  }
  if (new_hi != hi) {
    set_arg(t, "high", new_hi);
    changes += "high " + std::to_string(hi) + " narrowed to " + std::to_string(new_hi) + ", ";
  }
  diags.warning(where(c, t), b.arg + ": " + init + " " + changes + b.what, c.id,
                "write the range the op accepts (init_args {low: " + std::to_string(new_lo) + ", high: " +
                    std::to_string(new_hi) + "}), or pin the values with init: data");
}

void cap_mask(Case& c, const InputBound& b, DiagnosticList& diags) {
  TensorSpec& t = b.spec(c);
  if (t.init == InitKind::Randint) return;  // a 0/1 randint mask has no cap to give; only rand and uniform take one
  std::int64_t stored = 1;  // values drawn: stride-0 dims hold one each
  for (std::size_t d = 0; d < t.shape.size(); ++d) stored *= d < t.stride.size() && t.stride[d] == 0 ? 1 : t.shape[d];
  bool bad = false;
  const auto written = int_value(t, "max_true", false, bad);
  const std::int64_t can_draw = written ? std::min(*written, stored) : stored;
  if (bad || can_draw <= b.max_true) return;
  set_arg(t, "max_true", b.max_true);
  diags.warning(where(c, t),
                b.arg + ": " + init_kind_name(t.init) + " may draw " + std::to_string(can_draw) +
                    " true values; max_true narrowed to " + std::to_string(b.max_true) + ", " + b.what,
                c.id, "write init_args {max_true: " + std::to_string(b.max_true) + "}, or pin the mask with init: data");
}

/// A random index of an op whose result is undefined where indices repeat is drawn without repeats
/// (init_args.distinct, or distinct_along for scatter's lines), within a range of positions that are all different
/// elements; when no draw can avoid repeats, a warning says why.
void draw_distinct(Case& c, const InputBound& b, DiagnosticList& diags) {
  TensorSpec& t = b.spec(c);
  if (find_arg(t, "distinct") || find_arg(t, "distinct_along")) return;  // the manifest says where
  const std::string init = init_kind_name(t.init), along = b.along < 0 ? "" : " along dim " + std::to_string(b.along);
  const std::string undefined = c.op + "'s result is undefined where " +
                                (b.along < 0 ? "indices repeat" : "two positions" + along + " write one element");
  auto cannot = [&](const std::string& why, const std::string& fix) {
    diags.warning(where(c, t), b.arg + ": " + init + " cannot draw its values without repeats: " + why + "; " + undefined,
                  c.id, fix);
  };
  if (!b.impossible.empty()) return cannot(b.impossible, "pin the indices with init: data");
  for (std::size_t d = 0; d < t.shape.size() && d < t.stride.size(); ++d)
    if (t.stride[d] == 0 && t.shape[d] > 1 && (b.along < 0 || static_cast<std::int64_t>(d) == b.along))
      return cannot("its stride-0 dim " + std::to_string(d) + " repeats each value",
                    "give " + b.arg + " a non-zero stride, or pin its values with init: data");
  bool bad = false;
  const std::int64_t lo = int_value(t, "low", false, bad).value_or(0);
  const auto written_hi = int_value(t, "high", true, bad);
  if (bad || (t.init == InitKind::Randint && !written_hi)) return;  // the input builder names what is wrong
  const std::int64_t hi = written_hi.value_or(1);
  // A negative low keeps negative indices: the window [low, low + size) names each position once.
  const std::int64_t top = lo < 0 ? std::min(hi, lo + b.high) : hi;
  const std::string count = std::to_string(b.count) + " values" + along;
  if (b.count > b.high)
    return cannot(b.arg + " holds " + count + " and " + b.what + " is " + std::to_string(b.high),
                  "give " + b.arg + " at most " + std::to_string(b.high) + " values" + along +
                      ", or pin them with init: data");
  if (b.count > top - lo)
    return cannot(b.arg + " holds " + count + " and [" + std::to_string(lo) + ", " + std::to_string(top) + ") only " +
                      std::to_string(top - lo),
                  "write init_args {low: 0, high: " + std::to_string(b.high) + "}, " + b.what +
                      ", or pin the values with init: data");
  std::string changes;
  if (top != hi) {
    set_arg(t, "high", top);
    changes = ", high " + std::to_string(hi) + " narrowed to " + std::to_string(top);
  }
  const std::string written = b.along < 0 ? "distinct: true" : "distinct_along: " + std::to_string(b.along);
  if (b.along < 0) set_arg(t, "distinct", PyValue::boolean(true));
  else set_arg(t, "distinct_along", b.along);
  diags.warning(where(c, t), b.arg + ": " + init + " drawn without repeats" + along + changes + ", as " + undefined,
                c.id, "write init_args {" + written + "}, or pin the values with init: data");
}

/// A random `output` of a (log_)softmax backward op is the (log_)softmax of its draw, as the forward would give.
void make_softmax(Case& c, const InputBound& b, DiagnosticList& diags) {
  TensorSpec& t = b.spec(c);
  const bool random = t.init == InitKind::Rand || t.init == InitKind::Uniform || t.init == InitKind::Randn;
  if (!random || !dtype_is_floating(t.dtype) || find_arg(t, "softmax_along") || find_arg(t, "log_softmax_along"))
    return;
  const auto d = static_cast<std::size_t>(b.along);
  if (d < t.stride.size() && t.stride[d] == 0 && t.shape[d] > 1) return;  // one value along the dim: no softmax
  const std::string key = b.log ? "log_softmax_along" : "softmax_along";
  set_arg(t, key, b.along);
  diags.warning(where(c, t),
                b.arg + ": " + init_kind_name(t.init) + " values replaced by " + b.what + " of them, as " + c.op +
                    " takes the forward's result",
                c.id, "write init_args {" + key + ": " + std::to_string(b.along) + "}, or pin the values with init: data");
}

}  // namespace

void narrow_random_inputs(ManifestSet& set) {
  using K = InputBound::Kind;
  for (auto& m : set.manifests)
    for (auto& c : m.cases)
      for (const InputBound& b : input_bounds(c)) {
        if (b.spec(c).numel() == 0) continue;
        if (b.kind == K::SoftmaxOutput) make_softmax(c, b, set.diagnostics);
        else if (!drawn_at_random(b.spec(c))) continue;
        else if (b.kind == K::IndexRange) narrow_index(c, b, set.diagnostics);
        else if (b.kind == K::Distinct) draw_distinct(c, b, set.diagnostics);
        else cap_mask(c, b, set.diagnostics);
      }
}

}  // namespace opcheck
