#include "manifest/py_literal.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "common/spelling.h"

namespace opcheck {
namespace {

constexpr int kMaxDepth = 64;

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The UTF-8 of code point `cp` (surrogates are kept as they are; they cannot appear in manifests that matter).
void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Recursive descent over the text; `fail` records the first error and every caller unwinds with false.
class PyLiteralParser {
 public:
  explicit PyLiteralParser(std::string_view text) : t_(text) {}

  bool parse(PyValue& out) {
    skip_ws();
    if (p_ >= t_.size()) return fail(p_, "empty Python literal");
    if (!value(out, 0)) return false;
    skip_ws();
    if (p_ < t_.size()) return fail(p_, "unexpected '" + std::string(1, t_[p_]) + "' after the end of the literal");
    return true;
  }

  std::string error;
  int error_col = 0;

 private:
  bool fail(std::size_t at, std::string message) {
    if (error.empty()) {
      error = std::move(message);
      error_col = static_cast<int>(at) + 1;
    }
    return false;
  }
  void skip_ws() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r')) ++p_;
  }
  bool at(char c) {
    skip_ws();
    return p_ < t_.size() && t_[p_] == c;
  }

  bool value(PyValue& out, int depth);
  bool sequence(PyValue& out, int depth, char close);
  bool number(PyValue& out, bool negative, std::size_t sign_at);
  bool string(std::string& out);
  bool name(PyValue& out, int depth);
  bool call_args(std::vector<PyValue>& args, int depth, std::size_t open_at, const char* callee);

