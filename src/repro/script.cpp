#include "repro/script.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include "common/init_recipes.h"
#include "manifest/tensor_file.h"

namespace opcheck::repro {
namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// ---- Python text ---------------------------------------------------------------------------------------------

std::string py_str(const std::string& s) { return PyValue::string(s).repr(); }

std::string py_shape(const std::vector<std::int64_t>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

std::string py_dtype(DType t) { return PyValue::of_dtype(t).repr(); }

/// How a literal is written: in the call (dtype arguments follow the reference's upcast, device arguments mean the
/// run's device) or as plain data.
enum class LiteralUse { Call, Data };

std::string py_literal(const PyValue& v, LiteralUse use) {
  switch (v.kind) {
    case PyValue::Kind::Float:
      if (std::isnan(v.f)) return "math.nan";
      if (std::isinf(v.f)) return v.f > 0 ? "math.inf" : "-math.inf";
      return v.repr();
    case PyValue::Kind::DType:
      if (use == LiteralUse::Call && (v.dtype == DType::Float16 || v.dtype == DType::BFloat16))
        return "lowp(" + v.repr() + ")";
      return v.repr();
    case PyValue::Kind::Device:
      if (use == LiteralUse::Data) return v.repr();
      return v.is_host_device() ? "'cpu'" : "device";
    case PyValue::Kind::Slice:
      return "slice(" + py_literal(v.items.at(0), use) + ", " + py_literal(v.items.at(1), use) + ", " +
             py_literal(v.items.at(2), use) + ")";
    case PyValue::Kind::Tuple:
    case PyValue::Kind::List: {
      const bool tuple = v.kind == PyValue::Kind::Tuple;
      std::string out = tuple ? "(" : "[";
      for (std::size_t i = 0; i < v.items.size(); ++i) out += (i ? ", " : "") + py_literal(v.items[i], use);
      if (tuple && v.items.size() == 1) out += ",";
      return out + (tuple ? ")" : "]");
    }
    default: return v.repr();
  }
}

/// The Python of the input recipes (common/init_recipes.h), written as the text of a script. A spec opcheck refuses
/// is still written as far as its recipe goes: the run reports the refusal.
struct PythonValues {
  using Values = std::string;
  using Shape = std::vector<std::int64_t>;
  bool& uses_scaled;
  bool& uses_loader;

  static std::string lit(const PyValue& v) { return py_literal(v, LiteralUse::Data); }
  static std::string made(const char* fn, const Shape& shape, DType d) {
    return std::string(fn) + "(" + py_shape(shape) + ", dtype=" + py_dtype(d) + ")";
  }

  void fail(const std::string&, const std::string&) {}
  std::string rand(const Shape& shape, DType d) { return made("torch.rand", shape, d); }
  std::string randint(std::int64_t lo, std::int64_t hi, const Shape& shape, DType d) {
    return "torch.randint(" + std::to_string(lo) + ", " + std::to_string(hi) + ", " + py_shape(shape) +
           ", dtype=" + py_dtype(d) + ")";
  }
  std::string randint_cast(std::int64_t lo, std::int64_t hi, const Shape& shape, DType d) {
    return "torch.randint(" + std::to_string(lo) + ", " + std::to_string(hi) + ", " + py_shape(shape) + ").to(" +
           py_dtype(d) + ")";
  }
  std::string scaled(std::string r, const PyValue& lo, const PyValue& hi) {
    uses_scaled = true;
    return "scaled(" + r + ", " + lit(lo) + ", " + lit(hi) + ")";
  }
  std::string complex(std::string re, std::string im) { return "torch.complex(" + re + ", " + im + ")"; }
  std::string randn(const Shape& shape, DType d) { return made("torch.randn", shape, d); }
  std::string times(std::string v, const PyValue& s) { return v + " * " + lit(s); }
  std::string plus(std::string v, const PyValue& s) { return v + " + " + lit(s); }
  std::string zeros(const Shape& shape, DType d) { return made("torch.zeros", shape, d); }
  std::string ones(const Shape& shape, DType d) { return made("torch.ones", shape, d); }
  std::string arange(std::int64_t n, const Shape& shape, DType d) {
    return "torch.arange(" + std::to_string(n) + ").reshape(" + py_shape(shape) + ").to(" + py_dtype(d) + ")";
  }
  std::string xavier(const Shape& shape, DType d, double gain) {
    return "torch.nn.init.xavier_uniform_(" + made("torch.empty", shape, d) + ", gain=" + lit(PyValue::real(gain)) +
           ")";
  }
  std::string full(const Shape& shape, const PyValue* fill, DType d) {
    return "torch.full(" + py_shape(shape) + ", " + (fill ? lit(*fill) : std::string("None")) +
           ", dtype=" + py_dtype(d) + ")";
  }
  std::string data(const PyValue& values, DType d) {
    return "torch.tensor(" + lit(values) + ", dtype=" + py_dtype(d) + ")";
  }
  std::string file(const std::string& path, const PyValue* key) {
    if (!key && tensor_file_format(path) == TensorFileFormat::Pt)
      return "torch.load(" + py_str(path) + ").contiguous()";
    uses_loader = true;
    return "load_tensor_file(" + py_str(path) + (key ? ", " + py_str(key->s) : std::string()) + ")";
  }
  std::string eye(std::int64_t n, DType d) { return "torch.eye(" + std::to_string(n) + ", dtype=" + py_dtype(d) + ")"; }
};

/// The Python of a tensor's logical values over `value_shape` (torch.manual_seed already called).
std::string values_expr(const TensorSpec& t, const std::vector<std::int64_t>& value_shape, bool& uses_scaled,
                        bool& uses_loader) {
  PythonValues b{uses_scaled, uses_loader};
  return init_values(t, value_shape, b);
}

/// PEP 8's blank lines for the generated text: two before every top-level def and statement block that follows one,
/// never more than two anywhere.
std::string pep8_spacing(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  int blanks = 0;
  bool in_def = false;
  for (const auto& line : lines) {
    if (line.empty()) {
      ++blanks;
      continue;
    }
    const bool top = line[0] != ' ' && line[0] != '#' && line[0] != ')' && line[0] != ']' && line[0] != '"';
    const bool starts_def = line.rfind("def ", 0) == 0;
    int want = std::min(blanks, 2);
    if (!out.empty() && top && (starts_def || in_def)) want = 2;
    for (int k = 0; k < want && !out.empty(); ++k) out += "\n";
    out += line + "\n";
    blanks = 0;
    if (top) in_def = starts_def;
  }
  return out;
}


}  // namespace

std::string python_op_expression(const std::string& op) {
  static const char* const operator_names[] = {"and_", "or_", "xor", "lshift", "rshift", "invert", "inv",
                                               "truediv", "floordiv", "mod", "pos", "getitem", "setitem",
                                               "iadd", "isub", "imul", "itruediv"};
  std::string aten;
  if (starts_with(op, "aten::")) aten = op.substr(6);
  else if (starts_with(op, "torch.ops.aten.")) aten = op.substr(15);
  else if (starts_with(op, "aten.")) aten = op.substr(5);
  if (!aten.empty()) return "torch.ops.aten." + aten;  // X.overload: that overload; X alone: the packet picks one
  if (starts_with(op, "F.")) return "torch.nn.functional." + op.substr(2);
  if (!starts_with(op, "torch.")) return op;  // operator.X and other spellings Python reads as written
  const std::string name = op.substr(6);
  if (name.find('.') != std::string::npos) return op;  // torch.nn.functional.X, torch.Tensor.X, torch.linalg.X, ...
  for (const char* o : operator_names)
    if (name == o) return "operator." + name;
  if (starts_with(name, "__")) return "torch.Tensor." + name;
  if (name == "sym_sum") return "getattr(torch, \"sym_sum\", sum)";
  // Manifests write Tensor methods as torch.X (torch.float, torch.to, torch.repeat): the torch function where torch
  // has one, else the method, as opcheck reads them.
  return "(torch." + name + " if callable(getattr(torch, \"" + name + "\", None)) else torch.Tensor." + name + ")";
}

std::string python_repro_script(const Case& c, const ScriptDevice& device, const ScriptBundle& bundle) {
  std::ostringstream py;
  // ---- header and imports
  py << "#!/usr/bin/env python3\n\"\"\"opcheck repro of " << c.id << ": " << c.op
     << " on cpu and on the device under test, without opcheck.\n\n";
  py << "Case: " << c.loc.file << ":" << c.loc.line << "\n";
  if (!bundle.folder.empty()) py << "Inputs: the exact tensors of the failing run, saved in " << bundle.folder << "\n";
  else py << "Inputs: built from the manifest's recipes, as opcheck builds them (bit for bit)\n";
  if (!bundle.failure.empty()) py << "Failure recorded: " << bundle.failure << "\n";
  py << "\nRun: python3 THIS.py [--device DEV] [--device-lib PATH] [--out DIR]\n"
        "Exit status: 0 the device agrees with the cpu, 1 it does not (or one of them raised), 2 a bundle's saved\n"
        "output was not reproduced bit for bit.\n\"\"\"\n";
  py << "import os\n\n"
        "# Must precede the first torch import: libtorch 1.13's oneDNN uses AMX for bfloat16 without asking Linux for "
        "it,\n# which kills the process (SIGILL) on CPUs that have AMX.\n"
        "os.environ.setdefault(\"ONEDNN_MAX_CPU_ISA\", \"AVX512_CORE_BF16\")\n";
  for (const auto& [k, v] : device.environment)
    py << "os.environ.setdefault(" << py_str(k) << ", " << py_str(v) << ")  # the run's device faults\n";
  py << "\nimport argparse  # noqa: E402\nimport importlib  # noqa: E402\nimport math  # noqa: E402,F401\n"
        "import operator  # noqa: E402,F401\nimport re  # noqa: E402\nimport sys  # noqa: E402\n"
        "import types  # noqa: E402\n\n"
        "import torch  # noqa: E402\n\n";
  py << "DEVICE = " << py_str(device.device) << "\n";
  py << "DEVICE_LIB = " << (device.library.empty() ? "None" : py_str(device.library))
     << "  # PrivateUse1 backend loaded before the run (None: none)\n";
  py << "DEVICE_IMPORTS = [";
  for (std::size_t i = 0; i < device.imports.size(); ++i) py << (i ? ", " : "") << py_str(device.imports[i]);
  py << "]  # modules whose import registers the device (--device-import)\n";
  py << "PYTHON_PATH = " << (device.python_path.empty() ? "None" : py_str(device.python_path))
     << "  # opcheck's own Python packages, for DEVICE_IMPORTS\n";
  py << "COMPILE_BACKEND = " << (device.compile_backend.empty() ? "None" : py_str(device.compile_backend))
     << "  # the device call runs through torch.compile with this backend (None: eagerly)\n";
  py << "BUNDLE = " << (bundle.folder.empty() ? "None" : py_str(bundle.folder)) << "\n";
  py << "WRITTEN = [";
  for (std::size_t k = 0; k < bundle.written_slots.size(); ++k) py << (k ? ", " : "") << bundle.written_slots[k];
  py << "]  # tensor arguments the op writes in place (as the bundle recorded them)\n";
  py << "COMPARE = " << py_str(comparator_name(c.compare))
     << "\nRTOL, ATOL = " << (c.rtol ? py_literal(PyValue::real(*c.rtol), LiteralUse::Data) : "None") << ", "
     << (c.atol ? py_literal(PyValue::real(*c.atol), LiteralUse::Data) : "None")
     << "  # None: torch.testing.assert_close's default for the dtype\n";
  py << "PCC_MIN = " << PyValue::real(c.pcc_min).repr() << "\nEQUAL_NAN = " << (c.equal_nan ? "True" : "False") << "\n";
  py << "EXPECTED_ERROR = ";
  if (c.expects_error)
    py << "(" << py_str(c.expects_error->type) << ", " << py_str(c.expects_error->match)
       << ")  # both runs must raise this (type, regex)\n";
  else
    py << "None  # (type, regex) when both runs must raise\n";
  py << "LOW_PRECISION = (torch.float16, torch.bfloat16)\n"
        "UPCAST = False  # True while the cpu reference runs in float32 (its kernels lack the low-precision dtype)\n\n";

  // ---- inputs
  std::ostringstream in;
  bool uses_scaled = false, uses_place = false, uses_loader = false;
  std::vector<bool> host_slot;
  std::size_t slot = 0;
  std::vector<std::string> args;  // positional argument expressions
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    const Input& input = c.inputs[i];
    if (input.kind == Input::Kind::Value) {
      args.push_back(py_literal(input.value, LiteralUse::Call));
      continue;
    }
    const bool list = input.kind == Input::Kind::TensorList;
    const std::size_t n = list ? input.list.size() : 1;
    std::string arg = list ? "[" : "";
    for (std::size_t j = 0; j < n; ++j, ++slot) {
      const TensorSpec& t = list ? input.list[j] : input.tensor;
      host_slot.push_back(t.placement == Placement::Host);
      const std::string var = "t" + std::to_string(slot);
      in << "    # input " << i << (list ? "[" + std::to_string(j) + "]" : std::string()) << ": " << dtype_name(t.dtype)
         << " " << py_shape(t.shape);
      if (!t.shape_from_file) in << " stride " << py_shape(t.stride) << " offset " << t.storage_offset;
      in << (t.placement == Placement::Host ? ", stays on the host" : "") << "\n";
      if (t.shape_from_file) {
        in << "    " << var << " = " << values_expr(t, t.shape, uses_scaled, uses_loader) << "\n";
      } else {
        std::vector<std::int64_t> value_shape = t.shape;
        bool expanded = false;
        for (std::size_t d = 0; d < value_shape.size() && d < t.stride.size(); ++d)
          if (t.stride[d] == 0 && value_shape[d] > 1) {
            value_shape[d] = 1;
            expanded = true;
          }
        bool plain = t.storage_offset == 0 && !expanded;
        std::int64_t expect = 1;
        for (std::size_t d = t.shape.size(); d-- > 0 && plain;) {
          plain = t.shape[d] == 1 || (d < t.stride.size() && t.stride[d] == expect);
          expect *= t.shape[d];
        }
        // Data and file values come over the full shape; place() keeps one value along expanded dims.
        const bool full = init_recipe(t.init).full_shape;
        if (init_recipe(t.init).seeded) {
          const std::int64_t seed = c.seed + 1000 * static_cast<std::int64_t>(i) + static_cast<std::int64_t>(j);
          // opcheck seeds a fresh generator with the value as unsigned 64 bits, which is what manual_seed takes.
          in << "    torch.manual_seed("
             << (seed < 0 ? std::to_string(static_cast<std::uint64_t>(seed)) : std::to_string(seed)) << ")  # seed "
             << c.seed << " + 1000 * " << i << (list ? " + " + std::to_string(j) : std::string()) << "\n";
        }
        const std::string values = values_expr(t, full ? t.shape : value_shape, uses_scaled, uses_loader);
        if (plain) {
          in << "    " << var << " = " << values << "\n";
        } else {
          uses_place = true;
          in << "    " << var << " = place(" << values << ", " << py_shape(t.shape) << ", " << py_shape(t.stride)
             << ", " << t.storage_offset << ")\n";
        }
      }
      arg += (list && j ? ", " : "") + std::string("t[") + std::to_string(slot) + "]";
    }
    args.push_back(list ? arg + "]" : arg);
  }

