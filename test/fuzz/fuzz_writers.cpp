// libFuzzer target: the escapers of every generated text, given a hostile name or value (quotes, triple quotes,
// backslashes, newlines, NUL, `$(...)`, `</script>`, invalid UTF-8). Each output must read back, with that format's
// own reader, as the text it was given (or as the visible form the format promises), so a name can never end its
// literal and run as code in a repro script, a rerun line, a manifest, JUnit, the HTML page or the metrics.
#include <pugixml.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <cctype>
#include <string>

#include "common/text_escape.h"
#include "common/yaml_tree.h"
#include "manifest/manifest_writer.h"
#include "manifest/py_literal.h"
#include "opcheck/value.h"
#include "report/json_writer.h"
#include "repro/bundle_layout.h"

namespace {

[[noreturn]] void fail(const char* writer, const std::string& input, const std::string& written) {
  std::fprintf(stderr, "%s writer does not round-trip:\n  input:   ", writer);
  for (unsigned char c : input) std::fprintf(stderr, "\\x%02x", c);
  std::fprintf(stderr, "\n  written: %s\n", written.c_str());
  std::abort();
}

// Generated Python (repro scripts) spells strings as PyValue reprs; the py literal parser reads Python's grammar.
void python_string(const std::string& s) {
  const std::string literal = opcheck::PyValue::string(s).repr();
  opcheck::PyValue back;
  std::string error;
  int col = 0;
  if (!opcheck::parse_py_literal(literal, back, error, col) || back.kind != opcheck::PyValue::Kind::String ||
      back.s != s)
    fail("Python string", s, literal);
  // A raw control byte in a script would reach the terminal that shows it (and a NUL makes it a SyntaxError).
  for (unsigned char c : literal)
    if (c < 0x20 || c == 0x7F) fail("Python string (raw control byte)", s, literal);
}

/// bash's reading of a whole $'...' word: \\, \' and \xHH (what the writer uses); false for anything else.
bool ansi_c_word(const std::string& word, std::string& back) {
  if (word.size() < 3 || word.compare(0, 2, "$'") != 0 || word.back() != '\'') return false;
  for (std::size_t i = 2; i + 1 < word.size(); ++i) {
    const char c = word[i];
    if (c == '\'') return false;  // an unescaped quote ends the word early
    if (c < 0x20 || static_cast<unsigned char>(c) >= 0x7f) return false;  // the word itself stays printable ASCII
    if (c != '\\') {
      back += c;
      continue;
    }
    if (i + 2 >= word.size()) return false;
    const char e = word[++i];
    if (e == '\\' || e == '\'') {
      back += e;
    } else if (e == 'x' && i + 2 < word.size() && std::isxdigit(static_cast<unsigned char>(word[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(word[i + 2]))) {
      back += static_cast<char>(std::stoi(word.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      return false;
    }
  }
  return true;
}

// Rerun lines: a POSIX shell reads a single-quoted word literally, and '\'' as one quote; a word holding a control
// character is bash's $'...' with \xHH escapes, so that it stays on one line of printable ASCII.
void shell_word(const std::string& s) {
  if (s.find('\0') != std::string::npos) return;  // no argument can hold a NUL
  const std::string word = opcheck::repro::shell_word(s);
  if (word.compare(0, 2, "$'") == 0) {
    std::string back;
    if (!ansi_c_word(word, back) || back != s) fail("shell word ($'...')", s, word);
    return;
  }
  std::string back;
  bool quoted = false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    const char c = word[i];
    if (c == '\'') {
      quoted = !quoted;
    } else if (!quoted && c == '\\' && i + 1 < word.size()) {
      back += word[++i];
    } else if (!quoted && std::string_view(" \t\n;&|<>()$`\"*?[#~!{}").find(c) != std::string_view::npos) {
      fail("shell word (unquoted metacharacter)", s, word);
    } else {
      back += c;
    }
  }
  if (quoted || back != s) fail("shell word", s, word);
}

bool valid_utf8(const std::string& s) { return opcheck::visible_utf8(s) == s; }

// Manifests written for bundles: a double-quoted YAML scalar (YAML holds Unicode text only: valid UTF-8 input).
void yaml_scalar(const std::string& s) {
  if (!valid_utf8(s)) return;
  const std::string doc = "v: " + opcheck::manifest_text::quoted(s) + "\n";
  opcheck::yaml::Tree tree;
  opcheck::yaml::ParseError error;
  if (!opcheck::yaml::parse_yaml(doc, tree, error)) fail("YAML scalar (does not parse)", s, doc);
  const opcheck::yaml::NodeRef v = tree.root().find("v");
  if (!v || v.text() != s) fail("YAML scalar", s, doc);
}

// Metrics and the journal: JSON strings hold visible_utf8's form of any bytes.
void json_string(const std::string& s) {
  std::string out;
  opcheck::JsonWriter w(out);
  w.value(s);
  nlohmann::json back;
  try {
    back = nlohmann::json::parse(out);
  } catch (const std::exception&) {
    fail("JSON string (does not parse)", s, out);
  }
  if (!back.is_string() || back.get<std::string>() != opcheck::visible_utf8(s)) fail("JSON string", s, out);
}

// JUnit: attribute values and character data hold xml_visible's form of any bytes.
void xml_text(const std::string& s) {
  std::string doc = "<a v=\"";
  opcheck::append_escaped(doc, s, opcheck::EscapeMode::XmlAttribute);
  doc += "\">";
  opcheck::append_escaped(doc, s, opcheck::EscapeMode::XmlText);
  doc += "</a>";
  pugi::xml_document x;
  if (!x.load_buffer(doc.data(), doc.size(), pugi::parse_default | pugi::parse_ws_pcdata))
    fail("XML (does not parse)", s, doc);
  const std::string want = opcheck::xml_visible(s);
  // Character data keeps its line breaks as XML readers normalise them (CR LF and CR read as LF).
  std::string want_text;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (want[i] != '\r') want_text += want[i];
    else if (i + 1 >= want.size() || want[i + 1] != '\n') want_text += '\n';
  }
  const pugi::xml_node a = x.child("a");
  if (a.attribute("v").value() != want || a.text().get() != want_text) fail("XML", s, doc);
}

// The HTML page: text and quoted attribute values never hold a raw < > " ' (so no </script>, no attribute end), and
// its entities decode to xml_visible's form.
void html_text(const std::string& s) {
  std::string out;
  opcheck::append_escaped(out, s, opcheck::EscapeMode::Html);
  if (out.find_first_of("<>\"'") != std::string::npos) fail("HTML (raw markup character)", s, out);
  std::string back;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] != '&') {
      back += out[i];
      continue;
    }
    const std::size_t end = out.find(';', i);
    if (end == std::string::npos) fail("HTML (bare &)", s, out);
    const std::string entity = out.substr(i, end - i + 1);
    if (entity == "&amp;") back += '&';
    else if (entity == "&lt;") back += '<';
    else if (entity == "&gt;") back += '>';
    else if (entity == "&quot;" || entity == "&#34;") back += '"';
    else if (entity == "&#39;" || entity == "&#x27;" || entity == "&apos;") back += '\'';
    else fail("HTML (unknown entity)", s, out);
    i = end;
  }
  if (back != opcheck::xml_visible(s)) fail("HTML", s, out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string s(reinterpret_cast<const char*>(data), size);
  python_string(s);
  shell_word(s);
  yaml_scalar(s);
  json_string(s);
  xml_text(s);
  html_text(s);
  return 0;
}
