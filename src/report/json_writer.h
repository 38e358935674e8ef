// Writing JSON as text, value by value, without building a document first: the metrics file and the journal
// hold a record per case, and a tree of 10,000 records costs more time and memory than the run's own work.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace opcheck {

/// Appends JSON to a string. Containers opened with `compact` (or inside one, or when the writer was made with
/// indent 0) go on one line without spaces; others put each member on its own line, indented like
/// nlohmann::json::dump(indent). Strings pass through visible_utf8, so invalid UTF-8 shows as `\xNN`.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out, int indent = 0) : out_(out), indent_(indent) {}

  JsonWriter& begin_object(bool compact = false) { return open('{', compact); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array(bool compact = false) { return open('[', compact); }
  JsonWriter& end_array() { return close(']'); }

  /// The name of the next member of the open object.
  JsonWriter& key(std::string_view k);

  JsonWriter& value(std::string_view s);
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(bool b);
  /// Finite numbers as numbers (shortest text that reads back the same; integral values keep a ".0"), NaN and
  /// infinities as the strings "NaN", "Infinity", "-Infinity" (JSON has no spelling for them).
  JsonWriter& value(double v);
  /// An absent number is null.
  JsonWriter& value(const std::optional<double>& v);
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  JsonWriter& value(T v) {
    before_value();
    if constexpr (std::is_signed_v<T>) append_int(static_cast<std::int64_t>(v));
    else append_uint(static_cast<std::uint64_t>(v));
    return *this;
  }
  JsonWriter& null();
  /// An array of the strings of any container (vector, set).
  template <class Strings>
  JsonWriter& strings(const Strings& v, bool compact = false) {
    begin_array(compact);
    for (const auto& s : v) value(std::string_view(s));
    return end_array();
  }

  /// key(k).value(v).
  template <class T>
  JsonWriter& field(std::string_view k, const T& v) {
    return key(k).value(v);
  }

  /// True when every container opened has been closed.
  bool done() const { return depth_ == 0; }

 private:
  struct Level {
    bool compact;
    bool empty;
  };
  JsonWriter& open(char c, bool compact);
  JsonWriter& close(char c);
  void before_value();
  void newline(std::size_t depth);
  void append_int(std::int64_t v);
  void append_uint(std::uint64_t v);

  static constexpr std::size_t kMaxDepth = 16;  // opcheck's documents nest 4 deep; a writer is made per record
  std::string& out_;
  int indent_;
  std::array<Level, kMaxDepth> stack_{};
  std::size_t depth_ = 0;
  bool after_key_ = false;
};

}  // namespace opcheck
