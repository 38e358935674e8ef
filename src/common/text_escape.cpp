#include "common/text_escape.h"

#include <cstdint>
#include <cstdio>

namespace opcheck {
namespace {

// Length of the valid UTF-8 sequence starting at s[i] and its code point; 0 when the byte starts no valid
// sequence (stray continuation byte, overlong form, surrogate, beyond U+10FFFF, or cut short).
std::size_t decode_utf8(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) { cp = b0; return 1; }
  std::size_t len;
  std::uint32_t min;
  if ((b0 & 0xE0) == 0xC0) { len = 2; cp = b0 & 0x1F; min = 0x80; }
  else if ((b0 & 0xF0) == 0xE0) { len = 3; cp = b0 & 0x0F; min = 0x800; }
  else if ((b0 & 0xF8) == 0xF0) { len = 4; cp = b0 & 0x07; min = 0x10000; }
  else return 0;
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

bool xml_can_hold(std::uint32_t cp) {
  if (cp < 0x20) return cp == 0x09 || cp == 0x0A || cp == 0x0D;
  return cp != 0x7F && cp != 0xFFFE && cp != 0xFFFF;
}

bool xml_mode(EscapeMode mode) {
  return mode != EscapeMode::Visible && mode != EscapeMode::Json && mode != EscapeMode::Printable;
}

bool is_control(std::uint32_t cp) { return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F); }

// The format characters that change what a terminal shows without showing themselves: the bidirectional marks,
// embeddings, overrides and isolates (U+202E puts what follows it right to left), and the zero-width ones (U+200B
// makes two different names print alike).
bool is_invisible_format(std::uint32_t cp) {
  return cp == 0x061C || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF;
}

// Whether a byte can be copied as it is in this mode: the fast path, since most text is plain ASCII.
bool plain_ascii(unsigned char b, EscapeMode mode) {
  if (b < 0x20 || b >= 0x7F) return false;
  switch (mode) {
    case EscapeMode::Visible:
    case EscapeMode::XmlVisible:
    case EscapeMode::Printable: return true;
    case EscapeMode::Json: return b != '"' && b != '\\';
    case EscapeMode::XmlText: return b != '&' && b != '<' && b != '>';
    case EscapeMode::XmlAttribute: return b != '&' && b != '<' && b != '"';
    case EscapeMode::Html: return b != '&' && b != '<' && b != '>' && b != '"' && b != '\'';
  }
  return false;
}

// The visible form of a byte or code point (`\xNN`, `\uNNNN`); inside a JSON string its backslash is escaped.
void append_visible(std::string& out, unsigned v, bool byte, EscapeMode mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, byte ? "\\x%02x" : "\\u%04x", v);
  if (mode == EscapeMode::Json) out += '\\';
  out += buf;
}

// One valid code point whose UTF-8 bytes are `bytes`.
void append_code_point(std::string& out, std::uint32_t cp, std::string_view bytes, EscapeMode mode) {
  if (mode == EscapeMode::Printable && is_control(cp)) {
    for (char b : bytes) append_visible(out, static_cast<unsigned char>(b), /*byte=*/true, mode);
    return;
  }
  if (mode == EscapeMode::Printable && is_invisible_format(cp)) {
    append_visible(out, cp, /*byte=*/false, mode);
    return;
  }
  if (xml_mode(mode) && !xml_can_hold(cp)) {
    append_visible(out, cp, cp < 0x100, mode);
    return;
  }
  if (mode == EscapeMode::Json && cp < 0x20) {
    switch (cp) {
      case '\n': out += "\\n"; return;
      case '\r': out += "\\r"; return;
      case '\t': out += "\\t"; return;
      case '\b': out += "\\b"; return;
      case '\f': out += "\\f"; return;
      default: {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
        out += buf;
        return;
      }
    }
  }
  if (mode == EscapeMode::Json && (cp == '"' || cp == '\\')) {
    out += '\\';
    out += static_cast<char>(cp);
    return;
  }
  if (mode == EscapeMode::XmlText || mode == EscapeMode::XmlAttribute) {
    switch (cp) {
      case '&': out += "&amp;"; return;
      case '<': out += "&lt;"; return;
      case '>':
        if (mode == EscapeMode::XmlText) {  // in attributes pugixml leaves it, and so does opcheck
          out += "&gt;";
          return;
        }
        break;
      default: break;
    }
  }
  if (mode == EscapeMode::Html) {
    switch (cp) {
      case '&': out += "&amp;"; return;
      case '<': out += "&lt;"; return;
      case '>': out += "&gt;"; return;
      case '"': out += "&quot;"; return;
      case '\'': out += "&#39;"; return;
      default: break;
    }
  }
  if (mode == EscapeMode::XmlAttribute) {
    // Attribute-value normalization would turn a raw tab or line break into a space.
    switch (cp) {
      case '"': out += "&quot;"; return;
      case '\t': out += "&#9;"; return;
      case '\n': out += "&#10;"; return;
      case '\r': out += "&#13;"; return;
      default: break;
    }
  }
  out.append(bytes.data(), bytes.size());
}

}  // namespace

void append_escaped(std::string& out, std::string_view s, EscapeMode mode) {
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t j = i;
    while (j < s.size() && plain_ascii(static_cast<unsigned char>(s[j]), mode)) ++j;
    out.append(s.data() + i, j - i);
    i = j;
    if (i == s.size()) break;
    std::uint32_t cp = 0;
    const std::size_t len = decode_utf8(s, i, cp);
    if (len == 0) {
      append_visible(out, static_cast<unsigned char>(s[i]), /*byte=*/true, mode);
      ++i;
      continue;
    }
    append_code_point(out, cp, s.substr(i, len), mode);
    i += len;
  }
}

std::string visible_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  append_escaped(out, bytes, EscapeMode::Visible);
  return out;
}

std::string xml_visible(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  append_escaped(out, bytes, EscapeMode::XmlVisible);
  return out;
}

std::string printable_text(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  append_escaped(out, bytes, EscapeMode::Printable);
  return out;
}

std::string printable_lines(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t start = 0;;) {
    const std::size_t nl = bytes.find('\n', start);
    append_escaped(out, bytes.substr(start, nl == std::string_view::npos ? nl : nl - start), EscapeMode::Printable);
    if (nl == std::string_view::npos) return out;
    out += '\n';
    start = nl + 1;
  }
}

std::size_t format_character_at(std::string_view bytes, std::size_t i, std::uint32_t& cp) {
  const std::size_t len = decode_utf8(bytes, i, cp);
  return len != 0 && is_invisible_format(cp) ? len : 0;
}

std::size_t first_control_character(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size();) {
    std::uint32_t cp = 0;
    const std::size_t len = decode_utf8(bytes, i, cp);
    if (len != 0 && (is_control(cp) || is_invisible_format(cp))) return i;
    i += len == 0 ? 1 : len;
  }
  return std::string_view::npos;
}

std::string first_line(std::string_view text) {
  const auto nl = text.find_first_of("\r\n");
  return std::string(nl == std::string_view::npos ? text : text.substr(0, nl));
}

}  // namespace opcheck
