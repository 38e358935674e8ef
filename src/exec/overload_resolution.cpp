#include "exec/overload_resolution.h"

#include <algorithm>
#include <tuple>

#include "common/edit_distance.h"
#include "exec/op_python_names.h"

namespace opcheck::exec {
namespace {

std::string overload_name(const c10::OperatorHandle& op) {
  const auto& n = op.operator_name();
  return n.overload_name.empty() ? n.name : n.name + "." + n.overload_name;
}

std::vector<std::size_t> written_slots_of(const c10::FunctionSchema& schema, const Binding& b) {
  std::vector<std::size_t> out;
  const auto& args = schema.arguments();
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto* alias = args[i].alias_info();
    if (!alias || !alias->isWrite() || !b.args[i]) continue;
    for (auto s : b.args[i]->slots) out.push_back(s);
  }
  return out;
}

c10::IValue outputs_of(c10::Stack& stack, std::size_t n_returns) {
  if (n_returns == 0) return c10::IValue();
  if (n_returns == 1) return std::move(stack.at(0));
  std::vector<c10::IValue> items(stack.begin(), stack.begin() + static_cast<std::ptrdiff_t>(n_returns));
  return c10::ivalue::Tuple::create(std::move(items));
}

/// A dispatcher op called through its boxed interface.
class DispatcherCall final : public Invocation {
 public:
  DispatcherCall(c10::OperatorHandle op, Binding binding) : op_(std::move(op)), binding_(std::move(binding)) {
    resolved_op = overload_name(op_);
    written_slots = written_slots_of(op_.schema(), binding_);
  }
  c10::IValue run(const std::vector<at::Tensor>& tensors, const RunContext& ctx) const override {
    c10::Stack stack = make_stack(op_.schema(), binding_, tensors, ctx);
    if (ctx.kernel_of) op_.redispatchBoxed(c10::DispatchKeySet(*ctx.kernel_of), &stack);
    else op_.callBoxed(&stack);
    return outputs_of(stack, op_.schema().returns().size());
  }
  bool runs_kernel_of() const override { return true; }
  std::unique_ptr<Invocation> with_argument(const std::string& name, const PyValue& value) const override {
    const auto& args = op_.schema().arguments();
    for (std::size_t i = 0; i < args.size() && i < binding_.args.size(); ++i) {
      if (args[i].name() != name) continue;
      Binding changed = binding_;
      changed.args[i] = ArgRef::of_value(value);
      return std::make_unique<DispatcherCall>(op_, std::move(changed));
    }
    return nullptr;
  }
  NamedArgs named_arguments(const std::vector<at::Tensor>& tensors) const override {
    const c10::Stack stack = make_stack(op_.schema(), binding_, tensors, RunContext{});
    NamedArgs out;
    const auto& args = op_.schema().arguments();
    for (std::size_t i = 0; i < args.size() && i < stack.size(); ++i) out.emplace_back(args[i].name(), stack[i]);
    return out;
  }

 private:
  c10::OperatorHandle op_;
  Binding binding_;
};

/// A reference decomposition bound to the native op's schema.
class DecomposedCall final : public Invocation {
 public:
  DecomposedCall(const Decomposition& d, Binding binding) : d_(d), binding_(std::move(binding)) {
    resolved_op = d.uses;
    decomposed = true;
  }
  c10::IValue run(const std::vector<at::Tensor>& tensors, const RunContext& ctx) const override {
    c10::Stack stack = make_stack(decomposition_schema(d_), binding_, tensors, ctx);
    return d_.run(stack);
  }

 private:
  const Decomposition& d_;
  Binding binding_;
};

}  // namespace

std::string closest_name(const std::string& word, const std::vector<std::string>& candidates) {
  if (word.size() > kMaxSpelledNameLength) return {};
  const std::size_t limit = std::max<std::size_t>(1, std::min<std::size_t>(3, word.size() / 3));
  std::string best;
  std::size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    if (c == word) continue;
    const std::size_t d = edit_distance(word, c);
    // Ties go to public names, then the shorter, then the alphabetically first: stable across runs.
    const bool better = d < best_d || (d == best_d && !best.empty() &&
                                       std::make_tuple(c[0] == '_', c.size(), c) <
                                           std::make_tuple(best[0] == '_', best.size(), best));
    if (better) {
      best = c;
      best_d = d;
    }
  }
  return best;
}