  std::string_view t_;
  std::size_t p_ = 0;
};

bool PyLiteralParser::value(PyValue& out, int depth) {
  if (depth > kMaxDepth) return fail(p_, "Python literal nested deeper than " + std::to_string(kMaxDepth) + " levels");
  skip_ws();
  if (p_ >= t_.size()) return fail(p_, "unexpected end of the literal: expected a value");
  char c = t_[p_];
  if (c == '(') return sequence(out, depth, ')');
  if (c == '[') return sequence(out, depth, ']');
  if (c == '\'' || c == '"') {
    std::string s;
    if (!string(s)) return false;
    out = PyValue::string(std::move(s));
    return true;
  }
  if (t_.substr(p_, 3) == "...") {
    p_ += 3;
    out = PyValue::ellipsis();
    return true;
  }
  if (is_digit(c) || (c == '.' && p_ + 1 < t_.size() && is_digit(t_[p_ + 1]))) return number(out, false, p_);
  if (c == '-' || c == '+') {
    std::size_t sign_at = p_++;
    skip_ws();
    if (p_ < t_.size() && (is_digit(t_[p_]) || t_[p_] == '.')) return number(out, c == '-', sign_at);
    if (p_ < t_.size() && is_ident_start(t_[p_])) {
      std::size_t name_at = p_;
      PyValue v;
      if (!name(v, depth)) return false;
      if (v.kind == PyValue::Kind::Float) {
        out = PyValue::real(c == '-' ? -v.f : v.f);
        return true;
      }
      return fail(name_at, "expected a number after '" + std::string(1, c) + "'");
    }
    return fail(p_, "expected a number after '" + std::string(1, c) + "'");
  }
  if (is_ident_start(c)) return name(out, depth);
  return fail(p_, "unexpected '" + std::string(1, c) + "': expected a Python literal");
}

bool PyLiteralParser::sequence(PyValue& out, int depth, char close) {
  const bool tuple = close == ')';
  std::size_t open_at = p_++;
  std::vector<PyValue> items;
  if (at(close)) {
    ++p_;
    out = PyValue::sequence(tuple ? PyValue::Kind::Tuple : PyValue::Kind::List, std::move(items));
    return true;
  }
  bool saw_comma = false;
  for (;;) {
    items.emplace_back();
    if (!value(items.back(), depth + 1)) return false;
    skip_ws();
    if (p_ >= t_.size())
      return fail(open_at, std::string("unclosed '") + (tuple ? "(" : "[") + "': expected '" + close + "'");
    if (t_[p_] == ',') {
      saw_comma = true;
      ++p_;
      if (at(close)) {
        ++p_;
        break;
      }
      continue;
    }
    if (t_[p_] == close) {
      ++p_;
      break;
    }
    return fail(p_, std::string("expected ',' or '") + close + "', found '" + t_[p_] + "'");
  }
  if (tuple && !saw_comma) {  // `(x)` is only parentheses around x
    out = std::move(items.front());
    return true;
  }
  out = PyValue::sequence(tuple ? PyValue::Kind::Tuple : PyValue::Kind::List, std::move(items));
  return true;
}

bool PyLiteralParser::number(PyValue& out, bool negative, std::size_t sign_at) {
  std::size_t start = p_;
  while (p_ < t_.size()) {
    char c = t_[p_];
    if (is_ident_char(c) || c == '.') {
      ++p_;
    } else if ((c == '-' || c == '+') && p_ > start && (t_[p_ - 1] == 'e' || t_[p_ - 1] == 'E') &&
               !(t_.size() > start + 1 && t_[start] == '0' && (t_[start + 1] == 'x' || t_[start + 1] == 'X'))) {
      ++p_;
    } else {
      break;
    }
  }
  std::string tok;
  tok.reserve(p_ - start);
  for (std::size_t i = start; i < p_; ++i) {
    if (t_[i] == '_') {
      // Python allows one underscore between digits only.
      if (i == start || i + 1 >= p_ || !std::isxdigit(static_cast<unsigned char>(t_[i - 1])) ||
          !std::isxdigit(static_cast<unsigned char>(t_[i + 1])))
        return fail(i, "misplaced '_' in number");
      continue;
    }
    tok.push_back(t_[i]);
  }
  std::string_view s = tok;
  if (!s.empty() && (s.back() == 'j' || s.back() == 'J')) return fail(start, "complex numbers are not supported");
  int base = 0;
  if (s.size() > 1 && s[0] == '0') {
    char b = static_cast<char>(s[1] | 0x20);
    base = b == 'x' ? 16 : b == 'o' ? 8 : b == 'b' ? 2 : 0;
  }
  bool is_float = base == 0 && s.find_first_of(".eE") != std::string_view::npos;
  if (!is_float) {
    std::string_view digits = base ? s.substr(2) : s;
    if (digits.empty()) return fail(start, "malformed number '" + tok + "'");
    if (base == 0 && digits.size() > 1 && digits[0] == '0') {
      for (char c : digits)
        if (c != '0') return fail(start, "leading zeros are not allowed in '" + tok + "' (use 0o for octal)");
    }
    // Accumulate negatively so that -9223372036854775808 parses.
    std::int64_t v = 0;
    int radix = base ? base : 10;
    for (char c : digits) {
      int d = is_digit(c)              ? c - '0'
              : (c >= 'a' && c <= 'z') ? c - 'a' + 10
              : (c >= 'A' && c <= 'Z') ? c - 'A' + 10
                                       : 99;
      if (d >= radix) return fail(start, "malformed number '" + tok + "'");
      if (__builtin_mul_overflow(v, radix, &v) || __builtin_sub_overflow(v, d, &v))
        return fail(negative ? sign_at : start, "integer '" + tok + "' does not fit in 64 bits");
    }
    if (!negative) {
      if (v == std::numeric_limits<std::int64_t>::min())
        return fail(start, "integer '" + tok + "' does not fit in 64 bits");
      v = -v;
    }
    out = PyValue::integer(v);
    return true;
  }
  // Python float syntax: digits [. digits] [e[+-]digits] or .digits ...; from_chars accepts a superset, so check.
  std::size_t i = 0, n = s.size(), int_digits = 0, frac_digits = 0;
  while (i < n && is_digit(s[i])) ++i, ++int_digits;
  if (i < n && s[i] == '.') {
    ++i;
    while (i < n && is_digit(s[i])) ++i, ++frac_digits;
  }
  if (int_digits + frac_digits == 0) return fail(start, "malformed number '" + tok + "'");
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    std::size_t exp_digits = 0;
    while (i < n && is_digit(s[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return fail(start, "malformed exponent in '" + tok + "'");
  }
  if (i != n) return fail(start, "malformed number '" + tok + "'");
  double v = 0;
  auto res = std::from_chars(s.data(), s.data() + n, v);
  if (res.ec == std::errc::result_out_of_range) {
    auto e = s.find_first_of("eE");
    if (e == std::string_view::npos || e + 1 >= n || s[e + 1] != '-')
      return fail(start, "number '" + tok.substr(0, 40) + (tok.size() > 40 ? "..." : "") +
                             "' is too large for a 64-bit float (it would silently become infinity); write a number "
                             "below 1.8e308, or float('inf') if infinity is meant");
    v = 0.0;
  } else if (res.ec != std::errc()) {
    return fail(start, "malformed number '" + tok + "'");
  }
  out = PyValue::real(negative ? -v : v);
  return true;
}

bool PyLiteralParser::string(std::string& out) {
  const char q = t_[p_];
  std::size_t open_at = p_++;
  auto hex = [&](std::size_t count, std::uint32_t& cp) {
    cp = 0;
    for (std::size_t k = 0; k < count; ++k) {
      if (p_ >= t_.size() || !std::isxdigit(static_cast<unsigned char>(t_[p_]))) return false;
      char c = t_[p_++];
      cp = cp * 16 + static_cast<std::uint32_t>(is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return true;
  };
  while (p_ < t_.size()) {
    char c = t_[p_];
    if (c == q) {
      ++p_;
      return true;
    }
    if (c == '\n') break;
    if (c != '\\') {
      out.push_back(c);
      ++p_;
      continue;
    }
    std::size_t esc_at = p_++;
    if (p_ >= t_.size()) break;
    char e = t_[p_++];
    std::uint32_t cp = 0;
    switch (e) {
      case 'n': out.push_back('\n'); break;
      case 't': out.push_back('\t'); break;
      case 'r': out.push_back('\r'); break;
      case 'a': out.push_back('\a'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'v': out.push_back('\v'); break;
      case '\\':
      case '\'':
      case '"': out.push_back(e); break;
      case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
        // Python's octal escape: up to three digits ('\0' is a NUL, '\101' is 'A').
        cp = static_cast<std::uint32_t>(e - '0');
        for (int k = 0; k < 2 && p_ < t_.size() && t_[p_] >= '0' && t_[p_] <= '7'; ++k)
          cp = cp * 8 + static_cast<std::uint32_t>(t_[p_++] - '0');
        append_utf8(out, cp);
        break;
      }
      case 'x':
      case 'u':
      case 'U': {
        if (!hex(e == 'x' ? 2 : e == 'u' ? 4 : 8, cp)) return fail(esc_at, std::string("malformed \\") + e + " escape");
        if (cp > 0x10FFFF) return fail(esc_at, "\\U escape beyond U+10FFFF");
        append_utf8(out, cp);
        break;
      }
      default:  // Python keeps unknown escapes verbatim
        out.push_back('\\');
        out.push_back(e);
    }
  }
  return fail(open_at, "unterminated string");
}

bool PyLiteralParser::call_args(std::vector<PyValue>& args, int depth, std::size_t name_at, const char* callee) {
  if (!at('(')) return fail(p_, std::string("expected '(' after '") + callee + "'");
  std::size_t open_at = p_++;
  if (at(')')) {
    ++p_;
    return true;
  }
  for (;;) {
    args.emplace_back();
    if (!value(args.back(), depth + 1)) return false;
    skip_ws();
    if (p_ >= t_.size()) return fail(open_at, std::string("unclosed '(' of ") + callee + "(...)");
    if (t_[p_] == ',') {
      ++p_;
      if (at(')')) {
        ++p_;
        return true;
      }
      continue;
    }
    if (t_[p_] == ')') {
      ++p_;
      return true;
    }
    return fail(p_, std::string("expected ',' or ')' in ") + callee + "(...), found '" + t_[p_] + "'");
  }
  (void)name_at;
}

bool PyLiteralParser::name(PyValue& out, int depth) {
  std::size_t start = p_;
  while (p_ < t_.size() && (is_ident_char(t_[p_]) || t_[p_] == '.')) ++p_;
  std::string_view id = t_.substr(start, p_ - start);
  if (id == "True" || id == "False") {
    out = PyValue::boolean(id == "True");
    return true;
  }
  if (id == "None") {
    out = PyValue::none();
    return true;
  }
  if (id == "Ellipsis") {
    out = PyValue::ellipsis();
    return true;
  }
  if (id == "inf" || id == "math.inf") {
    out = PyValue::real(HUGE_VAL);
    return true;
  }
  if (id == "nan" || id == "math.nan") {
    out = PyValue::real(std::nan(""));
    return true;
  }
  if (id == "slice") {
    std::vector<PyValue> args;
    if (!call_args(args, depth, start, "slice")) return false;
    if (args.empty() || args.size() > 3)
      return fail(start, "slice() takes 1 to 3 arguments, got " + std::to_string(args.size()));
    for (const auto& a : args)
      if (a.kind != PyValue::Kind::None && a.kind != PyValue::Kind::Int)
        return fail(start, "slice bounds must be integers or None, got " + a.repr());
    std::vector<PyValue> parts(3);
    if (args.size() == 1) {
      parts[1] = args[0];
    } else {
      for (std::size_t k = 0; k < args.size(); ++k) parts[k] = args[k];
    }
    out = PyValue::sequence(PyValue::Kind::Slice, std::move(parts));
    return true;
  }
  if (id == "float") {
    std::vector<PyValue> args;
    if (!call_args(args, depth, start, "float")) return false;
    if (args.size() != 1) return fail(start, "float() takes exactly one argument here");
    const PyValue& a = args[0];
    if (a.kind == PyValue::Kind::Int || a.kind == PyValue::Kind::Float) {
      out = PyValue::real(a.as_double());
      return true;
    }
    if (a.kind == PyValue::Kind::String) {
      std::string s;
      for (char c : a.s) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      std::string_view body = s;
      bool neg = !body.empty() && body[0] == '-';
      if (!body.empty() && (body[0] == '-' || body[0] == '+')) body.remove_prefix(1);
      if (body == "inf" || body == "infinity") {
        out = PyValue::real(neg ? -HUGE_VAL : HUGE_VAL);
        return true;
      }
      if (body == "nan") {
        out = PyValue::real(std::nan(""));
        return true;
      }
      PyLiteralParser inner(a.s);
      PyValue v;
      if (inner.parse(v) && (v.kind == PyValue::Kind::Int || v.kind == PyValue::Kind::Float)) {
        out = PyValue::real(v.as_double());
        return true;
      }
    }
    return fail(start, "float() only takes a number or 'inf'/'-inf'/'nan' here");
  }
  if (id.substr(0, 6) == "torch.") {
    if (auto t = parse_dtype(id)) {
      out = PyValue::of_dtype(*t);
      return true;
    }
    std::vector<std::string> torch_names;
    for (const auto& n : all_dtype_names())
      if (n.rfind("torch.", 0) == 0) torch_names.push_back(n);
    return fail(start, "unknown dtype '" + std::string(id) + "'" + did_you_mean(id, torch_names));
  }
  static const std::vector<std::string_view> kNames{"True",  "False", "None", "Ellipsis",
                                                    "slice", "inf",   "nan",  "float"};
  return fail(start,
              "unexpected name '" + std::string(id) + "': only Python literals are allowed" + did_you_mean(id, kNames));
}

}  // namespace

bool parse_py_literal(std::string_view text, opcheck::PyValue& out, std::string& error, int& error_col) {
  PyLiteralParser p(text);
  PyValue v;
  if (!p.parse(v)) {
    error = p.error;
    error_col = p.error_col;
    return false;
  }
  out = std::move(v);
  error.clear();
  error_col = 0;
  return true;
}

}  // namespace opcheck
