// The skip_if / xfail_if condition language (see include/opcheck/cond_expr.h for the grammar).
#include "opcheck/cond_expr.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "common/spelling.h"
#include "opcheck/dtype.h"

namespace opcheck {
namespace {

// ----------------------------------------------------------------------------------------------------------------
// Values and operands

/// What an operand evaluates to: the names are all strings; literals may be anything Python-like.
struct CondValue {
  enum class Type { Str, Num, Bool, None, List };
  Type type = Type::None;
  std::string s;
  double n = 0;
  bool b = false;
  std::vector<CondValue> items;

  bool truthy() const {
    switch (type) {
      case Type::Str: return !s.empty();
      case Type::Num: return n != 0;
      case Type::Bool: return b;
      case Type::None: return false;
      case Type::List: return !items.empty();
    }
    return false;
  }
  std::string text() const {
    switch (type) {
      case Type::Str: {
        std::string out = "'";
        for (char c : s) {
          if (c == '\'' || c == '\\') out.push_back('\\');
          out.push_back(c);
        }
        return out + "'";
      }
      case Type::Num: {
        char buf[40];
        if (std::nearbyint(n) == n && std::fabs(n) < 1e15)
          std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(n));
        else
          std::snprintf(buf, sizeof buf, "%.17g", n);
        return buf;
      }
      case Type::Bool: return b ? "True" : "False";
      case Type::None: return "None";
      case Type::List: {
        std::string out = "(";
        for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i].text();
        return out + (items.size() == 1 ? ",)" : ")");
      }
    }
    return "";
  }
};

/// The names a condition may read.
enum class NameId { Device, DeviceType, RefDeviceType, Dtype, Op, Model, Env };

struct Operand {
  bool is_name = false;
  NameId name = NameId::Device;
  std::string spelling;  // canonical name text, or the env variable for NameId::Env
  CondValue literal;

  CondValue::Type type() const { return is_name ? CondValue::Type::Str : literal.type; }
  bool is_dtype() const { return is_name && name == NameId::Dtype; }

  CondValue evaluate(const CondEnv& env) const {
    if (!is_name) return literal;
    CondValue v;
    v.type = CondValue::Type::Str;
    auto before_colon = [](const std::string& d) { return d.substr(0, d.find(':')); };
    switch (name) {
      case NameId::Device: v.s = env.device; break;
      case NameId::DeviceType: v.s = before_colon(env.device); break;
      case NameId::RefDeviceType:
        v.s = before_colon(env.ref_device.empty() ? std::string("cpu") : env.ref_device);
        break;
      case NameId::Dtype: v.s = env.dtype; break;
      case NameId::Op: v.s = env.op; break;
      case NameId::Model: v.s = env.model; break;
      case NameId::Env: {
        auto it = env.env.find(spelling);
        if (it != env.env.end()) v.s = it->second;
        break;
      }
    }
    return v;
  }
  std::string text() const { return is_name ? (name == NameId::Env ? "env." + spelling : spelling) : literal.text(); }
};

// ----------------------------------------------------------------------------------------------------------------
// AST

enum class CompareOp { Eq, Ne, Lt, Le, Gt, Ge, In, NotIn };

const char* op_text(CompareOp op) {
  switch (op) {
    case CompareOp::Eq: return "==";
    case CompareOp::Ne: return "!=";
    case CompareOp::Lt: return "<";
    case CompareOp::Le: return "<=";
    case CompareOp::Gt: return ">";
    case CompareOp::Ge: return ">=";
    case CompareOp::In: return "in";
    case CompareOp::NotIn: return "not in";
  }
  return "?";
}