  if (uses_loader)
    py << "\ndef load_tensor_file(path, key=None):\n"
          "    \"\"\"The tensor opcheck reads from a .pt, .npy or .safetensors file (key: a dict's entry or a "
          "safetensors name).\"\"\"\n"
          "    if path.endswith(\".npy\"):\n"
          "        import numpy\n"
          "        return torch.from_numpy(numpy.load(path)).contiguous()\n"
          "    if path.endswith(\".safetensors\"):\n"
          "        import json\n"
          "        import struct\n"
          "        with open(path, \"rb\") as f:\n"
          "            n = struct.unpack(\"<Q\", f.read(8))[0]\n"
          "            header = json.loads(f.read(n))\n"
          "            entry = header[key if key is not None else next(k for k in header if k != \"__metadata__\")]\n"
          "            begin, end = entry[\"data_offsets\"]\n"
          "            f.seek(8 + n + begin)\n"
          "            data = bytearray(f.read(end - begin))\n"
          "        dtype = {\"F16\": torch.float16, \"BF16\": torch.bfloat16, \"F32\": torch.float32, \"F64\": "
          "torch.float64,\n"
          "                 \"I8\": torch.int8, \"I16\": torch.int16, \"I32\": torch.int32, \"I64\": torch.int64, "
          "\"U8\": torch.uint8,\n"
          "                 \"BOOL\": torch.bool, \"C64\": torch.complex64}[entry[\"dtype\"]]\n"
          "        if not data:\n"
          "            return torch.empty(entry[\"shape\"], dtype=dtype)\n"
          "        return torch.frombuffer(data, dtype=dtype).reshape(entry[\"shape\"]).clone()\n"
          "    obj = torch.load(path)\n"
          "    if isinstance(obj, dict):\n"
          "        obj = obj[key]\n"
          "    return obj.contiguous()\n\n";
  if (uses_scaled)
    py << "\ndef scaled(r, low, high):\n"
          "    \"\"\"make_tensor's values in [low, high) from torch.rand's r (opcheck's rand/uniform with "
          "low/high).\"\"\"\n"
          "    return high * r + low * (1 - r)\n\n";
  if (uses_place)
    py << "\ndef place(values, shape, stride, offset):\n"
          "    \"\"\"The tensor opcheck hands the op: the values in a zeroed storage of the layout's extent, viewed "
          "with\n"
          "    the manifest's stride and storage offset (a stride-0 dim holds one value).\"\"\"\n"
          "    value_shape = [1 if st == 0 and n > 1 else n for n, st in zip(shape, stride)]\n"
          "    for d, n in enumerate(value_shape):\n"
          "        values = values.narrow(d, 0, n)\n"
          "    extent = offset + (1 + sum((n - 1) * st for n, st in zip(value_shape, stride)) if values.numel() else "
          "0)\n"
          "    storage = torch.zeros(extent, dtype=values.dtype)\n"
          "    storage.as_strided(value_shape, stride, offset).copy_(values)\n"
          "    return storage.as_strided(shape, stride, offset)\n\n";
  py << "\ndef inputs():\n    \"\"\"The case's tensors on the host, one per tensor argument, as opcheck builds "
        "them.\"\"\"\n"
     << in.str() << "    return [";
  for (std::size_t s = 0; s < slot; ++s) py << (s ? ", " : "") << "t" << s;
  py << "]\n\n\n";
  py << "HOST_INPUTS = [";
  for (std::size_t s = 0; s < host_slot.size(); ++s) py << (s ? ", " : "") << (host_slot[s] ? "True" : "False");
  py << "]  # placed on the host (device: cpu in the manifest) in the device run too\n";

