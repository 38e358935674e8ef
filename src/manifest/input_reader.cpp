#include "manifest/input_reader.h"

#include <algorithm>
#include <filesystem>

#include "common/refused_ops.h"
#include "common/spelling.h"
#include "common/text.h"
#include "manifest/py_literal.h"
#include "manifest/string_values.h"
#include "common/opened_files.h"
#include "manifest/tensor_file.h"
#include "manifest/tensor_layout.h"

namespace fs = std::filesystem;

namespace opcheck {

using yaml::NodeRef;
using yaml::ScalarStyle;

namespace {
const std::vector<std::string_view> kInputKeys{"tensor", "tensor_list", "value", "py", "file", "keyword"};
}  // namespace

bool is_python_identifier(std::string_view s) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!(alpha || (i > 0 && c >= '0' && c <= '9'))) return false;
  }
  return true;
}

bool refuse_machine_op(TypedYaml& r, yaml::NodeRef n, const std::string& op) {
  const auto why = refused_op_reason(op);
  if (!why) return false;
  r.error(n, "op '" + op + "' is refused: it " + *why,
          "opcheck runs only ops that compute on their arguments; remove this case (docs/design.md: Reliability)");
  return true;
}

std::string too_long(const std::string& what, const std::string& name) {
  return what + " " + in_quotes(name) + " is longer than " + std::to_string(kMaxNameBytes) + " bytes";
}

bool is_op_spelling(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
          c == ':'))
      return false;
  return true;
}

/// Why torch.full could not fill a `dtype` tensor with `v` (it refuses values that overflow the dtype), or "".

bool InputReader::read_value(NodeRef n, std::string_view key, PyValue& out) {
  if (n.is_mapping()) {
    error(n, "a mapping is not a value (in " + in_quotes(key) + ")",
          "write lists as YAML lists and tuples as strings such as \"(1, 2)\"");
    return false;
  }
  if (n.is_sequence()) {
    std::vector<PyValue> items(n.size());
    for (std::size_t i = 0; i < n.size(); ++i)
      if (!read_value(n.item(i), key, items[i])) return false;
    out = PyValue::sequence(PyValue::Kind::List, std::move(items));
    return true;
  }
  std::string_view s = n.text();
  if (n.style() == ScalarStyle::Plain) {
    bool b;
    std::int64_t i;
    bool overflow;
    double f;
    if (yaml::is_core_null(s)) {
      out = PyValue::none();
      return true;
    }
    if (yaml::parse_core_bool(s, b)) {
      out = PyValue::boolean(b);
      return true;
    }
    if (yaml::parse_core_int(s, i, overflow)) {
      if (overflow) {
        error(n, "integer " + std::string(s.substr(0, 40)) + " in " + in_quotes(key) + " does not fit in 64 bits");
        return false;
      }
      out = PyValue::integer(i);
      return true;
    }
    bool too_large = false;
    if (yaml::parse_core_float(s, f, too_large)) {
      if (too_large) {
        error(n, "number " + in_quotes(s) + " in " + in_quotes(key) + " is too large for a 64-bit float (it would "
              "silently become infinity)", "write a number below 1.8e308, or .inf if infinity is meant");
        return false;
      }
      out = PyValue::real(f);
      return true;
    }
  }
  std::string err;
  int col = 0;
  if (!classify_string(s, out, err, col)) {
    error_at(text_loc(n, col), "invalid Python literal " + in_quotes(s) + " in " + in_quotes(key) + ": " + err,
             "a string starting with '(' or '[' must be a Python literal such as (1, -1) or [2, 3]; quote it "
             "inside the literal ('\"(text\"') if it is meant as text");
    return false;
  }
  return true;
}

bool InputReader::read_kwargs(NodeRef n, std::string_view key, KwArgs& out) {
  if (!want_mapping(n, key)) return false;
  bool ok = true;
  out.reserve(out.size() + n.size());
  for (std::size_t i = 0; i < n.size(); ++i) {
    NodeRef k = n.key(i);
    if (!is_python_identifier(k.text())) {
      error(k, "keyword " + in_quotes(k.text()) + " in " + in_quotes(key) + " is not a Python identifier");
      ok = false;
      continue;
    }
    PyValue v;
    if (!read_value(n.value(i), k.text(), v)) {
      ok = false;
      continue;
    }
    std::string name(k.text());
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& kv) { return kv.first == name; });
    if (it != out.end())
      it->second = std::move(v);  // kwmap over attrs: keep the attrs position, take the kwmap value
    else
      out.emplace_back(std::move(name), std::move(v));
  }
  return ok;
}

bool InputReader::read_dtype(NodeRef n, std::string_view key, DType& out, std::string& spelling) {
  if (!n.is_scalar() || (n.style() == ScalarStyle::Plain && yaml::is_core_null(n.text()))) {
    error(n, "expected a dtype name for " + in_quotes(key) + ", got " + n.describe(),
          "e.g. fp16, bf16, fp32, torch.int64");
    return false;
  }
  std::string_view s = n.text();
  if (auto t = parse_dtype(s)) {
    out = *t;
    spelling.assign(s);
    return true;
  }
  error(n, "unknown dtype " + in_quotes(s) + did_you_mean(s, all_dtype_names()),
        "use one of fp16, bf16, fp32, fp64, int8, int16, int32, int64, uint8, bool, complex32, complex64, "
        "complex128 (or torch.float16 style names)");
  return false;
}