/// Equality as Python sees it, except that dtype names compare by meaning ('fp16' == 'torch.float16').
bool values_equal(const CondValue& a, const CondValue& b, bool dtype_names) {
  using T = CondValue::Type;
  auto numeric = [](const CondValue& v) { return v.type == T::Num || v.type == T::Bool; };
  if (numeric(a) && numeric(b)) {
    double x = a.type == T::Bool ? (a.b ? 1 : 0) : a.n, y = b.type == T::Bool ? (b.b ? 1 : 0) : b.n;
    return x == y;
  }
  if (a.type != b.type) return false;
  switch (a.type) {
    case T::Str: {
      if (a.s == b.s) return true;
      if (!dtype_names) return false;
      auto x = parse_dtype(a.s), y = parse_dtype(b.s);
      return x && y && *x == *y;
    }
    case T::None: return true;
    case T::List: {
      if (a.items.size() != b.items.size()) return false;
      for (std::size_t i = 0; i < a.items.size(); ++i)
        if (!values_equal(a.items[i], b.items[i], dtype_names)) return false;
      return true;
    }
    default: return false;
  }
}

class Compare final : public CondExpr {
 public:
  Compare(Operand l, CompareOp op, Operand r) : l_(std::move(l)), op_(op), r_(std::move(r)) {}
  bool evaluate(const CondEnv& env) const override {
    CondValue a = l_.evaluate(env), b = r_.evaluate(env);
    bool dtypes = l_.is_dtype() || r_.is_dtype();
    switch (op_) {
      case CompareOp::Eq: return values_equal(a, b, dtypes);
      case CompareOp::Ne: return !values_equal(a, b, dtypes);
      case CompareOp::In: return contains(b, a, dtypes);
      case CompareOp::NotIn: return !contains(b, a, dtypes);
      default: break;
    }
    // Ordering: the parser only lets through str-vs-str and number-vs-number.
    int c = 0;
    if (a.type == CondValue::Type::Str && b.type == CondValue::Type::Str) {
      c = a.s.compare(b.s);
    } else {
      double x = a.type == CondValue::Type::Bool ? a.b : a.n, y = b.type == CondValue::Type::Bool ? b.b : b.n;
      if (std::isnan(x) || std::isnan(y)) return false;
      c = x < y ? -1 : x > y ? 1 : 0;
    }
    switch (op_) {
      case CompareOp::Lt: return c < 0;
      case CompareOp::Le: return c <= 0;
      case CompareOp::Gt: return c > 0;
      case CompareOp::Ge: return c >= 0;
      default: return false;
    }
  }
  std::string text() const override { return l_.text() + " " + op_text(op_) + " " + r_.text(); }

 private:
  static bool contains(const CondValue& haystack, const CondValue& needle, bool dtypes) {
    if (haystack.type == CondValue::Type::Str)
      return needle.type == CondValue::Type::Str && haystack.s.find(needle.s) != std::string::npos;
    for (const auto& item : haystack.items)
      if (values_equal(item, needle, dtypes)) return true;
    return false;
  }
  Operand l_;
  CompareOp op_;
  Operand r_;
};

class Truth final : public CondExpr {
 public:
  explicit Truth(Operand o) : o_(std::move(o)) {}
  bool evaluate(const CondEnv& env) const override { return o_.evaluate(env).truthy(); }
  std::string text() const override { return o_.text(); }

 private:
  Operand o_;
};

class Not final : public CondExpr {
 public:
  explicit Not(std::shared_ptr<const CondExpr> e, bool wrap) : e_(std::move(e)), wrap_(wrap) {}
  bool evaluate(const CondEnv& env) const override { return !e_->evaluate(env); }
  std::string text() const override { return wrap_ ? "not (" + e_->text() + ")" : "not " + e_->text(); }

 private:
  std::shared_ptr<const CondExpr> e_;
  bool wrap_;
};

class Junction final : public CondExpr {
 public:
  Junction(bool is_and, std::vector<std::shared_ptr<const CondExpr>> parts, std::vector<bool> wrap)
      : and_(is_and), parts_(std::move(parts)), wrap_(std::move(wrap)) {}
  bool evaluate(const CondEnv& env) const override {
    for (const auto& p : parts_)
      if (p->evaluate(env) != and_) return !and_;
    return and_;
  }
  std::string text() const override {
    std::string out;
    for (std::size_t i = 0; i < parts_.size(); ++i) {
      if (i) out += and_ ? " and " : " or ";
      out += wrap_[i] ? "(" + parts_[i]->text() + ")" : parts_[i]->text();
    }
    return out;
  }
  bool is_and() const { return and_; }

 private:
  bool and_;
  std::vector<std::shared_ptr<const CondExpr>> parts_;
  std::vector<bool> wrap_;
};

