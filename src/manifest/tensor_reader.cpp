// The tensor mapping of an input: dtype, placement, init and its arguments, shape, data or file, layout.
#include <algorithm>
#include <cmath>

#include "common/init_recipes.h"
#include "manifest/recipe_check.h"
#include "common/spelling.h"
#include "common/text.h"
#include "manifest/input_reader.h"
#include "manifest/string_values.h"
#include "manifest/tensor_layout.h"

namespace opcheck {

using yaml::NodeRef;
using Keys = std::vector<std::string_view>;

/// The keys of one tensor mapping; a handle is null when its key is absent.
struct InputReader::TensorFields {
  NodeRef shape, stride, offset, dtype, device, contiguous, init, init_args, data, file, preset, preset_args;
};

/// A tensor file named by init_args (path, key), torch-spyre's spelling of `file:`.
struct InputReader::TensorFileName {
  NodeRef path;
  std::string key;
};

InputReader::TensorFields InputReader::tensor_fields(NodeRef t) {
  TensorFields f;
  for (std::size_t i = 0; i < t.size(); ++i) {
    std::string_view k = t.key(i).text();
    NodeRef v = t.value(i);
    if (k == "shape")
      f.shape = v;
    else if (k == "stride")
      f.stride = is_yaml_null(v) ? NodeRef() : v;  // `stride: null` (torch-spyre's module configs): contiguous
    else if (k == "storage_offset")
      f.offset = v;
    else if (k == "dtype")
      f.dtype = v;
    else if (k == "device")
      f.device = v;
    else if (k == "contiguous")
      f.contiguous = v;
    else if (k == "init")
      f.init = v;
    else if (k == "init_args")
      f.init_args = v;
    else if (k == "data")
      f.data = v;
    else if (k == "file")
      f.file = v;
    else if (k == "preset")
      f.preset = v;
    else if (k == "preset_args")
      f.preset_args = v;
  }
  return f;
}

const std::vector<std::string_view>& InputReader::tensor_keys() {
  static const Keys keys{"shape", "stride",    "storage_offset", "dtype", "device", "contiguous",
                         "init",  "init_args", "data",           "file",  "preset", "preset_args"};
  return keys;
}

namespace {

// The init kinds, their names and the init_args each takes: the one table the exec layer and repro scripts use too.
const std::vector<InitRecipe>& kInits = init_recipes();
const Keys& kAcceleratorNames = accelerator_names();

struct PresetInfo {
  std::string_view name;
  Keys args;
};
const std::vector<PresetInfo> kPresets{
    {"noncontig_slice", {"dim", "step"}},
    {"transpose_view", {"dim0", "dim1"}},
    {"expand_view", {"base_shape"}},
};

Keys names_of_inits() {
  Keys k;
  for (const auto& i : kInits) k.push_back(i.name);
  return k;
}
Keys names_of_presets() {
  Keys k;
  for (const auto& p : kPresets) k.push_back(p.name);
  return k;
}

/// Why a `dtype` tensor cannot hold `v` (torch.full refuses such a fill value; torch.tensor wraps such data), or "".
std::string dtype_value_problem(const PyValue& v, DType dtype) {
  const double d = v.as_double();
  double lo = 0, hi = 0;
  switch (dtype) {
    case DType::Int8:
      lo = -128;
      hi = 127;
      break;
    case DType::Int16:
      lo = -32768;
      hi = 32767;
      break;
    case DType::Int32:
      lo = -2147483648.0;
      hi = 2147483647.0;
      break;
    case DType::UInt8:
      lo = 0;
      hi = 255;
      break;
    case DType::Int64:
      if (v.kind == PyValue::Kind::Float && !(std::abs(d) < 9.2233720368547758e18)) return "does not fit in int64";
      return {};
    case DType::Float16:
    case DType::Complex32:
      lo = -65504;
      hi = 65504;
      break;
    case DType::BFloat16:
      lo = -3.3895313892515355e38;
      hi = 3.3895313892515355e38;
      break;
    case DType::Float32:
    case DType::Complex64:
      lo = -3.4028234663852886e38;
      hi = 3.4028234663852886e38;
      break;
    default:
      return {};
  }
  const bool integral = dtype == DType::Int8 || dtype == DType::Int16 || dtype == DType::Int32 || dtype == DType::UInt8;
  if (std::isnan(d) || std::isinf(d))
    return integral ? std::string("is not finite, which an integer dtype cannot hold") : std::string();
  if (d < lo || d > hi) return "overflows " + std::string(torch_dtype_name(dtype));
  return {};
}

}  // namespace

bool InputReader::read_data(NodeRef n, const std::vector<std::int64_t>& shape, std::size_t dim, DType dtype,
                            PyValue& out) {
  if (dim == shape.size()) {
    if (!n.is_scalar() || !read_value(n, "data", out)) {
      if (!n.is_scalar())
        error(n,
              "'data' nests deeper than shape " + shape_text(shape) + ": expected a number here, got " + n.describe());
      return false;
    }
    if (!out.is_number()) {
      error(n, "'data' holds " + out.repr() + "; expected numbers or booleans");
      return false;
    }
    // torch.tensor([300], dtype=torch.int8) wraps to 44 without a word: a value the dtype cannot hold is an error.
    if (const std::string problem = dtype_value_problem(out, dtype); !problem.empty()) {
      error(n, "'data' value " + out.repr() + " " + problem, "give values the dtype can hold, or a wider dtype");
      return false;
    }
    return true;
  }
  if (!n.is_sequence()) {
    error(n, "'data' does not match shape " + shape_text(shape) + ": expected a list of " + std::to_string(shape[dim]) +
                 " items at depth " + std::to_string(dim + 1) + ", got " + n.describe());
    return false;
  }
  if (static_cast<std::int64_t>(n.size()) != shape[dim]) {
    error(n, "'data' does not match shape " + shape_text(shape) + ": expected " + std::to_string(shape[dim]) +
                 " items at depth " + std::to_string(dim + 1) + ", got " + std::to_string(n.size()));
    return false;
  }
  std::vector<PyValue> items(n.size());
  for (std::size_t i = 0; i < n.size(); ++i)
    if (!read_data(n.item(i), shape, dim + 1, dtype, items[i])) return false;
  out = PyValue::sequence(PyValue::Kind::List, std::move(items));
  return true;
}

bool InputReader::read_tensor(NodeRef t, const Case& c, TensorSpec& out) {
  out.loc = loc(t);
  out.dtype = c.dtype;
  out.dtype_spelling = c.dtype_spelling;
  if (!t.is_mapping()) {
    error(t, "expected a tensor mapping (shape, dtype, ...), got " + t.describe(),
          "write `tensor: {shape: [2, 3], dtype: fp16}`");
    return false;
  }
  std::size_t errors_before = diagnostics().error_count();
  check_keys(t, tensor_keys(), "in a tensor");
  const TensorFields f = tensor_fields(t);

  // Each reader below reports its own problems; the order is the order of the messages.
  if (f.dtype) read_dtype(f.dtype, "dtype", out.dtype, out.dtype_spelling);
  if (f.device) read_placement(f.device, out);
  // A tensor file is named by `file:` or by init_args.path (torch-spyre's spelling).
  const bool has_path = f.init_args && f.init_args.is_mapping() && f.init_args.find("path");
  const InitRecipe* init = read_init_kind(f, has_path, out);
  const bool have_shape = read_shape(t, f, has_path, out);
  TensorFileName file;
  if (init) {
    if (f.init_args) read_init_args(f, *init, out, file);
    check_init_args(t, f, have_shape, out);
  }
  if (!file.key.empty() && !f.file && !file.path)
    error(f.init_args, "init_args.key names a tensor in a file, but no file is given", "add init_args.path");

  if (f.data && have_shape && out.init == InitKind::Data) read_data(f.data, out.shape, 0, out.dtype, out.data);

  if ((f.file || file.path) && (have_shape || out.shape_from_file))
    resolve_file(f.file ? f.file : file.path, file.key, /*dtype_given=*/static_cast<bool>(f.dtype), out);

  // The layout last: a preset's strides depend on the shape, and the storage extent on everything.
  read_layout(t, f, have_shape, out);
  // What the input builder would still refuse when the case runs (xavier on a vector): said here, so validate does.
  if (init && diagnostics().error_count() == errors_before) {
    std::string fix;
    if (std::string problem = recipe_problem(out, fix); !problem.empty()) {
      const auto plain = [](std::string text) {
        while (!text.empty() && text.back() == '.') text.pop_back();
        return text;
      };
      error(f.init ? f.init : t, "init: " + plain(problem), plain(fix));
    }
  }
  return diagnostics().error_count() == errors_before;
}

void InputReader::read_placement(NodeRef device, TensorSpec& out) {
  std::string d;
  if (!read_string(device, "device", d)) return;
  switch (classify_device(d)) {
    case DeviceKind::Host:
      out.placement = Placement::Host;
      break;
    case DeviceKind::DeviceUnderTest:
      out.placement = Placement::DeviceUnderTest;
      break;
    case DeviceKind::NotADevice: {
      Keys names{"cpu"};
      names.insert(names.end(), kAcceleratorNames.begin(), kAcceleratorNames.end());
      // "gpu" is one edit from "cpu", but suggesting the host for a device typo would mislead.
      std::string guess = closest_spelling(d, names);
      if (guess == "cpu" && d != "CPU" && d != "Cpu") guess.clear();
      error(device,
            "unknown device " + in_quotes(d) + (guess.empty() ? std::string() : " (did you mean '" + guess + "'?)"),
            "use cpu (stays on the host) or cuda, cuda:0, spyre, aiu, privateuseone, xpu, mps, hpu, loopback "
            "(the device under test)");
    }
  }
}

const InitRecipe* InputReader::read_init_kind(const TensorFields& f, bool has_path, TensorSpec& out) {
  // init: explicit, or implied by data:/file:, else rand.
  const InitRecipe* init_info = &kInits[0];
  if (f.init) {
    std::string name;
    if (read_string(f.init, "init", name)) {
      auto it = std::find_if(kInits.begin(), kInits.end(), [&](const InitRecipe& i) { return i.name == name; });
      if (it == kInits.end()) {
        error(f.init, "unknown init " + in_quotes(name) + did_you_mean(name, names_of_inits()),
              "use one of " + join(names_of_inits()));
        init_info = nullptr;
      } else {
        init_info = &*it;
      }
    } else {
      init_info = nullptr;
    }
  } else if (f.data || f.file) {
    const InitKind implied = f.data ? InitKind::Data : InitKind::File;
    init_info = &*std::find_if(kInits.begin(), kInits.end(), [&](const InitRecipe& i) { return i.kind == implied; });
  }
  if (init_info) {
    out.init = init_info->kind;
    if (f.data && out.init != InitKind::Data)
      error(f.data, "'data' is given but init is " + in_quotes(init_info->name), "drop 'init' or write init: data");
    if (f.file && out.init != InitKind::File)
      error(f.file, "'file' is given but init is " + in_quotes(init_info->name), "drop 'init' or write init: file");
    if (out.init == InitKind::Data && !f.data)
      error(f.init, "init: data needs a 'data' list", "add data: [[...], ...]");
    if (out.init == InitKind::File && !f.file && !has_path)
      error(f.init, "init: file needs a file path", "add init_args: {path: name.pt} (or file: name.pt)");
    if (f.file && has_path) error(f.file, "'file' and init_args.path name the tensor file twice", "keep one of them");
  }
  return init_info;
}

bool InputReader::read_shape(NodeRef t, const TensorFields& f, bool has_path, TensorSpec& out) {
  // A file tensor may leave its shape to the file.
  if (!f.shape) {
    if (!f.file && !has_path)
      error(t, "tensor has no 'shape'", "add shape: [sizes...] (use [] for a 0-dim tensor)");
    else
      out.shape_from_file = true;
    return false;
  }
  if (!read_int_list(f.shape, "shape", out.shape)) return false;
  bool have_shape = true;
  for (std::size_t i = 0; i < out.shape.size(); ++i)
    if (out.shape[i] < 0) {
      error(f.shape.item(i), "negative size " + std::to_string(out.shape[i]) + " in shape " + shape_text(out.shape),
            "sizes are >= 0");
      have_shape = false;
    }
  if (!have_shape) return false;
  std::int64_t extent = shape_extent(out.shape);
  if (extent < 0 || extent > kMaxElements) {
    const bool empty = std::find(out.shape.begin(), out.shape.end(), 0) != out.shape.end();
    // An empty shape holds no elements, but its other sizes still make its strides and storage extent.
    error(f.shape,
          empty ? "shape " + shape_text(out.shape) + " has 0 elements, but its other sizes are absurdly large (" +
                      (extent < 0 ? std::string("their product overflows int64")
                                  : "their product is " + std::to_string(extent)) +
                      ", which its strides would reach; the limit is 2^40)"
                : "shape " + shape_text(out.shape) + " is absurdly large (" +
                      (extent < 0 ? std::string("overflows int64") : std::to_string(extent) + " elements") +
                      "; the limit is 2^40 elements)",
          "check the sizes; opcheck builds every input in memory");
    return false;
  }
  return true;
}

void InputReader::read_init_args(const TensorFields& f, const InitRecipe& init, TensorSpec& out, TensorFileName& file) {
  NodeRef init_args = f.init_args;
  if (!want_mapping(init_args, "init_args")) return;
  for (std::size_t i = 0; i < init_args.size(); ++i) {
    NodeRef k = init_args.key(i);
    if (!is_one_of(k.text(), init.args)) {
      std::string msg = "unknown init_args key " + in_quotes(k.text()) + " for init " + in_quotes(init.name);
      if (init.args.empty())
        error(k, msg + " (it takes no arguments)", "remove init_args");
      else
        error(k, msg + did_you_mean(k.text(), init.args),
              "init " + std::string(init.name) + " takes: " + join(init.args));
      continue;
    }
    // path and key name the tensor file; resolve_file reads them.
    if (k.text() == "path") {
      file.path = init_args.value(i);
      continue;
    }
    if (k.text() == "key") {
      if (read_string(init_args.value(i), "key", file.key)) {
        if (file.key.empty())
          error(init_args.value(i), "init_args.key is empty", "name the tensor to take from the file");
        else
          out.init_args.emplace_back("key", PyValue::string(file.key));
      }
      continue;
    }
    PyValue v;
    if (!read_value(init_args.value(i), k.text(), v)) continue;
    const std::string_view key = k.text();
    if (key == "distinct" || (key.size() > 6 && key.substr(key.size() - 6) == "_along")) {
      // A flag (distinct) or a dim (distinct_along, softmax_along, log_softmax_along): common/init_recipes.h.
      const bool flag = k.text() == "distinct";
      if (v.kind != (flag ? PyValue::Kind::Bool : PyValue::Kind::Int))
        error(init_args.value(i), "init_args " + in_quotes(k.text()) + " must be " +
                                      (flag ? "true or false" : "an integer (a dim of the tensor)") + ", got " + v.repr());
      else
        out.init_args.emplace_back(std::string(k.text()), std::move(v));
      continue;
    }
    const bool bool_ok = k.text() == "fill_value";  // torch.full(shape, True, dtype=torch.bool)
    if (!v.is_number() || (v.kind == PyValue::Kind::Bool && !bool_ok)) {
      error(init_args.value(i), "init_args " + in_quotes(k.text()) + " must be a number, got " + v.repr());
      continue;
    }
    if (k.text() == "fill_value") {
      if (const std::string problem = dtype_value_problem(v, out.dtype); !problem.empty()) {
        error(init_args.value(i), "init_args.fill_value " + v.repr() + " " + problem,
              "give a value the dtype can hold");
        continue;
      }
    }
    if (out.init == InitKind::Randint && v.kind != PyValue::Kind::Int) {
      error(init_args.value(i), "randint bound " + in_quotes(k.text()) + " must be an integer, got " + v.repr());
      continue;
    }
    out.init_args.emplace_back(std::string(k.text()), std::move(v));
  }
  std::sort(out.init_args.begin(), out.init_args.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

void InputReader::check_init_args(NodeRef t, const TensorFields& f, bool have_shape, const TensorSpec& out) {
  // What each init needs of its arguments and its shape, as the torch call it stands for would refuse otherwise.
  auto arg = [&](const char* name) -> const PyValue* {
    for (const auto& kv : out.init_args)
      if (kv.first == name) return &kv.second;
    return nullptr;
  };
  const PyValue *low = arg("low"), *high = arg("high");
  NodeRef where = f.init_args ? f.init_args : (f.init ? f.init : t);
  if (out.init == InitKind::Randint) {
    if (!high && !(f.init_args && f.init_args.find("high"))) {
      error(where, "init: randint needs init_args.high (the exclusive upper bound)", "add init_args: {high: 100}");
    } else if (high && high->kind == PyValue::Kind::Int) {
      std::int64_t lo = low && low->kind == PyValue::Kind::Int ? low->i : 0;
      if (!(lo < high->i))
        error(where,
              "randint needs low < high, got low " + std::to_string(lo) + " and high " + std::to_string(high->i));
    }
  } else if (low && high && low->is_number() && high->is_number() && !(low->as_double() < high->as_double())) {
    error(where, "init_args needs low < high, got low " + low->repr() + " and high " + high->repr());
  }

  if (out.init == InitKind::Full && !(f.init_args && f.init_args.is_mapping() && f.init_args.find("fill_value")))
    error(where, "init: full needs init_args.fill_value", "add init_args: {fill_value: 0.5}");
  if (out.init == InitKind::Eye && have_shape && (out.shape.size() != 2 || out.shape[0] != out.shape[1]))
    error(f.shape, "init: eye needs a square 2-D shape, got " + shape_text(out.shape),
          "give shape [n, n] (torch.eye(n) is the identity)");
}

void InputReader::read_layout(NodeRef t, const TensorFields& f, bool have_shape, TensorSpec& out) {
  // Layout: explicit stride, a preset, column-major for contiguous: false, else row-major.
  bool contiguous_flag = true, have_contiguous = false;
  if (f.contiguous) have_contiguous = read_bool(f.contiguous, "contiguous", contiguous_flag);
  if (f.offset) {
    if (read_int(f.offset, "storage_offset", out.storage_offset) && out.storage_offset < 0) {
      error(f.offset, "storage_offset must be >= 0, got " + std::to_string(out.storage_offset));
    }
  }
  if (f.preset && f.stride) error(f.preset, "'preset' and 'stride' cannot both be given", "keep one of them");
  if (f.preset && f.contiguous)
    error(f.contiguous, "'contiguous' and 'preset' cannot both be given", "keep one of them");
  if (f.preset_args && !f.preset) error(f.preset_args, "'preset_args' without a 'preset'", "add preset: <name>");

  if (have_shape && f.stride)
    read_stride(f, /*claims_contiguous=*/have_contiguous && contiguous_flag, out);
  else if (have_shape && f.preset)
    read_preset(f, out);
  else if (have_shape)
    out.stride =
        (have_contiguous && !contiguous_flag) ? column_major_strides(out.shape) : contiguous_strides(out.shape);

  if (have_shape && out.stride.size() == out.shape.size()) {
    std::int64_t extent = storage_extent(out.shape, out.stride, out.storage_offset);
    if (extent < 0 || extent > kMaxElements)
      error(f.stride ? f.stride : t,
            "the storage this layout needs is absurdly large (" +
                (extent < 0 ? std::string("overflows int64") : std::to_string(extent) + " elements") +
                "; the limit is 2^40 elements)");
  }
}

void InputReader::read_stride(const TensorFields& f, bool claims_contiguous, TensorSpec& out) {
  if (!read_int_list(f.stride, "stride", out.stride)) return;
  if (out.stride.size() != out.shape.size()) {
    error(f.stride,
          "stride " + shape_text(out.stride) + " has " + std::to_string(out.stride.size()) + " entries but shape " +
              shape_text(out.shape) + " has " + std::to_string(out.shape.size()) + " dims",
          "give one stride per dim");
    return;
  }
  for (std::size_t i = 0; i < out.stride.size(); ++i)
    if (out.stride[i] < 0) {
      error(f.stride.item(i), "negative stride " + std::to_string(out.stride[i]), "strides are >= 0");
      return;
    }
  if (claims_contiguous) {
    TensorSpec probe;
    probe.shape = out.shape;
    probe.stride = out.stride;
    if (!probe.is_contiguous())
      error(f.contiguous,
            "contiguous: true but stride " + shape_text(out.stride) + " is not contiguous for shape " +
                shape_text(out.shape),
            "drop 'contiguous' or the stride");
  }
}

void InputReader::read_preset(const TensorFields& f, TensorSpec& out) {
  // A preset names a common non-contiguous layout; its strides come from tensor_layout.h, as torch would make them.
  std::string name;
  if (!read_string(f.preset, "preset", name)) return;
  auto it = std::find_if(kPresets.begin(), kPresets.end(), [&](const PresetInfo& p) { return p.name == name; });
  if (it == kPresets.end()) {
    error(f.preset, "unknown preset " + in_quotes(name) + did_you_mean(name, names_of_presets()),
          "use one of " + join(names_of_presets()));
    return;
  }
  NodeRef preset_args = f.preset_args;
  if (!preset_args) {
    error(f.preset, "preset " + in_quotes(name) + " needs preset_args {" + join(it->args) + "}",
          "add preset_args: {" + join(it->args) + "}");
    return;
  }
  if (!want_mapping(preset_args, "preset_args") || !check_keys(preset_args, it->args, "in preset_args of " + name))
    return;
  out.preset = name;
  bool ok = true;
  std::vector<std::int64_t> ints;
  std::vector<std::int64_t> base_shape;
  for (auto a : it->args) {
    NodeRef v = preset_args.find(a);
    if (!v) {
      error(preset_args, "preset_args of " + name + " is missing " + in_quotes(a), "add " + std::string(a) + ": ...");
      ok = false;
      continue;
    }
    if (a == "base_shape") {
      ok = read_int_list(v, a, base_shape) && ok;
      for (std::size_t i = 0; ok && i < base_shape.size(); ++i)
        if (base_shape[i] < 0) {
          error(v.item(i), "negative size in base_shape");
          ok = false;
        }
      if (ok) out.preset_args.emplace_back(std::string(a), PyValue::none());
      if (ok) {
        std::vector<PyValue> items;
        for (auto d : base_shape) items.push_back(PyValue::integer(d));
        out.preset_args.back().second = PyValue::sequence(PyValue::Kind::List, std::move(items));
      }
    } else {
      std::int64_t x = 0;
      if (read_int(v, a, x)) {
        ints.push_back(x);
        out.preset_args.emplace_back(std::string(a), PyValue::integer(x));
      } else {
        ok = false;
      }
    }
  }
  if (!ok) return;
  std::string err;
  bool made = false;
  if (name == "noncontig_slice")
    made = noncontig_slice_strides(out.shape, ints[0], ints[1], out.stride, err);
  else if (name == "transpose_view")
    made = transpose_view_strides(out.shape, ints[0], ints[1], out.stride, err);
  else
    made = expand_view_strides(out.shape, base_shape, out.stride, err);
  if (!made) error(preset_args, err);
}

}  // namespace opcheck
