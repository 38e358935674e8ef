// Making arbitrary bytes (captured stderr, messages, names quoted in diagnostics) safe for UTF-8 JSON, XML 1.0 and
// terminals without losing them: the one escaper every writer of these uses.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace opcheck {

/// Valid UTF-8 is kept as is; every byte that is not part of a valid UTF-8 sequence becomes the
/// four visible characters `\xNN` (lower-case hex), so nothing is dropped and JSON writers never fail.
std::string visible_utf8(std::string_view bytes);

/// visible_utf8, and additionally every code point XML 1.0 cannot hold even as a character reference
/// (C0 controls other than tab/LF/CR, DEL, U+FFFE, U+FFFF) becomes `\xNN` or `\uNNNN`.
/// pytest writes `#x1B` for these; opcheck uses the backslash form users know from Python reprs.
std::string xml_visible(std::string_view bytes);

/// visible_utf8, and additionally every control character (C0 ones, tab and line breaks included, DEL and C1 ones)
/// becomes the `\xNN` of each of its bytes: a name or line quoted in a message can then never move the cursor or
/// start a terminal escape sequence. The bidirectional and zero-width format characters (U+202A-U+202E,
/// U+2066-U+2069, U+200B-U+200F, U+2060-U+2064, U+061C, U+FEFF) become `\uNNNN`: they reorder or hide what follows.
std::string printable_text(std::string_view bytes);

/// The length of the bidirectional or zero-width format character printable_text shows as `\uNNNN` that starts at
/// bytes[i] (its code point in `cp`), or 0 when none starts there.
std::size_t format_character_at(std::string_view bytes, std::size_t i, std::uint32_t& cp);

/// printable_text of each line, the line feeds between them kept: for console messages of several lines (a
/// diagnostic and its `Fix:`) that quote names.
std::string printable_lines(std::string_view bytes);

/// The byte offset of the first control or format character printable_text would escape, or npos when there is none.
std::size_t first_control_character(std::string_view bytes);

/// How append_escaped writes text. Every mode applies visible_utf8's rule to invalid UTF-8; the XML modes also
/// apply xml_visible's rule to the code points XML cannot hold.
enum class EscapeMode {
  Visible,       // visible_utf8
  XmlVisible,    // xml_visible
  Json,          // the inside of a JSON string: visible_utf8, then quote, backslash and control characters escaped
  XmlText,       // XML character data: xml_visible, then & < > as entities
  XmlAttribute,  // an XML attribute value in double quotes: xml_visible, then & < quote tab LF CR as references
  Html,          // HTML text or a quoted attribute value: xml_visible, then & < > " ' as entities
  Printable,     // printable_text
};

/// Appends `bytes` to `out` as `mode` says, in one pass (the report writers stream megabytes through this).
void append_escaped(std::string& out, std::string_view bytes, EscapeMode mode);

/// The text up to the first line break (without it).
std::string first_line(std::string_view text);

}  // namespace opcheck
