#include "manifest/manifest_writer.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "manifest/string_values.h"

namespace opcheck::manifest_text {
namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

/// Plain words that YAML 1.1 or 1.2 readers type as null or bool.
bool is_yaml_word(std::string_view s) {
  std::string lower;
  for (char c : s) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  for (const char* w : {"null", "true", "false", "yes", "no", "on", "off", "y", "n"})
    if (lower == w) return true;
  return false;
}

/// One tensor as a flow mapping.
std::string tensor_flow(const TensorSpec& t, const TensorSource& b) {
  std::string out = "{";
  auto put = [&](const std::string& k, const std::string& v) { out += (out.size() > 1 ? ", " : "") + k + ": " + v; };
  // A file tensor written without a shape takes the file's, saved or not (its spec has no shape to write).
  const bool file_shape = t.init == InitKind::File && t.shape_from_file;
  if (!file_shape) {
    put("shape", ints(t.shape));
    put("stride", ints(t.stride));
    put("storage_offset", std::to_string(t.storage_offset));
  }
  put("dtype", dtype_name(t.dtype));
  if (t.placement == Placement::Host) put("device", "cpu");
  if (b.saved) {
    put("init", "file");
    put("file", quoted(b.file));
    return out + "}";
  }
  put("init", init_kind_name(t.init));
  if (!t.init_args.empty()) put("init_args", kwargs_flow(t.init_args));
  if (t.init == InitKind::Data) put("data", data(t.data));
  if (t.init == InitKind::File) put("file", quoted(b.file));
  return out + "}";
}

}  // namespace

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto ch = static_cast<unsigned char>(s[i]);
    // YAML reads C1 controls (NEL among them), U+2028, U+2029 and U+FEFF as line breaks or byte-order marks, not as
    // the text they are, and refuses U+FFFE and U+FFFF unescaped: their escapes keep the scalar what it was.
    const auto next = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0; };
    if (ch == 0xc2 && next(1) >= 0x80 && next(1) <= 0x9f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", next(1));
      out += buf;
      i += 1;
      continue;
    }
    if (ch == 0xe2 && next(1) == 0x80 && (next(2) == 0xa8 || next(2) == 0xa9)) {
      out += next(2) == 0xa8 ? "\\L" : "\\P";
      i += 2;
      continue;
    }
    if (ch == 0xef && next(1) == 0xbb && next(2) == 0xbf) {
      out += "\\uFEFF";
      i += 2;
      continue;
    }
    if (ch == 0xef && next(1) == 0xbf && (next(2) == 0xbe || next(2) == 0xbf)) {  // U+FFFE, U+FFFF: not printable
      out += next(2) == 0xbe ? "\\uFFFE" : "\\uFFFF";
      i += 2;
      continue;
    }
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (ch < 0x20 || ch == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", ch);
          out += buf;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out + "\"";
}

std::string key(std::string_view k) {
  return is_identifier(k) && !is_yaml_word(k) ? std::string(k) : quoted(k);
}

std::string real(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  std::string text = PyValue::real(v).repr();
  if (text.find('.') == std::string::npos) {
    const auto e = text.find_first_of("eE");
    text.insert(e == std::string::npos ? text.size() : e, ".0");
  }
  return text;
}

