#include "report/json_writer.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

#include "common/text_escape.h"

namespace opcheck {

void JsonWriter::newline(std::size_t depth) {
  out_ += '\n';
  out_.append(depth * static_cast<std::size_t>(indent_), ' ');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (depth_ == 0) return;
  Level& l = stack_[depth_ - 1];
  if (!l.empty) out_ += ',';
  l.empty = false;
  if (!l.compact) newline(depth_);
}

JsonWriter& JsonWriter::open(char c, bool compact) {
  if (depth_ == kMaxDepth) throw std::logic_error("JsonWriter: nested deeper than it supports");
  before_value();
  out_ += c;
  stack_[depth_] = {compact || indent_ <= 0 || (depth_ > 0 && stack_[depth_ - 1].compact), true};
  ++depth_;
  return *this;
}

JsonWriter& JsonWriter::close(char c) {
  const Level l = stack_[--depth_];
  if (!l.empty && !l.compact) newline(depth_);
  out_ += c;
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
  before_value();
  out_ += '"';
  append_escaped(out_, k, EscapeMode::Json);
  out_ += stack_[depth_ - 1].compact ? "\":" : "\": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  before_value();
  out_ += '"';
  append_escaped(out_, s, EscapeMode::Json);
  out_ += '"';
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  before_value();
  out_ += b ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::value(double v) {
  if (std::isnan(v)) return value("NaN");
  if (std::isinf(v)) return value(v > 0 ? "Infinity" : "-Infinity");
  before_value();
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  const std::string_view text(buf, static_cast<std::size_t>(res.ptr - buf));
  out_ += text;
  // A double stays a double for readers that tell 1 from 1.0 (Python's json does).
  if (text.find_first_of(".e") == std::string_view::npos) out_ += ".0";
  return *this;
}

JsonWriter& JsonWriter::value(const std::optional<double>& v) { return v ? value(*v) : null(); }

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

void JsonWriter::append_int(std::int64_t v) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, res.ptr);
}

void JsonWriter::append_uint(std::uint64_t v) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, res.ptr);
}

}  // namespace opcheck
