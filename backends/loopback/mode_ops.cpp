// What the modes stats_fp32, any_writer and shuffle_accumulate change about particular ops: each is a freedom
// PyTorch leaves a backend (CUDA takes it), applied to the call's host arguments before the CPU kernel runs.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/WrapDimUtils.h>

#include "loopback.h"

namespace opcheck::loopback {
namespace {

bool is_low_dtype(at::ScalarType t) { return t == at::kHalf || t == at::kBFloat16; }

/// The index of the argument called `name`, or -1.
int arg_index(const c10::FunctionSchema& schema, const char* name) {
  const auto& params = schema.arguments();
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].name() == name) return static_cast<int>(i);
  return -1;
}

c10::optional<at::ScalarType> tensor_dtype(const std::vector<c10::IValue>& args, int i) {
  if (i < 0 || static_cast<std::size_t>(i) >= args.size() || !args[i].isTensor() || !args[i].toTensor().defined())
    return c10::nullopt;
  return args[i].toTensor().scalar_type();
}

// ---- stats_fp32 ------------------------------------------------------------------------------------------------

/// Norm ops whose saved statistics (returns 1 and 2) CUDA gives in their accumulation type, float32 for fp16/bf16
/// input (aten/src/ATen/native/cuda/layer_norm_kernel.cu, group_norm_kernel.cu, Normalization.cu: the mean/rstd
/// tensors are allocated with the input's acc_type), and the backward ops that take them.
constexpr const char* kNormForward[] = {"aten::native_layer_norm", "aten::native_group_norm", "aten::native_batch_norm",
                                        "aten::_native_batch_norm_legit",
                                        "aten::_native_batch_norm_legit_functional",
                                        "aten::_native_batch_norm_legit_no_training"};
constexpr const char* kNormBackward[] = {"aten::native_layer_norm_backward", "aten::native_group_norm_backward",
                                         "aten::native_batch_norm_backward"};

bool named_in(const std::string& name, const char* const* begin, const char* const* end) {
  for (auto it = begin; it != end; ++it)
    if (name == *it) return true;
  return false;
}

// ---- any_writer, shuffle_accumulate ----------------------------------------------------------------------------

std::atomic<std::uint64_t> g_shuffles{0};

/// A permutation of n write positions: reversed (any_writer; the products and reductions of shuffle_accumulate), or
/// drawn anew on every call (the index accumulations of shuffle_accumulate: a device whose atomics land in another
/// order each run).
at::Tensor write_order(std::int64_t n, bool shuffle) {
  if (!shuffle) return at::arange(n - 1, -1, -1, at::kLong);
  const auto clock = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  auto gen = at::make_generator<at::CPUGeneratorImpl>(clock ^ (static_cast<std::uint64_t>(::getpid()) << 40) ^
                                                      (g_shuffles.fetch_add(1) * 0x9e3779b97f4a7c15ULL));
  return at::randperm(n, gen, at::TensorOptions().dtype(at::kLong));
}

at::Tensor& tensor_at(torch::jit::Stack& host, int i) { return host[static_cast<std::size_t>(i)].toTensor(); }

/// index_copy / index_add (self, dim, index, source): the index's entries and the source's slices along dim.
void permute_index_dim(torch::jit::Stack& host, const c10::FunctionSchema& s, bool shuffle) {
  const int idx = arg_index(s, "index"), src = arg_index(s, "source"), d = arg_index(s, "dim");
  if (idx < 0 || src < 0 || d < 0 || !host[idx].isTensor() || !host[src].isTensor()) return;
  const at::Tensor index = tensor_at(host, idx), source = tensor_at(host, src);
  if (index.dim() != 1 || index.numel() < 2 || source.dim() == 0) return;
  const auto dim = at::maybe_wrap_dim(host[d].toInt(), source.dim());
  const at::Tensor order = write_order(index.numel(), shuffle);
  host[idx] = index.index_select(0, order);
  host[src] = source.index_select(dim, order);
}

