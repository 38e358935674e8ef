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
};

/// The one table. Ops that take negative indices only get them where the manifest's own range asks for them.
const std::vector<IndexRule>& index_rules() {
  using K = InputBound::Kind;
  static const std::vector<IndexRule> rows{
      {{"getitem"}, {"self", "index"}, "index", "self", "", true},
      {{"index"}, {"self", "indices"}, "indices", "self", "[k]", true},
      {{"index_put"}, {"self", "indices", "values", "accumulate"}, "indices", "self", "[k]", true},
      {{"gather"}, {"input", "dim", "index"}, "index", "input", "dim", false},
      {{"scatter", "scatter_add", "scatter_reduce"}, {"input", "dim", "index", "src"}, "index", "input", "dim", false},
      {{"index_select"}, {"input", "dim", "index"}, "index", "input", "dim", false},
      {{"index_add", "index_copy", "index_fill", "index_reduce"},
       {"input", "dim", "index", "source"}, "index", "input", "dim", false},
      {{"take"}, {"input", "index"}, "index", "input", "*", true},
      {{"nn.functional.embedding"}, {"input", "weight"}, "input", "weight", "", false},
      {{"embedding"}, {"weight", "indices"}, "indices", "weight", "", false},
      {{"masked_scatter"}, {"input", "mask", "source"}, "mask", "source", "", false, K::TrueCount},
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

/// An argument of the call by parameter name: the positional input in its place, else nothing (a tensor is never a
/// keyword argument in a manifest).
const Input* positional(const Case& c, const IndexRule& r, std::string_view param) {
  const auto at = std::find(r.params.begin(), r.params.end(), param);
  const auto i = static_cast<std::size_t>(at - r.params.begin());
  return at != r.params.end() && i < c.inputs.size() ? &c.inputs[i] : nullptr;
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

/// An index tensor into one dim (or every element) of the target.
void single_index_bound(const Case& c, const IndexRule& r, std::vector<InputBound>& out) {
  const TensorSpec* target = tensor_param(c, r, r.target);
  const Input* index = positional(c, r, r.index);
  if (!target || !index || index->kind != Input::Kind::Tensor || !integral(index->tensor)) return;
  const std::size_t position = static_cast<std::size_t>(index - c.inputs.data());
  if (r.dim == "*") {
    out.push_back(index_range(position, -1, std::string(r.index), target->numel(), r.negative_ok,
                              "the " + std::to_string(target->numel()) + " elements of " + std::string(r.target)));
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
  out.push_back(index_range(position, -1, std::string(r.index), target->shape[static_cast<std::size_t>(dim)],
                            r.negative_ok,
                            "the size of dim " + std::to_string(dim) + " of " + std::string(r.target)));
}

/// A list of index tensors, element k indexing dim k (integer tensors only: a bool mask takes as many dims as it has).
void list_index_bounds(const Case& c, const IndexRule& r, std::vector<InputBound>& out) {
  const TensorSpec* target = tensor_param(c, r, r.target);
  const Input* index = positional(c, r, r.index);
  if (!target || !index || index->kind != Input::Kind::TensorList) return;
  const std::size_t position = static_cast<std::size_t>(index - c.inputs.data());
  for (std::size_t k = 0; k < index->list.size() && k < target->shape.size(); ++k) {
    if (!integral(index->list[k])) return;
    out.push_back(index_range(position, static_cast<int>(k), std::string(r.index) + "[" + std::to_string(k) + "]",
                              target->shape[k], r.negative_ok, "the size of dim " + std::to_string(k) + " of " +
                                                                   std::string(r.target)));
  }
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
  else if (r->dim == "[k]") list_index_bounds(c, *r, out);
  else single_index_bound(c, *r, out);
  return out;
}

bool drawn_at_random(const TensorSpec& t) {
  return t.init == InitKind::Rand || t.init == InitKind::Uniform || t.init == InitKind::Randint;
}

}  // namespace opcheck