bool InputReader::resolve_file(NodeRef n, const std::string& key, bool dtype_given, TensorSpec& out) {
  std::string raw;
  if (!read_string(n, "file", raw)) return false;
  std::string rel = raw;
  if (v2_paths_) {
    if (const std::string problem = expand_path_tokens(raw, rel); !problem.empty()) {
      error(n, "path " + in_quotes(raw) + " " + problem,
            "export TORCH_DEVICE_ROOT (the torch-spyre checkout) and TORCH_ROOT (the PyTorch checkout) before "
            "running opcheck, or write the path without ${...}");
      return false;
    }
  }
  fs::path p(rel);
  if (p.is_absolute() && !v2_paths_) {
    error(n, "absolute path " + in_quotes(rel) + " for 'file' is not allowed",
          "give the path relative to the manifest's folder");
    return false;
  }
  fs::path norm = p.lexically_normal();
  if (norm.empty() || (!v2_paths_ && *norm.begin() == "..")) {
    error(n, "'file' path " + in_quotes(rel) + " escapes the manifest's folder",
          "keep tensor files in the manifest's folder or below it");
    return false;
  }
  if (!tensor_file_format(norm.string())) {
    error(n, "a tensor file must be a .pt, .npy or .safetensors file, got " + in_quotes(rel),
          "save the tensor with torch.save(t, 'name.pt'), numpy.save('name.npy', a) or safetensors' save_file");
    return false;
  }
  std::error_code ec;
  if (root_.empty()) root_ = fs::absolute(fs::path(path()), ec).parent_path().lexically_normal();
  fs::path full = norm.is_absolute() ? norm : root_ / norm;
  if (!fs::exists(full, ec)) {
    error(n, "file " + in_quotes(rel) + " does not exist (looked for " + full.string() + ")",
          v2_paths_ ? "fix the path (a relative one starts at the config's folder) or the environment variable"
                    : "put the file next to the manifest or fix the path");
    return false;
  }
  if (root_canonical_.empty()) root_canonical_ = fs::canonical(root_, ec);
  fs::path real = fs::canonical(full, ec);
  if (ec || root_canonical_.empty()) {
    error(n, "cannot resolve file " + in_quotes(rel) + ": " + ec.message());
    return false;
  }
  if (!v2_paths_) {
    auto rel_to_root = real.lexically_relative(root_canonical_);
    if (rel_to_root.empty() || *rel_to_root.begin() == "..") {
      error(n,
            "file " + in_quotes(rel) + " resolves through a symlink to " + real.string() +
                ", outside the manifest's folder",
            "copy the file into the manifest's folder");
      return false;
    }
  }
  if (!fs::is_regular_file(real, ec)) {
    error(n, "file " + in_quotes(rel) + " is not a regular file");
    return false;
  }
  // Opened once, and checked on what was opened: everything after reads that descriptor, never the path again.
  std::string open_problem;
  out.file = real.string();
  out.file_fd = open_checked_file(out.file, v2_paths_ ? "" : root_canonical_.string(), open_problem);
  if (out.file_fd < 0) {
    error(n, "file " + in_quotes(rel) + " " + open_problem, "keep tensor files in the manifest's folder or below it");
    return false;
  }
  // The file is data from anywhere: a damaged or crafted one is reported here, located, before anything reads it.
  TensorFileEntry saved;
  std::string note;
  if (const std::string problem = check_tensor_file(out.file_source(), key, saved, note, out.file); !problem.empty()) {
    // With a key given, the file is a dict already: its Fix is about the dict, not "set init_args.key".
    const char* fix = saved.format == TensorFileFormat::Npy ? "save the array again with numpy.save(path, a)"
                      : saved.format == TensorFileFormat::Safetensors
                          ? (key.empty() ? "save the tensors again with safetensors' save_file({name: t}, path), or "
                                           "set init_args.key"
                                         : "save the tensors again with safetensors' save_file({name: t}, path)")
                      : key.empty() ? "save the tensor again with torch.save(t.contiguous().clone(), path), or set "
                                      "init_args.key for a dict"
                                    : "save the dict again holding only tensors and plain values: torch.save({name: "
                                      "t.contiguous().clone(), ...}, path)";
    error(n, "file " + in_quotes(rel) + " " + problem, fix);
    return false;
  }
  if (!note.empty()) warning(n, "file " + in_quotes(rel) + " " + note, "remove init_args.key");
  // Shape and dtype must be the entry's: a mismatch is found here, not when the case runs.
  const std::string found = saved.dtype ? std::string(torch_dtype_name(*saved.dtype)) : saved.dtype_text;
  bool ok = true;
  // A tensor that writes no dtype of its own (a bare `- file:` input) takes the file's, as it takes its shape.
  if (!dtype_given && saved.dtype) {
    out.dtype = *saved.dtype;
    out.dtype_spelling = found;
  }
  if (!saved.dtype || *saved.dtype != out.dtype) {
    error(n,
          "file " + in_quotes(rel) + " holds " + found + " data (" + saved.dtype_text + ") but the tensor's dtype is " +
              torch_dtype_name(out.dtype),
          "make the tensor's dtype " + found + ", or save the file in " + torch_dtype_name(out.dtype));
    ok = false;
  }
  if (!out.shape_from_file && saved.shape != out.shape) {
    error(n,
          "file " + in_quotes(rel) + " holds a tensor of shape " + shape_text(saved.shape) +
              " but the tensor's shape is " + shape_text(out.shape),
          "make the shape " + shape_text(saved.shape) + ", or save a tensor of shape " + shape_text(out.shape));
    ok = false;
  }
  return ok;
}

