#include "common/yaml_tree.h"

#include <yaml.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace opcheck::yaml {

// ---------------------------------------------------------------------------------------------------------------
// NodeRef

const Node& NodeRef::node() const { return tree_->nodes_[index_]; }

std::string_view NodeRef::text() const {
  const Node& n = node();
  if (n.kind != NodeKind::Scalar) return {};
  return std::string_view(tree_->text_.data() + n.begin, n.size);
}

NodeRef NodeRef::item(std::size_t i) const { return NodeRef(tree_, tree_->links_[node().begin + i]); }
NodeRef NodeRef::key(std::size_t i) const { return NodeRef(tree_, tree_->links_[node().begin + 2 * i]); }
NodeRef NodeRef::value(std::size_t i) const { return NodeRef(tree_, tree_->links_[node().begin + 2 * i + 1]); }

NodeRef NodeRef::find(std::string_view k) const {
  const Node& n = node();
  if (n.kind != NodeKind::Mapping) return {};
  for (std::size_t i = 0; i < n.size; ++i)
    if (key(i).text() == k) return value(i);
  return {};
}

std::string NodeRef::describe() const {
  switch (kind()) {
    case NodeKind::Sequence: return "a list";
    case NodeKind::Mapping: return "a mapping";
    case NodeKind::Scalar: break;
  }
  if (style() != ScalarStyle::Plain) return "a string";
  std::string_view s = text();
  bool b;
  std::int64_t i;
  bool overflow;
  double f;
  if (is_core_null(s)) return "null";
  if (parse_core_bool(s, b)) return "a boolean";
  if (parse_core_int(s, i, overflow)) return "an integer";
  if (parse_core_float(s, f)) return "a number";
  return "a string";
}

// ---------------------------------------------------------------------------------------------------------------
// Core schema scalars

bool is_core_null(std::string_view s) { return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL"; }

bool parse_core_bool(std::string_view s, bool& out) {
  if (s == "true" || s == "True" || s == "TRUE") {
    out = true;
    return true;
  }
  if (s == "false" || s == "False" || s == "FALSE") {
    out = false;
    return true;
  }
  return false;
}

bool parse_core_int(std::string_view s, std::int64_t& out, bool& overflow) {
  overflow = false;
  if (s.empty()) return false;
  int base = 10;
  bool negative = false;
  std::string_view digits = s;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
    base = s[1] == 'o' ? 8 : 16;
    digits = s.substr(2);
  } else {
    if (digits[0] == '-' || digits[0] == '+') {
      negative = digits[0] == '-';
      digits.remove_prefix(1);
    }
  }
  if (digits.empty()) return false;
  for (char c : digits) {
    bool ok = base == 10  ? (c >= '0' && c <= '9')
              : base == 8 ? (c >= '0' && c <= '7')
                          : ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'));
    if (!ok) return false;
  }
  // Accumulate as a negative number so INT64_MIN is representable.
  std::int64_t v = 0;
  for (char c : digits) {
    int d = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
    if (__builtin_mul_overflow(v, base, &v) || __builtin_sub_overflow(v, d, &v)) {
      overflow = true;
      return true;
    }
  }
  if (!negative) {
    if (v == std::numeric_limits<std::int64_t>::min()) {
      overflow = true;
      return true;
    }
    v = -v;
  }
  out = v;
  return true;
}

bool parse_core_float(std::string_view s, double& out) {
  bool overflow = false;
  return parse_core_float(s, out, overflow);
}

