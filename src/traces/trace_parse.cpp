#include "traces/trace_parse.h"

#include "common/text.h"
#include "common/text_escape.h"
#include "common/typed_yaml.h"
#include "manifest/py_literal.h"
#include "opcheck/value.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace opcheck::traces {
namespace {

// Nesting deeper than any real trace (tuples of lists of tensors): the bound keeps hostile input from
// exhausting the stack.
constexpr int kMaxDepth = 32;
constexpr std::size_t kMaxTraceOpBytes = 256;  // as manifests' op names (manifest/input_reader.h)

std::string ints_text(const std::vector<std::int64_t>& v, char open, char close) {
  std::string out(1, open);
  for (std::size_t k = 0; k < v.size(); ++k) out += (k ? ", " : "") + std::to_string(v[k]);
  if (open == '(' && v.size() == 1) out += ",";
  return out + close;
}

/// Text of a line fit to echo in a message: printable_text of its first `limit` bytes.
std::string printable(std::string_view s, std::size_t limit = 60) {
  return printable_text(s.substr(0, limit)) + (s.size() > limit ? "..." : "");
}

/// Recursive-descent reader of one call line. Positions are byte offsets into the line.
class LineReader {
 public:
  explicit LineReader(std::string_view s) : s_(s) {}

  bool call(TraceCall& out, TraceSyntaxError& err) {
    if (!literal("cnt:")) return fail("a call line starts with 'cnt:'", err);
    skip_space();
    const std::size_t count_at = pos_;
    TraceValue count;
    if (!number(count) || count.kind != TraceValue::Kind::Int || count.i < 0) {
      pos_ = count_at;
      return fail("expected the call count after 'cnt:' (a whole number >= 0)", err);
    }
    out.count = count.i;
    skip_space();
    if (!literal(",")) return fail("expected ',' after the call count", err);
    skip_space();
    if (!literal("(")) return fail("expected '((args...), {kwargs})' after the count", err);
    skip_space();
    TraceValue args;
    if (peek() != '(') return fail("expected the positional arguments as a tuple '(...)'", err);
    if (!value(args, 0)) return fail(error_, err);
    out.args = std::move(args.items);
    skip_space();
    if (!literal(",")) return fail("expected ',' between the argument tuple and the keyword dict", err);
    skip_space();
    if (peek() != '{') return fail("expected the keyword arguments as a dict '{...}'", err);
    TraceValue kwargs;
    if (!value(kwargs, 0)) return fail(error_, err);
    out.kwargs = std::move(kwargs.entries);
    skip_space();
    if (!literal(")")) return fail("expected ')' closing the call", err);
    skip_space();
    if (pos_ != s_.size()) return fail("unexpected text after the call", err);
    return true;
  }

 private:
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool at_end() const { return pos_ >= s_.size(); }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  bool literal(std::string_view t) {
    if (s_.substr(pos_, t.size()) != t) return false;
    pos_ += t.size();
    return true;
  }
  bool fail(const std::string& message, TraceSyntaxError& err) {
    err.col = static_cast<int>(pos_) + 1;
    err.message = message;
    return false;
  }
  bool error(const std::string& message) {
    error_ = message;
    return false;
  }

  bool value(TraceValue& out, int depth) {
    skip_space();
    if (depth > kMaxDepth) return error("values nested more than " + std::to_string(kMaxDepth) + " deep");
    out.col = static_cast<int>(pos_) + 1;
    const char c = peek();
    if (c == '(' || c == '[') return sequence(out, depth);
    if (c == '{') return dict(out, depth);
    if (c == '\'' || c == '"') {
      out.kind = TraceValue::Kind::String;
      return string(out.text);
    }
    if (c == '-' || c == '+' || c == '.' || std::isdigit(static_cast<unsigned char>(c))) return number(out);
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return name(out, depth);
    if (at_end()) return error("unexpected end of line (a bracket is not closed)");
    return error("unexpected '" + printable(std::string_view(&c, 1)) + "'");
  }

  bool sequence(TraceValue& out, int depth) {
    const char open = peek(), close = open == '(' ? ')' : ']';
    out.kind = open == '(' ? TraceValue::Kind::Tuple : TraceValue::Kind::List;
    ++pos_;
    bool trailing_comma = false;
    for (;;) {
      skip_space();
      if (literal(std::string_view(&close, 1))) break;
      if (!out.items.empty() && !trailing_comma) return error(std::string("expected ',' or '") + close + "'");
      TraceValue item;
      if (!value(item, depth + 1)) return false;
      out.items.push_back(std::move(item));
      skip_space();
      trailing_comma = literal(",");
    }
    return true;
  }

