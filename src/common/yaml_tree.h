// A located YAML document tree built from libyaml's event API: only what manifests need (maps, lists, scalars).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opcheck::yaml {

enum class NodeKind : std::uint8_t { Scalar, Sequence, Mapping };

/// Plain scalars are typed by the YAML core schema; quoted and block scalars (and `!!str`) are always strings.
enum class ScalarStyle : std::uint8_t { Plain, Quoted, Block };

/// One node of the tree, stored flat; children live in Tree::links_ (maps as key, value pairs).
struct Node {
  NodeKind kind = NodeKind::Scalar;
  ScalarStyle style = ScalarStyle::Plain;
  int line = 0;             // 1-based
  int col = 0;              // 1-based
  std::uint32_t begin = 0;  // Scalar: offset in Tree::text_; collections: first index in Tree::links_
  std::uint32_t size = 0;   // Scalar: byte length; Sequence: items; Mapping: entries
};

class Tree;

/// A cheap handle on one node of a Tree (the Tree must outlive it).
class NodeRef {
 public:
  NodeRef() = default;
  NodeRef(const Tree* tree, std::uint32_t index) : tree_(tree), index_(index) {}

  explicit operator bool() const { return tree_ != nullptr; }
  const Node& node() const;
  NodeKind kind() const { return node().kind; }
  bool is_scalar() const { return node().kind == NodeKind::Scalar; }
  bool is_sequence() const { return node().kind == NodeKind::Sequence; }
  bool is_mapping() const { return node().kind == NodeKind::Mapping; }
  ScalarStyle style() const { return node().style; }
  int line() const { return node().line; }
  int col() const { return node().col; }

  std::string_view text() const;  // scalars only
  std::size_t size() const { return node().size; }
  NodeRef item(std::size_t i) const;         // sequences
  NodeRef key(std::size_t i) const;          // mappings: always a scalar
  NodeRef value(std::size_t i) const;        // mappings
  NodeRef find(std::string_view key) const;  // mappings; null handle when absent

  /// "a string", "a list", "a mapping", "an integer", "null", ... as a user would call this node.
  std::string describe() const;

 private:
  const Tree* tree_ = nullptr;
  std::uint32_t index_ = 0;
};

/// A parse problem with its 1-based position (line 0 when the input holds no document at all).
struct ParseError {
  int line = 0;
  int col = 0;
  std::string message;
  std::string fix;
};

/// Limits that keep hostile input from exhausting time or memory.
struct ParseLimits {
  int max_depth = 64;
  std::size_t max_bytes = std::size_t(256) << 20;
  std::uint64_t max_expanded_nodes = 20'000'000;  // counts aliased subtrees once per use (billion-laughs guard)
};

/// A parsed single-document YAML stream.
class Tree {
 public:
  NodeRef root() const { return NodeRef(this, root_); }

 private:
  friend class NodeRef;
  friend bool parse_yaml(std::string_view, Tree&, ParseError&, const ParseLimits&);
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> links_;
  std::string text_;
  std::uint32_t root_ = 0;
};

/// Parses `text` into `out`. Anchors and aliases are resolved (aliases share the anchored node), `<<` merge keys
/// are applied, duplicate keys, non-scalar keys, unknown tags, several documents and an empty stream are errors.
bool parse_yaml(std::string_view text, Tree& out, ParseError& error, const ParseLimits& limits = {});

/// Anything besides blank lines, comments and document markers? (A file without is "empty", not malformed.)
bool has_content(std::string_view text);

/// True for a plain scalar that the YAML core schema reads as null (`~`, `null`, `Null`, `NULL`, empty).
bool is_core_null(std::string_view s);
/// Plain-scalar booleans of the core schema (true/True/TRUE/false/False/FALSE).
bool parse_core_bool(std::string_view s, bool& out);
/// Core-schema integers (decimal, 0o octal, 0x hex). Returns false when `s` is not an int; sets `overflow` when it
/// is one that does not fit in 64 bits.
bool parse_core_int(std::string_view s, std::int64_t& out, bool& overflow);
/// Core-schema floats (1.5, 1e-3, .5, .inf, -.inf, .nan).
bool parse_core_float(std::string_view s, double& out);
/// The same; sets `overflow` when `s` is a finite number too large for a double (1e999999), which reads as inf.
bool parse_core_float(std::string_view s, double& out, bool& overflow);

}  // namespace opcheck::yaml