// ----------------------------------------------------------------------------------------------------------------
// Tokens

enum class Tok { End, Name, String, Number, LParen, RParen, LBracket, RBracket, Comma, Minus, Cmp, And, Or, Not, In };

struct Token {
  Tok kind = Tok::End;
  std::size_t pos = 0;  // byte offset
  std::string text;     // Name spelling, String contents
  double number = 0;
  CompareOp cmp = CompareOp::Eq;
};

bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

const std::vector<std::string_view>& known_names() {
  static const std::vector<std::string_view> names{
      "device", "dtype", "op", "model", "cfg.test_device.type", "cfg.ref_device.type", "dtype_str", "op_name", "env"};
  return names;
}

constexpr int kMaxDepth = 64;

class CondParser {
 public:
  explicit CondParser(const std::string& src) : s_(src) {}

  std::shared_ptr<const CondExpr> parse() {
    if (!lex()) return nullptr;
    if (toks_.size() == 1) {
      fail(0, "empty condition");
      return nullptr;
    }
    auto e = parse_or(0);
    if (!e) return nullptr;
    if (cur().kind != Tok::End) {
      fail(cur().pos, "unexpected " + describe(cur()) + " after the end of the condition");
      return nullptr;
    }
    return e;
  }

  std::string error;
  int error_col = 0;

 private:
  bool fail(std::size_t pos, std::string message) {
    if (error.empty()) {
      error = std::move(message);
      error_col = static_cast<int>(pos) + 1;
    }
    return false;
  }
  const Token& cur() const { return toks_[i_]; }
  const Token& peek(std::size_t k) const { return toks_[std::min(i_ + k, toks_.size() - 1)]; }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::End: return "end of the condition";
      case Tok::Name: return "name '" + t.text + "'";
      case Tok::String: return "string '" + t.text + "'";
      case Tok::Number: return "number";
      case Tok::LParen: return "'('";
      case Tok::RParen: return "')'";
      case Tok::LBracket: return "'['";
      case Tok::RBracket: return "']'";
      case Tok::Comma: return "','";
      case Tok::Minus: return "'-'";
      case Tok::Cmp: return std::string("'") + op_text(t.cmp) + "'";
      case Tok::And: return "'and'";
      case Tok::Or: return "'or'";
      case Tok::Not: return "'not'";
      case Tok::In: return "'in'";
    }
    return "token";
  }

  bool lex();
  std::shared_ptr<const CondExpr> parse_or(int depth);
  std::shared_ptr<const CondExpr> parse_and(int depth);
  std::shared_ptr<const CondExpr> parse_not(int depth);
  std::shared_ptr<const CondExpr> parse_comparison(int depth);
  bool parse_operand(Operand& out);
  bool parse_literal(CondValue& out);
  bool literal_group_ahead();

  const std::string& s_;
  std::vector<Token> toks_;
  std::size_t i_ = 0;
  int literal_depth_ = 0;
};