bool InputReader::read_input(NodeRef item, const Case& c, Input& out) {
  out.loc = loc(item);
  if (!item.is_mapping()) {
    error(item, "expected an input mapping (tensor, tensor_list, value, py or file), got " + item.describe(),
          "write `- value: 3` or `- tensor: {shape: [2, 3]}`");
    return false;
  }
  if (!check_keys(item, kInputKeys, "in an input", &tensor_keys(),
                  "tensor fields belong inside `tensor:`, e.g. `- tensor: {shape: [2], dtype: fp16}`"))
    return false;
  // `keyword: NAME` beside `tensor:` or `tensor_list:` passes that tensor by name.
  for (std::size_t i = 0; i < item.size(); ++i) {
    if (item.key(i).text() != "keyword") continue;
    NodeRef k = item.value(i);
    if (!k.is_scalar() || !is_python_identifier(k.text())) {
      error(k, "expected a Python identifier for 'keyword', got " + k.describe(), "e.g. keyword: sorter");
      return false;
    }
    if (item.size() != 2 || (item.key(1 - i).text() != "tensor" && item.key(1 - i).text() != "tensor_list")) {
      error(item, "'keyword' names a tensor argument: it goes beside exactly one 'tensor' or 'tensor_list'",
            "write `- {keyword: sorter, tensor: {shape: [4]}}`; keyword values go in kwmap");
      return false;
    }
    out.keyword.assign(k.text());
    const bool ok = read_input_kind(item, item.key(1 - i).text(), item.value(1 - i), c, out);
    out.loc = loc(item);
    return ok;
  }
  if (item.size() != 1) {
    std::string keys;
    for (std::size_t i = 0; i < item.size(); ++i) keys += (i ? " and " : "") + in_quotes(item.key(i).text());
    error(item, item.size() == 0 ? "empty input" : "an input has " + keys + "; give exactly one of them",
          "one list item per argument: - tensor: ..., - value: ..., - py: ..., - tensor_list: ..., - file: ...");
    return false;
  }
  return read_input_kind(item, item.key(0).text(), item.value(0), c, out);
}

bool InputReader::read_input_kind(NodeRef item, std::string_view kind, NodeRef v, const Case& c, Input& out) {
  if (kind == "tensor") {
    out.kind = Input::Kind::Tensor;
    return read_tensor(v, c, out.tensor);
  }
  if (kind == "tensor_list") {
    out.kind = Input::Kind::TensorList;
    if (!v.is_sequence()) {
      error(v, "expected a list of tensors for 'tensor_list', got " + v.describe(),
            "write `tensor_list: [{shape: [2]}, {shape: [3]}]`");
      return false;
    }
    out.list.resize(v.size());
    bool ok = true;
    for (std::size_t i = 0; i < v.size(); ++i) ok = read_tensor(v.item(i), c, out.list[i]) && ok;
    return ok;
  }
  if (kind == "value") {
    out.kind = Input::Kind::Value;
    return read_value(v, "value", out.value);
  }
  if (kind == "py") {
    out.kind = Input::Kind::Value;
    if (!v.is_scalar() || (v.style() == ScalarStyle::Plain && yaml::is_core_null(v.text()))) {
      error(v, "expected a string holding a Python literal for 'py', got " + v.describe(),
            "e.g. py: (Ellipsis, slice(None, 2, None))");
      return false;
    }
    std::string err;
    int col = 0;
    if (!parse_py_literal(v.text(), out.value, err, col)) {
      error_at(text_loc(v, col), "invalid Python literal in 'py': " + err,
               "py: takes literals only: numbers, strings, True/False/None, Ellipsis, slice(...), tuples, lists, "
               "torch dtypes");
      return false;
    }
    return true;
  }
  // A bare `file: x.pt` input is a tensor loaded from that file.
  out.kind = Input::Kind::Tensor;
  out.tensor.loc = loc(item);
  out.tensor.dtype = c.dtype;
  out.tensor.dtype_spelling = c.dtype_spelling;
  out.tensor.init = InitKind::File;
  out.tensor.shape_from_file = true;
  return resolve_file(v, {}, /*dtype_given=*/false, out.tensor);
}

}  // namespace opcheck
