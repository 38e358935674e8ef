#include "runner/call_variants.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "manifest/tensor_layout.h"

namespace opcheck {

const std::vector<DType> kSweepDtypes = {DType::Float32, DType::Float16, DType::BFloat16,
                                         DType::Int32,   DType::Int64};

namespace {

template <class C, class F>
void for_each_tensor(C& c, F&& f) {
  for (auto& in : c.inputs) {
    if (in.kind == Input::Kind::Tensor) f(in.tensor);
    if (in.kind == Input::Kind::TensorList)
      for (auto& t : in.list) f(t);
  }
}

std::vector<TensorSpec*> tensors_of(Case& c) {
  std::vector<TensorSpec*> out;
  for_each_tensor(c, [&](TensorSpec& t) { out.push_back(&t); });
  return out;
}

// New strides for a new shape that keep the tensor's dim order in memory (a transposed tensor stays transposed) and
// its expanded (stride-0) dims, without the gaps of a slice.
std::vector<std::int64_t> strides_like(const TensorSpec& t, const std::vector<std::int64_t>& shape) {
  std::vector<std::size_t> order(shape.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return t.stride[a] < t.stride[b]; });
  std::vector<std::int64_t> s(shape.size(), 0);
  std::int64_t step = 1;
  for (std::size_t d : order) {
    if (t.stride[d] == 0 && t.shape[d] != 1) continue;
    s[d] = step;
    step *= std::max<std::int64_t>(shape[d], 1);
  }
  return s;
}

void set_shape(TensorSpec& t, std::vector<std::int64_t> shape) {
  t.stride = t.stride.size() == t.shape.size() && !t.is_contiguous() ? strides_like(t, shape) : contiguous_strides(shape);
  t.shape = std::move(shape);
  t.preset.clear();
  t.preset_args.clear();
}

bool shape_is_editable(const TensorSpec& t) {
  return t.init != InitKind::File && t.init != InitKind::Data && t.init != InitKind::Eye && !t.shape_from_file;
}

bool simple_values(const TensorSpec& t) {
  return t.init == InitKind::Zeros || t.init == InitKind::Ones ||
         (t.init == InitKind::Randint && t.init_args.size() <= 2);
}

std::string dims_text(const std::vector<std::int64_t>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out + "]";
}

// The size at dim position p counted from the right (p = 1 is the last dim), 0 when the tensor has fewer dims.
std::int64_t size_at(const TensorSpec& t, std::size_t p) {
  return p <= t.shape.size() ? t.shape[t.shape.size() - p] : 0;
}

void resize_at(TensorSpec& t, std::size_t p, std::int64_t n) {
  auto shape = t.shape;
  shape[shape.size() - p] = n;
  set_shape(t, shape);
}

std::size_t max_rank(Case& c) {
  std::size_t r = 0;
  for (TensorSpec* t : tensors_of(c)) r = std::max(r, t->shape.size());
  return r;
}

// Smaller sizes to try for a dim of size s, smallest first.
std::vector<std::int64_t> smaller_sizes(std::int64_t s) {
  std::vector<std::int64_t> out;
  for (std::int64_t n : {std::int64_t{1}, s / 2, s - 1})
    if (n >= 1 && n < s && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  return out;
}

// Sets every dim that `pick(tensor index, tensor, dim index)` chooses to n, when every tensor it touches may change
// shape.
template <class Pick>
void resize_where(const Case& c, const std::string& edit, std::int64_t n, Pick pick, std::vector<CallVariant>& out) {
  CallVariant v{c, edit};
  bool touched = false;
  const auto ts = tensors_of(v.call);
  for (std::size_t i = 0; i < ts.size(); ++i) {
    TensorSpec* t = ts[i];
    auto shape = t->shape;
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (pick(i, *t, d)) shape[d] = n;
    if (shape == t->shape) continue;
    if (!shape_is_editable(*t)) return;
    set_shape(*t, shape);
    touched = true;
  }
  if (touched) out.push_back(std::move(v));
}

void dim_steps(const Case& c, std::vector<CallVariant>& out) {
  Case probe = c;
  const auto ts = tensors_of(probe);
  // Every dim of one size, wherever it is: what a call's inputs share (broadcast partners, matmul's inner dims).
  std::set<std::int64_t> sizes;
  for (TensorSpec* t : ts) sizes.insert(t->shape.begin(), t->shape.end());
  for (std::int64_t size : sizes)
    for (std::int64_t n : smaller_sizes(size))
      resize_where(c, "dims of size " + std::to_string(size) + "->" + std::to_string(n), n,
                   [size](std::size_t, const TensorSpec& t, std::size_t d) { return t.shape[d] == size; }, out);
  // The largest size at one position counted from the right, as broadcasting aligns dims.
  for (std::size_t p = 1; p <= max_rank(probe); ++p) {
    std::int64_t largest = 0;
    for (TensorSpec* t : ts) largest = std::max(largest, size_at(*t, p));
    for (std::int64_t n : smaller_sizes(largest))
      resize_where(c, "dim -" + std::to_string(p) + ": " + std::to_string(largest) + "->" + std::to_string(n), n,
                   [p, largest](std::size_t, const TensorSpec& t, std::size_t d) {
                     return t.shape.size() - d == p && t.shape[d] == largest;
                   },
                   out);
  }
  // One dim of one tensor.
  for (std::size_t i = 0; i < ts.size(); ++i)
    for (std::size_t d = 0; d < ts[i]->shape.size(); ++d)
      for (std::int64_t n : smaller_sizes(ts[i]->shape[d]))
        resize_where(c, "tensor " + std::to_string(i) + " dim " + std::to_string(d) + ": " +
                            std::to_string(ts[i]->shape[d]) + "->" + std::to_string(n),
                     n, [i, d](std::size_t j, const TensorSpec&, std::size_t k) { return j == i && k == d; },
                     out);
}

void layout_and_value_steps(const Case& c, std::vector<CallVariant>& out) {
  Case probe = c;
  const auto ts = tensors_of(probe);
  for (std::size_t i = 0; i < ts.size(); ++i) {
    const TensorSpec& t = *ts[i];
    const std::string which = "tensor " + std::to_string(i) + " ";
    if (!t.shape.empty() && t.shape[0] == 1 && shape_is_editable(t)) {
      CallVariant v{c, which + "leading size-1 dim dropped"};
      TensorSpec& e = *tensors_of(v.call)[i];
      set_shape(e, std::vector<std::int64_t>(e.shape.begin() + 1, e.shape.end()));
      out.push_back(std::move(v));
    }
    if ((!t.is_contiguous() || t.storage_offset != 0) && shape_is_editable(t)) {
      CallVariant v{c, which + "made contiguous"};
      TensorSpec& e = *tensors_of(v.call)[i];
      e.stride = contiguous_strides(e.shape);
      e.storage_offset = 0;
      e.preset.clear();
      e.preset_args.clear();
      out.push_back(std::move(v));
    }
    if (simple_values(t) || t.dtype == DType::Bool) continue;
    for (InitKind k : {InitKind::Zeros, InitKind::Ones, InitKind::Randint}) {
      CallVariant v{c, which + "values " + init_kind_name(k)};
      TensorSpec& e = *tensors_of(v.call)[i];
      if (e.init == InitKind::Data || e.init == InitKind::File || e.init == InitKind::Eye) set_shape(e, e.shape);
      e.shape_from_file = false;
      e.file.clear();
      e.data = PyValue{};
      e.init = k;
      e.init_args.clear();
      if (k == InitKind::Randint) e.init_args = {{"high", PyValue::integer(4)}, {"low", PyValue::integer(0)}};
      out.push_back(std::move(v));
    }
  }
}

void argument_steps(const Case& c, std::vector<CallVariant>& out) {
  for (std::size_t k = 0; k < c.kwargs.size(); ++k) {
    CallVariant v{c, "keyword " + c.kwargs[k].first + " at its default"};
    v.call.kwargs.erase(v.call.kwargs.begin() + static_cast<std::ptrdiff_t>(k));
    out.push_back(std::move(v));
  }
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    const Input& in = c.inputs[i];
    if (in.kind != Input::Kind::Value || in.value.kind != PyValue::Kind::Float || in.value.f == 1.0) continue;
    CallVariant v{c, "argument " + std::to_string(i) + ": " + in.value.repr() + "->1.0"};
    v.call.inputs[i].value = PyValue::real(1.0);
    out.push_back(std::move(v));
  }
}

}  // namespace

