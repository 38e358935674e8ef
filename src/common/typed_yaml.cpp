#include "common/typed_yaml.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "common/spelling.h"
#include "common/text.h"
#include "common/text_escape.h"

namespace opcheck {

using yaml::NodeRef;
using yaml::ScalarStyle;

std::string in_quotes(std::string_view text) {
  if (text.size() <= kQuotedBytes) return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, kQuotedBytes)) + "...' (" + std::to_string(text.size()) + " bytes)";
}

bool is_yaml_null(NodeRef n) {
  return n.is_scalar() && n.style() == ScalarStyle::Plain && yaml::is_core_null(n.text());
}

SourceLoc TypedYaml::text_loc(NodeRef n, int col) const {
  SourceLoc l = loc(n);
  if (!n.is_scalar() || col <= 0 || n.text().find('\n') != std::string_view::npos) return l;
  if (n.style() == ScalarStyle::Plain)
    l.col += col - 1;
  else if (n.style() == ScalarStyle::Quoted)
    l.col += col;
  return l;
}

std::string TypedYaml::type_message(std::string_view key, std::string_view expected, NodeRef found) const {
  if (voice_ == YamlVoice::Manifest)
    return "expected " + std::string(expected) + " for " + in_quotes(key) + ", got " + found.describe();
  return "`" + std::string(key) + "` must be " + std::string(expected) + ", not " + found.describe();
}