  bool dict(TraceValue& out, int depth) {
    out.kind = TraceValue::Kind::Dict;
    ++pos_;
    bool trailing_comma = false;
    for (;;) {
      skip_space();
      if (literal("}")) break;
      if (!out.entries.empty() && !trailing_comma) return error("expected ',' or '}' in the keyword dict");
      if (peek() != '\'' && peek() != '"') return error("expected a quoted keyword name");
      std::string key;
      if (!string(key)) return false;
      skip_space();
      if (!literal(":")) return error("expected ':' after the keyword '" + printable(key) + "'");
      TraceValue v;
      if (!value(v, depth + 1)) return false;
      for (const auto& e : out.entries)
        if (e.first == key) return error("keyword '" + printable(key) + "' appears twice");
      out.entries.emplace_back(std::move(key), std::move(v));
      skip_space();
      trailing_comma = literal(",");
    }
    return true;
  }

  // A trace's strings are Python reprs: the literal is found here and read by the manifests' Python literal reader,
  // so every escape means what it means in Python ('A\x41B' is 'AAB', '\0' a NUL), as a `py:` input's do.
  bool string(std::string& out) {
    const char quote = peek();
    const std::size_t start = pos_++;
    while (!at_end()) {
      const char c = s_[pos_++];
      if (c == quote) {
        PyValue v;
        std::string message;
        int col = 0;
        if (!parse_py_literal(s_.substr(start, pos_ - start), v, message, col) || v.kind != PyValue::Kind::String)
          return error("string " + printable(s_.substr(start, pos_ - start)) + ": " + message);
        out = std::move(v.s);
        return true;
      }
      if (c == '\\' && !at_end()) ++pos_;  // the escaped character cannot end the string
    }
    return error("string not closed");
  }

  bool number(TraceValue& out) {
    const std::size_t start = pos_;
    bool negative = false;
    if (peek() == '-' || peek() == '+') {
      negative = peek() == '-';
      ++pos_;
    }
    if (literal("inf")) {
      out.kind = TraceValue::Kind::Float;
      out.f = negative ? -HUGE_VAL : HUGE_VAL;
      return true;
    }
    if (literal("nan")) {
      out.kind = TraceValue::Kind::Float;
      out.f = std::nan("");
      return true;
    }
    bool is_float = false, digits = false;
    while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_, digits = true;
    if (peek() == '.') {
      is_float = true;
      ++pos_;
      while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_, digits = true;
    }
    if (!digits) return error("expected a number");
    if (peek() == 'e' || peek() == 'E') {
      is_float = true;
      ++pos_;
      if (peek() == '-' || peek() == '+') ++pos_;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) return error("malformed exponent");
      while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
    }
    if (std::isalpha(static_cast<unsigned char>(peek())) || peek() == '_')
      return error("malformed number '" + std::string(s_.substr(start, pos_ - start + 1)) + "'");
    const std::string text(s_.substr(start, pos_ - start));
    if (is_float) {
      out.kind = TraceValue::Kind::Float;
      out.f = std::strtod(text.c_str(), nullptr);
      if (std::isinf(out.f))
        return error("number " + in_quotes(text) + " is too large for a 64-bit float (it would silently become "
                     "infinity); write a number below 1.8e308");
      return true;
    }
    out.kind = TraceValue::Kind::Int;
    const char* first = text.c_str() + (text[0] == '+' ? 1 : 0);
    auto [ptr, ec] = std::from_chars(first, text.c_str() + text.size(), out.i);
    if (ec != std::errc() || ptr != text.c_str() + text.size()) return error("integer " + text + " out of range");
    return true;
  }

  std::string identifier() {
    const std::size_t start = pos_;
    while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_' || peek() == '.') ++pos_;
    return std::string(s_.substr(start, pos_ - start));
  }