std::int64_t input_elements(const Case& c) {
  std::int64_t n = 0;
  for_each_tensor(c, [&](const TensorSpec& t) { n += t.numel(); });
  return n;
}

std::int64_t call_complexity(const Case& c) {
  std::int64_t score = static_cast<std::int64_t>(c.kwargs.size());
  for_each_tensor(c, [&](const TensorSpec& t) {
    score += static_cast<std::int64_t>(t.shape.size());
    score += !t.is_contiguous() || t.storage_offset != 0;
    score += simple_values(t) || t.dtype == DType::Bool ? 0 : (t.init == InitKind::File || t.init == InitKind::Data) ? 2 : 1;
  });
  for (const auto& in : c.inputs)
    score += in.kind == Input::Kind::Value && in.value.kind == PyValue::Kind::Float && in.value.f != 1.0;
  return score;
}

std::vector<CallVariant> shrink_steps(const Case& c) {
  std::vector<CallVariant> out;
  dim_steps(c, out);
  layout_and_value_steps(c, out);
  argument_steps(c, out);
  const auto before = std::make_pair(input_elements(c), call_complexity(c));
  out.erase(std::remove_if(out.begin(), out.end(),
                           [&](const CallVariant& v) {
                             return std::make_pair(input_elements(v.call), call_complexity(v.call)) >= before;
                           }),
            out.end());
  return out;
}

std::string shapes_text(const Case& c) {
  std::string out;
  for_each_tensor(c, [&](const TensorSpec& t) { out += (out.empty() ? "" : " ") + dims_text(t.shape); });
  return out;
}

