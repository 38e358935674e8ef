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
  y += "    seed: " + std::to_string(c.seed) + "\n";
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
  if (c.rtol) y += "    rtol: " + real(*c.rtol) + "\n";
  if (c.atol) y += "    atol: " + real(*c.atol) + "\n";
  y += std::string("    compare: ") + comparator_name(c.compare) + "\n";
  for (const char* setting : comparator_spec(c.compare).settings)  // pcc_min where the comparator reads it
    if (setting && std::string_view(setting) == "pcc_min") y += "    pcc_min: " + real(c.pcc_min) + "\n";
  y += std::string("    equal_nan: ") + (c.equal_nan ? "true" : "false") + "\n";
  if (c.timeout_s) y += "    timeout: " + real(*c.timeout_s) + "\n";
  if (c.nondeterministic_ok) y += "    nondeterministic: true\n";
  if (c.expects_error)
    y += "    expects_error: {type: " + quoted(c.expects_error->type) + ", match: " + quoted(c.expects_error->match) +
         "}\n";
  if (!c.marks.empty()) {
    y += "    marks: [";
    for (std::size_t i = 0; i < c.marks.size(); ++i) y += (i ? ", " : "") + quoted(c.marks[i]);
    y += "]\n";
  }
  if (!c.description.empty()) y += "    description: " + quoted(c.description) + "\n";
  return y;
}

}  // namespace opcheck::manifest_text