  // ---- the call
  std::string call_args;
  for (const auto& a : args) call_args += (call_args.empty() ? "" : ", ") + a;
  // Keywords that are Python reserved words (aten's `from` of uniform_/random_) can only be passed unpacked.
  static const std::set<std::string> reserved{"False", "None", "True", "and", "as", "assert", "async", "await",
                                              "break", "class", "continue", "def", "del", "elif", "else", "except",
                                              "finally", "for", "from", "global", "if", "import", "in", "is",
                                              "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
                                              "while", "with", "yield"};
  std::string unpacked;
  for (const auto& [k, v] : c.kwargs) {
    if (reserved.count(k))
      unpacked += (unpacked.empty() ? "" : ", ") + py_str(k) + ": " + py_literal(v, LiteralUse::Call);
    else
      call_args += (call_args.empty() ? "" : ", ") + k + "=" + py_literal(v, LiteralUse::Call);
  }
  if (!unpacked.empty()) call_args += (call_args.empty() ? "" : ", ") + std::string("**{") + unpacked + "}";
  // Ops older torch lacks run through opcheck's decompositions (src/exec/decompositions.cpp), the same ATen ops in
  // the same order, so the script computes what opcheck computes on any torch.
  std::string op_line = "    op = " + python_op_expression(c.op) + "\n";
  const char* fallback = c.op.find("scaled_dot_product_attention") != std::string::npos ? "sdpa_reference"
                         : c.op.find("rms_norm") != std::string::npos                 ? "rms_norm_reference"
                                                                                      : nullptr;
  if (fallback) {
    op_line = "    # opcheck's decomposition where this torch lacks the op (it arrived in a later torch)\n"
              "    op = available(lambda: " + python_op_expression(c.op) + ", " + fallback + ")\n";
    py << R"PY(
def available(get, fallback):
    try:
        return get()
    except (AttributeError, RuntimeError):
        return fallback


)PY";
    if (std::string(fallback) == "sdpa_reference")
      py << R"PY(def sdpa_reference(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                   enable_gqa=False):
    """softmax(q·kᵀ·scale + mask)·v as opcheck decomposes scaled_dot_product_attention (dropout off)."""
    assert dropout_p == 0.0, "opcheck runs scaled_dot_product_attention with dropout off"
    k, v = key, value
    if query.dim() >= 3 and k.dim() >= 3 and query.size(-3) != k.size(-3):  # grouped-query heads
        k = k.repeat_interleave(query.size(-3) // k.size(-3), -3)
        v = v.repeat_interleave(query.size(-3) // v.size(-3), -3)
    root = math.sqrt(scale if scale is not None else 1.0 / math.sqrt(query.size(-1)))
    scores = torch.matmul(query * root, k.transpose(-2, -1) * root)
    if is_causal:
        keep = torch.ones(query.size(-2), k.size(-2), dtype=torch.bool, device=query.device).tril()
        scores = scores.masked_fill(keep.logical_not(), -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), -math.inf)
        else:
            scores = scores + attn_mask
    return torch.matmul(torch.softmax(scores, -1), v)


)PY";
    else
      py << R"PY(def rms_norm_reference(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x², trailing dims) + eps) · weight as opcheck decomposes rms_norm (float32 for fp16/bf16)."""
    dims = [input.dim() - 1 - i for i in range(len(normalized_shape))]
    e = eps if eps is not None else torch.finfo(input.dtype).eps
    x = input.to(torch.float32) if input.dtype in LOW_PRECISION else input
    out = (x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + e)).to(input.dtype)
    return out * weight if weight is not None else out


)PY";
  }
  py << "\ndef lowp(dtype):\n"
        "    \"\"\"A dtype argument: float32 while the reference is upcast, as opcheck passes it then.\"\"\"\n"
        "    return torch.float32 if UPCAST and dtype in LOW_PRECISION else dtype\n\n\n"
        "def call(t, device):\n"
        "    \"\"\"The case's op call on tensors `t`; `device` is what a device argument of the manifest means in this "
        "run.\"\"\"\n"
     << op_line << "    return op(" << call_args << ")\n\n\n";

  // ---- running and comparing (fixed text)
  std::optional<DType> kwarg_low;
  for (const auto& [k, v] : c.kwargs)
    if (v.kind == PyValue::Kind::DType && (v.dtype == DType::Float16 || v.dtype == DType::BFloat16))
      kwarg_low = v.dtype;
  py << "KWARG_LOW_DTYPE = " << (kwarg_low ? py_dtype(*kwarg_low) : "None") << "\n";
  py << R"PY(