bool CondParser::lex() {
  std::size_t p = 0, n = s_.size();
  while (p < n) {
    char c = s_[p];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++p;
      continue;
    }
    Token t;
    t.pos = p;
    if (ident_start(c)) {
      while (p < n && (ident_char(s_[p]) || (s_[p] == '.' && p + 1 < n && ident_start(s_[p + 1])))) ++p;
      t.text = s_.substr(t.pos, p - t.pos);
      t.kind = t.text == "and"   ? Tok::And
               : t.text == "or"  ? Tok::Or
               : t.text == "not" ? Tok::Not
               : t.text == "in"  ? Tok::In
                                 : Tok::Name;
    } else if ((c >= '0' && c <= '9') || (c == '.' && p + 1 < n && s_[p + 1] >= '0' && s_[p + 1] <= '9')) {
      while (p < n && (ident_char(s_[p]) || s_[p] == '.' ||
                       ((s_[p] == '-' || s_[p] == '+') && (s_[p - 1] == 'e' || s_[p - 1] == 'E'))))
        ++p;
      std::string num = s_.substr(t.pos, p - t.pos);
      auto res = std::from_chars(num.data(), num.data() + num.size(), t.number);
      const std::size_t exp = num.find_first_of("eE");
      if (res.ec == std::errc::result_out_of_range && (exp == std::string::npos || num[exp + 1] != '-'))
        return fail(t.pos, "number '" + num.substr(0, 40) + (num.size() > 40 ? "..." : "") +
                               "' is too large for a 64-bit float; write a number below 1.8e308");
      if (res.ec != std::errc() || res.ptr != num.data() + num.size())
        return fail(t.pos, "malformed number '" + num + "'");
      t.kind = Tok::Number;
    } else if (c == '\'' || c == '"') {
      ++p;
      bool closed = false;
      while (p < n) {
        char d = s_[p++];
        if (d == c) {
          closed = true;
          break;
        }
        if (d == '\\' && p < n) {
          char e = s_[p++];
          t.text.push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e);
          continue;
        }
        t.text.push_back(d);
      }
      if (!closed) return fail(t.pos, "unterminated string");
      t.kind = Tok::String;
    } else {
      ++p;
      auto two = [&](char next) { return p < n && s_[p] == next; };
      switch (c) {
        case '(': t.kind = Tok::LParen; break;
        case ')': t.kind = Tok::RParen; break;
        case '[': t.kind = Tok::LBracket; break;
        case ']': t.kind = Tok::RBracket; break;
        case ',': t.kind = Tok::Comma; break;
        case '-': t.kind = Tok::Minus; break;
        case '=':
          if (!two('=')) return fail(t.pos, "'=' is assignment; compare with '=='");
          ++p;
          t.kind = Tok::Cmp;
          t.cmp = CompareOp::Eq;
          break;
        case '!':
          if (!two('=')) return fail(t.pos, "unexpected '!'; use 'not' or '!='");
          ++p;
          t.kind = Tok::Cmp;
          t.cmp = CompareOp::Ne;
          break;
        case '<':
        case '>':
          t.kind = Tok::Cmp;
          if (two('=')) {
            ++p;
            t.cmp = c == '<' ? CompareOp::Le : CompareOp::Ge;
          } else {
            t.cmp = c == '<' ? CompareOp::Lt : CompareOp::Gt;
          }
          break;
        case '&':
        case '|': return fail(t.pos, std::string("unexpected '") + c + "'; use '" + (c == '&' ? "and" : "or") + "'");
        default: return fail(t.pos, std::string("unexpected character '") + c + "'");
      }
    }
    toks_.push_back(std::move(t));
  }
  Token end;
  end.pos = n;
  toks_.push_back(end);
  return true;
}

std::shared_ptr<const CondExpr> CondParser::parse_or(int depth) {
  if (depth > kMaxDepth) {
    fail(cur().pos, "condition nested deeper than " + std::to_string(kMaxDepth) + " levels");
    return nullptr;
  }
  std::vector<std::shared_ptr<const CondExpr>> parts;
  auto first = parse_and(depth);
  if (!first) return nullptr;
  parts.push_back(first);
  while (cur().kind == Tok::Or) {
    ++i_;
    auto next = parse_and(depth);
    if (!next) return nullptr;
    parts.push_back(next);
  }
  if (parts.size() == 1) return parts.front();
  std::vector<bool> wrap(parts.size(), false);  // 'and' binds tighter: no parentheses needed inside 'or'
  return std::make_shared<Junction>(false, std::move(parts), std::move(wrap));
}

std::shared_ptr<const CondExpr> CondParser::parse_and(int depth) {
  std::vector<std::shared_ptr<const CondExpr>> parts;
  std::vector<bool> wrap;
  auto add = [&](std::shared_ptr<const CondExpr> e) {
    auto j = dynamic_cast<const Junction*>(e.get());
    wrap.push_back(j && !j->is_and());
    parts.push_back(std::move(e));
  };
  auto first = parse_not(depth);
  if (!first) return nullptr;
  add(first);
  while (cur().kind == Tok::And) {
    ++i_;
    auto next = parse_not(depth);
    if (!next) return nullptr;
    add(next);
  }
  if (parts.size() == 1) return parts.front();
  return std::make_shared<Junction>(true, std::move(parts), std::move(wrap));
}

