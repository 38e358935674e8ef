#include "judge/backend_freedoms_table.h"
#include "judge/op_categories.h"

namespace opcheck {

// Normalisation statistics: PyTorch's CUDA kernels keep them in the accumulation type (at::acc_type: float32 for
// float16 and bfloat16 input), its CPU kernels in the input's dtype. The backward ops take them as inputs, in either
// dtype.
const std::vector<WidenedOutputRule>& widened_output_rules() {
  static const std::vector<WidenedOutputRule> rules = {
    {"aten::native_layer_norm", {1, 2},
     "native_layer_norm's mean and rstd: PyTorch's CUDA kernel returns them in its accumulation type (float32 for "
     "float16/bfloat16 input, aten/src/ATen/native/cuda/layer_norm_kernel.cu), its CPU kernel in the input's dtype"},
    {"aten::native_group_norm", {1, 2},
     "native_group_norm's mean and rstd: PyTorch's CUDA kernel returns them in its accumulation type (float32 for "
     "float16/bfloat16 input, aten/src/ATen/native/cuda/group_norm_kernel.cu)"},
    {"aten::native_batch_norm", {1, 2},
     "native_batch_norm's save_mean and save_invstd: PyTorch's CUDA kernel keeps them in its accumulation type "
     "(float32 for float16/bfloat16 input, aten/src/ATen/native/cuda/Normalization.cu)"},
    {"aten::_native_batch_norm_legit", {1, 2},
     "_native_batch_norm_legit's save_mean and save_invstd: float32 for float16/bfloat16 input on CUDA, as "
     "native_batch_norm's"},
    {"aten::_native_batch_norm_legit_no_training", {1, 2},
     "_native_batch_norm_legit_no_training's save_mean and save_invstd: float32 for float16/bfloat16 input on CUDA, as "
     "native_batch_norm's"},
    {"aten::_native_batch_norm_legit_functional", {1, 2},
     "_native_batch_norm_legit_functional's save_mean and save_invstd: float32 for float16/bfloat16 input on CUDA, "
     "as native_batch_norm's"},
  };
  return rules;
}

// torch.use_deterministic_algorithms lists these as "normally-nondeterministic" on CUDA (atomic accumulation): a
// backend that accumulates in another order rounds differently from run to run.
const std::vector<NondeterministicRule>& nondeterministic_rules() {
  static const std::vector<NondeterministicRule> rules = {
    {"aten::index_add", nullptr, "torch.index_add() when called on CUDA tensor"},
    {"aten::index_add_", nullptr, "torch.index_add() when called on CUDA tensor"},
    {"aten::scatter_add", nullptr, "torch.Tensor.scatter_add_() when called on CUDA tensor"},
    {"aten::scatter_add_", nullptr, "torch.Tensor.scatter_add_() when called on CUDA tensor"},
    {"aten::scatter_reduce", nullptr, "torch.Tensor.scatter_reduce() when called on CUDA tensor"},
    {"aten::scatter_reduce_", nullptr, "torch.Tensor.scatter_reduce() when called on CUDA tensor"},
    {"aten::index_reduce", nullptr, "torch.Tensor.index_reduce() when called on CUDA tensor"},
    {"aten::index_reduce_", nullptr, "torch.Tensor.index_reduce() when called on CUDA tensor"},
    {"aten::index_put", "accumulate", "torch.Tensor.index_put() with accumulate=True"},
    {"aten::index_put_", "accumulate", "torch.Tensor.index_put() with accumulate=True"},
    {"aten::_index_put_impl_", "accumulate", "torch.Tensor.index_put() with accumulate=True"},
    {"aten::put", "accumulate", "torch.Tensor.put_() with accumulate=True"},
    {"aten::put_", "accumulate", "torch.Tensor.put_() with accumulate=True"},
    {"aten::embedding_dense_backward", nullptr, "torch.nn.functional.embedding() backward when called on CUDA tensor"},
    {"aten::embedding_backward", nullptr, "torch.nn.functional.embedding() backward when called on CUDA tensor"},
    {"aten::_embedding_bag_backward", nullptr, "torch.nn.EmbeddingBag backward when called on CUDA tensor"},
    {"aten::_embedding_bag_dense_backward", nullptr, "torch.nn.EmbeddingBag backward when called on CUDA tensor"},
    {"aten::index_select_backward", nullptr, "torch.index_select() backward when called on CUDA tensor"},
    {"aten::upsample_linear1d_backward", nullptr, "torch.nn.functional.interpolate() backward (linear)"},
    {"aten::upsample_bilinear2d_backward", nullptr, "torch.nn.functional.interpolate() backward (bilinear)"},
    {"aten::upsample_bicubic2d_backward", nullptr, "torch.nn.functional.interpolate() backward (bicubic)"},
    {"aten::upsample_trilinear3d_backward", nullptr, "torch.nn.functional.interpolate() backward (trilinear)"},
    {"aten::_adaptive_avg_pool2d_backward", nullptr, "torch.nn.AdaptiveAvgPool2d backward on CUDA"},
    {"aten::_adaptive_avg_pool3d_backward", nullptr, "torch.nn.AdaptiveAvgPool3d backward on CUDA"},
    {"aten::avg_pool3d_backward", nullptr, "torch.nn.AvgPool3d backward on CUDA"},
    {"aten::max_pool3d_with_indices_backward", nullptr, "torch.nn.MaxPool3d backward on CUDA"},
    {"aten::adaptive_max_pool2d_backward", nullptr, "torch.nn.AdaptiveMaxPool2d backward on CUDA"},
    {"aten::grid_sampler_2d_backward", nullptr, "torch.nn.functional.grid_sample() backward on CUDA"},
    {"aten::grid_sampler_3d_backward", nullptr, "torch.nn.functional.grid_sample() backward on CUDA"},
    {"aten::_ctc_loss_backward", nullptr, "torch.nn.CTCLoss backward on CUDA"},
    {"aten::reflection_pad1d_backward", nullptr, "torch.nn.ReflectionPad1d backward on CUDA"},
    {"aten::reflection_pad2d_backward", nullptr, "torch.nn.ReflectionPad2d backward on CUDA"},
    {"aten::reflection_pad3d_backward", nullptr, "torch.nn.ReflectionPad3d backward on CUDA"},
    {"aten::replication_pad1d_backward", nullptr, "torch.nn.ReplicationPad1d backward on CUDA"},
    {"aten::replication_pad2d_backward", nullptr, "torch.nn.ReplicationPad2d backward on CUDA"},
    {"aten::replication_pad3d_backward", nullptr, "torch.nn.ReplicationPad3d backward on CUDA"},
    {"aten::histc", nullptr, "torch.histc() when called on CUDA tensor"},
    {"aten::bincount", nullptr, "torch.bincount() when called on CUDA tensor with weights"},
    {"aten::cumsum", nullptr, "torch.cumsum() when called on CUDA tensor (floating point)"},
    // Not in PyTorch's list: its CPU kernel with the gelsy driver (the CPU's default) passes LAPACK a pivot array
    // it never initialised, so its result depends on stale memory (6 of the 36 fp32 OpInfo samples differed
    // between runs on this machine, none with torch.utils.deterministic.fill_uninitialized_memory).
    {"aten::linalg_lstsq", "driver=gelsy",
     "PyTorch's CPU kernel of linalg_lstsq with driver gelsy (the CPU's default) hands LAPACK's ?gelsy a pivot array "
     "(jpvt) it never initialised, whose entries choose the columns kept first: its last bits depend on stale memory",
     false},
  };
  return rules;
}

std::string op_without_overload(const std::string& resolved_op) { return resolved_op.substr(0, resolved_op.find('.')); }

// Their docs: "If index contains duplicate entries, multiple elements from tensor will be copied to the same index of
// self. The result is nondeterministic since it depends on which copy occurs last" (index_copy_), and the same for
// index_put_ without accumulate, scatter_ without reduce and put_ without accumulate. The exec layer's judge
// (exec/backend_freedoms.cpp) reads each op's writes from its arguments; the accumulating forms are left out there.
const std::vector<RepeatedWriteRule>& repeated_write_rules() {
  static const std::vector<RepeatedWriteRule> rules = {
    {"aten::index_copy", "torch.Tensor.index_copy_: with repeated indices the result depends on which copy is last"},
    {"aten::index_copy_", "torch.Tensor.index_copy_: with repeated indices the result depends on which copy is last"},
    {"aten::index_put", "torch.Tensor.index_put_ (accumulate=False): undefined when indices contain duplicates"},
    {"aten::index_put_", "torch.Tensor.index_put_ (accumulate=False): undefined when indices contain duplicates"},
    {"aten::_index_put_impl_", "torch.Tensor.index_put_ (accumulate=False): undefined when indices contain duplicates"},
    {"aten::scatter", "torch.Tensor.scatter_ (no reduce): the order of writes to one position is undefined"},
    {"aten::scatter_", "torch.Tensor.scatter_ (no reduce): the order of writes to one position is undefined"},
    {"aten::put", "torch.Tensor.put_ (accumulate=False): undefined when index contains duplicates"},
    {"aten::put_", "torch.Tensor.put_ (accumulate=False): undefined when index contains duplicates"},
  };
  return rules;
}

bool leaves_repeated_writes_undefined(const std::string& resolved_op) {
  const std::string op = op_without_overload(resolved_op);
  for (const RepeatedWriteRule& r : repeated_write_rules())
    if (op == r.op) return true;
  return false;
}

// PyTorch's own tests compare these index outputs by the values they select, since the order of ties is unspecified
// (torch.topk, torch.sort without stable=True, torch.max/min/median/nanmedian/kthvalue/mode with a dim: "the index
// of the first/any ... found" is not guaranteed across backends; argmax/argmin "the first occurrence" only on CPU).
const std::vector<TiedIndexRule>& tied_index_rules() {
  static const std::vector<TiedIndexRule> rules = {
    {"aten::topk", 1, false, "torch.topk: the order of equal elements is unspecified"},
    {"aten::sort", 1, false, "torch.sort without stable=True: the order of equal elements is unspecified"},
    {"aten::max.dim", 1, true, "torch.max(dim): which index of a tied maximum is returned is unspecified"},
    {"aten::min.dim", 1, true, "torch.min(dim): which index of a tied minimum is returned is unspecified"},
    {"aten::median.dim", 1, true, "torch.median(dim): which index of a tied median is returned is unspecified"},
    {"aten::nanmedian.dim", 1, true, "torch.nanmedian(dim): which index of a tied median is returned is unspecified"},
    {"aten::kthvalue", 1, true, "torch.kthvalue: which index of a tied value is returned is unspecified"},
    {"aten::mode", 1, true, "torch.mode: which index of the mode is returned is unspecified"},
    {"aten::argmax", 0, true, "torch.argmax: the first occurrence of ties is a CPU behaviour, not a contract"},
    {"aten::argmin", 0, true, "torch.argmin: the first occurrence of ties is a CPU behaviour, not a contract"},
  };
  return rules;
}

// torch.unique's docs: "sorted (bool) - Whether to sort the unique elements in ascending order before returning as
// output"; without it the order is the backend's (its OpInfo entry skips test_compare_cpu: "Output order is undefined
// when sorted=False").
const std::vector<UnorderedUniqueRule>& unordered_unique_rules() {
  static const std::vector<UnorderedUniqueRule> rules = {
    {"aten::_unique2", "torch.unique(sorted=False): the order of the unique values is undefined"},
    {"aten::unique_dim", "torch.unique(dim=..., sorted=False): the order of the unique slices is undefined"},
  };
  return rules;
}

const UnorderedUniqueRule* unordered_unique_rule(const std::string& resolved_op) {
  const std::string op = op_without_overload(resolved_op);
  for (const UnorderedUniqueRule& r : unordered_unique_rules())
    if (op == r.op) return &r;
  return nullptr;
}

const std::vector<std::string>& uninitialised_output_ops() {
  static const std::vector<std::string> ops = ops_in(kUninitialisedOutput);  // the one table (judge/op_categories)
  return ops;
}

// torch.Tensor.resize_'s docs: "If the number of elements is larger than the current storage size, then the
// underlying storage is resized to fit the new number of elements. ... the new elements are uninitialized" (its
// storage grows with the old bytes kept, at::native::resize_bytes_cpu); resize_as_ and the resize_output that out=
// kernels call grow through the same code.
const std::vector<UninitialisedTailRule>& uninitialised_tail_rules() {
  static const std::vector<UninitialisedTailRule> rules = {
    {"aten::resize_", "torch.Tensor.resize_: a tensor that grows keeps its old elements in storage order, its new "
                      "elements are uninitialized"},
    {"aten::resize_as_", "torch.Tensor.resize_as_: resizes as resize_ does, its new elements uninitialized"},
    {"aten::_resize_output_", "at::native::resize_output: resizes as resize_ does, its new elements uninitialized"},
  };
  return rules;
}

// Ops whose output elements are sums of terms that a backend may add in any order (and, for the index and scatter
// accumulations, in another order on every run): the accumulation bound of the float64 judge applies to them. The
// terms of each element are counted by running the op on ones, so an op whose element takes one term (index_put
// without accumulate, scatter_reduce with amax) is widened by nothing.
const std::vector<AccumulationRule>& accumulation_rules() {
  constexpr AccumulatesIn OutputDtype = AccumulatesIn::OutputDtype;
  constexpr AccumulatesIn Float32AtLeast = AccumulatesIn::Float32AtLeast;
  static const std::vector<AccumulationRule> rules = {
    {"aten::index_add", OutputDtype, false,
     "index_add: CUDA adds each source slice with atomicAdd in the output's dtype (aten/src/ATen/native/cuda/"
     "Indexing.cu), in an order that changes from run to run; the CPU adds in index order"},
    {"aten::index_add_", OutputDtype, false, "index_add_: atomic adds in the output's dtype on CUDA, as index_add"},
    {"aten::index_put", OutputDtype, false,
     "index_put with accumulate=True: CUDA sorts the indices and adds the values of each position in an order of its "
     "own (indexing_backward_kernel); without accumulate a position takes one value"},
    {"aten::index_put_", OutputDtype, false, "index_put_ with accumulate=True: as index_put"},
    {"aten::_index_put_impl_", OutputDtype, false, "_index_put_impl_ with accumulate=True: as index_put"},
    {"aten::_index_put_impl", OutputDtype, false, "_index_put_impl with accumulate=True: as index_put"},
    {"aten::put", OutputDtype, false, "put with accumulate=True: atomic adds in the output's dtype on CUDA"},
    {"aten::put_", OutputDtype, false, "put_ with accumulate=True: atomic adds in the output's dtype on CUDA"},
    {"aten::scatter_add", OutputDtype, false,
     "scatter_add: atomic adds in the output's dtype on CUDA (aten/src/ATen/native/cuda/ScatterGatherKernel.cu)"},
    {"aten::scatter_add_", OutputDtype, false, "scatter_add_: atomic adds in the output's dtype on CUDA"},
    {"aten::scatter_reduce", OutputDtype, false,
     "scatter_reduce with reduce='sum': atomic adds in the output's dtype on CUDA (ScatterGatherKernel.cu); amax and "
     "amin take one term per element", "reduce=sum"},
    {"aten::scatter_reduce_", OutputDtype, false, "scatter_reduce_ with reduce='sum': as scatter_reduce", "reduce=sum"},
    {"aten::scatter_reduce", OutputDtype, true,
     "scatter_reduce with reduce='mean': CUDA adds the terms with atomics (self's element among them with "
     "include_self) and divides by their count, which the run with reduce='sum' on ones gives", "reduce=mean",
     "reduce=sum"},
    {"aten::scatter_reduce_", OutputDtype, true, "scatter_reduce_ with reduce='mean': as scatter_reduce", "reduce=mean",
     "reduce=sum"},
    {"aten::scatter_reduce", OutputDtype, false,
     "scatter_reduce with reduce='prod': CUDA multiplies the terms with atomics (gpuAtomicMul) in the output's dtype, "
     "in an order of its own; their count is the run with reduce='sum' on ones", "reduce=prod", "reduce=sum", true},
    {"aten::scatter_reduce_", OutputDtype, false, "scatter_reduce_ with reduce='prod': as scatter_reduce",
     "reduce=prod", "reduce=sum", true},
    {"aten::embedding_dense_backward", OutputDtype, true,
     "embedding_dense_backward with scale_grad_by_freq: each row's sum of gradient rows divided by the count of its "
     "index (the run without scale_grad_by_freq on ones gives it), summed in an order of CUDA's own",
     "scale_grad_by_freq", "scale_grad_by_freq=False"},
    {"aten::embedding_dense_backward", OutputDtype, false,
     "embedding_dense_backward: CUDA sums the gradient rows of each index in an order of its own "
     "(embedding_backward_cuda_kernel), the CPU with index_add in the gradient's dtype"},
    {"aten::embedding_backward", OutputDtype, true, "embedding_backward with scale_grad_by_freq: as "
     "embedding_dense_backward", "scale_grad_by_freq", "scale_grad_by_freq=False"},
    {"aten::embedding_backward", OutputDtype, false, "embedding_backward: embedding_dense_backward for a dense weight"},
    {"aten::sum", Float32AtLeast, false,
     "sum: float16/bfloat16 accumulate in float32 (at::opmath_type) on the CPU and CUDA, in a reduction tree whose "
     "shape is the backend's"},
    {"aten::nansum", Float32AtLeast, false, "nansum: a reduction in float32 at least, as sum"},
    {"aten::mean", Float32AtLeast, true, "mean: the sum of a reduction in float32 at least, as sum, over its count"},
    {"aten::cumsum", Float32AtLeast, false,
     "cumsum: a scan in float32 at least; CUDA's scan adds in blocks, in another order than the CPU's loop"},
    {"aten::mm", Float32AtLeast, false,
     "mm: BLAS products of float16/bfloat16 accumulate in float32, in a blocking (split-K) of the library's choice"},
    {"aten::bmm", Float32AtLeast, false, "bmm: a BLAS product, as mm"},
    {"aten::addmm", Float32AtLeast, false, "addmm: a BLAS product, as mm"},
    {"aten::addbmm", Float32AtLeast, false, "addbmm: BLAS products summed over the batch, as mm"},
    {"aten::baddbmm", Float32AtLeast, false, "baddbmm: a BLAS product, as mm"},
    {"aten::matmul", Float32AtLeast, false, "matmul: a BLAS product, as mm"},
    {"aten::linear", Float32AtLeast, false, "linear: a BLAS product, as mm"},
    {"aten::mv", Float32AtLeast, false, "mv: a BLAS product, as mm"},
    {"aten::addmv", Float32AtLeast, false, "addmv: a BLAS product, as mm"},
    {"aten::dot", Float32AtLeast, false, "dot: a BLAS reduction, as mm"},
  };
  return rules;
}

const AccumulationRule* accumulation_rule(const std::string& resolved_op) {
  const std::string op = op_without_overload(resolved_op);
  for (const AccumulationRule& r : accumulation_rules())
    if (op == r.op) return &r;
  return nullptr;
}

const UninitialisedTailRule* uninitialised_tail_rule(const std::string& resolved_op) {
  const std::string op = op_without_overload(resolved_op);
  for (const UninitialisedTailRule& r : uninitialised_tail_rules())
    if (op == r.op) return &r;
  return nullptr;
}

const TiedIndexRule* tied_index_rule(const std::string& resolved_op) {
  const std::string op = op_without_overload(resolved_op);
  for (const TiedIndexRule& r : tied_index_rules())
    if (resolved_op == r.op || (std::string(r.op).find('.') == std::string::npos && op == r.op)) return &r;
  return nullptr;
}

}  // namespace opcheck