def moved(x, device):
    """A copy of x on `device` with the same sizes, strides and storage offset."""
    if x.numel() == 0:
        return torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device=device)
    extent = x.storage_offset() + 1 + sum((n - 1) * st for n, st in zip(x.shape, x.stride()))
    base = torch.empty(extent, dtype=x.dtype, device=device)
    base.copy_(x.as_strided((extent,), (1,), 0))
    return base.as_strided(x.shape, x.stride(), x.storage_offset())


def to_host(v):
    if isinstance(v, torch.Tensor):
        return v.cpu()
    if isinstance(v, (list, tuple)):
        return [to_host(x) for x in v] if isinstance(v, list) else tuple(to_host(x) for x in v)
    return v


def cast_back(v, want, fallback):
    """An upcast result in the dtypes the op gives (`want`: a run on the meta device), else in `fallback`."""
    if isinstance(v, torch.Tensor):
        if isinstance(want, torch.Tensor):
            return v if v.dtype == want.dtype else v.to(want.dtype)
        return v.to(fallback) if fallback is not None and v.dtype == torch.float32 else v
    if isinstance(v, (list, tuple)):
        wants = want if isinstance(want, (list, tuple)) and len(want) == len(v) else [None] * len(v)
        items = [cast_back(x, w, fallback) for x, w in zip(v, wants)]
        return items if isinstance(v, list) else tuple(items)
    return v


