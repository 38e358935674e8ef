#include "common/call_signature.h"

#include <cctype>
#include <cstddef>
#include <optional>

#include "opcheck/dtype.h"

namespace opcheck {
namespace {

// Enough of a list to recognise it; a reader who needs every element has the manifest's file:line.
constexpr std::size_t kListHead = 6;
constexpr std::size_t kValueChars = 40;

void put_ints(std::string& out, const std::vector<std::int64_t>& v) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i == kListHead && v.size() > kListHead + 1) {
      out += ",...(" + std::to_string(v.size()) + " dims)";
      return;
    }
    if (i) out += ',';
    out += std::to_string(v[i]);
  }
}

void put_tensor(std::string& out, const TensorSpec& t) {
  out += dtype_name(t.dtype);
  out += '[';
  put_ints(out, t.shape);
  out += ']';
  // The layout matters to a kernel (strided copies, views with an offset are where devices go wrong): shown whenever
  // it is not the default one.
  const bool strided = !t.is_contiguous(), offset = t.storage_offset != 0;
  if (strided || offset) {
    out += '{';
    if (strided) {
      out += "stride ";
      put_ints(out, t.stride);
    }
    if (offset) out += std::string(strided ? "; " : "") + "offset " + std::to_string(t.storage_offset);
    out += '}';
  }
  if (t.placement == Placement::Host) out += "@cpu";
}

std::string short_value(const PyValue& v) {
  std::string s = v.repr();
  if (s.size() <= kValueChars) return s;
  std::size_t cut = kValueChars - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // whole UTF-8 characters
  return s.substr(0, cut) + "...";
}

}  // namespace

std::string call_signature(const Case& c) {
  std::string out = c.op + "(";
  bool first = true;
  auto sep = [&] {
    if (!first) out += ", ";
    first = false;
  };
  for (const auto& in : c.inputs) {
    sep();
    if (!in.keyword.empty()) out += in.keyword + "=";
    if (in.kind == Input::Kind::Tensor) {
      put_tensor(out, in.tensor);
    } else if (in.kind == Input::Kind::TensorList) {
      out += '[';
      for (std::size_t j = 0; j < in.list.size(); ++j) {
        if (j == kListHead && in.list.size() > kListHead + 1) {
          out += ", ... (" + std::to_string(in.list.size()) + " tensors)";
          break;
        }
        if (j) out += ", ";
        put_tensor(out, in.list[j]);
      }
      out += ']';
    } else {
      out += short_value(in.value);
    }
  }
  for (const auto& [k, v] : c.kwargs) {
    sep();
    out += k + "=" + short_value(v);
  }
  return out + ")";
}

std::string call_dtype(std::string_view call) {
  auto ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  std::string first;
  const std::size_t open = call.find('(');
  for (std::size_t i = open == std::string_view::npos ? 0 : open + 1; i < call.size(); ++i) {
    if (!ident(call[i]) || (i > 0 && (ident(call[i - 1]) || call[i - 1] == '.'))) continue;
    std::size_t j = i;
    while (j < call.size() && ident(call[j])) ++j;
    const std::string_view word = call.substr(i, j - i);
    i = j;
    if (j >= call.size() || call[j] != '[') continue;  // a tensor is DTYPE[DIMS]
    const std::optional<DType> t = parse_dtype(word);
    if (!t) continue;
    if (dtype_is_floating(*t) || dtype_is_complex(*t)) return std::string(word);
    if (first.empty()) first = word;
  }
  return first;
}

}  // namespace opcheck