Resolution OpResolver::resolve_overloads(const std::string& qualified, const std::optional<std::string>& overload,
                                         CaseCall call, bool hide_python_scalar) const {
  Resolution r;
  auto it = ops_.find(qualified);
  if (it == ops_.end()) {
    r.error = "internal: " + qualified + " vanished from the dispatcher";
    r.kind = VerdictKind::InternalError;
    r.call = std::move(call);
    return r;
  }
  std::optional<Binding> best;
  const c10::OperatorHandle* best_op = nullptr;
  std::string reasons;
  bool overload_found = false;
  for (const auto& op : it->second) {
    const std::string& ov = op.operator_name().overload_name;
    if (overload && ov != *overload) continue;
    if (!overload && hide_python_scalar && python_hidden_overloads().count(overload_name(op))) continue;
    overload_found = true;
    std::string why;
    auto b = bind_to_schema(op.schema(), call.args, call.slots, why);
    if (!b) {
      reasons += "\n  " + overload_name(op) + ": " + why;
      continue;
    }
    if (!best || b->cost < best->cost) {
      best = std::move(b);
      best_op = &op;
    }
  }
  if (overload && !overload_found) {
    std::vector<std::string> names;
    std::string list;
    for (const auto& op : it->second) {
      names.push_back(op.operator_name().overload_name);
      list += (list.empty() ? "" : ", ") + (names.back().empty() ? std::string("default") : names.back());
    }
    r.error = qualified + " has no overload '" + *overload + "'";
    const std::string near = closest_name(*overload, names);
    if (!near.empty()) r.error += " (did you mean " + qualified + "." + near + "?)";
    r.error += "; its overloads: " + list;
    r.kind = VerdictKind::NoSuchOverload;
    r.call = std::move(call);
    return r;
  }
  if (!best) {
    r.error = "arguments " + call.args.describe() + " do not bind to " +
              (overload ? qualified + (overload->empty() ? "" : "." + *overload) : "any overload of " + qualified) + ":" +
              reasons;
    r.kind = VerdictKind::ArgumentsDoNotBind;
    r.call = std::move(call);
    return r;
  }
  r.invocation = std::make_unique<DispatcherCall>(*best_op, std::move(*best));
  r.call = std::move(call);
  return r;
}

Resolution resolve_decomposition(const Decomposition& d, CaseCall call) {
  Resolution r;
  const auto& schema = decomposition_schema(d);
  std::string why;
  auto b = bind_to_schema(schema, call.args, call.slots, why);
  if (!b) {
    r.error = "arguments " + call.args.describe() + " do not bind to " + schema.name() + ": " + why;
    r.kind = VerdictKind::ArgumentsDoNotBind;
    r.call = std::move(call);
    return r;
  }
  for (const auto& [name, value] : parse_assignments(d.only)) {
    for (std::size_t i = 0; i < schema.arguments().size(); ++i) {
      if (schema.arguments()[i].name() != name || !b->args[i]) continue;
      const ArgRef& given = *b->args[i];
      const bool same = given.kind == ArgRef::Kind::Value &&
                        (given.value == value || (given.value.is_number() && value.is_number() &&
                                                  given.value.as_double() == value.as_double()));
      if (!same) {
        r.error = std::string(d.qualified) + " is not in this libtorch; its reference decomposition supports only " +
                  name + "=" + value.repr() + ", got " + (given.kind == ArgRef::Kind::Value ? given.value.repr() : given.describe()) +
                  ". Fix: set " + name + "=" + value.repr() + " in the case";
        r.kind = VerdictKind::DecompositionLimit;
        r.call = std::move(call);
        return r;
      }
    }
  }
  r.invocation = std::make_unique<DecomposedCall>(d, std::move(*b));
  r.call = std::move(call);
  return r;
}

/// An older native op whose schema lacks newer arguments (sdpa's `scale` before 2.1, `enable_gqa` before 2.5):
/// the decomposition, which has the newest schema, runs the call instead when it binds there.
Resolution with_decomposition_fallback(const std::string& qualified, Resolution native, CaseCall call) {
  const Decomposition* d = find_decomposition(qualified);
  if (!d) return native;
  Resolution r = resolve_decomposition(*d, std::move(call));
  return r.invocation ? std::move(r) : std::move(native);
}

}  // namespace opcheck::exec