namespace {
// The bytes of the UTF-8 sequence a lead byte starts (1 for a stray byte).
std::size_t utf8_length(char lead) {
  const auto b = static_cast<unsigned char>(lead);
  return (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 1;
}
}  // namespace

bool TypedYaml::refuse_control_characters(NodeRef n, std::string_view what, std::string_view value) {
  const std::size_t bad = first_control_character(value);
  if (bad == std::string::npos) return true;
  error(n,
        std::string(what) + " " + in_quotes(printable_text(value)) + " contains a control character (" +
            printable_text(value.substr(bad, utf8_length(value[bad]))) + " at byte " + std::to_string(bad) + ")",
        "use printable characters only; a " + std::string(what) +
            " is shown in terminals and reports and written into the commands opcheck prints");
  return false;
}

bool TypedYaml::read_string(NodeRef n, std::string_view key, std::string& out, NodeRef key_node) {
  if (voice_ == YamlVoice::Manifest) {
    if (!n.is_scalar() || is_yaml_null(n)) {
      error(n, type_message(key, "a string", n));
      return false;
    }
    out.assign(n.text());
    return true;
  }
  if (!n.is_scalar()) {
    error(n, type_message(key, "a string", n));
    return false;
  }
  const std::string empty = "`" + std::string(key) + "` is empty";
  if (is_yaml_null(n)) {
    error(n.text().empty() && key_node ? key_node : n, empty);
    return false;
  }
  if (trim_blanks(n.text(), kWhitespace).empty()) {
    error(n, empty);
    return false;
  }
  out.assign(n.text());
  return true;
}

bool TypedYaml::read_int(NodeRef n, std::string_view key, std::int64_t& out) {
  bool overflow = false;
  if (n.is_scalar() && n.style() == ScalarStyle::Plain && yaml::parse_core_int(n.text(), out, overflow)) {
    if (!overflow) return true;
    error(n, "integer " + std::string(n.text().substr(0, 40)) + " for " + in_quotes(key) + " does not fit in 64 bits");
    return false;
  }
  error(n, type_message(key, "an integer", n));
  return false;
}

bool TypedYaml::read_number(NodeRef n, std::string_view key, double& out) {
  const bool plain = n.is_scalar() && n.style() == ScalarStyle::Plain;
  std::int64_t i = 0;
  bool overflow = false;
  bool parsed = false;
  if (plain && yaml::parse_core_int(n.text(), i, overflow) && !overflow) {
    out = static_cast<double>(i);
    parsed = true;
  } else if (plain && overflow && voice_ == YamlVoice::StatusConfig) {
    out = n.text()[0] == '-' ? -HUGE_VAL : HUGE_VAL;  // the status config refuses it below, as not finite
    parsed = true;
  } else if (plain) {
    bool too_large = false;
    parsed = yaml::parse_core_float(n.text(), out, too_large);  // an integer too long for 64 bits is still a number
    if (too_large) {
      error(n, "number " + in_quotes(n.text()) + " for '" + std::string(key) + "' is too large for a 64-bit float (it "
            "would silently become infinity)", "write a number below 1.8e308, or .inf if infinity is meant");
      return false;
    }
  }
  if (voice_ == YamlVoice::Manifest) {
    if (!parsed) error(n, type_message(key, "a number", n));
    return parsed;
  }
  // The status config's voice: a quoted number is the likely slip, a plain non-number is quoted back.
  const std::string k(key);
  if (!plain) {
    error(n, type_message(key, "a number", n),
          n.is_scalar() ? "write the number without quotes, e.g. `" + k + ": 1.0e-2`" : "");
    return false;
  }
  if (!parsed) {
    error(n, type_message(key, "a number", n) + " (`" + std::string(n.text()) + "`)", "write e.g. `" + k + ": 1.0e-2`");
    return false;
  }
  if (!std::isfinite(out)) {
    error(n, "`" + k + "` must be a finite number, not " + std::string(n.text()));
    return false;
  }
  return true;
}

bool TypedYaml::read_bool(NodeRef n, std::string_view key, bool& out) {
  if (n.is_scalar() && n.style() == ScalarStyle::Plain && yaml::parse_core_bool(n.text(), out)) return true;
  std::string message = type_message(key, "true or false", n);
  if (voice_ == YamlVoice::StatusConfig && n.is_scalar()) message += " (`" + std::string(n.text()) + "`)";
  error(n, message);
  return false;
}

bool TypedYaml::read_int_list(NodeRef n, std::string_view key, std::vector<std::int64_t>& out) {
  if (!n.is_sequence()) {
    error(n, type_message(key, "a list of integers", n),
          n.is_scalar() ? "write it as a YAML list, e.g. " + std::string(key) + ": [2, 3]" : std::string());
    return false;
  }
  out.resize(n.size());
  for (std::size_t i = 0; i < n.size(); ++i) {
    NodeRef item = n.item(i);
    bool overflow = false;
    if (!(item.is_scalar() && item.style() == ScalarStyle::Plain &&
          yaml::parse_core_int(item.text(), out[i], overflow))) {
      error(item, "expected a list of integers for " + in_quotes(key) + ", but item " + std::to_string(i) + " is " +
                      item.describe());
      return false;
    }
    if (overflow) {
      error(item,
            "entry " + std::string(item.text().substr(0, 40)) + " of " + in_quotes(key) + " does not fit in 64 bits");
      return false;
    }
  }
  return true;
}

bool TypedYaml::want_mapping(NodeRef n, std::string_view key) {
  if (n.is_mapping()) return true;
  error(n, type_message(key, "a mapping", n));
  return false;
}

bool TypedYaml::check_keys(NodeRef map, const std::vector<std::string_view>& allowed, const std::string& where,
                           const std::vector<std::string_view>* elsewhere, const char* elsewhere_fix) {
  bool ok = true;
  for (std::size_t i = 0; i < map.size(); ++i) {
    NodeRef k = map.key(i);
    std::string_view name = k.text();
    if (is_one_of(name, allowed)) continue;
    ok = false;
    std::string guess = closest_spelling(name, allowed);
    std::string message = "unknown key " + in_quotes(name) + " " + where;
    if (!guess.empty()) {
      error(k, message + " (did you mean '" + guess + "'?)", "rename " + in_quotes(name) + " to '" + guess + "'");
    } else if (elsewhere && is_one_of(name, *elsewhere)) {
      error(k, message, elsewhere_fix);
    } else {
      error(k, message, "remove " + in_quotes(name) + "; allowed keys here: " + join(allowed));
    }
  }
  return ok;
}

// ------------------------------------------------------------------------------------------------------------------
// Case fields

int case_field_for_key(std::string_view key, bool manifest) {
  // The keys as string_views, measured once: the normaliser asks for every key of every case.
  using Keys = std::array<std::string_view, kCaseFieldCount>;
  static const std::array<Keys, 2> keys = [] {
    std::array<Keys, 2> k{};
    for (std::size_t i = 0; i < kCaseFieldCount; ++i) {
      if (kCaseFields[i].config_key) k[0][i] = kCaseFields[i].config_key;
      if (kCaseFields[i].manifest_key) k[1][i] = kCaseFields[i].manifest_key;
    }
    return k;
  }();
  const Keys& in = keys[manifest ? 1 : 0];
  for (std::size_t i = 0; i < kCaseFieldCount; ++i)
    if (!in[i].empty() && in[i] == key) return static_cast<int>(i);
  return -1;
}

namespace {

// "allclose, pcc or exact": every comparator kComparators lists.
std::string comparator_choices() {
  const auto& names = all_comparator_names();
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += std::string(i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i]);
  return out;
}

bool read_comparator(TypedYaml& r, NodeRef key, NodeRef v, Comparator& out) {
  std::string name;
  if (!r.read_string(v, "compare", name, key)) return false;
  if (parse_comparator(name, out)) return true;
  const std::string guess = did_you_mean(name, all_comparator_names());
  r.error(v,
          r.voice() == YamlVoice::Manifest ? "unknown compare kind " + in_quotes(name) + guess
                                           : "unknown comparator `" + name + "`" + guess,
          "use " + comparator_choices());
  return false;
}

// A number outside the field's range, in the reader's voice.
bool within(TypedYaml& r, const CaseField& f, NodeRef v, double x) {
  if (!f.number.holds || f.number.holds(x)) return true;
  const std::string key(f.name), text(v.text());
  if (r.voice() == YamlVoice::Manifest)
    r.error(v, key + " must " + f.number.manifest_rule + ", got " + text);
  else
    r.error(v, "`" + key + "` must " + f.number.config_rule + ", not " + text, f.number.config_fix);
  return false;
}

}  // namespace