std::string ints(const std::vector<std::int64_t>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

std::string value(const PyValue& v) {
  switch (v.kind) {
    case PyValue::Kind::None: return "null";
    case PyValue::Kind::Bool: return v.b ? "true" : "false";
    case PyValue::Kind::Int: return std::to_string(v.i);
    case PyValue::Kind::Float: return real(v.f);
    case PyValue::Kind::DType: return v.repr();
    case PyValue::Kind::Device: return quoted(v.s);
    case PyValue::Kind::String: {
      PyValue back;
      std::string err;
      int col = 0;
      if (classify_string(v.s, back, err, col) && back == v) return quoted(v.s);
      return quoted("(" + v.repr() + ")");
    }
    case PyValue::Kind::Tuple:
    case PyValue::Kind::List: return quoted(v.repr());
    case PyValue::Kind::Ellipsis:
    case PyValue::Kind::Slice: return quoted("(" + v.repr() + ")");
  }
  return "null";
}

std::string data(const PyValue& v) {
  if (v.kind == PyValue::Kind::List || v.kind == PyValue::Kind::Tuple) {
    std::string out = "[";
    for (std::size_t i = 0; i < v.items.size(); ++i) out += (i ? ", " : "") + data(v.items[i]);
    return out + "]";
  }
  return value(v);
}

std::string kwargs_flow(const KwArgs& kw) {
  std::string out = "{";
  for (std::size_t i = 0; i < kw.size(); ++i) out += (i ? ", " : "") + key(kw[i].first) + ": " + value(kw[i].second);
  return out + "}";
}

namespace {

bool comparator_reads(const Case& c, const char* setting) {
  for (const char* s : comparator_spec(c.compare).settings)
    if (s && std::string_view(s) == setting) return true;
  return false;
}

// The case fields the table says the writer writes, in table order, before or after the inputs: `    rtol: 0.01`.
void put_fields(std::string& y, const Case& c, bool before_inputs) {
  for (const CaseField& f : kCaseFields) {
    if (f.written == Written::Never || f.written_before_inputs != before_inputs || !f.manifest_key) continue;
    if (f.written == Written::WhenSet && field_is_unset(c, f)) continue;
    if (f.written == Written::WhenComparatorReads && !comparator_reads(c, f.name)) continue;
    y += std::string("    ") + f.manifest_key + ": ";
    std::visit(
        [&](auto m) {
          using T = std::decay_t<decltype(c.*m)>;
          const T& v = c.*m;
          if constexpr (std::is_same_v<T, bool>) y += v ? "true" : "false";
          else if constexpr (std::is_same_v<T, std::int64_t>) y += std::to_string(v);
          else if constexpr (std::is_same_v<T, double>) y += real(v);
          else if constexpr (std::is_same_v<T, std::optional<double>>) y += real(*v);  // WhenSet: present
          else if constexpr (std::is_same_v<T, Comparator>) y += comparator_name(v);
          else if constexpr (std::is_same_v<T, std::string>) y += quoted(v);
          else if constexpr (std::is_same_v<T, std::optional<ExpectedError>>)
            y += "{type: " + quoted(v->type) + ", match: " + quoted(v->match) + "}";
          else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            y += "[";
            for (std::size_t i = 0; i < v.size(); ++i) y += (i ? ", " : "") + quoted(v[i]);
            y += "]";
          } else {
            static_assert(std::is_same_v<T, std::vector<PyValue>> || std::is_same_v<T, KwArgs>,
                          "the manifest writer writes every case field type");
            y += "null";  // no case setting holds Python values
          }
        },
        f.member);
    y += "\n";
  }
}

}  // namespace

std::string case_manifest(const Case& c, const std::vector<std::vector<TensorSource>>& tensors,
                          const std::string& header_comment) {
  std::string y;
  std::istringstream comment(header_comment);
  for (std::string line; std::getline(comment, line);) y += "# " + line + "\n";
  y += "model: " + quoted(c.model) + "\n";
  y += "cases:\n";
  y += "  - name: " + quoted(c.name) + "\n";
  y += "    op: " + quoted(c.op) + "\n";
  y += "    dtype: " + std::string(dtype_name(c.dtype)) + "\n";
  put_fields(y, c, /*before_inputs=*/true);  // seed
  if (!c.inputs.empty()) {
    y += "    inputs:\n";
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
      const Input& in = c.inputs[i];
      const std::vector<TensorSource> none;
      const auto& files = i < tensors.size() ? tensors[i] : none;
      auto file_of = [&](std::size_t j) { return j < files.size() ? files[j] : TensorSource{}; };
      const std::string item = in.keyword.empty() ? "      - " : "      - keyword: " + key(in.keyword) + "\n        ";
      switch (in.kind) {
        case Input::Kind::Tensor: y += item + "tensor: " + tensor_flow(in.tensor, file_of(0)) + "\n"; break;
        case Input::Kind::TensorList:
          y += item + "tensor_list:" + std::string(in.list.empty() ? " []" : "") + "\n";
          for (std::size_t j = 0; j < in.list.size(); ++j)
            y += "          - " + tensor_flow(in.list[j], file_of(j)) + "\n";
          break;
        case Input::Kind::Value:
          // A device (`cuda:0`) is only a device as a plain value; everything else is exact as a Python literal.
          if (in.value.kind == PyValue::Kind::Device) y += "      - value: " + quoted(in.value.s) + "\n";
          else y += "      - py: " + quoted(in.value.repr()) + "\n";
          break;
      }
    }
  }
  if (!c.kwargs.empty()) {
    y += "    kwmap:\n";
    for (const auto& [k, v] : c.kwargs) y += "      " + key(k) + ": " + value(v) + "\n";
  }
  put_fields(y, c, /*before_inputs=*/false);
  return y;
}

}  // namespace opcheck::manifest_text