def reference(host):
    """The cpu result and the tensor arguments after the call, as opcheck's reference computes them: in the case's
    dtypes, or where a cpu kernel lacks float16/bfloat16, in float32 with the results cast back to the dtypes the op
    gives."""
    global UPCAST
    args = [moved(x, "cpu") for x in host]
    try:
        return call(args, "cpu"), args
    except RuntimeError as e:
        if not re.search(r"not implemented for '(Half|BFloat16|ComplexHalf)'", str(e)):
            raise
        first_error = e
    UPCAST = True
    args = [x.to(torch.float32) if x.dtype in LOW_PRECISION else moved(x, "cpu") for x in host]
    try:
        out = call(args, "cpu")
    except Exception:  # noqa: BLE001 - opcheck reports the first error then
        raise first_error
    finally:
        UPCAST = False
    try:
        native = call([torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta") for x in host], "meta")
    except Exception:  # noqa: BLE001 - no meta kernel: the inputs' low-precision dtype
        native = None
    low = [x.dtype for x in host if x.dtype in LOW_PRECISION]
    fallback = low[0] if low else KWARG_LOW_DTYPE
    for d in low[1:]:
        fallback = torch.promote_types(fallback, d)
    print("reference (cpu): computed in float32 (the cpu kernel lacks the dtype), cast back")
    return cast_back(out, native, fallback), [a.to(x.dtype) for a, x in zip(args, host)]


def on_device(host, device):
    """The device result and the tensor arguments after the call, moved to the host."""
    args = [moved(x, "cpu" if on_host else device) for x, on_host in zip(host, HOST_INPUTS)]
    if COMPILE_BACKEND is None:
        return to_host(call(args, device)), to_host(args)

    class OpCall(torch.nn.Module):
        """The op call as a module, compiled as opcheck --compile-backend compiles it."""

        def forward(self, *t):
            return call(list(t), device)

    torch._dynamo.reset()
    with torch.no_grad():
        out = torch.compile(OpCall(), backend=COMPILE_BACKEND)(*args)
    return to_host(out), to_host(args)


def tolerances(dtype):
    defaults = {torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5), torch.float32: (1.3e-6, 1e-5),
                torch.float64: (1e-7, 1e-7), torch.complex32: (1e-3, 1e-5), torch.complex64: (1.3e-6, 1e-5),
                torch.complex128: (1e-7, 1e-7)}
    rtol, atol = defaults.get(dtype, (0.0, 0.0))
    return (rtol if RTOL is None else RTOL), (atol if ATOL is None else ATOL)


def raw(x):
    x = x.contiguous().reshape(-1)
    return torch.view_as_real(x).reshape(-1).view(torch.uint8) if x.is_complex() else x.view(torch.uint8)


def same_bits(a, b):
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype
                and a.shape == b.shape and torch.equal(raw(a), raw(b)))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_bits(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def plain(v):
    """Named tuples (torch.return_types) as tuples: torch.load reads those back with its default weights_only."""
    if isinstance(v, (list, tuple)):
        items = [plain(x) for x in v]
        return items if isinstance(v, list) else tuple(items)
    return v


def compare(expected, actual, path="output"):
    """Prints how the device's `actual` compares with the cpu's `expected`, leaf by leaf; True when they agree
    under the case's comparator (integer and bool tensors always exactly)."""
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
            print(f"{path}: the cpu gives {len(expected)} items, the device {type(actual).__name__}")
            return False
        return all([compare(e, a, f"{path}[{i}]") for i, (e, a) in enumerate(zip(expected, actual))])
    if not isinstance(expected, torch.Tensor):
        ok = same_bits(expected, actual) or expected == actual
        print(f"{path}: cpu {expected!r}, device {actual!r}")
        return ok
    if not isinstance(actual, torch.Tensor) or actual.dtype != expected.dtype or actual.shape != expected.shape:
        what = f"{actual.dtype} {list(actual.shape)}" if isinstance(actual, torch.Tensor) else type(actual).__name__
        print(f"{path}: the cpu gives {expected.dtype} {list(expected.shape)}, the device {what}")
        return False
    if expected.numel() == 0:
        print(f"{path}: empty {expected.dtype} {list(expected.shape)} on both")
        return True
    if COMPARE == "exact" or not (expected.is_floating_point() or expected.is_complex()):
        ok = torch.equal(raw(expected), raw(actual))
        print(f"{path}: {expected.dtype} {list(expected.shape)} {'bitwise equal' if ok else 'differs'}")
        return ok
    e, a = expected, actual
    if e.is_complex():
        e, a = torch.view_as_real(e), torch.view_as_real(a)
    e, a = e.double(), a.double()
    rtol, atol = tolerances(expected.dtype)
    close = torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=EQUAL_NAN)
    diff = torch.where(a == e, torch.zeros_like(a), (a - e).abs())
    diff = torch.where(torch.isnan(a) & torch.isnan(e), torch.zeros_like(a), diff)
    rel = diff / e.abs()
    rel = torch.where(diff == 0, torch.zeros_like(rel), rel)
    mismatched = int((~close).sum())
    print(f"{path}: {expected.dtype} {list(expected.shape)}: {mismatched} / {close.numel()} mismatched "
          f"(rtol {rtol}, atol {atol}), max_abs_diff {float(diff.max())!r}, max_rel_diff {float(rel.max())!r}")
    if COMPARE == "pcc":
        finite = torch.isfinite(e) & torch.isfinite(a)
        x, y = e[finite], a[finite]
        if x.numel() < 2 or float(x.std()) == 0 or float(y.std()) == 0:
            pcc = 1.0 if mismatched == 0 else 0.0
        else:
            pcc = float(torch.corrcoef(torch.stack([x, y]))[0, 1])
        print(f"{path}: pcc {pcc!r} (minimum {PCC_MIN})")
        return pcc >= PCC_MIN
    return mismatched == 0