bool read_case_field(TypedYaml& r, std::size_t field, NodeRef key, NodeRef v, SettingsLayer& out) {
  const CaseField& f = kCaseFields[field];
  const std::string_view k = key.text();
  const bool ok = std::visit(
      [&](auto m) {
        using T = std::decay_t<decltype(out.values.*m)>;
        T& slot = out.values.*m;
        if constexpr (std::is_same_v<T, bool>) {
          return r.read_bool(v, k, slot);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          std::int64_t x = 0;
          if (!r.read_int(v, k, x) || !within(r, f, v, static_cast<double>(x))) return false;
          slot = x;
          return true;
        } else if constexpr (std::is_same_v<T, double> || std::is_same_v<T, std::optional<double>>) {
          double x = 0;
          if (!r.read_number(v, k, x) || !within(r, f, v, x)) return false;
          slot = x;
          return true;
        } else if constexpr (std::is_same_v<T, std::string>) {
          if (!f.any_scalar) return r.read_string(v, k, slot, key);
          if (!v.is_scalar()) {
            r.error(v, "expected a string for " + in_quotes(k) + ", got " + v.describe());
            return false;
          }
          slot.assign(v.text());
          return true;
        } else if constexpr (std::is_same_v<T, Comparator>) {
          return read_comparator(r, key, v, slot);
        } else {
          // marks, expects_error: their readers are the normaliser's own (own_reader); module fields: v2_module.
          return false;
        }
      },
      f.member);
  if (ok) out.mark(field);
  return ok;
}

}  // namespace opcheck