/// scatter / scatter_add (self, dim, index, src): writes to one place differ only in their position along dim.
void permute_scatter(torch::jit::Stack& host, const c10::FunctionSchema& s, bool shuffle) {
  const int idx = arg_index(s, "index"), src = arg_index(s, "src"), d = arg_index(s, "dim");
  if (idx < 0 || src < 0 || d < 0 || !host[src].isTensor()) return;
  const at::Tensor index = tensor_at(host, idx);
  at::Tensor source = tensor_at(host, src);
  if (index.dim() == 0 || index.numel() < 2) return;
  const auto dim = at::maybe_wrap_dim(host[d].toInt(), index.dim());
  for (std::int64_t k = 0; k < index.dim(); ++k) source = source.narrow(k, 0, index.size(k));  // what is read
  const at::Tensor order = write_order(index.size(dim), shuffle);
  host[idx] = index.index_select(dim, order);
  host[src] = source.index_select(dim, order);
}

/// put_ (self, index, source, accumulate): the flattened index and source.
void permute_put(torch::jit::Stack& host, const c10::FunctionSchema& s, bool shuffle) {
  const int idx = arg_index(s, "index"), src = arg_index(s, "source");
  if (idx < 0 || src < 0) return;
  const at::Tensor index = tensor_at(host, idx).reshape(-1), source = tensor_at(host, src).reshape(-1);
  if (index.numel() < 2 || source.numel() != index.numel()) return;
  const at::Tensor order = write_order(index.numel(), shuffle);
  host[idx] = index.index_select(0, order);
  host[src] = source.index_select(0, order);
}

/// index_put (self, indices, values, accumulate) with integer indices: they broadcast to one shape whose positions
/// are the writes; flattened to one dimension they are permuted with the values' matching dimension.
void permute_index_put(torch::jit::Stack& host, const c10::FunctionSchema& s, bool shuffle) {
  const int ind = arg_index(s, "indices"), val = arg_index(s, "values"), self = arg_index(s, "self");
  if (ind < 0 || val < 0 || self < 0 || !host[ind].isOptionalTensorList()) return;
  std::vector<c10::optional<at::Tensor>> indices = host[ind].toOptionalTensorVector();
  std::vector<at::Tensor> defined;
  int first = -1, last = -1;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    if (!indices[k] || !indices[k]->defined()) continue;
    if (!at::isIntegralType(indices[k]->scalar_type(), /*includeBool=*/false)) return;  // a mask never repeats
    defined.push_back(*indices[k]);
    if (first < 0) first = static_cast<int>(k);
    last = static_cast<int>(k);
  }
  if (defined.empty()) return;
  const std::vector<at::Tensor> broadcast = at::broadcast_tensors(defined);
  const std::int64_t n = broadcast.front().numel();
  if (n < 2) return;
  // self[indices] is (dims before) + the broadcast index shape + (dims after); with the index dims flattened to one
  // of size n at `at_dim`, the values are permuted along it.
  const bool adjacent = last - first + 1 == static_cast<int>(defined.size());
  const at::Tensor& target = tensor_at(host, self);
  std::vector<std::int64_t> before, after;
  for (std::int64_t k = 0; k < target.dim(); ++k) {
    const bool indexed = k < static_cast<std::int64_t>(indices.size()) && indices[k] && indices[k]->defined();
    if (!indexed) (adjacent && k < first ? before : after).push_back(target.size(k));
  }
  std::vector<std::int64_t> grid = before, flat = before;
  for (auto size : broadcast.front().sizes()) grid.push_back(size);
  flat.push_back(n);
  grid.insert(grid.end(), after.begin(), after.end());
  flat.insert(flat.end(), after.begin(), after.end());
  const auto at_dim = static_cast<std::int64_t>(before.size());
  const at::Tensor values = tensor_at(host, val).expand(grid).reshape(flat);
  const at::Tensor order = write_order(n, shuffle);
  std::size_t next = 0;
  c10::List<c10::optional<at::Tensor>> permuted;
  for (auto& t : indices)
    permuted.push_back(t && t->defined() ? c10::optional<at::Tensor>(broadcast[next++].reshape(-1).index_select(0, order))
                                         : t);
  host[ind] = permuted;
  host[val] = values.index_select(at_dim, order);
}

/// Products and reductions over more elements than this run in the CPU's order: reordering copies their operands on
/// every call, which for a language model's 1 GB output projection costs more than the product itself.
constexpr std::int64_t kMaxReorderedElements = std::int64_t{1} << 26;

