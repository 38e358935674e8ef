#include "exec/op_resolver.h"

#include <algorithm>
#include <climits>
#include <mutex>

#include <torch/csrc/jit/frontend/function_schema_parser.h>

#include "common/text.h"
#include "exec/builtin_invocations.h"
#include "exec/decompositions.h"
#include "exec/inputs.h"
#include "exec/overload_resolution.h"

namespace opcheck::exec {
namespace {

using Kind = PyValue::Kind;

const c10::FunctionSchema& row_signature(const PythonOpRow& row) {
  static std::mutex mu;
  static std::map<const PythonOpRow*, c10::FunctionSchema> parsed;
  std::lock_guard<std::mutex> lock(mu);
  auto it = parsed.find(&row);
  if (it == parsed.end()) {
    std::string text = row.signature;
    if (text.find("->") == std::string::npos) text += " -> Tensor";
    it = parsed.emplace(&row, torch::jit::parseSchema(text)).first;
  }
  return it->second;
}

void set_keyword(CallArgs& call, const std::string& name, ArgRef value) {
  for (auto& kw : call.keywords)
    if (kw.first == name) {
      kw.second = std::move(value);
      return;
    }
  call.keywords.emplace_back(name, std::move(value));
}

bool remove_keyword(CallArgs& call, const std::string& name, ArgRef* removed = nullptr) {
  for (auto it = call.keywords.begin(); it != call.keywords.end(); ++it)
    if (it->first == name) {
      if (removed) *removed = it->second;
      call.keywords.erase(it);
      return true;
    }
  return false;
}

}  // namespace

OpResolver::OpResolver() {
  for (const auto& name : c10::Dispatcher::singleton().getAllOpNames()) {
    auto op = c10::Dispatcher::singleton().findOp(name);
    if (op && op->hasSchema()) ops_[name.name].push_back(*op);  // a kernel for an op never defined has no schema
  }
  for (auto& [name, list] : ops_)
    std::sort(list.begin(), list.end(), [](const c10::OperatorHandle& a, const c10::OperatorHandle& b) {
      return a.operator_name().overload_name < b.operator_name().overload_name;
    });
}

std::vector<c10::OperatorHandle> OpResolver::overloads(const std::string& qualified) const {
  auto it = ops_.find(qualified);
  return it == ops_.end() ? std::vector<c10::OperatorHandle>{} : it->second;
}

Resolution OpResolver::resolve(const Case& c) const { return resolve(c.op, case_call(c)); }

Resolution OpResolver::resolve(const std::string& op, CaseCall call) const {
  const OpName name = normalize_op_name(op);
  if (name.form == OpName::Form::Invalid) {
    Resolution r;
    r.error = name.error;
    r.kind = VerdictKind::BadOpName;
    r.call = std::move(call);
    return r;
  }
  return name.form == OpName::Form::Schema ? resolve_schema_form(name, std::move(call))
                                           : resolve_python_form(name, std::move(call));
}

Resolution OpResolver::resolve_schema_form(const OpName& name, CaseCall call) const {
  if (ops_.count(name.qualified)) {
    Resolution native = resolve_overloads(name.qualified, name.overload, call, false);
    return native.invocation ? std::move(native) : with_decomposition_fallback(name.qualified, std::move(native), std::move(call));
  }
  if (const Decomposition* d = find_decomposition(name.qualified); d && (!name.overload || name.overload->empty()))
    return resolve_decomposition(*d, std::move(call));
  Resolution r;
  const std::string written = name.written_prefix + name.qualified.substr(name.qualified.find("::") + 2) +
                              (name.overload && !name.overload->empty() ? "." + *name.overload : "");
  r.error = "unknown op '" + written + "'";
  r.kind = VerdictKind::UnknownOp;
  const std::string near = suggest(name);
  if (!near.empty()) r.error += " (did you mean " + near + "?)";
  r.call = std::move(call);
  return r;
}

Resolution OpResolver::resolve_python_form(const OpName& name, CaseCall call) const {
  // The methods whose `self` is not the function's first argument: Tensor.where(condition, other) is
  // torch.where(condition, self, other), Tensor.polygamma(n) is torch.polygamma(n, self).
  if ((name.python == "torch.where" || name.python == "torch.polygamma") &&
      name.written_prefix.find("Tensor.") != std::string::npos && call.args.positional.size() >= 2)
    std::swap(call.args.positional[0], call.args.positional[1]);
  std::vector<const PythonOpRow*> rows;
  for (const auto& row : python_op_rows())
    if (name.python == row.python) rows.push_back(&row);

  if (!rows.empty() && rows.front()->builtin != Builtin::None)
    return resolve_builtin(rows.front()->builtin, name.python, std::move(call));

  if (!rows.empty()) return resolve_table_rows(name, rows, std::move(call));

  // The default rule: torch.X is aten::X, with `input` bound as `self`.
  std::string qualified = name.qualified;
  CaseCall mapped = call;
  if (name.python.rfind("torch.nn.functional.", 0) == 0) {
    // F.relu(x, inplace=True) is aten::relu_.
    ArgRef inplace;
    if (remove_keyword(mapped.args, "inplace", &inplace) && inplace.kind == ArgRef::Kind::Value &&
        inplace.value.kind == Kind::Bool && inplace.value.b)
      qualified += "_";
  }
  Resolution found;
  if (ops_.count(qualified)) {
    found = resolve_overloads(qualified, std::nullopt, mapped, true);
    if (!found.invocation) found = with_decomposition_fallback(qualified, std::move(found), std::move(mapped));
  }
  else if (const Decomposition* d = find_decomposition(qualified)) found = resolve_decomposition(*d, std::move(mapped));
  if (found.invocation || !found.error.empty()) {
    found.call = std::move(call);
    return found;
  }
  Resolution r;
  r.error = "unknown op '" + name.written_prefix + name.python.substr(name.python.rfind('.') + 1) + "'";
  r.kind = VerdictKind::UnknownOp;
  const std::string near = suggest(name);
  if (!near.empty()) r.error += " (did you mean " + near + "?)";
  r.call = std::move(call);
  return r;
}

Resolution OpResolver::resolve_table_rows(const OpName& name, const std::vector<const PythonOpRow*>& rows,
                                          CaseCall call) const {
  // Rows are alternatives (Python overloads): the one whose signature and target bind cheapest wins.
  Resolution best;
  int best_cost = INT_MAX;
  std::string errors;
  for (const PythonOpRow* row : rows) {
    CaseCall mapped = call;
    CallArgs& args = mapped.args;
    if (row->swap_operands && args.positional.size() >= 2) std::swap(args.positional[0], args.positional[1]);
    int cost = 0;
    std::map<std::string, PyValue> python_defaults;
    if (*row->signature) {
      const auto& sig = row_signature(*row);
      std::string why;
      auto b = bind_to_schema(sig, args, mapped.slots, why);
      if (!b) {
        errors += "\n  " + std::string(row->signature) + ": " + why;
        continue;
      }
      cost = b->cost;
      CallArgs named;
      named.none_means_default = true;
      for (std::size_t i = 0; i < sig.arguments().size(); ++i) {
        const auto& arg = sig.arguments()[i];
        std::optional<PyValue> dflt;
        if (arg.default_value()) dflt = pyvalue_of(*arg.default_value(), arg.real_type());
        if (dflt) python_defaults[arg.name()] = *dflt;
        if (b->args[i]) named.keywords.emplace_back(arg.name(), *b->args[i]);
        else if (dflt) named.keywords.emplace_back(arg.name(), ArgRef::of_value(*dflt));
      }
      args = std::move(named);
    }
    std::string unsupported;
    for (const auto& m : split_list(row->must_default)) {
      ArgRef given;
      if (!remove_keyword(args, m, &given)) continue;
      const PyValue dflt = python_defaults.count(m) ? python_defaults[m] : PyValue::none();
      if (given.kind != ArgRef::Kind::Value || given.value != dflt)
        unsupported = m + "=" + (given.kind == ArgRef::Kind::Value ? given.value.repr() : given.describe()) +
                      " is not supported (opcheck runs " + name.python + " with " + m + "=" + dflt.repr() + ")";
    }
    if (!unsupported.empty()) {
      errors += "\n  " + unsupported;
      continue;
    }
    for (const auto& d : split_list(row->dropped)) remove_keyword(args, d);
    for (const auto& rn : split_list(row->renames)) {
      const auto colon = rn.find(':');
      for (auto& kw : args.keywords)
        if (kw.first == rn.substr(0, colon)) kw.first = rn.substr(colon + 1);
    }
    for (const auto& [k, v] : parse_assignments(row->fixed)) set_keyword(args, k, ArgRef::of_value(v));

    const std::string target = row->aten;
    const auto dot = target.find('.', target.find("::"));
    const std::string qualified = target.substr(0, dot);
    std::optional<std::string> overload;
    if (dot != std::string::npos) overload = target.substr(dot + 1);
    Resolution r;
    if (ops_.count(qualified)) {
      r = resolve_overloads(qualified, overload, std::move(mapped), true);
    } else if (const Decomposition* d = find_decomposition(qualified)) {
      r = resolve_decomposition(*d, std::move(mapped));
    } else {
      errors += "\n  " + target + " is not in this libtorch";
      continue;
    }
    if (!r.invocation) {
      errors += "\n  " + r.error;
      continue;
    }
    if (cost < best_cost) {
      best = std::move(r);
      best_cost = cost;
    }
  }
  if (best.invocation) {
    best.call = std::move(call);  // the call as written, not as mapped onto the aten schema
    return best;
  }
  Resolution r;
  r.error = "arguments " + call.args.describe() + " do not fit " + name.python + ":" + errors;
  r.kind = VerdictKind::ArgumentsDoNotBind;
  r.call = std::move(call);
  return r;
}

std::string OpResolver::suggest(const OpName& name) const {
  std::vector<std::string> tails;
  std::string word;
  if (name.form == OpName::Form::Schema) {
    const auto colons = name.qualified.find("::");
    const std::string ns = name.qualified.substr(0, colons + 2);
    word = name.qualified.substr(colons + 2);
    for (const auto& [q, list] : ops_)
      if (q.rfind(ns, 0) == 0) tails.push_back(q.substr(ns.size()));
    for (const auto& d : decompositions()) {
      const std::string q = d.qualified;
      if (q.rfind(ns, 0) == 0) tails.push_back(q.substr(ns.size()));
    }
  } else if (name.form == OpName::Form::Python) {
    const std::string canonical_prefix = name.python.substr(0, name.python.rfind('.') + 1);
    word = name.python.substr(canonical_prefix.size());
    if (name.qualified.size() < 6 + word.size()) return "";  // a verbatim table name: always known
    // The default rule's aten prefix for this namespace (special_, linalg_, fft_ or none).
    const std::string aten_prefix = name.qualified.substr(6, name.qualified.size() - 6 - word.size());
    for (const auto& [q, list] : ops_) {
      if (q.rfind("aten::", 0) != 0) continue;
      const std::string base = q.substr(6);
      if (base.rfind(aten_prefix, 0) == 0) tails.push_back(base.substr(aten_prefix.size()));
    }
    for (const auto& d : decompositions()) tails.push_back(std::string(d.qualified).substr(6));
    for (const auto& row : python_op_rows()) {
      const std::string p = row.python;
      if (p.rfind(canonical_prefix, 0) == 0 && p.find('.', canonical_prefix.size()) == std::string::npos)
        tails.push_back(p.substr(canonical_prefix.size()));
    }
  }
  if (word.empty()) return "";
  const std::string best = closest_name(word, tails);
  return best.empty() ? "" : name.written_prefix + best;
}

}  // namespace opcheck::exec