  bool name(TraceValue& out, int depth) {
    const std::size_t start = pos_;
    const std::string id = identifier();
    if (id == "T" && peek() == '(') return tensor(out);
    if ((id == "torch.device" || id == "device") && peek() == '(') return device(out);
    if (id == "True" || id == "False") {
      out.kind = TraceValue::Kind::Bool;
      out.b = id == "True";
    } else if (id == "None") {
      out.kind = TraceValue::Kind::None;
    } else if (id == "inf" || id == "nan") {
      out.kind = TraceValue::Kind::Float;
      out.f = id == "inf" ? HUGE_VAL : std::nan("");
    } else if (auto dt = parse_dtype(id)) {
      out.kind = TraceValue::Kind::DType;
      out.dtype = *dt;
      out.text = id;
    } else if (id.rfind("torch.", 0) == 0 && id.size() > 6 && id.back() != '.') {
      out.kind = TraceValue::Kind::Symbol;
      out.text = id;
    } else if (peek() == '(') {
      pos_ = start;
      return error("calls other than T(...) and torch.device(...) are not part of the trace format: '" + id + "(...)'");
    } else {
      pos_ = start;
      return error("unknown name '" + id + "' (expected a tensor T(...), a literal, a dtype such as f16, or torch.<name>)");
    }
    if (peek() == '(') return error("calls other than T(...) and torch.device(...) are not part of the trace format");
    return true;
  }

  bool int_list(std::vector<std::int64_t>& out, const char* what, bool allow_negative) {
    skip_space();
    const char open = peek();
    if (open != '[' && open != '(') return error(std::string("expected the ") + what + " as a list [...]");
    TraceValue seq;
    if (!sequence(seq, kMaxDepth - 1)) return false;
    for (const auto& item : seq.items) {
      if (item.kind != TraceValue::Kind::Int) {
        pos_ = static_cast<std::size_t>(item.col - 1);
        return error(std::string("the ") + what + " must be whole numbers");
      }
      if (item.i < 0 && !allow_negative) {
        pos_ = static_cast<std::size_t>(item.col - 1);
        return error(std::string("negative ") + what + " entry " + std::to_string(item.i));
      }
      out.push_back(item.i);
    }
    return true;
  }

  bool tensor(TraceValue& out) {
    out.kind = TraceValue::Kind::Tensor;
    ++pos_;  // '('
    if (!int_list(out.tensor.shape, "sizes", false)) return false;
    skip_space();
    if (!literal(",")) return error("expected ', dtype' after the tensor sizes");
    skip_space();
    const std::size_t dtype_at = pos_;
    const std::string dt = identifier();
    auto parsed = parse_dtype(dt);
    if (!parsed) {
      pos_ = dtype_at;
      return error("unknown tensor dtype '" + dt + "' (f16 bf16 f32 f64 c32 c64 c128 i8 i16 i32 i64 u8 b8)");
    }
    out.tensor.dtype = *parsed;
    out.tensor.dtype_text = dt;
    skip_space();
    if (literal(",")) {
      skip_space();
      if (!literal("stride=")) return error("expected 'stride=(...)' as the tensor's third part");
      std::vector<std::int64_t> stride;
      if (!int_list(stride, "strides", false)) return false;
      if (stride.size() != out.tensor.shape.size())
        return error("stride has " + std::to_string(stride.size()) + " entries for a tensor of rank " +
                     std::to_string(out.tensor.shape.size()));
      out.tensor.stride = std::move(stride);
      skip_space();
    }
    if (!literal(")")) return error("expected ')' closing T(...)");
    return true;
  }

  /// torch.device('cpu'), torch.device('cuda', 0), device(type='cuda', index=0) -> "cpu", "cuda:0".
  bool device(TraceValue& out) {
    ++pos_;  // '('
    std::string type, index;
    for (int part = 0;; ++part) {
      skip_space();
      if (literal(")")) break;
      if (part > 0 && !literal(",")) return error("expected ',' or ')' in the device");
      skip_space();
      if (literal("type=") || (part == 0 && (peek() == '\'' || peek() == '"'))) {
        skip_space();
        if (peek() != '\'' && peek() != '"') return error("expected the device type as a string");
        if (!string(type)) return false;
      } else {
        literal("index=");
        TraceValue n;
        if (!number(n) || n.kind != TraceValue::Kind::Int || n.i < 0) return error("expected a device index");
        index = std::to_string(n.i);
      }
    }
    if (type.empty()) return error("a device needs its type, e.g. torch.device('cpu')");
    out.kind = TraceValue::Kind::Device;
    out.text = type.find(':') == std::string::npos && !index.empty() ? type + ":" + index : type;
    return true;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  std::string error_;
};

bool valid_op_name(std::string_view name) {
  if (name.empty() || name.find('.') == std::string_view::npos) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
  return name.front() != '.' && name.back() != '.' && name.find("..") == std::string_view::npos;
}

}  // namespace