/// mm, bmm, addmm, addbmm, baddbmm (the factors `left` [..., n, k] and `right` [..., k, m]): each element sums the
/// products along k, which are reversed together in both factors: another order, the same on every call, as a BLAS
/// of another blocking adds them (their runs stay bitwise equal, as CUDA's are).
void permute_inner(torch::jit::Stack& host, const c10::FunctionSchema& s, const char* left, const char* right) {
  const int l = arg_index(s, left), r = arg_index(s, right);
  if (l < 0 || r < 0 || !host[l].isTensor() || !host[r].isTensor()) return;
  const at::Tensor a = tensor_at(host, l), b = tensor_at(host, r);
  if (a.dim() < 2 || b.dim() < 2 || a.size(-1) < 2 || b.size(-2) != a.size(-1)) return;
  if (a.numel() + b.numel() > kMaxReorderedElements) return;
  const at::Tensor order = write_order(a.size(-1), false);
  host[l] = a.index_select(a.dim() - 1, order);
  host[r] = b.index_select(b.dim() - 2, order);
}

/// sum and mean (self, dim): the elements along each reduced dim (every dim when none is given) reversed, the same on
/// every call, as a reduction tree of another shape adds them.
void permute_reduced(torch::jit::Stack& host, const c10::FunctionSchema& s) {
  const int self = arg_index(s, "self"), d = arg_index(s, "dim");
  if (self < 0 || !host[self].isTensor()) return;
  at::Tensor x = tensor_at(host, self);
  if (x.numel() > kMaxReorderedElements) return;
  std::vector<std::int64_t> dims;
  if (d >= 0 && host[d].isIntList()) dims = host[d].toIntVector();
  if (dims.empty())
    for (std::int64_t k = 0; k < x.dim(); ++k) dims.push_back(k);
  for (const std::int64_t dim : dims) {
    const auto k = at::maybe_wrap_dim(dim, x.dim());
    if (x.size(k) >= 2) x = x.index_select(k, write_order(x.size(k), false));
  }
  host[self] = x;
}

bool accumulates(const torch::jit::Stack& host, const c10::FunctionSchema& s) {
  const int a = arg_index(s, "accumulate");
  return a >= 0 && host[a].isBool() && host[a].toBool();
}

/// Sort-like ops (topk, sort, max/min/kthvalue/mode with a dim): ties broken the other way by running on the input
/// reversed along dim and mapping the returned indices back.
std::function<void(torch::jit::Stack&)> flip_ties(torch::jit::Stack& host, const c10::FunctionSchema& s) {
  const int self = arg_index(s, "self"), d = arg_index(s, "dim");
  if (self < 0 || d < 0 || !host[self].isTensor() || !host[d].isInt()) return {};
  const int sorted = arg_index(s, "sorted");
  if (sorted >= 0 && host[sorted].isBool() && !host[sorted].toBool()) return {};  // unsorted: the order is free
  const at::Tensor input = tensor_at(host, self);
  if (input.dim() == 0) return {};
  const auto dim = at::maybe_wrap_dim(host[d].toInt(), input.dim());
  const std::int64_t n = input.size(dim);
  if (n < 2) return {};
  host[self] = input.flip(dim);
  // In place: an out= overload returns its `indices` argument, whose host copy is what is written back.
  return [n](torch::jit::Stack& returns) {
    if (returns.size() >= 2 && returns[1].isTensor()) returns[1].toTensor().neg_().add_(n - 1);
  };
}

}  // namespace

bool stats_fp32_dtypes(const c10::OperatorHandle& op, const std::vector<c10::IValue>& args,
                       std::vector<c10::optional<at::ScalarType>>& out) {
  if (!mode_on(Mode::StatsFp32)) return false;
  const auto& s = op.schema();
  const bool forward = named_in(s.name(), std::begin(kNormForward), std::end(kNormForward));
  const bool backward = named_in(s.name(), std::begin(kNormBackward), std::end(kNormBackward));
  if (!forward && !backward) return false;
  const auto input = tensor_dtype(args, arg_index(s, "input"));
  if (!input || !is_low_dtype(*input)) return false;
  out.assign(s.returns().size(), c10::nullopt);
  if (out.empty()) return false;
  out[0] = input;
  if (forward) {
    for (std::size_t j = 1; j < out.size() && j < 3; ++j) out[j] = at::kFloat;
    // _native_batch_norm_legit_functional returns the updated running statistics in their own dtype.
    if (out.size() > 3) out[3] = tensor_dtype(args, arg_index(s, "running_mean")).value_or(*input);
    if (out.size() > 4) out[4] = tensor_dtype(args, arg_index(s, "running_var")).value_or(*input);
  } else {
    const auto weight = tensor_dtype(args, arg_index(s, "weight")).value_or(*input);
    for (std::size_t j = 1; j < out.size(); ++j) out[j] = weight;
  }
  return true;
}