std::shared_ptr<const CondExpr> CondParser::parse_not(int depth) {
  if (cur().kind == Tok::Not) {
    ++i_;
    if (depth > kMaxDepth) {
      fail(cur().pos, "condition nested deeper than " + std::to_string(kMaxDepth) + " levels");
      return nullptr;
    }
    auto e = parse_not(depth + 1);
    if (!e) return nullptr;
    bool wrap = dynamic_cast<const Junction*>(e.get()) != nullptr;
    return std::make_shared<Not>(std::move(e), wrap);
  }
  return parse_comparison(depth);
}

// True when the '(' at the cursor opens a literal (a tuple, nested ones included, or one parenthesized literal)
// rather than a group. Decided by trying to read a literal there and rewinding: `((), ('a',))` and `((a == 'b'))`
// differ only past their first tokens.
bool CondParser::literal_group_ahead() {
  const std::size_t saved_i = i_;
  const int saved_depth = literal_depth_;
  const std::string saved_error = error;
  const int saved_col = error_col;
  CondValue probe;
  const bool literal = parse_literal(probe);
  i_ = saved_i;
  literal_depth_ = saved_depth;
  error = saved_error;
  error_col = saved_col;
  return literal;
}

std::shared_ptr<const CondExpr> CondParser::parse_comparison(int depth) {
  if (cur().kind == Tok::LParen && !literal_group_ahead()) {
    std::size_t open = cur().pos;
    ++i_;
    auto e = parse_or(depth + 1);
    if (!e) return nullptr;
    if (cur().kind != Tok::RParen) {
      fail(cur().kind == Tok::End ? open : cur().pos,
           cur().kind == Tok::End ? "unclosed '('" : "expected ')' but found " + describe(cur()));
      return nullptr;
    }
    ++i_;
    if (cur().kind == Tok::Cmp || cur().kind == Tok::In) {
      fail(cur().pos, "a parenthesized condition cannot be compared");
      return nullptr;
    }
    return e;
  }
  Operand lhs;
  if (!parse_operand(lhs)) return nullptr;
  CompareOp op;
  std::size_t op_pos = cur().pos;
  if (cur().kind == Tok::Cmp) {
    op = cur().cmp;
    ++i_;
  } else if (cur().kind == Tok::In) {
    op = CompareOp::In;
    ++i_;
  } else if (cur().kind == Tok::Not && peek(1).kind == Tok::In) {
    op = CompareOp::NotIn;
    i_ += 2;
  } else {
    return std::make_shared<Truth>(std::move(lhs));
  }
  Operand rhs;
  if (!parse_operand(rhs)) return nullptr;
  if (cur().kind == Tok::Cmp || cur().kind == Tok::In) {
    fail(cur().pos, "chained comparisons are not supported; join them with 'and'");
    return nullptr;
  }
  using T = CondValue::Type;
  T lt = lhs.type(), rt = rhs.type();
  auto numeric = [](T t) { return t == T::Num || t == T::Bool; };
  if (op == CompareOp::In || op == CompareOp::NotIn) {
    if (rt != T::List && rt != T::Str) {
      fail(op_pos, "the right side of 'in' must be a list, a tuple or a string");
      return nullptr;
    }
    if (rt == T::Str && lt != T::Str) {
      fail(op_pos, "'in' a string needs a string on the left");
      return nullptr;
    }
  } else if (op != CompareOp::Eq && op != CompareOp::Ne) {
    if (!((lt == T::Str && rt == T::Str) || (numeric(lt) && numeric(rt)))) {
      fail(op_pos, std::string("'") + op_text(op) + "' needs two strings or two numbers");
      return nullptr;
    }
  }
  return std::make_shared<Compare>(std::move(lhs), op, std::move(rhs));
}

