#include <cmath>
#include <cstdio>

#include "opcheck/value.h"

#include "common/text_escape.h"

namespace opcheck {

bool PyValue::is_host_device() const {
  return kind == Kind::Device && (s == "cpu" || s.rfind("cpu:", 0) == 0);
}

std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  // Shortest representation that round-trips, like Python's repr.
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

namespace {
// As Python's repr spells a str: every control character is an escape (\t \n \r, else \xNN), never the raw byte, so
// a string written into generated Python can neither move a terminal's cursor nor (NUL) make the file unreadable.
// C1 controls are UTF-8 C2 80..C2 9F, whose \xNN is the same code point. The bidirectional and zero-width format
// characters (U+202E, U+200B, ...) are \uNNNN, as Python's repr writes them: they would reorder or hide what a terminal
// shows of the script. Other bytes are kept as they are.
std::string quote(const std::string& s) {
  static const char* const kHex = "0123456789abcdef";
  const auto hex = [](std::string& out, unsigned char b) { out += {'\\', 'x', kHex[b >> 4], kHex[b & 15]}; };
  std::string out = "'";
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\'' || c == '\\') {
      out += {'\\', char(c)};
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      hex(out, c);
    } else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
      hex(out, static_cast<unsigned char>(s[++i]));
    } else if (std::uint32_t cp = 0; const std::size_t len = format_character_at(s, i, cp)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      out += buf;
      i += len - 1;
    } else {
      out.push_back(char(c));
    }
  }
  return out + "'";
}
}  // namespace

std::string PyValue::repr() const {
  switch (kind) {
    case Kind::None: return "None";
    case Kind::Bool: return b ? "True" : "False";
    case Kind::Int: return std::to_string(i);
    case Kind::Float: return python_float_repr(f);
    case Kind::String: return quote(s);
    case Kind::Ellipsis: return "Ellipsis";
    case Kind::DType: {
      static const char* torch_names[] = {"float16", "bfloat16", "float32", "float64", "int8",  "int16",     "int32",
                                          "int64",   "uint8",    "bool",    "complex32", "complex64", "complex128"};
      return std::string("torch.") + torch_names[static_cast<int>(dtype)];
    }
    case Kind::Device: return quote(s);
    case Kind::Slice:
      return "slice(" + items.at(0).repr() + ", " + items.at(1).repr() + ", " + items.at(2).repr() + ")";
    case Kind::Tuple:
    case Kind::List: {
      std::string out = kind == Kind::Tuple ? "(" : "[";
      for (std::size_t k = 0; k < items.size(); ++k) {
        if (k) out += ", ";
        out += items[k].repr();
      }
      if (kind == Kind::Tuple && items.size() == 1) out += ",";
      return out + (kind == Kind::Tuple ? ")" : "]");
    }
  }
  return "?";
}

bool PyValue::operator==(const PyValue& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case Kind::None: case Kind::Ellipsis: return true;
    case Kind::Bool: return b == o.b;
    case Kind::Int: return i == o.i;
    case Kind::Float: return (std::isnan(f) && std::isnan(o.f)) || f == o.f;
    case Kind::String: case Kind::Device: return s == o.s;
    case Kind::DType: return dtype == o.dtype;
    case Kind::Slice: case Kind::Tuple: case Kind::List: return items == o.items;
  }
  return false;
}

}  // namespace opcheck
