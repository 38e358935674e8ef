#include "common/op_names.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>
#include <vector>

#include "common/text.h"

namespace opcheck {
namespace {

// Python spellings of one torch function: operator-module names (recorded as torch.X by tracers), dunders and
// in-place operators. Values are canonical names that need no further folding. Each alias resolves to the op the
// Python operator calls: x & y is Tensor.__and__ (aten::__and__), not torch.bitwise_and, though they agree.
const std::map<std::string, std::string>& python_aliases() {
  static const std::map<std::string, std::string> t = {
      {"torch.__getitem__", "torch.getitem"},   {"torch.__setitem__", "torch.setitem"},
      {"torch.__eq__", "torch.eq"},             {"torch.__ne__", "torch.ne"},
      {"torch.__lt__", "torch.lt"},             {"torch.__le__", "torch.le"},
      {"torch.__gt__", "torch.gt"},             {"torch.__ge__", "torch.ge"},
      {"torch.and_", "torch.__and__"},
      {"torch.or_", "torch.__or__"},
      {"torch.xor", "torch.__xor__"},
      {"torch.lshift", "torch.__lshift__"},     {"torch.rshift", "torch.__rshift__"},
      {"torch.invert", "torch.bitwise_not"},    {"torch.inv", "torch.bitwise_not"},
      {"torch.__invert__", "torch.bitwise_not"}, {"torch.truediv", "torch.div"},
      {"torch.__truediv__", "torch.div"},       {"torch.__div__", "torch.div"},
      {"torch.floordiv", "torch.floor_divide"}, {"torch.__floordiv__", "torch.floor_divide"},
      {"torch.mod", "torch.remainder"},         {"torch.__mod__", "torch.remainder"},
      {"torch.pos", "torch.positive"},          {"torch.__pos__", "torch.positive"},
      {"torch.__neg__", "torch.neg"},           {"torch.__abs__", "torch.abs"},
      {"torch.__add__", "torch.add"},           {"torch.__sub__", "torch.sub"},
      {"torch.__mul__", "torch.mul"},           {"torch.__matmul__", "torch.matmul"},
      {"torch.__pow__", "torch.pow"},           {"torch.__rsub__", "torch.rsub"},
      {"torch.iadd", "torch.add_"},             {"torch.__iadd__", "torch.add_"},
      {"torch.isub", "torch.sub_"},             {"torch.__isub__", "torch.sub_"},
      {"torch.imul", "torch.mul_"},             {"torch.__imul__", "torch.mul_"},
      {"torch.itruediv", "torch.div_"},         {"torch.__itruediv__", "torch.div_"},
  };
  return t;
}

std::vector<std::string> split_dots(const std::string& s) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, '.')) out.push_back(part);
  return out;
}

bool valid_identifier(const std::string& s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

}  // namespace

OpName parse_op_name(const std::string& written) {
  OpName out;
  const std::string s(trim_blanks(written, kWhitespace));
  if (s.empty()) {
    out.error = "empty op name";
    return out;
  }
  if (!std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '.' || c == ':'; })) {
    out.error = "op name '" + s + "' has characters no op name has";
    return out;
  }

  auto schema_form = [&](const std::string& ns, const std::string& rest, const std::string& prefix) {
    const auto parts = split_dots(rest);
    if (parts.empty() || parts.size() > 2 || !valid_identifier(ns) || !valid_identifier(parts[0]) ||
        (parts.size() == 2 && !valid_identifier(parts[1]))) {
      out.error = "op name '" + s + "' is not of the form namespace::name[.overload]";
      return out;
    }
    out.form = OpName::Form::Schema;
    out.qualified = ns + "::" + parts[0];
    if (parts.size() == 2) out.overload = parts[1] == "default" ? "" : parts[1];
    out.written_prefix = prefix;
    return out;
  };

  if (const auto colons = s.find("::"); colons != std::string::npos)
    return schema_form(s.substr(0, colons), s.substr(colons + 2), s.substr(0, colons + 2));
  for (const char* ops_prefix : {"torch.ops.", "ops."}) {
    const std::string p = ops_prefix;
    if (s.rfind(p, 0) == 0) {
      const std::string rest = s.substr(p.size());
      const auto dot = rest.find('.');
      if (dot == std::string::npos) {
        out.error = "op name '" + s + "' names no op (expected " + p + "<namespace>.<name>[.overload])";
        return out;
      }
      return schema_form(rest.substr(0, dot), rest.substr(dot + 1), s.substr(0, p.size() + dot + 1));
    }
  }
  if (s.rfind("aten.", 0) == 0) return schema_form("aten", s.substr(5), "aten.");

  // Python names. Longest prefixes first; each maps to a canonical prefix and a default-rule aten prefix.
  struct PrefixRule {
    const char* written;
    const char* canonical;
    const char* aten;
  };
  static const PrefixRule rules[] = {
      {"torch.nn.functional.", "torch.nn.functional.", ""},
      {"torch._C._nn.", "torch.nn.functional.", ""},
      {"F.", "torch.nn.functional.", ""},
      {"torch._C._VariableFunctions.", "torch.", ""},
      {"torch._C._TensorBase.", "torch.", ""},
      {"torch.Tensor.", "torch.", ""},
      {"torch.functional.", "torch.", ""},
      {"torch.special.", "torch.special.", "special_"},
      {"torch.linalg.", "torch.linalg.", "linalg_"},
      {"torch.fft.", "torch.fft.", "fft_"},
      {"Tensor.", "torch.", ""},
      {"operator.", "torch.", ""},
      {"_operator.", "torch.", ""},
      {"torch.", "torch.", ""},
  };
  for (const auto& r : rules) {
    const std::string p = r.written;
    if (s.rfind(p, 0) != 0) continue;
    const std::string tail = s.substr(p.size());
    if (!valid_identifier(tail)) {
      out.error = "op name '" + s + "' is not a torch function or Tensor method name";
      return out;
    }
    out.form = OpName::Form::Python;
    out.python = std::string(r.canonical) + tail;
    out.qualified = "aten::" + std::string(r.aten) + tail;
    out.written_prefix = p;
    if (auto it = python_aliases().find(out.python); it != python_aliases().end()) {
      // Every alias target is a torch.X function whose default-rule target is aten::X.
      out.python = it->second;
      out.qualified = "aten::" + it->second.substr(6);
    }
    return out;
  }
  out.error = "op name '" + s + "' is neither a schema name (aten::add.Tensor) nor a Python name (torch.add)";
  return out;
}

std::string canonical_op(const std::string& written) {
  const OpName n = parse_op_name(written);
  switch (n.form) {
    case OpName::Form::Schema: return n.qualified + (n.overload && !n.overload->empty() ? "." + *n.overload : "");
    case OpName::Form::Python: return n.python;
    case OpName::Form::Invalid: break;
  }
  return std::string(trim_blanks(written, kWhitespace));
}

bool is_transfer_op(const std::string& op) {
  if (op.rfind("aten::", 0) != 0) return false;
  const std::string name = op.substr(6, op.find('.', 6) == std::string::npos ? std::string::npos : op.find('.', 6) - 6);
  return name == "_copy_from" || name == "_copy_from_and_resize" || name == "copy_" || name == "_to_copy" ||
         name == "to";
}

}  // namespace opcheck