bool parse_core_float(std::string_view s, double& out, bool& overflow) {
  overflow = false;
  if (s.empty()) return false;
  std::string_view body = s;
  bool negative = false;
  if (body[0] == '-' || body[0] == '+') {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (body == ".inf" || body == ".Inf" || body == ".INF") {
    out = negative ? -HUGE_VAL : HUGE_VAL;
    return true;
  }
  if (s == ".nan" || s == ".NaN" || s == ".NAN") {
    out = std::nan("");
    return true;
  }
  // [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
  std::size_t p = 0, n = body.size();
  auto digits = [&] {
    std::size_t start = p;
    while (p < n && body[p] >= '0' && body[p] <= '9') ++p;
    return p - start;
  };
  if (p < n && body[p] == '.') {
    ++p;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (p < n && body[p] == '.') {
      ++p;
      digits();
    }
  }
  if (p < n && (body[p] == 'e' || body[p] == 'E')) {
    ++p;
    if (p < n && (body[p] == '-' || body[p] == '+')) ++p;
    if (digits() == 0) return false;
  }
  if (p != n) return false;
  double v = 0;
  auto res = std::from_chars(body.data(), body.data() + n, v);
  if (res.ec == std::errc::result_out_of_range) {
    // from_chars leaves the value alone on overflow/underflow; keep YAML's meaning (huge => inf, tiny => 0).
    auto e = body.find_first_of("eE");
    bool tiny = e != std::string_view::npos && e + 1 < n && body[e + 1] == '-';
    v = tiny ? 0.0 : HUGE_VAL;
    overflow = !tiny;
  } else if (res.ec != std::errc() || res.ptr != body.data() + n) {
    return false;
  }
  out = negative ? -v : v;
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Parser

namespace {

constexpr const char* kTagPrefix = "tag:yaml.org,2002:";

struct ParserHandle {
  yaml_parser_t p;
  bool ok;
  ParserHandle() { ok = yaml_parser_initialize(&p) != 0; }
  ~ParserHandle() {
    if (ok) yaml_parser_delete(&p);
  }
};

struct EventHandle {
  yaml_event_t e;
  bool live = false;
  ~EventHandle() { reset(); }
  void reset() {
    if (live) yaml_event_delete(&e);
    live = false;
  }
};

// One open collection while events stream in; frames are reused across the document to avoid reallocations.
struct Frame {
  std::uint32_t node = 0;
  std::vector<std::uint32_t> children;
  std::string anchor;
  std::uint64_t weight = 1;
};

// Byte offset of a 0-based (line, column) where column counts characters, as libyaml's marks do.
std::size_t offset_of(std::string_view text, std::size_t line, std::size_t col) {
  std::size_t off = 0;
  for (std::size_t l = 0; l < line && off < text.size(); ++off)
    if (text[off] == '\n') ++l;
  for (std::size_t c = 0; c < col && off < text.size(); ++c) {
    ++off;
    while (off < text.size() && (static_cast<unsigned char>(text[off]) & 0xC0) == 0x80) ++off;
  }
  return off;
}

// 1-based line and character column of a byte offset.
void position_of(std::string_view text, std::size_t offset, int& line, int& col) {
  line = 1;
  col = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++col;
    }
  }
}

class Builder {
 public:
  Builder(std::string_view text, std::vector<Node>& nodes, std::vector<std::uint32_t>& links, std::string& arena,
          ParseError& error, const ParseLimits& limits)
      : text_(text), nodes_(nodes), links_(links), arena_(arena), error_(error), limits_(limits) {}

  bool run(std::uint32_t& root);

 private:
  bool fail(const yaml_mark_t& m, std::string message, std::string fix = {}) {
    error_.line = static_cast<int>(m.line) + 1;
    error_.col = static_cast<int>(m.column) + 1;
    error_.message = std::move(message);
    error_.fix = std::move(fix);
    return false;
  }
  bool fail_at(std::uint32_t node, std::string message, std::string fix = {}) {
    error_.line = nodes_[node].line;
    error_.col = nodes_[node].col;
    error_.message = std::move(message);
    error_.fix = std::move(fix);
    return false;
  }
  bool libyaml_error(const yaml_parser_t& p);
  bool check_tag(const yaml_mark_t& m, const yaml_char_t* tag, bool scalar, ScalarStyle& style);
  std::uint32_t new_node(NodeKind kind, const yaml_mark_t& m) {
    Node n;
    n.kind = kind;
    n.line = static_cast<int>(m.line) + 1;
    n.col = static_cast<int>(m.column) + 1;
    nodes_.push_back(n);
    weights_.push_back(1);
    return static_cast<std::uint32_t>(nodes_.size() - 1);
  }
  bool add_child(std::uint32_t node);
  bool finish_mapping(Frame& f);
  bool register_anchor(const yaml_char_t* anchor, std::uint32_t node);
  std::string_view scalar_text(std::uint32_t node) const {
    return std::string_view(arena_.data() + nodes_[node].begin, nodes_[node].size);
  }
  std::string key_name(std::uint32_t node) const {
    std::string s(scalar_text(node).substr(0, 80));
    return s;
  }

  std::string_view text_;
  std::vector<Node>& nodes_;
  std::vector<std::uint32_t>& links_;
  std::string& arena_;
  ParseError& error_;
  const ParseLimits& limits_;
  std::vector<std::uint64_t> weights_;
  std::vector<Frame> frames_;
  std::size_t depth_ = 0;
  std::unordered_map<std::string, std::uint32_t> anchors_;
  bool have_root_ = false;
  std::uint32_t root_ = 0;
  // Scratch for finish_mapping, kept to avoid reallocating per mapping.
  std::vector<std::uint32_t> merged_;
  std::unordered_set<std::string_view> seen_;
};

bool Builder::libyaml_error(const yaml_parser_t& p) {
  std::string problem = p.problem ? p.problem : "unknown libyaml error";
  if (p.error == YAML_MEMORY_ERROR) {
    error_.line = 1;
    error_.col = 1;
    error_.message = "invalid YAML: the parser ran out of memory";
    return false;
  }
  if (p.error == YAML_READER_ERROR) {
    position_of(text_, p.problem_offset, error_.line, error_.col);
    // libyaml's value is an octet for a malformed sequence but a code point for a well-formed one it refuses (a
    // surrogate, a control character): name the character, then the bytes as they are in the file.
    std::string detail;
    char buf[32];
    if (p.problem_value > 0xFF || (p.problem_value >= 0 && problem.find("character") != std::string::npos)) {
      std::snprintf(buf, sizeof buf, "U+%04X", unsigned(p.problem_value));
      detail = buf;
      if (p.problem_value >= 0xD800 && p.problem_value <= 0xDFFF) detail += ", a UTF-16 surrogate";
    }
    std::string bytes;
    for (std::size_t i = p.problem_offset; i < text_.size() && i < p.problem_offset + 4; ++i) {
      const auto b = static_cast<unsigned char>(text_[i]);
      if (i > p.problem_offset && b < 0x80) break;
      std::snprintf(buf, sizeof buf, "%s0x%02X", bytes.empty() ? "" : " ", b);
      bytes += buf;
    }
    if (!bytes.empty()) detail += (detail.empty() ? "" : "; ") + std::string(bytes.find(' ') == std::string::npos ? "byte " : "bytes ") + bytes;
    error_.message = "not UTF-8 YAML text: " + problem + (detail.empty() ? "" : " (" + detail + ")");
    error_.fix = "save the manifest as UTF-8 text without control characters";
    return false;
  }
  const yaml_mark_t& m = p.problem_mark;
  std::size_t off = offset_of(text_, m.line, m.column);
  if (off < text_.size() && text_[off] == '\t') {
    return fail(m, "invalid YAML: tab character in indentation or where a token is expected (" + problem + ")",
                "indent YAML with spaces, never tabs");
  }
  std::string message = "invalid YAML: " + problem;
  if (p.context) {
    message += std::string(" ") + p.context;
    if (p.context_mark.line != m.line || p.context_mark.column != m.column)
      message += " that started at line " + std::to_string(p.context_mark.line + 1) + ", column " +
                 std::to_string(p.context_mark.column + 1);
  }
  std::string fix;
  if (off >= text_.size()) fix = "the file looks truncated: close every open bracket, quote and block";
  return fail(m, std::move(message), std::move(fix));
}

bool Builder::check_tag(const yaml_mark_t& m, const yaml_char_t* tag, bool scalar, ScalarStyle& style) {
  if (!tag) return true;
  std::string_view t(reinterpret_cast<const char*>(tag));
  if (t == "!") {  // the non-specific tag: a string
    if (scalar) style = ScalarStyle::Quoted;
    return true;
  }
  std::string_view prefix(kTagPrefix);
  if (t.substr(0, prefix.size()) == prefix) {
    std::string_view name = t.substr(prefix.size());
    if (scalar && name == "str") {
      style = ScalarStyle::Quoted;
      return true;
    }
    if (scalar && (name == "int" || name == "float" || name == "bool" || name == "null")) {
      style = ScalarStyle::Plain;
      return true;
    }
    if (!scalar && (name == "seq" || name == "map")) return true;
  }
  return fail(m, "unsupported YAML tag '" + std::string(t) + "'",
              "remove the tag; manifests use plain YAML maps, lists and scalars");
}

bool Builder::register_anchor(const yaml_char_t* anchor, std::uint32_t node) {
  if (anchor) anchors_[reinterpret_cast<const char*>(anchor)] = node;
  return true;
}

bool Builder::add_child(std::uint32_t node) {
  if (depth_ == 0) {
    have_root_ = true;
    root_ = node;
    return true;
  }
  Frame& parent = frames_[depth_ - 1];
  if (nodes_[parent.node].kind == NodeKind::Mapping && parent.children.size() % 2 == 0 &&
      nodes_[node].kind != NodeKind::Scalar)
    return fail_at(node,
                   "a mapping key must be a plain string, not " +
                       std::string(nodes_[node].kind == NodeKind::Sequence ? "a list" : "a mapping"),
                   "use `name: value` pairs with simple string keys");
  parent.children.push_back(node);
  parent.weight += weights_[node];
  if (parent.weight > limits_.max_expanded_nodes)
    return fail_at(node, "aliases expand to more than " + std::to_string(limits_.max_expanded_nodes) + " YAML nodes",
                   "do not nest aliases of aliases; write the values out");
  return true;
}

bool Builder::finish_mapping(Frame& f) {
  auto& ch = f.children;
  std::size_t pairs = ch.size() / 2;
  merged_.clear();
  seen_.clear();
  bool use_set = pairs > 16;
  bool has_merge = false;
  // Explicit keys first: duplicates among them are errors.
  for (std::size_t i = 0; i < pairs; ++i) {
    std::uint32_t k = ch[2 * i];
    std::string_view name = scalar_text(k);
    if (nodes_[k].style == ScalarStyle::Plain && name == "<<") {
      has_merge = true;
      continue;
    }
    std::uint32_t first = 0;
    bool dup = false;
    if (use_set) {
      dup = !seen_.insert(name).second;
      if (dup)
        for (std::size_t j = 0; j < i; ++j)
          if (scalar_text(ch[2 * j]) == name) {
            first = ch[2 * j];
            break;
          }
    } else {
      for (std::size_t j = 0; j < i && !dup; ++j)
        if (scalar_text(ch[2 * j]) == name) {
          dup = true;
          first = ch[2 * j];
        }
    }
    if (dup)
      return fail_at(
          k, "duplicate key '" + key_name(k) + "' (first defined at line " + std::to_string(nodes_[first].line) + ")",
          "keep only one '" + key_name(k) + "' in this mapping");
  }
  if (!has_merge) {
    Node& n = nodes_[f.node];
    n.begin = static_cast<std::uint32_t>(links_.size());
    n.size = static_cast<std::uint32_t>(pairs);
    links_.insert(links_.end(), ch.begin(), ch.end());
    return true;
  }
  // `<<: *base` (or a list of them): keys of the merged mappings that are not written explicitly.
  if (!use_set)
    for (std::size_t i = 0; i < pairs; ++i) seen_.insert(scalar_text(ch[2 * i]));
  auto merge_from = [&](std::uint32_t src) {
    const Node& s = nodes_[src];
    for (std::uint32_t e = 0; e < s.size; ++e) {
      std::uint32_t k = links_[s.begin + 2 * e], v = links_[s.begin + 2 * e + 1];
      if (seen_.insert(scalar_text(k)).second) {
        merged_.push_back(k);
        merged_.push_back(v);
      }
    }
  };
  for (std::size_t i = 0; i < pairs; ++i) {
    std::uint32_t k = ch[2 * i], v = ch[2 * i + 1];
    if (!(nodes_[k].style == ScalarStyle::Plain && scalar_text(k) == "<<")) continue;
    if (nodes_[v].kind == NodeKind::Mapping) {
      merge_from(v);
    } else if (nodes_[v].kind == NodeKind::Sequence) {
      const Node& s = nodes_[v];
      for (std::uint32_t e = 0; e < s.size; ++e) {
        std::uint32_t item = links_[s.begin + e];
        if (nodes_[item].kind != NodeKind::Mapping)
          return fail_at(item, "a '<<' merge list may only hold mappings", "merge aliases of mappings: `<<: [*a, *b]`");
        merge_from(item);
      }
    } else {
      return fail_at(v, "a '<<' merge key needs a mapping or a list of mappings", "write `<<: *anchor_of_a_mapping`");
    }
  }
  Node& n = nodes_[f.node];
  n.begin = static_cast<std::uint32_t>(links_.size());
  std::uint32_t count = 0;
  for (std::size_t i = 0; i < pairs; ++i) {
    std::uint32_t k = ch[2 * i];
    if (nodes_[k].style == ScalarStyle::Plain && scalar_text(k) == "<<") continue;
    links_.push_back(k);
    links_.push_back(ch[2 * i + 1]);
    ++count;
  }
  links_.insert(links_.end(), merged_.begin(), merged_.end());
  n.size = count + static_cast<std::uint32_t>(merged_.size() / 2);
  return true;
}

bool Builder::run(std::uint32_t& root) {
  if (text_.size() > limits_.max_bytes) {
    error_.line = 1;
    error_.col = 1;
    error_.message = "manifest is larger than " + std::to_string(limits_.max_bytes >> 20) + " MB";
    error_.fix = "split it into several files";
    return false;
  }
  ParserHandle parser;
  if (!parser.ok) {
    error_.line = 1;
    error_.message = "cannot initialize the YAML parser";
    return false;
  }
  yaml_parser_set_input_string(&parser.p, reinterpret_cast<const unsigned char*>(text_.data()), text_.size());
  yaml_parser_set_encoding(&parser.p, YAML_UTF8_ENCODING);  // never guess UTF-16 from stray bytes
  int documents = 0;
  EventHandle ev;
  for (;;) {
    ev.reset();
    if (!yaml_parser_parse(&parser.p, &ev.e)) return libyaml_error(parser.p);
    ev.live = true;
    const yaml_event_t& e = ev.e;
    switch (e.type) {
      case YAML_STREAM_START_EVENT:
      case YAML_DOCUMENT_END_EVENT:
      case YAML_NO_EVENT: break;
      case YAML_DOCUMENT_START_EVENT:
        if (++documents > 1)
          return fail(e.start_mark, "a manifest holds exactly one YAML document, found a second one",
                      "remove the extra `---` or split the documents into separate files");
        break;
      case YAML_STREAM_END_EVENT:
        if (!have_root_) {
          bool blank = true;
          for (char c : text_) blank = blank && (c == ' ' || c == '\n' || c == '\r' || c == '\t');
          error_.line = blank ? 0 : 1;
          error_.col = blank ? 0 : 1;
          error_.message = "empty manifest";
          error_.fix = "a manifest needs at least `model:` and `cases:`";
          return false;
        }
        root = root_;
        return true;
      case YAML_ALIAS_EVENT: {
        auto it = anchors_.find(reinterpret_cast<const char*>(e.data.alias.anchor));
        if (it == anchors_.end())
          return fail(e.start_mark,
                      "alias '*" + std::string(reinterpret_cast<const char*>(e.data.alias.anchor)) +
                          "' does not refer to an anchor defined before it (or refers to its own container)",
                      "define `&name` on a complete node before using `*name`");
        if (!add_child(it->second)) return false;
        break;
      }
      case YAML_SCALAR_EVENT: {
        ScalarStyle style = ScalarStyle::Plain;
        switch (e.data.scalar.style) {
          case YAML_SINGLE_QUOTED_SCALAR_STYLE:
          case YAML_DOUBLE_QUOTED_SCALAR_STYLE: style = ScalarStyle::Quoted; break;
          case YAML_LITERAL_SCALAR_STYLE:
          case YAML_FOLDED_SCALAR_STYLE: style = ScalarStyle::Block; break;
          default: break;
        }
        if (!check_tag(e.start_mark, e.data.scalar.tag, true, style)) return false;
        std::uint32_t id = new_node(NodeKind::Scalar, e.start_mark);
        Node& n = nodes_[id];
        n.style = style;
        n.begin = static_cast<std::uint32_t>(arena_.size());
        n.size = static_cast<std::uint32_t>(e.data.scalar.length);
        arena_.append(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length);
        register_anchor(e.data.scalar.anchor, id);
        if (!add_child(id)) return false;
        break;
      }
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT: {
        bool seq = e.type == YAML_SEQUENCE_START_EVENT;
        if (static_cast<int>(depth_) >= limits_.max_depth)
          return fail(e.start_mark, "YAML nesting deeper than " + std::to_string(limits_.max_depth) + " levels",
                      "flatten the manifest; no manifest field nests this deep");
        ScalarStyle unused = ScalarStyle::Plain;
        if (!check_tag(e.start_mark, seq ? e.data.sequence_start.tag : e.data.mapping_start.tag, false, unused))
          return false;
        std::uint32_t id = new_node(seq ? NodeKind::Sequence : NodeKind::Mapping, e.start_mark);
        if (frames_.size() <= depth_) frames_.emplace_back();
        Frame& f = frames_[depth_++];
        f.node = id;
        f.children.clear();
        f.weight = 1;
        const yaml_char_t* anchor = seq ? e.data.sequence_start.anchor : e.data.mapping_start.anchor;
        f.anchor.assign(anchor ? reinterpret_cast<const char*>(anchor) : "");
        break;
      }
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT: {
        Frame& f = frames_[--depth_];
        Node& n = nodes_[f.node];
        if (n.kind == NodeKind::Mapping) {
          if (!finish_mapping(f)) return false;
        } else {
          n.begin = static_cast<std::uint32_t>(links_.size());
          n.size = static_cast<std::uint32_t>(f.children.size());
          links_.insert(links_.end(), f.children.begin(), f.children.end());
        }
        weights_[f.node] = f.weight;
        if (!f.anchor.empty()) anchors_[f.anchor] = f.node;
        if (!add_child(f.node)) return false;
        break;
      }
    }
  }
}

}  // namespace

bool parse_yaml(std::string_view text, Tree& out, ParseError& error, const ParseLimits& limits) {
  out.nodes_.clear();
  out.links_.clear();
  out.text_.clear();
  out.root_ = 0;
  // Rough sizes from the real manifests: one node per ~12 bytes, scalar text about half the input.
  out.nodes_.reserve(text.size() / 12 + 16);
  out.links_.reserve(text.size() / 12 + 16);
  out.text_.reserve(text.size() / 2 + 16);
  error = ParseError{};
  // libyaml only skips a byte-order mark when it guesses the encoding, and guessing is off (see Builder::run).
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  Builder b(text, out.nodes_, out.links_, out.text_, error, limits);
  return b.run(out.root_);
}

bool has_content(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::size_t first = text.find_first_not_of(" \t\r", pos);
    if (first < end && text[first] != '#' && text.compare(first, 3, "---") != 0 && text.compare(first, 3, "...") != 0)
      return true;
    pos = end + 1;
  }
  return false;
}

}  // namespace opcheck::yaml