std::string TraceValue::describe() const {
  switch (kind) {
    case Kind::None: return "None";
    case Kind::Bool: return b ? "True" : "False";
    case Kind::Int: return std::to_string(i);
    case Kind::Float: return python_float_repr(f);
    case Kind::String: return "'" + printable(text) + "'";
    case Kind::DType:
    case Kind::Symbol: return text;
    case Kind::Device: return "torch.device('" + text + "')";
    case Kind::Tensor: {
      std::string out = "T(" + ints_text(tensor.shape, '[', ']') + ", " + tensor.dtype_text;
      if (tensor.stride) out += ", stride=" + ints_text(*tensor.stride, '(', ')');
      return out + ")";
    }
    case Kind::List:
    case Kind::Tuple: {
      std::string out = kind == Kind::List ? "[" : "(";
      for (std::size_t k = 0; k < items.size(); ++k) out += (k ? ", " : "") + items[k].describe();
      if (kind == Kind::Tuple && items.size() == 1) out += ",";
      return out + (kind == Kind::List ? "]" : ")");
    }
    case Kind::Dict: {
      std::string out = "{";
      for (std::size_t k = 0; k < entries.size(); ++k)
        out += (k ? ", '" : "'") + entries[k].first + "': " + entries[k].second.describe();
      return out + "}";
    }
  }
  return "?";
}

bool parse_call_line(std::string_view line, TraceCall& out, TraceSyntaxError& err) {
  out = TraceCall{};
  err = TraceSyntaxError{};
  LineReader reader(line);
  return reader.call(out, err);
}

TraceFile parse_trace_text(const std::string& path, std::string_view text) {
  TraceFile file;
  file.path = path;
  std::string op;
  int op_line = 0;
  bool op_ok = false;
  std::size_t start = 0;
  int line_no = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view raw = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    const std::string_view line = trim_blanks(raw, kWhitespace);
    const int indent = static_cast<int>(raw.find_first_not_of(" \t")) + 1;
    if (line.empty()) continue;
    const SourceLoc loc{path, line_no, indent};
    if (line.rfind("Operator:", 0) == 0) {
      op = std::string(trim_blanks(line.substr(9), kWhitespace));
      // The op object's own spelling, as str(torch.ops.aten.add.Tensor) writes it: the same op as aten.add.Tensor.
      if (op.rfind("torch.ops.", 0) == 0) op.erase(0, 10);
      op_line = line_no;
      // Names go into every case id and report: a generated megabyte one would make reports of megabytes.
      op_ok = op.size() <= kMaxTraceOpBytes && valid_op_name(op);
      if (op.size() > kMaxTraceOpBytes)
        file.problems.warning(loc, "operator header '" + printable(op) + "' (" +
                                       std::to_string(op.size()) + " bytes) is longer than " +
                                       std::to_string(kMaxTraceOpBytes) + " bytes; its calls are not converted");
      else if (!op_ok)
        file.problems.warning(loc, "operator header '" + printable(op) + "' is not an op name like aten.add.Tensor; its calls are "
                                   "not converted");
      continue;
    }
    if (line.rfind("cnt:", 0) != 0) {
      file.problems.warning(loc, "not a trace line (expected 'Operator: aten.<name>.<overload>' or 'cnt: N, ((args), "
                                 "{kwargs})'): " + in_quotes(printable(line)));
      continue;
    }
    ++file.call_lines;
    if (op.empty()) {
      file.problems.warning(loc, "call line before any 'Operator:' header: no op to convert it to");
      continue;
    }
    if (!op_ok) {
      file.problems.warning(loc, "call of the malformed operator header at line " + std::to_string(op_line));
      continue;
    }
    TraceEntry entry;
    TraceSyntaxError err;
    if (!parse_call_line(line, entry.call, err)) {
      file.problems.warning({path, line_no, indent - 1 + err.col}, "malformed call line: " + err.message);
      continue;
    }
    entry.line = line_no;
    entry.op = op;
    entry.op_line = op_line;
    file.entries.push_back(std::move(entry));
  }
  file.line_count = line_no;
  return file;
}

}  // namespace opcheck::traces