std::string dtypes_text(const Case& c) {
  std::vector<std::string> names;
  for_each_tensor(c, [&](const TensorSpec& t) {
    if (std::find(names.begin(), names.end(), dtype_name(t.dtype)) == names.end()) names.push_back(dtype_name(t.dtype));
  });
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : "+") + n;
  return out.empty() ? dtype_name(case_dtype(c)) : out;
}

namespace {

void set_dtype(Case& c, DType from, DType to) {
  c.dtype = to;
  c.dtype_spelling = std::string("torch.") + torch_dtype_name(to);
  for (TensorSpec* t : tensors_of(c)) {
    if (t->dtype != from && !dtype_is_floating(t->dtype)) continue;
    t->dtype = to;
    t->dtype_spelling = c.dtype_spelling;
    const bool floating = dtype_is_floating(to);
    if (!floating && (t->init == InitKind::Randn || t->init == InitKind::Xavier || t->init == InitKind::Uniform ||
                      t->init == InitKind::Rand)) {
      t->init = InitKind::Randint;
      t->init_args = {{"high", PyValue::integer(10)}, {"low", PyValue::integer(-10)}};
    }
  }
}

// Applies a layout to every tensor of the device under test with at least one dim; false when none changes.
bool set_layout(Case& c, const std::string& layout) {
  bool changed = false;
  for (TensorSpec* t : tensors_of(c)) {
    if (t->placement != Placement::DeviceUnderTest || t->shape.empty() || !shape_is_editable(*t)) continue;
    const std::size_t r = t->shape.size();
    std::vector<std::int64_t> stride = contiguous_strides(t->shape);
    std::int64_t offset = 0;
    if (layout == "transposed") {
      if (r < 2) continue;
      // Memory holds the last two dims swapped: a transposed view of a contiguous tensor.
      auto swapped = t->shape;
      std::swap(swapped[r - 1], swapped[r - 2]);
      auto s = contiguous_strides(swapped);
      std::swap(s[r - 1], s[r - 2]);
      stride = s;
    } else if (layout == "sliced") {
      for (auto& s : stride) s *= 2;
    } else if (layout == "offset") {
      offset = 3;
    }
    t->stride = stride;
    t->storage_offset = offset;
    t->preset.clear();
    t->preset_args.clear();
    changed = true;
  }
  return changed;
}

std::vector<std::int64_t> sizes_around(std::int64_t s) {
  std::vector<std::int64_t> out;
  std::int64_t below = 1;
  while (below * 2 < s) below *= 2;
  std::int64_t above = below;
  while (above <= s) above *= 2;
  for (std::int64_t n : {std::int64_t{1}, s - 1, s + 1, below, above})
    if (n >= 1 && n != s && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  return out;
}

std::string variant_id(const Case& c, const SweepVariant& v) {
  std::string shape = v.shape;
  std::replace(shape.begin(), shape.end(), ' ', ';');
  return c.name + "[" + v.dtype + "," + v.layout + "," + shape + "]";
}

}  // namespace

std::vector<SweepVariant> sweep_variants(const Case& c, std::size_t max_variants, std::size_t& left_out) {
  std::vector<SweepVariant> all;
  std::set<std::string> seen;
  auto add = [&](Case call, const std::string& layout) {
    SweepVariant v;
    v.call = std::move(call);
    v.layout = layout;
    v.dtype = dtypes_text(v.call);
    v.shape = shapes_text(v.call);
    v.call.name = variant_id(c, v);
    v.call.id = v.call.model + "::" + v.call.name;
    if (seen.insert(v.call.id).second) all.push_back(std::move(v));
  };
  add(c, "as written");
  std::vector<DType> dtypes{c.dtype};
  for (DType t : kSweepDtypes)
    if (t != c.dtype) dtypes.push_back(t);
  for (DType t : dtypes)
    for (const char* layout : {"as written", "contiguous", "transposed", "sliced", "offset"}) {
      Case v = c;
      set_dtype(v, c.dtype, t);
      if (std::string(layout) != "as written" && !set_layout(v, layout)) continue;
      add(std::move(v), layout);
    }
  Case probe = c;
  for (std::size_t p = 1; p <= max_rank(probe); ++p) {
    std::int64_t largest = 0;
    for (TensorSpec* t : tensors_of(probe)) largest = std::max(largest, size_at(*t, p));
    if (largest < 1) continue;
    for (std::int64_t n : sizes_around(largest)) {
      Case v = c;
      bool editable = true;
      for (TensorSpec* t : tensors_of(v))
        if (size_at(*t, p) == largest) editable = editable && shape_is_editable(*t);
      if (!editable) continue;
      for (TensorSpec* t : tensors_of(v))
        if (size_at(*t, p) == largest) resize_at(*t, p, n);
      add(std::move(v), "as written");
    }
  }
  left_out = all.size() > max_variants ? all.size() - max_variants : 0;
  if (all.size() > max_variants) all.resize(max_variants);
  return all;
}

}  // namespace opcheck
