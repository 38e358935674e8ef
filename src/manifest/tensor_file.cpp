#include "manifest/tensor_file.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/opened_files.h"
#include "manifest/pt_file.h"
#include "manifest/tensor_layout.h"

namespace opcheck {
namespace {

constexpr std::uint64_t kMaxHeaderBytes = 100 << 20;  // safetensors' own limit on its JSON header

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::uint64_t le(const unsigned char* p, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::optional<DType> pt_storage_dtype(const std::string& storage) {
  static const std::map<std::string, DType> types{
      {"DoubleStorage", DType::Float64}, {"FloatStorage", DType::Float32},  {"HalfStorage", DType::Float16},
      {"BFloat16Storage", DType::BFloat16}, {"LongStorage", DType::Int64}, {"IntStorage", DType::Int32},
      {"ShortStorage", DType::Int16},    {"CharStorage", DType::Int8},     {"ByteStorage", DType::UInt8},
      {"BoolStorage", DType::Bool},      {"ComplexFloatStorage", DType::Complex64},
      {"ComplexDoubleStorage", DType::Complex128}};
  auto it = types.find(storage);
  if (it == types.end()) return std::nullopt;
  return it->second;
}

/// The bytes a shape holds at `item` bytes per element, or nullopt when that overflows.
std::optional<std::uint64_t> byte_count(const std::vector<std::int64_t>& shape, std::int64_t item) {
  // A zero-size tensor (a dim of 0) holds no bytes; shape_extent counts such a dim as 1, a bound for layouts.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  std::int64_t n = shape_extent(shape);
  if (n < 0 || (n > 0 && item > INT64_MAX / n)) return std::nullopt;
  return static_cast<std::uint64_t>(n * item);
}

// ---- .npy ----------------------------------------------------------------------------------------------------

/// The value text after `'key':` in an npy header dict, or "" when absent.
std::string header_value(const std::string& h, const std::string& key) {
  const std::string quoted[] = {"'" + key + "'", "\"" + key + "\""};
  std::size_t at = std::string::npos;
  for (const auto& q : quoted)
    if ((at = h.find(q)) != std::string::npos) {
      at += q.size();
      break;
    }
  if (at == std::string::npos) return {};
  while (at < h.size() && (h[at] == ' ' || h[at] == ':')) ++at;
  if (at >= h.size()) return {};
  if (h[at] == '\'' || h[at] == '"') {
    const std::size_t close = h.find(h[at], at + 1);
    return close == std::string::npos ? std::string() : h.substr(at, close - at + 1);
  }
  if (h[at] == '(') {
    const std::size_t close = h.find(')', at);
    return close == std::string::npos ? std::string() : h.substr(at, close - at + 1);
  }
  std::size_t end = at;
  while (end < h.size() && h[end] != ',' && h[end] != '}') ++end;
  std::string v = h.substr(at, end - at);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

std::optional<DType> npy_dtype(const std::string& descr) {
  // numpy's type codes after the byte-order mark: f2 f4 f8, i1 i2 i4 i8, u1, b1, c8 c16.
  static const std::map<std::string, DType> codes{
      {"f2", DType::Float16}, {"f4", DType::Float32}, {"f8", DType::Float64},   {"i1", DType::Int8},
      {"i2", DType::Int16},   {"i4", DType::Int32},   {"i8", DType::Int64},     {"u1", DType::UInt8},
      {"b1", DType::Bool},    {"c8", DType::Complex64}, {"c16", DType::Complex128}};
  if (descr.size() < 2) return std::nullopt;
  auto it = codes.find(descr.substr(1));
  if (it == codes.end()) return std::nullopt;
  return it->second;
}

std::string check_npy(std::ifstream& in, std::uint64_t file_size, TensorFileEntry& out) {
  unsigned char head[12] = {};
  if (file_size < 10 || !in.read(reinterpret_cast<char*>(head), 10))
    return "is not a NumPy .npy file (shorter than its header)";
  if (head[0] != 0x93 || std::string(reinterpret_cast<char*>(head + 1), 5) != "NUMPY")
    return "is not a NumPy .npy file (it does not start with \\x93NUMPY)";
  const int major = head[6];
  if (major < 1 || major > 3)
    return "is a .npy file of format version " + std::to_string(major) + ", unknown to opcheck";
  std::uint64_t header_len = le(head + 8, 2), header_start = 10;
  if (major >= 2) {
    if (file_size < 12 || !in.read(reinterpret_cast<char*>(head + 10), 2)) return "is truncated (in its header)";
    header_len = le(head + 8, 4);
    header_start = 12;
  }
  if (header_len > kMaxHeaderBytes || header_start + header_len > file_size)
    return "is truncated (its header claims " + std::to_string(header_len) + " bytes, the file has " +
           std::to_string(file_size) + ")";
  std::string h(header_len, '\0');
  if (!in.read(h.data(), static_cast<std::streamsize>(header_len))) return "cannot be read";
  const std::string descr = header_value(h, "descr"), fortran = header_value(h, "fortran_order"),
                    shape = header_value(h, "shape");
  if (descr.size() < 3 || fortran.empty() || shape.empty())
    return "has a damaged .npy header (it needs 'descr', 'fortran_order' and 'shape'): " + h.substr(0, 120);
  out.dtype_text = descr.substr(1, descr.size() - 2);
  const char order = out.dtype_text[0];
  out.dtype = npy_dtype(out.dtype_text);
  if (!out.dtype) {
    if (out.dtype_text == "|O" || out.dtype_text == "O")
      return "holds Python objects (dtype object), not numbers";
    return "holds NumPy dtype '" + out.dtype_text + "', which opcheck's tensors do not have";
  }
  const int item = dtype_size(*out.dtype);
  if (order == '>' && item > 1) return "holds big-endian data ('" + out.dtype_text + "'), which opcheck does not read";
  if (order != '<' && order != '|' && order != '=' && order != '>')
    return "has a damaged .npy header (dtype '" + out.dtype_text + "')";
  if (fortran != "False" && fortran != "True") return "has a damaged .npy header (fortran_order " + fortran + ")";
  out.fortran_order = fortran == "True";
  // shape: "(3, 4)", "(5,)" or "()"
  out.shape.clear();
  std::string digits;
  for (std::size_t i = 1; i + 1 <= shape.size(); ++i) {
    const char c = shape[i];
    if (c >= '0' && c <= '9') {
      digits += c;
    } else if (c == ',' || c == ')') {
      if (!digits.empty()) {
        if (digits.size() > 18) return "has a damaged .npy header (shape " + shape + ")";
        out.shape.push_back(std::stoll(digits));
        digits.clear();
      }
    } else if (c != ' ' && c != 'L') {
      return "has a damaged .npy header (shape " + shape + ")";
    }
  }
  const auto bytes = byte_count(out.shape, item);
  if (!bytes) return "has a shape " + shape_text(out.shape) + " whose size overflows";
  out.data_offset = header_start + header_len;
  out.data_bytes = *bytes;
  if (out.data_bytes > file_size - out.data_offset)
    return "is truncated: shape " + shape_text(out.shape) + " of '" + out.dtype_text + "' needs " +
           std::to_string(out.data_bytes) + " bytes of data, the file holds " +
           std::to_string(file_size - out.data_offset);
  return {};
}

// ---- .safetensors --------------------------------------------------------------------------------------------

std::optional<DType> safetensors_dtype(const std::string& s) {
  static const std::map<std::string, DType> codes{
      {"F16", DType::Float16}, {"BF16", DType::BFloat16}, {"F32", DType::Float32}, {"F64", DType::Float64},
      {"I8", DType::Int8},     {"I16", DType::Int16},     {"I32", DType::Int32},   {"I64", DType::Int64},
      {"U8", DType::UInt8},    {"BOOL", DType::Bool},     {"C64", DType::Complex64}};
  auto it = codes.find(s);
  if (it == codes.end()) return std::nullopt;
  return it->second;
}

/// A .safetensors file's parsed JSON header, or why it is not one.
struct SafetensorsHeader {
  nlohmann::ordered_json header;  // the file's order, for the names listed in messages
  std::vector<std::string> names;
  std::string problem;
};

/// Reads and parses the header of `n` bytes that follows the 8-byte size. A file holds the tensors of many cases
/// (import-opinfo writes one per entry and dtype), so the last few parsed headers are kept, each under the file's
/// identity (file_identity). A file that changed is parsed again.
std::shared_ptr<const SafetensorsHeader> safetensors_header(const std::string& path, std::ifstream& in,
                                                            std::uint64_t n) {
  static std::mutex mutex;
  static std::vector<std::pair<std::string, std::shared_ptr<const SafetensorsHeader>>> cache;  // newest last
  std::string identity = file_identity(path);
  if (!identity.empty()) identity += ':' + std::to_string(n);
  if (!identity.empty()) {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [id, h] : cache)
      if (id == identity) return h;
  }
  auto h = std::make_shared<SafetensorsHeader>();
  std::string text(n, '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(n))) {
    h->problem = "cannot be read";
    return h;
  }
  try {
    h->header = nlohmann::ordered_json::parse(text);
  } catch (const std::exception& e) {
    h->problem = "has a damaged .safetensors header (not JSON: " + std::string(e.what()).substr(0, 120) + ")";
    return h;
  }
  if (!h->header.is_object()) {
    h->problem = "has a damaged .safetensors header (not a JSON object)";
    return h;
  }
  for (auto it = h->header.begin(); it != h->header.end(); ++it)
    if (it.key() != "__metadata__") h->names.push_back(it.key());
  if (!identity.empty()) {
    constexpr std::size_t kKept = 8;
    std::lock_guard<std::mutex> lock(mutex);
    if (cache.size() >= kKept) cache.erase(cache.begin());
    cache.emplace_back(identity, h);
  }
  return h;
}

std::string check_safetensors(const std::string& path, std::ifstream& in, std::uint64_t file_size,
                              const std::string& key, TensorFileEntry& out) {
  unsigned char head[8] = {};
  if (file_size < 8 || !in.read(reinterpret_cast<char*>(head), 8))
    return "is not a .safetensors file (shorter than its 8-byte header size)";
  const std::uint64_t n = le(head, 8);
  if (n > kMaxHeaderBytes || n > file_size - 8)
    return "is not a .safetensors file, or is truncated: its header claims " + std::to_string(n) +
           " bytes, the file has " + std::to_string(file_size);
  const std::shared_ptr<const SafetensorsHeader> parsed = safetensors_header(path, in, n);
  if (!parsed->problem.empty()) return parsed->problem;
  const nlohmann::ordered_json& header = parsed->header;
  const std::vector<std::string>& names = parsed->names;
  auto listing = [&] {
    std::string s;
    for (std::size_t i = 0; i < names.size() && i < 8; ++i) s += (i ? ", " : "") + ("'" + names[i] + "'");
    if (names.size() > 8) s += ", ... (" + std::to_string(names.size()) + " in all)";
    return s.empty() ? std::string("none") : s;
  };
  std::string name = key;
  if (name.empty()) {
    if (names.size() != 1)
      return "holds " + std::to_string(names.size()) + " tensors (" + listing() + "); name one with init_args.key";
    name = names[0];
  } else if (!header.contains(name) || name == "__metadata__") {
    return "has no tensor '" + key + "' (its tensors: " + listing() + ")";
  }
  const nlohmann::ordered_json& t = header.at(name);
  if (!t.is_object() || !t.contains("dtype") || !t.contains("shape") || !t.contains("data_offsets") ||
      !t["dtype"].is_string() || !t["shape"].is_array() || !t["data_offsets"].is_array() ||
      t["data_offsets"].size() != 2)
    return "has a damaged .safetensors header (tensor '" + name + "' needs dtype, shape and data_offsets)";
  out.dtype_text = t["dtype"].get<std::string>();
  out.dtype = safetensors_dtype(out.dtype_text);
  if (!out.dtype)
    return "holds tensor '" + name + "' of dtype " + out.dtype_text + ", which opcheck's tensors do not have";
  const int item = dtype_size(*out.dtype);
  out.shape.clear();
  for (const auto& d : t["shape"]) {
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0)
      return "has a damaged .safetensors header (tensor '" + name + "' has shape " + t["shape"].dump() + ")";
    out.shape.push_back(d.get<std::int64_t>());
  }
  const auto& offs = t["data_offsets"];
  if (!offs[0].is_number_unsigned() || !offs[1].is_number_unsigned() ||
      offs[0].get<std::uint64_t>() > offs[1].get<std::uint64_t>())
    return "has a damaged .safetensors header (tensor '" + name + "' has data_offsets " + offs.dump() + ")";
  const std::uint64_t begin = offs[0].get<std::uint64_t>(), end = offs[1].get<std::uint64_t>();
  const auto bytes = byte_count(out.shape, item);
  if (!bytes || *bytes != end - begin)
    return "has a damaged .safetensors header (tensor '" + name + "': shape " + shape_text(out.shape) + " of " +
           out.dtype_text + " does not fill data_offsets " + offs.dump() + ")";
  const std::uint64_t data_start = 8 + n;
  if (end > file_size - data_start)
    return "is truncated: tensor '" + name + "' ends at byte " + std::to_string(data_start + end) +
           ", the file has " + std::to_string(file_size);
  out.data_offset = data_start + begin;
  out.data_bytes = end - begin;
  return {};
}

}  // namespace

std::optional<TensorFileFormat> tensor_file_format(const std::string& path) {
  if (ends_with(path, ".pt") || ends_with(path, ".pth")) return TensorFileFormat::Pt;
  if (ends_with(path, ".npy")) return TensorFileFormat::Npy;
  if (ends_with(path, ".safetensors")) return TensorFileFormat::Safetensors;
  return std::nullopt;
}

std::string check_tensor_file(const std::string& path, const std::string& key, TensorFileEntry& out,
                              std::string& note, const std::string& named) {
  const auto format = tensor_file_format(named.empty() ? path : named);
  if (!format) return "is not a .pt, .npy or .safetensors file";
  out.format = *format;
  if (*format == TensorFileFormat::Pt) {
    PtTensor t;
    if (std::string problem = check_pt_file(path, t, key, &note); !problem.empty()) return problem;
    out.dtype = pt_storage_dtype(t.storage_type);
    out.dtype_text = t.storage_type;
    out.shape = t.sizes;
    return {};
  }
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "cannot be opened";
  const auto end = in.tellg();
  if (end <= 0) return "is empty";
  const auto size = static_cast<std::uint64_t>(end);
  in.seekg(0);
  if (*format == TensorFileFormat::Npy) {
    if (!key.empty()) note = "is a .npy file, which holds one array: init_args.key '" + key + "' is not needed";
    return check_npy(in, size, out);
  }
  return check_safetensors(path, in, size, key, out);
}

std::string expand_path_tokens(const std::string& raw, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < raw.size();) {
    if (raw.compare(i, 2, "${") != 0) {
      out += raw[i++];
      continue;
    }
    const std::size_t close = raw.find('}', i);
    if (close == std::string::npos) return "has an unterminated '${' at character " + std::to_string(i + 1);
    const std::string name = raw.substr(i + 2, close - i - 2);
    if (name != "TORCH_ROOT" && name != "TORCH_DEVICE_ROOT")
      return "uses ${" + name + "}, which is not a path token (the tokens are ${TORCH_ROOT} and ${TORCH_DEVICE_ROOT})";
    const char* value = std::getenv(name.c_str());
    if (value == nullptr || *value == '\0')
      return "uses ${" + name + "}, but the environment variable " + name + " is not set";
    out += value;
    i = close + 1;
  }
  return {};
}

}  // namespace opcheck