def attempt(what, fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - every error class is reported
        print(f"{what} raised {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        return (None, None), e


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=DEVICE, help=f"device under test (default {DEVICE})")
    parser.add_argument("--device-lib", default=DEVICE_LIB, help="PrivateUse1 backend library to load first")
    parser.add_argument("--out", help="folder to torch.save the cpu output (cpu.pt) and the device output (device.pt)")
    args = parser.parse_args()
    if args.device_lib:
        torch.ops.load_library(args.device_lib)
        # torch imports a Python module for the PrivateUse1 backend (torch.<its name>) when a tensor first moves to
        # it; a backend registered from C++ alone has none, so an empty one stands in.
        name = torch._C._get_privateuse1_backend_name()
        if not hasattr(torch, name):
            torch._register_device_module(name, types.ModuleType(f"torch.{name}"))
    if DEVICE_IMPORTS and PYTHON_PATH:
        sys.path.insert(0, PYTHON_PATH)
    for module in DEVICE_IMPORTS:
        importlib.import_module(module)

    host = inputs()
    (expected, cpu_args), cpu_error = attempt("reference (cpu)", lambda: reference(host))
    (actual, device_args), device_error = attempt(f"device ({args.device})", lambda: on_device(host, args.device))
    status = 0
    if EXPECTED_ERROR:
        kind, match = EXPECTED_ERROR
        for name, err in (("reference (cpu)", cpu_error), (f"device ({args.device})", device_error)):
            ok = err is not None and re.search(match, str(err)) is not None
            print(f"{name}: {'raised' if ok else 'did not raise'} the expected {kind} matching {match!r}")
            status = status if ok else 1
    elif cpu_error is not None or device_error is not None:
        status = 1
    else:
        agree = compare(expected, actual)
        # Arguments the op writes in place differ between the runs when the device wrote them differently.
        for k, (e, a) in enumerate(zip(cpu_args, device_args)):
            if not same_bits(e, a):
                agree = compare(e, a, f"input tensor {k} after the call") and agree
        print(f"device ({args.device}) {'agrees with' if agree else 'DIFFERS from'} the cpu reference")
        status = 0 if agree else 1

    if BUNDLE:
        written = lambda after: None if after is None else [after[k] for k in WRITTEN]  # noqa: E731
        for name, got, error in (("reference.pt", expected, cpu_error), ("device.pt", actual, device_error),
                                 ("reference_written.pt", written(cpu_args), cpu_error),
                                 ("device_written.pt", written(device_args), device_error)):
            path = os.path.join(BUNDLE, name)
            if error is not None or not os.path.exists(path):
                continue
            same = same_bits(got, torch.load(path))
            print(f"{name}: {'reproduced bit for bit' if same else 'NOT reproduced'} by this run's "
                  f"{'reference (cpu)' if name.startswith('reference') else f'device ({args.device})'}")
            status = status if same else 2
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        for name, got, error, after in (("cpu", expected, cpu_error, cpu_args),
                                        ("device", actual, device_error, device_args)):
            if error is None:
                torch.save(plain(got), os.path.join(args.out, f"{name}.pt"))
                torch.save(plain(after), os.path.join(args.out, f"{name}_inputs_after.pt"))
    return status


if __name__ == "__main__":
    sys.exit(main())
)PY";
  return pep8_spacing(py.str());
}

}  // namespace opcheck::repro