namespace {

std::function<void(torch::jit::Stack&)> reorder(const c10::OperatorHandle& op, torch::jit::Stack& host,
                                                bool any_writer, bool shuffle) {
  const auto& s = op.schema();
  const std::string& name = s.name();
  const std::string& overload = s.overload_name();
  if (name == "aten::index_put_" || name == "aten::index_put" || name == "aten::_index_put_impl_" ||
      name == "aten::_index_put_impl") {
    const bool sum = accumulates(host, s);
    if (sum ? shuffle : any_writer) permute_index_put(host, s, /*shuffle=*/sum);
  } else if (any_writer && (name == "aten::index_copy_" || name == "aten::index_copy")) {
    permute_index_dim(host, s, false);
  } else if (shuffle && (name == "aten::index_add_" || name == "aten::index_add")) {
    permute_index_dim(host, s, true);
  } else if (any_writer && (name == "aten::scatter_" || name == "aten::scatter") &&
             (overload == "src" || overload == "src_out")) {
    permute_scatter(host, s, false);
  } else if (shuffle && (name == "aten::scatter_add_" || name == "aten::scatter_add" ||
                         name == "aten::scatter_reduce_" || name == "aten::scatter_reduce")) {
    permute_scatter(host, s, true);  // scatter_reduce's every reduction: amax and amin are the same in any order
  } else if (name == "aten::put_" || name == "aten::put") {
    const bool sum = accumulates(host, s);
    if (sum ? shuffle : any_writer) permute_put(host, s, /*shuffle=*/sum);
  } else if (shuffle && (name == "aten::mm" || name == "aten::bmm")) {
    permute_inner(host, s, "self", "mat2");
  } else if (shuffle && (name == "aten::addmm" || name == "aten::addmm_")) {
    permute_inner(host, s, "mat1", "mat2");
  } else if (shuffle && (name == "aten::baddbmm" || name == "aten::baddbmm_" || name == "aten::addbmm" ||
                         name == "aten::addbmm_")) {
    permute_inner(host, s, "batch1", "batch2");
  } else if (shuffle && (name == "aten::sum" || name == "aten::mean") && s.returns().size() == 1) {
    permute_reduced(host, s);
  } else if (shuffle && name == "aten::embedding_dense_backward") {
    const int g = arg_index(s, "grad_output"), i = arg_index(s, "indices");
    if (g >= 0 && i >= 0 && tensor_at(host, i).numel() >= 2) {
      const at::Tensor indices = tensor_at(host, i).reshape(-1);
      const at::Tensor order = write_order(indices.numel(), true);
      host[g] = tensor_at(host, g).reshape({indices.numel(), -1}).index_select(0, order);
      host[i] = indices.index_select(0, order);
      // As CUDA's kernel does: the sums in float32 (in the shuffled order), rounded once to the gradient's dtype.
      const at::ScalarType given = tensor_at(host, g).scalar_type();
      if (given == at::kHalf || given == at::kBFloat16) {
        host[g] = tensor_at(host, g).to(at::kFloat);
        return [given](torch::jit::Stack& out) {
          if (!out.empty() && out[0].isTensor()) out[0] = out[0].toTensor().to(given);
        };
      }
    }
  } else if (any_writer && (name == "aten::topk" || name == "aten::sort" || name == "aten::kthvalue" ||
                            name == "aten::mode" || ((name == "aten::max" || name == "aten::min") &&
                                                     overload.rfind("dim", 0) == 0))) {
    // Every overload with an integer dim (the out= ones included: structured ops reach a device through them).
    return flip_ties(host, s);
  }
  return {};
}

}  // namespace

std::function<void(torch::jit::Stack&)> reorder_writes(const c10::OperatorHandle& op, torch::jit::Stack& host) {
  const bool any_writer = mode_on(Mode::AnyWriter), shuffle = mode_on(Mode::ShuffleAccumulate);
  if (!any_writer && !shuffle) return {};
  const torch::jit::Stack given = host;
  try {
    return reorder(op, host, any_writer, shuffle);
  } catch (const c10::Error&) {
    host = given;  // arguments the op refuses: its CPU kernel says why, in its own words
    return {};
  }
}

}  // namespace opcheck::loopback