bool CondParser::parse_literal(CondValue& out) {
  const Token& t = cur();
  if (t.kind == Tok::String) {
    out.type = CondValue::Type::Str;
    out.s = t.text;
    ++i_;
    return true;
  }
  if (t.kind == Tok::Minus || t.kind == Tok::Number) {
    bool neg = t.kind == Tok::Minus;
    if (neg) ++i_;
    if (cur().kind != Tok::Number) return fail(cur().pos, "expected a number after '-'");
    out.type = CondValue::Type::Num;
    out.n = neg ? -cur().number : cur().number;
    ++i_;
    return true;
  }
  if (t.kind == Tok::Name && (t.text == "True" || t.text == "False")) {
    out.type = CondValue::Type::Bool;
    out.b = t.text == "True";
    ++i_;
    return true;
  }
  if (t.kind == Tok::Name && t.text == "None") {
    out.type = CondValue::Type::None;
    ++i_;
    return true;
  }
  if (t.kind == Tok::LParen || t.kind == Tok::LBracket) {
    if (++literal_depth_ > kMaxDepth)
      return fail(t.pos, "literal nested deeper than " + std::to_string(kMaxDepth) + " levels");
    bool tuple = t.kind == Tok::LParen;
    Tok close = tuple ? Tok::RParen : Tok::RBracket;
    std::size_t open = t.pos;
    ++i_;
    out.type = CondValue::Type::List;
    bool comma = false;
    while (cur().kind != close) {
      CondValue item;
      if (cur().kind == Tok::End) return fail(open, tuple ? "unclosed '('" : "unclosed '['");
      if (!parse_literal(item)) return false;
      out.items.push_back(std::move(item));
      if (cur().kind == Tok::Comma) {
        comma = true;
        ++i_;
      } else if (cur().kind == Tok::End) {
        return fail(open, tuple ? "unclosed '('" : "unclosed '['");
      } else if (cur().kind != close) {
        return fail(cur().pos, "expected ',' or '" + std::string(tuple ? ")" : "]") + "' but found " + describe(cur()));
      }
    }
    ++i_;
    --literal_depth_;
    if (tuple && !comma && out.items.size() == 1) {  // ('x') is just 'x'
      CondValue inner = std::move(out.items.front());
      out = std::move(inner);
    }
    return true;
  }
  return fail(t.pos, "expected a literal (string, number, True, False, None, list) but found " + describe(t));
}

bool CondParser::parse_operand(Operand& out) {
  const Token& t = cur();
  if (t.kind == Tok::Name && t.text != "True" && t.text != "False" && t.text != "None") {
    const std::string& n = t.text;
    out.is_name = true;
    if (n == "device") {
      out.name = NameId::Device;
    } else if (n == "cfg.test_device.type") {
      out.name = NameId::DeviceType;
    } else if (n == "cfg.ref_device.type") {
      out.name = NameId::RefDeviceType;
    } else if (n == "dtype" || n == "dtype_str") {
      out.name = NameId::Dtype;
    } else if (n == "op" || n == "op_name") {
      out.name = NameId::Op;
    } else if (n == "model") {
      out.name = NameId::Model;
    } else if (n.rfind("env.", 0) == 0 && n.find('.', 4) == std::string::npos && n.size() > 4) {
      out.name = NameId::Env;
      out.spelling = n.substr(4);
      ++i_;
      return true;
    } else {
      std::string hint = did_you_mean(n, known_names());
      if (hint.empty() && (n == "true" || n == "false" || n == "none" || n == "null"))
        hint = std::string(" (did you mean '") + (n == "true" ? "True" : n == "false" ? "False" : "None") + "'?)";
      if (n == "env") return fail(t.pos, "'env' needs a variable name: env.NAME");
      return fail(t.pos, "unknown name '" + n + "'" + hint);
    }
    static const char* canonical[] = {"device", "cfg.test_device.type", "cfg.ref_device.type", "dtype", "op", "model"};
    out.spelling = canonical[static_cast<int>(out.name)];
    ++i_;
    return true;
  }
  out.is_name = false;
  return parse_literal(out.literal);
}

}  // namespace

std::shared_ptr<const CondExpr> parse_cond_expr(const std::string& source, std::string& error, int& error_col) {
  CondParser p(source);
  auto e = p.parse();
  if (!e) {
    error = p.error.empty() ? "invalid condition" : p.error;
    error_col = p.error_col > 0 ? p.error_col : 1;
    return nullptr;
  }
  error.clear();
  error_col = 0;
  return e;
}

}  // namespace opcheck
