// Input building. The value recipes are the contract with Python: common/init_recipes.h describes each init kind
// once, and AtenValues below makes the bytes of the Python each recipe names, after torch.manual_seed(seed) with the
// same libtorch (see test/exec_inputs/README.md).
#include "exec/inputs.h"

#include <ATen/CPUGeneratorImpl.h>
#include <dlfcn.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "common/init_recipes.h"
#include "common/sha256.h"
#include "manifest/pt_file.h"
#include "manifest/tensor_file.h"

namespace opcheck::exec {
namespace {

std::string shape_text(c10::IntArrayRef shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// A failure while building one tensor; the message names where the tensor was written (when known), the tensor
/// ("fp16 [4, 8] init: rand") and what is wrong.
[[noreturn]] void fail(const TensorSpec& spec, const std::string& what, const std::string& fix = {}) {
  std::string msg;
  if (spec.loc.line > 0)
    msg = spec.loc.file + ":" + std::to_string(spec.loc.line) + ":" + std::to_string(spec.loc.col) + ": ";
  msg += std::string(dtype_name(spec.dtype)) + " " + shape_text(spec.shape) + " init: " + init_kind_name(spec.init) + ": " + what;
  if (!fix.empty()) msg += " Fix: " + fix;
  throw std::runtime_error(msg);
}

/// Python: `high * r + low * (1 - r)` on r in place. `1 - r` is exact for every value torch.rand draws (a
/// multiple of 2^-digits in [0, 1)), so negating and adding 1 in place gives the bytes of Python's rsub; the
/// products and the sum run through the same ATen kernels (mul/add with a wrapped Python number) as in Python.
at::Tensor scale_unit(at::Tensor r, const at::Scalar& low, const at::Scalar& high) {
  at::Tensor result = at::mul(r, high);
  r.neg_().add_(1);
  r.mul_(low);
  result.add_(r);
  return result;
}

at::Tensor data_values(const TensorSpec& spec, at::ScalarType st) {
  auto is_seq = [](const PyValue& v) { return v.kind == PyValue::Kind::List || v.kind == PyValue::Kind::Tuple; };
  // The data's shape is read along the first elements, then every path is checked against it.
  std::vector<std::int64_t> found;
  for (const PyValue* v = &spec.data; is_seq(*v); v = &v->items.front()) {
    found.push_back(static_cast<std::int64_t>(v->items.size()));
    if (v->items.empty()) break;
  }
  std::vector<double> flat_f;
  std::vector<std::int64_t> flat_i;
  bool any_float = false;
  std::function<void(const PyValue&, std::size_t, const std::string&)> walk = [&](const PyValue& v, std::size_t depth,
                                                                                   const std::string& where) {
    if (is_seq(v)) {
      if (depth >= found.size() || found[depth] != static_cast<std::int64_t>(v.items.size()))
        fail(spec, "data is ragged: " + where + " has " + std::to_string(v.items.size()) + " elements where " +
                       (depth < found.size() ? std::to_string(found[depth]) + " were" : std::string("a number was")) +
                       " expected.", "make data's nesting match shape.");
      for (std::size_t k = 0; k < v.items.size(); ++k) walk(v.items[k], depth + 1, where + "[" + std::to_string(k) + "]");
      return;
    }
    if (depth != found.size()) fail(spec, "data is ragged: " + where + " is a number where a list was expected.");
    if (!v.is_number()) fail(spec, "data holds " + v.repr() + " at " + where + "; only numbers and bools are allowed.");
    if (v.kind == PyValue::Kind::Float) any_float = true;
    flat_f.push_back(v.as_double());
    flat_i.push_back(v.kind == PyValue::Kind::Int ? v.i : v.kind == PyValue::Kind::Bool ? (v.b ? 1 : 0) : 0);
  };
  walk(spec.data, 0, "data");
  // Python: torch.tensor(data, dtype=dtype). Integers stay exact (no trip through double) unless a float is present.
  at::Tensor t = any_float ? at::tensor(flat_f, at::kDouble) : at::tensor(flat_i, at::kLong);
  t = t.reshape(found).to(st);
  if (t.sizes() != c10::IntArrayRef(spec.shape))
    fail(spec, "data has shape " + shape_text(t.sizes()) + " but the tensor's shape is " + shape_text(spec.shape) + ".",
         "make data's nesting match shape.");
  return t;
}

/// A .npy or .safetensors tensor: the bytes the file's header locates, read into a tensor of exactly that size.
at::Tensor raw_file_values(const TensorSpec& spec, const std::string& key) {
  TensorFileEntry e;
  std::string note;
  const std::string source = spec.file_source();  // the descriptor checked at load, never the path again
  if (const std::string problem = check_tensor_file(source, key, e, note, spec.file); !problem.empty())
    fail(spec, "file '" + spec.file + "' " + problem + ".",
         "save the tensor again (the file changed since it was checked?).");
  std::vector<std::int64_t> shape = e.shape;
  if (e.fortran_order) std::reverse(shape.begin(), shape.end());
  // Bool bytes are read as uint8 and compared with 0: a byte other than 0/1 never becomes an invalid bool.
  const at::ScalarType read_as = *e.dtype == DType::Bool ? at::kByte : to_scalar_type(*e.dtype);
  at::Tensor t = at::empty(shape, at::TensorOptions().dtype(read_as));
  if (static_cast<std::uint64_t>(t.nbytes()) != e.data_bytes)
    fail(spec, "file '" + spec.file + "' holds " + std::to_string(e.data_bytes) + " bytes for a tensor of " +
                   std::to_string(t.nbytes()) + ".");
  std::ifstream in(source, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(e.data_offset));
  if (e.data_bytes > 0 &&
      !in.read(static_cast<char*>(t.data_ptr()), static_cast<std::streamsize>(e.data_bytes)))
    fail(spec, "file '" + spec.file + "' could not be read to its end (truncated since it was checked?).");
  if (read_as == at::kByte && *e.dtype == DType::Bool) t = t.ne(0);
  if (e.fortran_order && t.dim() > 1) {
    std::vector<std::int64_t> back(static_cast<std::size_t>(t.dim()));
    for (std::int64_t d = 0; d < t.dim(); ++d) back[static_cast<std::size_t>(d)] = t.dim() - 1 - d;
    t = t.permute(back);
  }
  return t;
}

at::Tensor file_values(const TensorSpec& spec, at::ScalarType st) {
  std::error_code ec;
  const std::string source = spec.file_source();  // the descriptor checked at load, never the path again
  if (std::filesystem::exists(source, ec) && !std::filesystem::is_regular_file(source, ec))
    fail(spec, "file '" + spec.file + "' is not a regular file.", "name a .pt, .npy or .safetensors file.");
  const PyValue* key_arg = recipe_detail::find_arg(spec, "key");
  const std::string key = key_arg && key_arg->kind == PyValue::Kind::String ? key_arg->s : std::string();
  const auto format = tensor_file_format(spec.file);
  if (!format) fail(spec, "file '" + spec.file + "' is not a .pt, .npy or .safetensors file.");
  at::Tensor t;
  if (*format != TensorFileFormat::Pt) {
    std::ifstream probe(source, std::ios::binary);
    if (!probe) fail(spec, "cannot read file '" + spec.file + "'.", "check the path.");
    t = raw_file_values(spec, key);
  } else {
    std::ifstream in(source, std::ios::binary);
    if (!in) fail(spec, "cannot read file '" + spec.file + "'.", "check the path (relative to the manifest's folder).");
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    c10::IValue v;
    try {
      v = torch::jit::pickle_load(bytes);
    } catch (const std::exception& e) {
      std::string what = e.what();
      what = what.substr(0, what.find('\n'));
      fail(spec, "file '" + spec.file + "' is not a tensor saved by torch.save: " + what,
           key.empty() ? "save a single tensor: torch.save(t, path)."
                       : "save the dict again holding only tensors and plain values: torch.save({'" + key +
                             "': t, ...}, path).");
    }
    if (v.isGenericDict() && !key.empty()) {
      bool found = false;
      for (const auto& item : v.toGenericDict())
        if (item.key().isString() && item.key().toStringRef() == key) {
          v = item.value();
          found = true;
          break;
        }
      if (!found) fail(spec, "file '" + spec.file + "' has no entry '" + key + "'.", "name one of its keys.");
    }
    if (!v.isTensor())
      fail(spec, "file '" + spec.file + "' holds a " + v.tagKind() + ", not a tensor.",
           "save a single tensor: torch.save(t, path), or name a dict's entry with init_args.key.");
    t = v.toTensor();
  }
  // The file's sizes, strides and offset are data: a crafted or damaged file can point past its own storage, and
  // reading through such a view would read memory that is not the file's.
  const std::string layout_problem =
      extent_problem(t.sizes().vec(), t.strides().vec(), t.storage_offset(),
                     static_cast<std::int64_t>(t.storage().nbytes()), static_cast<std::int64_t>(t.element_size()));
  if (!layout_problem.empty())
    fail(spec, "file '" + spec.file + "' is damaged: " + layout_problem + ".",
         "save the tensor again with torch.save(t.contiguous().clone(), path).");
  if (t.scalar_type() != st || (!spec.shape_from_file && t.sizes() != c10::IntArrayRef(spec.shape))) {
    std::ostringstream os;
    os << "file '" << spec.file << "' holds a " << t.scalar_type() << " tensor of shape " << shape_text(t.sizes())
       << " but the spec says " << dtype_name(spec.dtype) << " " << shape_text(spec.shape) << ".";
    fail(spec, os.str(), "make the manifest's dtype and shape match the saved tensor.");
  }
  return t.contiguous();
}

/// The libtorch calls of the input recipes (common/init_recipes.h) on the case's generator: each makes the bytes of
/// the Python the recipe names, with the same libtorch.
struct AtenValues {
  using Values = at::Tensor;
  using Shape = std::vector<std::int64_t>;
  const TensorSpec& spec;
  at::Generator& gen;

  /// A number as the at::Scalar Python would pass (int stays int, float stays float, a bool is an int).
  static at::Scalar scalar(const PyValue& v) {
    if (v.kind == PyValue::Kind::Int) return at::Scalar(v.i);
    if (v.kind == PyValue::Kind::Bool) return at::Scalar(static_cast<std::int64_t>(v.b));
    return at::Scalar(v.as_double());
  }
  static at::TensorOptions of(DType d) { return at::TensorOptions().dtype(to_scalar_type(d)); }

  [[noreturn]] void fail(const std::string& what, const std::string& fix) { exec::fail(spec, what, fix); }
  at::Tensor rand(const Shape& shape, DType d) { return at::rand(shape, gen, of(d)); }
  at::Tensor randint(std::int64_t lo, std::int64_t hi, const Shape& shape, DType d) {
    return at::randint(lo, hi, shape, gen, of(d));
  }
  at::Tensor randint_cast(std::int64_t lo, std::int64_t hi, const Shape& shape, DType d) {
    return at::randint(lo, hi, shape, gen, at::TensorOptions().dtype(at::kLong)).to(to_scalar_type(d));
  }
  at::Tensor at_most_true(at::Tensor m, std::int64_t n) {
    return m.logical_and(m.reshape(-1).cumsum(0).le(n).reshape(m.sizes()));
  }
  /// Python: distinct.py's distinct(): per line along `dim`, k sorted draws from [0, range - k + 1) plus 0..k-1 are k
  /// distinct values (each draw shifted past the ones below it), put in a random order by a rand argsort.
  at::Tensor distinct(std::int64_t lo, std::int64_t hi, const Shape& shape, std::int64_t dim, DType d) {
    const bool whole = dim == recipe_detail::kAllElements;
    const Shape drawn = whole ? Shape{c10::multiply_integers(shape)} : shape;
    const std::int64_t along = whole ? 0 : dim, k = drawn[static_cast<std::size_t>(along)];
    Shape place(drawn.size(), 1);
    place[static_cast<std::size_t>(along)] = k;
    at::Tensor picked = std::get<0>(at::randint(0, hi - lo - k + 1, drawn, gen, at::TensorOptions().dtype(at::kLong))
                                        .sort(along))
                            .add(at::arange(k, at::TensorOptions().dtype(at::kLong)).reshape(place));
    at::Tensor order = at::rand(drawn, gen, at::TensorOptions().dtype(at::kFloat)).argsort(true, along, false);
    return picked.gather(along, order).add(lo).reshape(shape).to(to_scalar_type(d));
  }
  at::Tensor softmax(at::Tensor v, std::int64_t dim, bool log) {
    return log ? at::log_softmax(v, dim) : at::softmax(v, dim);
  }
  at::Tensor scaled(at::Tensor r, const PyValue& lo, const PyValue& hi) {
    return scale_unit(std::move(r), scalar(lo), scalar(hi));
  }
  at::Tensor complex(at::Tensor re, at::Tensor im) { return at::complex(re, im); }
  at::Tensor randn(const Shape& shape, DType d) { return at::randn(shape, gen, of(d)); }
  at::Tensor times(at::Tensor v, const PyValue& s) { return v.mul_(scalar(s)); }
  at::Tensor plus(at::Tensor v, const PyValue& s) { return v.add_(scalar(s)); }
  at::Tensor zeros(const Shape& shape, DType d) { return at::zeros(shape, of(d)); }
  at::Tensor ones(const Shape& shape, DType d) { return at::ones(shape, of(d)); }
  at::Tensor arange(std::int64_t n, const Shape& shape, DType d) {
    return at::arange(n, at::TensorOptions().dtype(at::kLong)).reshape(shape).to(to_scalar_type(d));
  }
  at::Tensor xavier(const Shape& shape, DType d, double gain) {
    at::Tensor t = at::empty(shape, of(d));
    if (t.numel() == 0) return t;
    std::int64_t receptive = 1;
    for (std::size_t i = 2; i < shape.size(); ++i) receptive *= shape[i];
    const std::int64_t fan_in = shape[1] * receptive, fan_out = shape[0] * receptive;
    // The same double operations as torch/nn/init.py, so `a` is bit-identical to Python's.
    const double std_dev = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
    const double a = std::sqrt(3.0) * std_dev;
    t.uniform_(-a, a, gen);
    return t;
  }
  at::Tensor full(const Shape& shape, const PyValue* fill, DType d) { return at::full(shape, scalar(*fill), of(d)); }
  at::Tensor data(const PyValue&, DType d) { return data_values(spec, to_scalar_type(d)); }
  at::Tensor file(const std::string&, const PyValue*) { return file_values(spec, to_scalar_type(spec.dtype)); }
  at::Tensor eye(std::int64_t n, DType d) { return at::eye(n, of(d)); }
};

/// Checks that strides (ignoring size-1 dims) never make two indices share an element: sorted by stride, each
/// stride must exceed the span of the smaller ones. Stride-0 dims are handled before (as expansions).
bool layout_overlaps(c10::IntArrayRef shape, c10::IntArrayRef stride) {
  std::vector<std::size_t> dims;
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (shape[d] > 1) dims.push_back(d);
  std::sort(dims.begin(), dims.end(), [&](std::size_t a, std::size_t b) { return stride[a] < stride[b]; });
  std::int64_t span = 0;  // largest offset reachable with the dims seen so far
  for (std::size_t d : dims) {
    if (stride[d] <= span) return true;
    span += stride[d] * (shape[d] - 1);
  }
  return false;
}

/// `full` restricted to index 0 along `expanded` dims, after checking it really is constant along them.
at::Tensor reduce_expanded(const TensorSpec& spec, const at::Tensor& full, c10::IntArrayRef reduced) {
  if (full.sizes() == reduced) return full;
  at::Tensor r = full;
  for (std::size_t d = 0; d < reduced.size(); ++d)
    if (reduced[d] != full.size(static_cast<std::int64_t>(d))) r = r.narrow(static_cast<std::int64_t>(d), 0, reduced[d]);
  if (!at::equal(r.expand(full.sizes()), full))
    fail(spec, "the values differ along a stride-0 (expanded) dim, which can only hold one value per position.",
         "give values that repeat along the expanded dims, or a non-zero stride.");
  return r.contiguous();
}

/// SHA-256 of a byte stream. Uses OpenSSL's libcrypto when it can be loaded (libtorch itself links it, so it is
/// present wherever opcheck runs): it uses the CPU's SHA instructions and hashes a 1 GB weight ~10x faster than
/// the portable opcheck::Sha256, which is the fallback. Both produce the same digest.
class ByteDigest {
 public:
  ByteDigest() {
    const Crypto& lib = crypto();
    if (lib.ok && (ctx_ = lib.ctx_new()) && lib.init(ctx_, lib.md, nullptr) == 1) return;
    if (ctx_) lib.ctx_free(ctx_);
    ctx_ = nullptr;
  }
  ~ByteDigest() {
    if (ctx_) crypto().ctx_free(ctx_);
  }
  ByteDigest(const ByteDigest&) = delete;
  ByteDigest& operator=(const ByteDigest&) = delete;

  void update(const void* data, std::size_t len) {
    if (ctx_) crypto().update(ctx_, data, len);
    else portable_.update(data, len);
  }
  std::string hex_digest() {
    if (!ctx_) return portable_.hex_digest();
    unsigned char md[32];
    unsigned int n = 0;
    crypto().final(ctx_, md, &n);
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < n; ++i) {
      out.push_back(hex[md[i] >> 4]);
      out.push_back(hex[md[i] & 15]);
    }
    return out;
  }

 private:
  // The EVP digest API, looked up at run time so opcheck needs no OpenSSL headers or link flags.
  struct Crypto {
    bool ok = false;
    void* (*ctx_new)() = nullptr;
    void (*ctx_free)(void*) = nullptr;
    const void* (*sha256)() = nullptr;
    int (*init)(void*, const void*, void*) = nullptr;
    int (*update)(void*, const void*, std::size_t) = nullptr;
    int (*final)(void*, unsigned char*, unsigned int*) = nullptr;
    const void* md = nullptr;  // SHA-256, fetched once: OpenSSL 3 would look EVP_sha256() up again on every init
  };
  static const Crypto& crypto() {
    static const Crypto lib = [] {
      Crypto c;
      void* h = nullptr;
      for (const char* name : {"libcrypto.so.3", "libcrypto.so"})
        if ((h = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
      if (!h) return c;
      c.ctx_new = reinterpret_cast<void* (*)()>(dlsym(h, "EVP_MD_CTX_new"));
      c.ctx_free = reinterpret_cast<void (*)(void*)>(dlsym(h, "EVP_MD_CTX_free"));
      c.sha256 = reinterpret_cast<const void* (*)()>(dlsym(h, "EVP_sha256"));
      c.init = reinterpret_cast<int (*)(void*, const void*, void*)>(dlsym(h, "EVP_DigestInit_ex"));
      c.update = reinterpret_cast<int (*)(void*, const void*, std::size_t)>(dlsym(h, "EVP_DigestUpdate"));
      c.final = reinterpret_cast<int (*)(void*, unsigned char*, unsigned int*)>(dlsym(h, "EVP_DigestFinal_ex"));
      c.ok = c.ctx_new && c.ctx_free && c.sha256 && c.init && c.update && c.final;
      if (!c.ok) return c;
      using FetchFn = const void* (*)(void*, const char*, const char*);
      if (auto fetch = reinterpret_cast<FetchFn>(dlsym(h, "EVP_MD_fetch"))) c.md = fetch(nullptr, "SHA256", nullptr);
      if (!c.md) c.md = c.sha256();
      return c;
    }();
    return lib;
  }

  void* ctx_ = nullptr;
  Sha256 portable_;
};

}  // namespace

at::ScalarType to_scalar_type(DType t) {
  switch (t) {
    case DType::Float16: return at::kHalf;
    case DType::BFloat16: return at::kBFloat16;
    case DType::Float32: return at::kFloat;
    case DType::Float64: return at::kDouble;
    case DType::Int8: return at::kChar;
    case DType::Int16: return at::kShort;
    case DType::Int32: return at::kInt;
    case DType::Int64: return at::kLong;
    case DType::UInt8: return at::kByte;
    case DType::Bool: return at::kBool;
    case DType::Complex32: return at::kComplexHalf;
    case DType::Complex64: return at::kComplexFloat;
    case DType::Complex128: return at::kComplexDouble;
  }
  throw std::runtime_error("unknown dtype");
}

at::Tensor build_tensor(const TensorSpec& spec, std::int64_t seed) {
  // Nothing to lay out: the saved tensor is the input, in its own (contiguous) shape.
  if (spec.shape_from_file) return file_values(spec, to_scalar_type(spec.dtype));
  const std::size_t rank = spec.shape.size();
  std::vector<std::int64_t> stride = spec.stride;
  if (stride.empty() && rank > 0) {
    auto contiguous = c10::contiguous_strides(spec.shape);
    stride.assign(contiguous.begin(), contiguous.end());
  }
  if (stride.size() != rank)
    fail(spec, "stride " + shape_text(stride) + " has " + std::to_string(stride.size()) + " entries for " +
                   std::to_string(rank) + " dims.", "give one stride per dim.");
  for (std::size_t d = 0; d < rank; ++d) {
    if (spec.shape[d] < 0) fail(spec, "shape has a negative size.");
    if (stride[d] < 0) fail(spec, "stride " + shape_text(stride) + " has a negative entry; libtorch tensors cannot.");
  }
  if (spec.storage_offset < 0) fail(spec, "storage_offset must not be negative.");

  // Values are generated over the logical shape with expanded (stride-0) dims reduced to 1.
  std::vector<std::int64_t> value_shape = spec.shape;
  bool expanded = false;
  for (std::size_t d = 0; d < rank; ++d)
    if (stride[d] == 0 && value_shape[d] > 1) {
      value_shape[d] = 1;
      expanded = true;
    }
  if (layout_overlaps(value_shape, stride))
    fail(spec, "stride " + shape_text(stride) + " makes distinct indices share storage; only stride 0 (expand) may.",
         "use stride 0 for broadcast dims and non-overlapping strides otherwise.");

  const at::ScalarType st = to_scalar_type(spec.dtype);
  at::Tensor values;
  try {
    // A fresh CPU generator seeded like torch.manual_seed(seed): same engine state, no cached normal sample.
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(static_cast<std::uint64_t>(seed));
    AtenValues make{spec, gen};
    if (init_recipe(spec.init).full_shape)
      values = reduce_expanded(spec, init_values(spec, spec.shape, make), value_shape);
    else
      values = init_values(spec, value_shape, make);
  } catch (const c10::Error& e) {
    fail(spec, std::string("libtorch refused to build the values: ") + e.what_without_backtrace());
  }

  bool plain = spec.storage_offset == 0 && !expanded;
  for (std::int64_t d = static_cast<std::int64_t>(rank) - 1, expect = 1; d >= 0 && plain; expect *= spec.shape[d], --d)
    plain = spec.shape[d] == 1 || stride[d] == expect;
  if (plain) return values;

  // Place the logical values into storage of the layout's extent. Slots no index reaches are zero, so the
  // storage bytes are deterministic too (an op reading them through as_strided sees zeros, not garbage).
  const std::int64_t n = values.numel();
  std::int64_t extent = spec.storage_offset;
  if (n > 0) {
    extent += 1;
    for (std::size_t d = 0; d < rank; ++d) extent += (value_shape[d] - 1) * stride[d];
  }
  const auto opts = at::TensorOptions().dtype(st);
  const bool dense = extent - spec.storage_offset == n;
  at::Tensor storage = dense ? at::empty({extent}, opts) : at::zeros({extent}, opts);
  if (dense && spec.storage_offset > 0) storage.narrow(0, 0, spec.storage_offset).zero_();
  storage.as_strided(value_shape, stride, spec.storage_offset).copy_(values);
  values.reset();
  return storage.as_strided(spec.shape, stride, spec.storage_offset);
}

std::string bound_problem(const InputBound& b, const at::Tensor& t) {
  // Repeated indices and an output that is no softmax are accepted by the op: they never make the reference raise.
  if (t.numel() == 0 || b.kind == InputBound::Kind::Distinct || b.kind == InputBound::Kind::SoftmaxOutput) return {};
  const std::string range = "[" + std::to_string(b.low) + ", " + std::to_string(b.high) + ")";
  if (b.kind == InputBound::Kind::TrueCount) {
    if (t.scalar_type() != at::kBool) return {};
    // Counted as the op sees them: every true value of the mask's view once per repeat of the broadcast.
    const std::int64_t trues = t.sum().item<std::int64_t>() * b.spread;
    if (trues <= b.limit) return {};
    return b.arg + " holds " + std::to_string(trues) + " true values" + (b.spread > 1 ? " as broadcast" : "") +
           ", more than " + std::to_string(b.limit) + " (" + b.what + ")";
  }
  if (!at::isIntegralType(t.scalar_type(), /*includeBool=*/false)) return {};
  const std::int64_t lo = t.min().item<std::int64_t>(), hi = t.max().item<std::int64_t>();
  if (lo < b.low) return b.arg + " holds " + std::to_string(lo) + ", outside " + range + ", " + b.what;
  if (hi >= b.high) return b.arg + " holds " + std::to_string(hi) + ", outside " + range + ", " + b.what;
  return {};
}

std::string tensor_digest(const at::Tensor& t) {
  at::Tensor c = t.device().is_cpu() ? t : t.cpu();
  ByteDigest h;
  if (c.numel() == 0) return h.hex_digest();
  if (c.is_contiguous()) {
    h.update(c.data_ptr(), static_cast<std::size_t>(c.numel() * c.element_size()));
    return h.hex_digest();
  }
  // A view that repeats its storage (an expand_view: a [200000, 200000] view of a [1, 200000] base) is hashed as what
  // was materialised, its storage span and its layout: the logical elements would cost time in proportion to the
  // view, not to the bytes behind it, and say nothing more.
  std::int64_t extent = 1;  // storage elements the view reaches past its offset
  for (std::int64_t d = 0; d < c.dim(); ++d) extent += (c.size(d) - 1) * c.stride(d);
  if (extent < c.numel()) {
    std::string layout = std::string("layout ") + c10::toString(c.scalar_type()) + " sizes";
    for (auto v : c.sizes()) layout += " " + std::to_string(v);
    layout += " strides";
    for (auto v : c.strides()) layout += " " + std::to_string(v);
    layout += "\n";
    h.update(layout.data(), layout.size());
    h.update(c.data_ptr(), static_cast<std::size_t>(extent * c.element_size()));
    return h.hex_digest();
  }
  // A non-contiguous tensor is hashed slice by slice along dim 0 so no full-size copy is made at once.
  const std::int64_t row_bytes = c.numel() / c.size(0) * c.element_size();
  const std::int64_t rows_per_chunk = std::max<std::int64_t>(1, (std::int64_t{64} << 20) / std::max<std::int64_t>(row_bytes, 1));
  for (std::int64_t r = 0; r < c.size(0); r += rows_per_chunk) {
    at::Tensor part = c.narrow(0, r, std::min(rows_per_chunk, c.size(0) - r)).contiguous();
    h.update(part.data_ptr(), static_cast<std::size_t>(part.numel() * part.element_size()));
  }
  return h.hex_digest();
}

}  // namespace opcheck::exec
