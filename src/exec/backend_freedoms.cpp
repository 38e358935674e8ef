#include "exec/backend_freedoms.h"

#include <cstring>

#include "judge/backend_freedoms_table.h"

namespace opcheck::exec {
namespace {


std::string overload_of(const std::string& resolved_op) {
  const auto dot = resolved_op.find('.');
  return dot == std::string::npos ? std::string() : resolved_op.substr(dot + 1);
}

bool flag(const NamedArgs& args, const char* name) {
  const c10::IValue* v = named_arg(args, name);
  return v != nullptr && v->isBool() && v->toBool();
}

/// Whether a rule's condition holds: nullptr (always), "accumulate" (a bool argument that is true) or "driver=gelsy"
/// (a string argument that is this value, or None: its default).
bool rule_applies(const NamedArgs& args, const char* only_with) {
  if (only_with == nullptr) return true;
  const std::string cond = only_with;
  const auto eq = cond.find('=');
  if (eq == std::string::npos) return flag(args, only_with);
  const c10::IValue* v = named_arg(args, cond.substr(0, eq));
  return v == nullptr || v->isNone() || (v->isString() && v->toStringRef() == cond.substr(eq + 1));
}

// ---- Positions written more than once ----------------------------------------------------------------------------

/// The flat positions of `self` a call writes and the values it writes there, one per write.
struct Writes {
  at::Tensor dest;    // int64, flat positions into self
  at::Tensor values;  // self's dtype, the same shape as dest
};

at::Tensor positions_of(const at::Tensor& self) {
  return at::arange(self.numel(), at::TensorOptions().dtype(at::kLong)).view(self.sizes());
}

int64_t dim_arg(const NamedArgs& args, const at::Tensor& self) {
  const c10::IValue* d = named_arg(args, "dim");
  int64_t dim = d && d->isInt() ? d->toInt() : 0;
  return dim < 0 ? dim + self.dim() : dim;
}

/// The writes of an op whose result is undefined where they repeat; nullopt for any other op or call.
std::optional<Writes> writes_of(const std::string& resolved_op, const NamedArgs& args) {
  if (!leaves_repeated_writes_undefined(resolved_op)) return std::nullopt;  // the ops: judge/backend_freedoms_table
  const std::string op = op_without_overload(resolved_op);
  const c10::IValue* self_v = named_arg(args, "self");
  if (!self_v || !self_v->isTensor() || self_v->toTensor().dim() == 0) return std::nullopt;
  const at::Tensor self = self_v->toTensor();
  const at::Tensor ids = positions_of(self);
  auto tensor = [&](const char* name) -> at::Tensor {
    const c10::IValue* v = named_arg(args, name);
    return v && v->isTensor() ? v->toTensor() : at::Tensor();
  };
  if (op == "aten::index_copy" || op == "aten::index_copy_") {
    const at::Tensor index = tensor("index"), source = tensor("source");
    if (!index.defined() || !source.defined()) return std::nullopt;
    return Writes{ids.index_select(dim_arg(args, self), index.reshape(-1)), source};
  }
  if ((op == "aten::index_put" || op == "aten::index_put_" || op == "aten::_index_put_impl_") &&
      !flag(args, "accumulate")) {
    const c10::IValue* indices = named_arg(args, "indices");
    const at::Tensor values = tensor("values");
    if (!indices || !indices->isList() || !values.defined()) return std::nullopt;
    c10::List<std::optional<at::Tensor>> list;
    for (const c10::IValue& i : indices->toListRef()) list.push_back(i.isTensor() ? std::optional(i.toTensor()) : std::nullopt);
    const at::Tensor dest = at::index(ids, list);
    return Writes{dest, values.expand_as(dest)};
  }
  if ((op == "aten::scatter" || op == "aten::scatter_") &&
      (overload_of(resolved_op) == "src" || overload_of(resolved_op) == "value")) {
    const at::Tensor index = tensor("index");
    if (!index.defined()) return std::nullopt;
    const at::Tensor dest = ids.gather(dim_arg(args, self), index);
    const at::Tensor src = tensor("src");
    if (src.defined()) {
      at::Tensor values = src;
      for (int64_t d = 0; d < index.dim(); ++d) values = values.narrow(d, 0, index.size(d));
      return Writes{dest, values};
    }
    const c10::IValue* value = named_arg(args, "value");
    if (!value || !value->isScalar()) return std::nullopt;
    return Writes{dest, at::full(dest.sizes(), value->toScalar(), self.options())};
  }
  if ((op == "aten::put" || op == "aten::put_") && !flag(args, "accumulate")) {
    const at::Tensor index = tensor("index"), source = tensor("source");
    if (!index.defined() || !source.defined()) return std::nullopt;
    at::Tensor dest = index.reshape(-1).to(at::kLong);
    dest = at::where(dest < 0, dest + self.numel(), dest);
    return Writes{dest, source.reshape(-1)};
  }
  return std::nullopt;
}

/// Elements equal as values (NaN equals NaN): what "the same value" means for a written or a tied element.
at::Tensor same_values(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor eq = a.eq(b);
  if (a.is_floating_point() || a.is_complex()) eq.logical_or_(a.isnan().logical_and(b.isnan()));
  return eq;
}

/// The flat positions of self, each true where the device's value is one of the several values written there.
at::Tensor device_chose_a_writer(const Writes& w, const at::Tensor& device_flat) {
  const int64_t n = device_flat.numel();
  const at::Tensor dest = w.dest.reshape(-1), values = w.values.reshape(-1).to(device_flat.scalar_type());
  if (dest.numel() == 0 || (dest.min().item<int64_t>() < 0) || dest.max().item<int64_t>() >= n)
    return at::zeros({n}, at::kBool);
  const at::Tensor writes = at::zeros({n}, at::kLong).index_add_(0, dest, at::ones_like(dest));
  const at::Tensor hit = same_values(device_flat.index_select(0, dest), values).to(at::kLong);
  const at::Tensor hits = at::zeros({n}, at::kLong).index_add_(0, dest, hit);
  return writes.ge(2).logical_and_(hits.gt(0));
}

/// `expected` with the flat positions `take` replaced by the device's values (in `expected`'s dtype).
at::Tensor take_device(const at::Tensor& expected, const at::Tensor& device, const at::Tensor& take) {
  const at::Tensor e = expected.reshape(-1), d = device.reshape(-1).to(expected.scalar_type());
  return at::where(take, d, e).view(expected.sizes());
}

bool same_shape_tensor(const c10::IValue& v, const at::Tensor& like) {
  return v.isTensor() && v.toTensor().defined() && v.toTensor().sizes() == like.sizes();
}

std::string align_writes(const Writes& w, const RunValues& device, std::vector<RunValues*>& expected) {
  // The op's result is self as written: its output (out-of-place: a new tensor; in place: self) and self mutated.
  const at::Tensor* written = device.written.empty() ? nullptr : &device.written[0];
  const at::Tensor* result = device.output.isTensor() ? &device.output.toTensor() : written;
  if (!result || !result->defined()) return {};
  const at::Tensor take = device_chose_a_writer(w, result->cpu().reshape(-1));
  const int64_t taken = take.count_nonzero().item<int64_t>();
  if (taken == 0) return {};
  for (RunValues* e : expected) {
    if (device.output.isTensor() && same_shape_tensor(e->output, *result))
      e->output = take_device(e->output.toTensor(), device.output.toTensor().cpu(), take);
    if (written && !e->written.empty() && e->written[0].sizes() == written->sizes())
      e->written[0] = take_device(e->written[0], written->cpu(), take);
  }
  return std::to_string(taken) + " position(s) written more than once hold the device's value, one of the values "
         "written there (PyTorch leaves which write wins undefined when indices repeat)";
}

// ---- Indices of tied elements ------------------------------------------------------------------------------------

/// Where an op's index output is and along which dim it indexes `self`; nullopt for ops without one.
struct IndexOutput {
  std::size_t output = 1;  // place in the returns
  bool reduced = false;    // the dim was reduced: indices need it back (unsqueeze) unless keepdim
  bool flat = false;       // argmax/argmin without a dim: indices into self flattened
};

std::optional<IndexOutput> index_output_of(const std::string& resolved_op, const NamedArgs& args) {
  const TiedIndexRule* rule = tied_index_rule(resolved_op);  // the ops: judge/backend_freedoms_table
  if (!rule) return std::nullopt;
  const std::string op = op_without_overload(resolved_op);
  if (op == "aten::sort" && flag(args, "stable")) return std::nullopt;  // a stable sort defines the order of ties
  // argmax/argmin without a dim index self flattened.
  const c10::IValue* dim = named_arg(args, "dim");
  const bool flat = (op == "aten::argmax" || op == "aten::argmin") && (!dim || dim->isNone());
  return IndexOutput{static_cast<std::size_t>(rule->output), rule->reduced, flat};
}

/// self's elements that `idx` points at, along `dim` (or flat).
at::Tensor pointed_at(const at::Tensor& self, const at::Tensor& idx, int64_t dim, const IndexOutput& io, bool keepdim) {
  if (io.flat) return self.reshape(-1).index_select(0, idx.reshape(-1)).view(idx.sizes());
  const at::Tensor i = io.reduced && !keepdim ? idx.unsqueeze(dim) : idx;
  at::Tensor v = self.gather(dim, i);
  return io.reduced && !keepdim ? v.squeeze(dim) : v;
}

const c10::IValue* output_at(const c10::IValue& out, std::size_t k) {
  if (out.isTuple()) {
    const auto& items = out.toTupleRef().elements();
    return k < items.size() ? &items[k] : nullptr;
  }
  return k == 0 ? &out : nullptr;
}

c10::IValue with_output(const c10::IValue& out, std::size_t k, at::Tensor t) {
  if (!out.isTuple()) return t;
  std::vector<c10::IValue> items = out.toTupleRef().elements().vec();
  items[k] = std::move(t);
  return c10::ivalue::Tuple::create(std::move(items));
}

std::string align_ties(const IndexOutput& io, const NamedArgs& args, const RunValues& device,
                       std::vector<RunValues*>& expected) {
  const c10::IValue* self_v = named_arg(args, "self");
  const c10::IValue* dev_v = output_at(device.output, io.output);
  if (!self_v || !self_v->isTensor() || !dev_v || !dev_v->isTensor() || expected.empty()) return {};
  const at::Tensor self = self_v->toTensor();
  if (self.dim() == 0 || self.numel() == 0) return {};
  const at::Tensor dev = dev_v->toTensor().cpu();
  const c10::IValue* ref_v = output_at(expected.front()->output, io.output);
  if (!ref_v || !ref_v->isTensor() || ref_v->toTensor().sizes() != dev.sizes() || dev.scalar_type() != at::kLong)
    return {};
  const at::Tensor ref = ref_v->toTensor();
  const int64_t extent = io.flat ? self.numel() : self.size(dim_arg(args, self));
  if (dev.numel() == 0 || dev.min().item<int64_t>() < 0 || dev.max().item<int64_t>() >= extent) return {};
  const bool keepdim = flag(args, "keepdim");
  const int64_t dim = io.flat ? 0 : dim_arg(args, self);
  const at::Tensor take = same_values(pointed_at(self, dev, dim, io, keepdim), pointed_at(self, ref, dim, io, keepdim))
                              .logical_and_(dev.ne(ref));
  const int64_t taken = take.count_nonzero().item<int64_t>();
  if (taken == 0) return {};
  for (RunValues* e : expected) {
    const c10::IValue* v = output_at(e->output, io.output);
    if (v && v->isTensor() && v->toTensor().sizes() == dev.sizes())
      e->output = with_output(e->output, io.output, at::where(take, dev, v->toTensor()));
  }
  return std::to_string(taken) + " index(es) differ from the CPU's but point at an element equal to the one the "
         "CPU's points at (PyTorch leaves the order of tied elements unspecified)";
}

// ---- Unique values in an undefined order --------------------------------------------------------------------------

/// Beyond this many unique values the pairing (n x n comparisons) is not tried: the values are judged as they are.
constexpr int64_t kMaxUniquePairing = 4096;

std::string align_unique(const UnorderedUniqueRule& rule, const NamedArgs& args, const RunValues& device,
                         std::vector<RunValues*>& expected) {
  const c10::IValue* sorted = named_arg(args, "sorted");
  if (sorted == nullptr || !sorted->isBool() || sorted->toBool()) return {};  // sorted=True defines the order
  const c10::IValue* dev_v = output_at(device.output, 0);
  if (!dev_v || !dev_v->isTensor() || !dev_v->toTensor().defined()) return {};
  const at::Tensor dev = dev_v->toTensor().cpu();
  const c10::IValue* dim_v = named_arg(args, "dim");
  const bool flat = dim_v == nullptr || !dim_v->isInt();
  const int64_t dim = flat ? 0 : c10::maybe_wrap_dim(dim_v->toInt(), dev.dim());
  // Each unique value as a row: the elements of one slice along dim (unique_dim), or one element.
  auto rows = [&](const at::Tensor& t) {
    return flat ? t.reshape({-1, 1}) : t.movedim(dim, 0).reshape({t.size(dim), -1});
  };
  const at::Tensor d = rows(dev);
  const int64_t n = d.size(0);
  if (n < 2 || n > kMaxUniquePairing) return {};
  // First the pairing with every expected result (the reference, the float64 result): all of them, or none, change.
  std::vector<at::Tensor> pairings;
  for (RunValues* e : expected) {
    const c10::IValue* ev = output_at(e->output, 0);
    if (!e->output.isTuple() || !ev || !ev->isTensor() || ev->toTensor().sizes() != dev.sizes()) return {};
    const at::Tensor r = rows(ev->toTensor());
    const at::Tensor dd = d.to(r.scalar_type());
    const std::vector<int64_t> shape{n, n, r.size(1)};
    const at::Tensor match = same_values(dd.unsqueeze(1).expand(shape), r.unsqueeze(0).expand(shape)).all(2);
    // Each device value equals exactly one reference value and the other way round: a permutation.
    if (!match.sum(1).eq(1).all().item<bool>() || !match.sum(0).eq(1).all().item<bool>()) return {};
    pairings.push_back(match.to(at::kLong).argmax(1));  // device value i is reference value p[i]
    const c10::IValue* inverse = output_at(e->output, 1);  // indices into the values: each must be one of them
    if (inverse && inverse->isTensor() && inverse->toTensor().numel() > 0 &&
        (inverse->toTensor().min().item<int64_t>() < 0 || inverse->toTensor().max().item<int64_t>() >= n))
      return {};
  }
  const int64_t moved = pairings.front().ne(at::arange(n, pairings.front().options())).sum().item<int64_t>();
  if (moved == 0) return {};
  for (std::size_t k = 0; k < expected.size(); ++k) {
    const at::Tensor& p = pairings[k];
    std::vector<c10::IValue> items = expected[k]->output.toTupleRef().elements().vec();
    items[0] = items[0].toTensor().index_select(flat ? 0 : dim, p);
    if (items.size() > 1 && items[1].isTensor() && items[1].toTensor().numel() > 0) {
      const at::Tensor inverse = items[1].toTensor();
      const at::Tensor where = at::argsort(p);  // reference value j is device value where[j]
      items[1] = where.index_select(0, inverse.reshape(-1)).view(inverse.sizes()).to(inverse.scalar_type());
    }
    if (items.size() > 2 && items[2].isTensor() && items[2].toTensor().numel() == n)
      items[2] = items[2].toTensor().index_select(0, p);
    expected[k]->output = c10::ivalue::Tuple::create(std::move(items));
  }
  return std::to_string(moved) + " unique value(s) come in another order than the CPU's; inverse indices and counts "
         "were compared in the device's order (" + rule.rule + ")";
}

}  // namespace

const c10::IValue* named_arg(const NamedArgs& args, const std::string& name) {
  for (const auto& [n, v] : args)
    if (n == name) return &v;
  return nullptr;
}

std::string widened_output(const std::string& resolved_op, const std::string& what, at::ScalarType reference,
                           at::ScalarType device) {
  if ((reference != at::kHalf && reference != at::kBFloat16) || device != at::kFloat) return {};
  const std::string op = op_without_overload(resolved_op);
  for (const WidenedOutputRule& w : widened_output_rules()) {
    if (op != w.op) continue;
    for (int k : w.outputs)
      if (what == "output[" + std::to_string(k) + "]")
        return what + " is " + std::string(c10::toString(device)) + " where the CPU gives " + c10::toString(reference) +
               ", compared by value: a backend freedom (" + w.rule + ")";
  }
  return {};
}

const AccumulationRule* accumulation_rule_for(const std::string& resolved_op, const NamedArgs& args) {
  const std::string op = op_without_overload(resolved_op);
  for (const AccumulationRule& r : accumulation_rules())
    if (op == r.op && rule_applies(args, r.only_with)) return &r;
  return nullptr;
}

std::string nondeterministic_by_design(const std::string& resolved_op, const NamedArgs& args) {
  const std::string op = op_without_overload(resolved_op);
  for (const NondeterministicRule& n : nondeterministic_rules())
    if (op == n.op && rule_applies(args, n.only_with))
      return n.documented ? std::string("PyTorch documents the op as nondeterministic on some backends "
                                        "(torch.use_deterministic_algorithms: ") + n.doc + ")"
                          : std::string(n.doc);
  return {};
}

namespace {

/// Each element's position in `t`'s storage, counted from its storage offset (a Long tensor shaped as `t`).
at::Tensor storage_positions(const at::Tensor& t) {
  at::Tensor pos = at::zeros(t.sizes(), at::TensorOptions().dtype(at::kLong));
  for (std::int64_t d = 0; d < t.dim(); ++d) {
    std::vector<std::int64_t> shape(static_cast<std::size_t>(t.dim()), 1);
    shape[static_cast<std::size_t>(d)] = t.size(d);
    pos.add_(at::arange(t.size(d), pos.options()).mul_(t.stride(d)).view(shape));
  }
  return pos;
}

/// The elements `self` held before the call, counted from its storage offset: what the storage of the copy the call
/// got holds (exec/engine.h, copy_with_layout: its numel when contiguous, else the span its strides reach).
std::int64_t old_storage_elements(const at::Tensor& self) {
  if (self.numel() == 0) return 0;
  std::int64_t span = 1;
  for (std::int64_t d = 0; d < self.dim(); ++d) span += (self.size(d) - 1) * self.stride(d);
  return span;
}

/// `e` with its elements at storage positions `defined` and beyond taken from `device`; how many that is in `taken`.
c10::IValue take_tail(const c10::IValue& e, const c10::IValue& device, std::int64_t defined, std::int64_t& taken) {
  if (!e.isTensor() || !device.isTensor()) return e;
  const at::Tensor& ref = e.toTensor();
  const at::Tensor& dev = device.toTensor();
  if (!ref.defined() || !dev.defined() || ref.layout() != at::kStrided || dev.layout() != at::kStrided ||
      ref.sizes() != dev.sizes() || ref.scalar_type() != dev.scalar_type())
    return e;  // a mismatch the comparison reports as it is
  const at::Tensor tail = storage_positions(ref).ge(defined);
  taken = tail.sum().item<std::int64_t>();
  if (taken == 0) return e;
  return at::where(tail, dev.cpu(), ref);
}

}  // namespace

std::string align_uninitialised_tail(const std::string& resolved_op, const NamedArgs& args, const RunValues& device,
                                     std::vector<RunValues*> expected) {
  const UninitialisedTailRule* rule = uninitialised_tail_rule(resolved_op);
  const c10::IValue* self = rule ? named_arg(args, "self") : nullptr;
  if (!self || !self->isTensor() || !self->toTensor().defined()) return {};
  const std::int64_t defined = old_storage_elements(self->toTensor());
  std::int64_t taken = 0, total = 0;
  for (RunValues* e : expected) {
    e->output = take_tail(e->output, device.output, defined, taken);
    for (std::size_t k = 0; k < e->written.size() && k < device.written.size(); ++k) {
      std::int64_t t = 0;
      e->written[k] = take_tail(e->written[k], device.written[k], defined, t).toTensor();
      taken = std::max(taken, t);
    }
  }
  if (taken == 0) return {};
  if (device.output.isTensor() && device.output.toTensor().defined()) total = device.output.toTensor().numel();
  else if (!device.written.empty() && device.written[0].defined()) total = device.written[0].numel();
  return std::to_string(taken) + " of the " + std::to_string(total) + " element(s) are new and uninitialised (" +
         rule->rule + "): they hold the device's values, compared by shape and dtype only; the first " +
         std::to_string(defined) + " in storage order are compared by value";
}

std::string align_undefined(const std::string& resolved_op, const NamedArgs& args, const RunValues& device,
                            std::vector<RunValues*> expected) {
  if (args.empty() || expected.empty()) return {};
  try {
    if (uninitialised_tail_rule(resolved_op)) return align_uninitialised_tail(resolved_op, args, device, expected);
    if (const std::optional<Writes> w = writes_of(resolved_op, args)) return align_writes(*w, device, expected);
    if (const std::optional<IndexOutput> io = index_output_of(resolved_op, args))
      return align_ties(*io, args, device, expected);
    if (const UnorderedUniqueRule* u = unordered_unique_rule(resolved_op))
      return align_unique(*u, args, device, expected);
  } catch (const std::exception&) {
    // Arguments the freedom cannot read (a shape the op would refuse): the values are judged as they are.
  }
  return {};
}

}  // namespace opcheck::exec
