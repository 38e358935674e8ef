#include "common/input_bounds.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "common/op_names.h"

namespace opcheck {
namespace {

/// One op family's index (or mask) argument: which parameter it is, which parameter it indexes, and along which dim.
struct IndexRule {
  std::vector<std::string_view> ops;     // names without torch./aten:: and without the in-place `_`
  std::vector<std::string_view> params;  // the positional parameters, in the order of the op's Python signature
  std::string_view index;                // the index (or mask) parameter
  std::string_view target;               // the parameter it indexes (for a mask: the source it takes values from)
  std::string_view dim;  // the parameter naming the indexed dim; "" dim 0; "*" every element; "[k]" element k, dim k
  bool negative_ok;      // the op takes -size..-1 as Python does
  InputBound::Kind kind = InputBound::Kind::IndexRange;
  // Where the result is undefined when index values repeat (torch's docs of index_copy_, index_put_, put_, scatter_),
  // unless `defined_by` is given (accumulate=True, a reduce): nowhere, anywhere in the index, or along `dim`.
  enum class Repeats { Defined, UndefinedAnywhere, UndefinedAlongDim };
  Repeats repeats = Repeats::Defined;
  std::string_view defined_by = {};
};

/// The one table. Ops that take negative indices only get them where the manifest's own range asks for them.
const std::vector<IndexRule>& index_rules() {
  using K = InputBound::Kind;
  using R = IndexRule::Repeats;
  const auto range = K::IndexRange;
  static const std::vector<IndexRule> rows{
      {{"getitem"}, {"self", "index"}, "index", "self", "", true},
      {{"index"}, {"self", "indices"}, "indices", "self", "[k]", true},
      {{"index_put"}, {"self", "indices", "values", "accumulate"}, "indices", "self", "[k]", true, range,
       R::UndefinedAnywhere, "accumulate"},
      {{"gather"}, {"input", "dim", "index"}, "index", "input", "dim", false},
      {{"scatter"}, {"input", "dim", "index", "src"}, "index", "input", "dim", false, range, R::UndefinedAlongDim,
       "reduce"},
      {{"scatter_add", "scatter_reduce"}, {"input", "dim", "index", "src"}, "index", "input", "dim", false},
      {{"index_select"}, {"input", "dim", "index"}, "index", "input", "dim", false},
      {{"index_copy"}, {"input", "dim", "index", "source"}, "index", "input", "dim", false, range,
       R::UndefinedAnywhere},
      {{"index_add", "index_fill", "index_reduce"}, {"input", "dim", "index", "source"}, "index", "input", "dim", false},
      {{"take"}, {"input", "index"}, "index", "input", "*", true},
      {{"put"}, {"input", "index", "source", "accumulate"}, "index", "input", "*", true, range, R::UndefinedAnywhere,
       "accumulate"},
      {{"nn.functional.embedding"}, {"input", "weight"}, "input", "weight", "", false},
      {{"embedding"}, {"weight", "indices"}, "indices", "weight", "", false},
      {{"masked_scatter"}, {"input", "mask", "source"}, "mask", "source", "", false, K::TrueCount},
      {{"_softmax_backward_data", "_log_softmax_backward_data"}, {"grad_output", "output", "dim", "input_dtype"},
       "output", "output", "dim", false, K::SoftmaxOutput},
  };
  return rows;
}

/// The op's name as the table spells it: `torch.Tensor.index_copy_` and `aten::index_copy_` are both "index_copy".
std::string table_name(const std::string& op) {
  const OpName n = parse_op_name(op);
  std::string name;
  if (n.form == OpName::Form::Python && n.python.rfind("torch.", 0) == 0) name = n.python.substr(6);
  else if (n.form == OpName::Form::Schema && n.qualified.rfind("aten::", 0) == 0) name = n.qualified.substr(6);
  else return {};
  if (name.size() > 1 && name.back() == '_' && name[name.size() - 2] != '_') name.pop_back();
  return name;
}

const IndexRule* rule_of(const Case& c) {
  const std::string name = table_name(c.op);
  for (const auto& r : index_rules())
    if (std::find(r.ops.begin(), r.ops.end(), name) != r.ops.end()) return &r;
  return nullptr;
}

/// An argument of the call by parameter name: the positional input in its place, else the keyword input of that
/// name (`keyword: index`), else nothing.
const Input* positional(const Case& c, const IndexRule& r, std::string_view param) {
  for (const auto& in : c.inputs)
    if (!in.keyword.empty() && in.keyword == param) return &in;
  const auto at = std::find(r.params.begin(), r.params.end(), param);
  const auto i = static_cast<std::size_t>(at - r.params.begin());
  return at != r.params.end() && i < c.inputs.size() && c.inputs[i].keyword.empty() ? &c.inputs[i] : nullptr;
}

std::optional<std::int64_t> int_param(const Case& c, const IndexRule& r, std::string_view param) {
  const PyValue* v = nullptr;
  if (const Input* in = positional(c, r, param); in && in->kind == Input::Kind::Value) v = &in->value;
  for (const auto& [k, kv] : c.kwargs)
    if (k == param) v = &kv;
  if (!v || v->kind != PyValue::Kind::Int) return std::nullopt;
  return v->i;
}

const TensorSpec* tensor_param(const Case& c, const IndexRule& r, std::string_view param) {
  const Input* in = positional(c, r, param);
  return in && in->kind == Input::Kind::Tensor && !in->tensor.shape_from_file ? &in->tensor : nullptr;
}

/// An index of integers: uint8, like bool, is a mask to getitem and index (and no op's index dtype otherwise).
bool integral(const TensorSpec& t) {
  return t.dtype != DType::Bool && t.dtype != DType::UInt8 && !dtype_is_floating(t.dtype) && !dtype_is_complex(t.dtype);
}

InputBound index_range(std::size_t input, int element, std::string arg, std::int64_t size, bool negative_ok,
                       std::string what) {
  InputBound b;
  b.input = input;
  b.element = element;
  b.arg = std::move(arg);
  b.low = negative_ok ? -size : 0;
  b.high = size;
  b.what = std::move(what);
  return b;
}

/// The argument is given and set: accumulate=True, a reduce.
bool given(const Case& c, const IndexRule& r, std::string_view param) {
  auto set = [](const PyValue& v) {
    return v.kind != PyValue::Kind::None && !(v.kind == PyValue::Kind::Bool && !v.b) &&
           !(v.kind == PyValue::Kind::Int && v.i == 0);
  };
  if (const Input* in = positional(c, r, param); in && in->kind == Input::Kind::Value && set(in->value)) return true;
  for (const auto& [k, v] : c.kwargs)
    if (k == param && set(v)) return true;
  return false;
}

bool repeats_undefined(const Case& c, const IndexRule& r) {
  return r.repeats != IndexRule::Repeats::Defined && (r.defined_by.empty() || !given(c, r, r.defined_by));
}

/// Index `arg` (input `input`, list element `element`) may not repeat along `along` (-1: anywhere) of its own dims;
/// `size` positions of the indexed dim are there to draw from.
InputBound distinct_bound(std::size_t input, int element, std::string arg, std::int64_t along, std::int64_t count,
                          std::int64_t size, std::string what) {
  InputBound b;
  b.kind = InputBound::Kind::Distinct;
  b.input = input;
  b.element = element;
  b.arg = std::move(arg);
  b.along = along;
  b.count = count;
  b.high = size;
  b.what = std::move(what);
  return b;
}

/// An index tensor into one dim (or every element) of the target, and where its values may not repeat.
void single_index_bound(const Case& c, const IndexRule& r, std::vector<InputBound>& out) {
  const TensorSpec* target = tensor_param(c, r, r.target);
  const Input* index = positional(c, r, r.index);
  if (!target || !index || index->kind != Input::Kind::Tensor || !integral(index->tensor)) return;
  const std::size_t position = static_cast<std::size_t>(index - c.inputs.data());
  if (r.dim == "*") {
    const std::string what = "the " + std::to_string(target->numel()) + " elements of " + std::string(r.target);
    out.push_back(index_range(position, -1, std::string(r.index), target->numel(), r.negative_ok, what));
    if (repeats_undefined(c, r) && index->tensor.numel() > 1)
      out.push_back(distinct_bound(position, -1, std::string(r.index), -1, index->tensor.numel(), target->numel(), what));
    return;
  }
  std::int64_t dim = 0;
  if (!r.dim.empty()) {
    const auto d = int_param(c, r, r.dim);
    if (!d) return;
    dim = *d;
  }
  const auto rank = static_cast<std::int64_t>(target->shape.size());
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank) return;
  const std::int64_t size = target->shape[static_cast<std::size_t>(dim)];
  const std::string what = "the size of dim " + std::to_string(dim) + " of " + std::string(r.target);
  out.push_back(index_range(position, -1, std::string(r.index), size, r.negative_ok, what));
  if (!repeats_undefined(c, r)) return;
  const TensorSpec& t = index->tensor;
  // scatter: no two positions of a line along `dim` may write one element; index_copy: no two indices may be equal.
  std::int64_t along = -1;
  if (r.repeats == IndexRule::Repeats::UndefinedAlongDim && !t.shape.empty()) {
    const auto index_rank = static_cast<std::int64_t>(t.shape.size());
    along = *int_param(c, r, r.dim);
    if (along < 0) along += index_rank;
    if (along < 0 || along >= index_rank) return;  // the op's own error says so
  }
  const std::int64_t count = along < 0 ? t.numel() : t.shape[static_cast<std::size_t>(along)];
  if (count > 1) out.push_back(distinct_bound(position, -1, std::string(r.index), along, count, size, what));
}

/// A list of index tensors, element k indexing dim k (integer tensors only: a bool mask takes as many dims as it has).
void list_index_bounds(const Case& c, const IndexRule& r, std::vector<InputBound>& out) {
  const TensorSpec* target = tensor_param(c, r, r.target);
  const Input* index = positional(c, r, r.index);
  if (!target || !index || index->kind != Input::Kind::TensorList) return;
  const std::size_t position = static_cast<std::size_t>(index - c.inputs.data());
  const std::size_t n = std::min(index->list.size(), target->shape.size());
  auto name = [&](std::size_t k) { return std::string(r.index) + "[" + std::to_string(k) + "]"; };
  auto what = [&](std::size_t k) { return "the size of dim " + std::to_string(k) + " of " + std::string(r.target); };
  for (std::size_t k = 0; k < n; ++k) {
    if (!integral(index->list[k])) return;
    out.push_back(index_range(position, static_cast<int>(k), name(k), target->shape[k], r.negative_ok, what(k)));
  }
  if (!repeats_undefined(c, r) || n == 0 || n < index->list.size()) return;
  // The index tuples are distinct when one random index of the list, holding every position of their broadcast
  // shape, holds distinct values: the first whose dim is large enough takes them.
  std::int64_t positions = 1;
  std::vector<std::int64_t> broadcast;
  for (std::size_t k = 0; k < index->list.size(); ++k) {
    const auto& shape = index->list[k].shape;
    if (shape.size() > broadcast.size()) broadcast.insert(broadcast.begin(), shape.size() - broadcast.size(), 1);
    for (std::size_t d = 0; d < shape.size(); ++d) {
      std::int64_t& b = broadcast[broadcast.size() - shape.size() + d];
      if (shape[d] != 1) b = shape[d];
    }
  }
  for (auto d : broadcast) positions *= d;
  if (positions <= 1) return;
  std::optional<std::size_t> chosen;
  for (std::size_t k = 0; k < n && !chosen; ++k)
    if (drawn_at_random(index->list[k]) && index->list[k].numel() == positions && target->shape[k] >= positions)
      chosen = k;
  for (std::size_t k = 0; k < n && !chosen; ++k)  // none can: the first random one says why
    if (drawn_at_random(index->list[k]) && index->list[k].numel() == positions) chosen = k;
  if (chosen) {
    out.push_back(distinct_bound(position, static_cast<int>(*chosen), name(*chosen), -1, positions,
                                 target->shape[*chosen], what(*chosen)));
    return;
  }
  for (std::size_t k = 0; k < n; ++k)
    if (drawn_at_random(index->list[k])) {
      InputBound b = distinct_bound(position, static_cast<int>(k), name(k), -1, positions, target->shape[k], what(k));
      b.impossible = "no one index of the list holds all " + std::to_string(positions) +
                     " positions of their broadcast shape, and opcheck draws the indices one by one";
      out.push_back(std::move(b));
      return;
    }
}

/// The output argument of a (log_)softmax backward op: the forward's result along `dim`.
void softmax_bound(const Case& c, const IndexRule& r, std::vector<InputBound>& out) {
  const Input* output = positional(c, r, r.index);
  const auto dim = int_param(c, r, r.dim);
  if (!output || output->kind != Input::Kind::Tensor || output->tensor.shape_from_file || !dim) return;
  const auto rank = std::max<std::int64_t>(static_cast<std::int64_t>(output->tensor.shape.size()), 1);
  const std::int64_t along = *dim < 0 ? *dim + rank : *dim;
  if (along < 0 || along >= rank) return;
  InputBound b;
  b.kind = InputBound::Kind::SoftmaxOutput;
  b.input = static_cast<std::size_t>(output - c.inputs.data());
  b.arg = std::string(r.index);
  b.along = along;
  b.log = table_name(c.op) == "_log_softmax_backward_data";
  b.what = std::string(b.log ? "a log_softmax" : "a softmax") + " along dim " + std::to_string(along);
  out.push_back(std::move(b));
}

std::int64_t product(const std::vector<std::int64_t>& v) {
  std::int64_t n = 1;
  for (auto d : v) n *= d;
  return n;
}

/// masked_scatter: every true value of the mask (as broadcast against self) takes the next element of source.
void mask_bound(const Case& c, const IndexRule& r, std::vector<InputBound>& out) {
  const TensorSpec* self = tensor_param(c, r, r.params[0]);
  const TensorSpec* mask = tensor_param(c, r, r.index);
  const TensorSpec* source = tensor_param(c, r, r.target);
  if (!self || !mask || !source || mask->dtype != DType::Bool) return;
  // The broadcast shape of self and mask, and the mask's stored values (its stride-0 dims hold one value each).
  const std::size_t rank = std::max(self->shape.size(), mask->shape.size());
  std::vector<std::int64_t> shape(rank, 1), stored(rank, 1);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::size_t from_end = rank - 1 - i;
    const std::int64_t s = from_end < self->shape.size() ? self->shape[self->shape.size() - 1 - from_end] : 1;
    std::int64_t m = 1;
    if (from_end < mask->shape.size()) {
      const std::size_t d = mask->shape.size() - 1 - from_end;
      m = mask->shape[d];
      stored[i] = d < mask->stride.size() && mask->stride[d] == 0 ? 1 : m;
    }
    if (s != m && s != 1 && m != 1) return;  // not broadcastable: the op's own error says so
    shape[i] = std::max(s, m);
  }
  const std::int64_t values = product(stored), total = product(shape);
  if (values <= 0 || total <= 0) return;
  const std::int64_t repeat = total / values;
  InputBound b;
  b.kind = InputBound::Kind::TrueCount;
  b.input = static_cast<std::size_t>(positional(c, r, r.index) - c.inputs.data());
  b.arg = std::string(r.index);
  b.max_true = source->numel() / repeat;
  b.limit = source->numel();
  b.spread = total / std::max<std::int64_t>(mask->numel(), 1);
  b.what = "the " + std::to_string(source->numel()) + " elements of " + std::string(r.target);
  if (repeat > 1) b.what += ", each true value taking " + std::to_string(repeat) + " as the mask broadcasts";
  out.push_back(std::move(b));
}

}  // namespace

const TensorSpec& InputBound::spec(const Case& c) const {
  const Input& in = c.inputs.at(input);
  return element < 0 ? in.tensor : in.list.at(static_cast<std::size_t>(element));
}

TensorSpec& InputBound::spec(Case& c) const {
  Input& in = c.inputs.at(input);
  return element < 0 ? in.tensor : in.list.at(static_cast<std::size_t>(element));
}

std::vector<InputBound> input_bounds(const Case& c) {
  std::vector<InputBound> out;
  const IndexRule* r = rule_of(c);
  if (!r) return out;
  if (r->kind == InputBound::Kind::TrueCount) mask_bound(c, *r, out);
  else if (r->kind == InputBound::Kind::SoftmaxOutput) softmax_bound(c, *r, out);
  else if (r->dim == "[k]") list_index_bounds(c, *r, out);
  else single_index_bound(c, *r, out);
  return out;
}

bool drawn_at_random(const TensorSpec& t) {
  return t.init == InitKind::Rand || t.init == InitKind::Uniform || t.init == InitKind::Randint;
}

}  // namespace opcheck
