// Tensors between the host and the device: copies that keep their layout, outputs moved to the host and compared
// bit for bit, where a run's outputs must be, and whether the device's copies change values.

#include "exec/case_run.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "exec/backend_freedoms.h"
#include "exec/compare.h"

namespace opcheck::exec {

namespace {

/// The first defined tensor in `v` (tensors, lists, tuples) that is not on a device of type `want`: its path
/// ("output[1]") in `where` and its device in `got`.
bool leaf_elsewhere(const c10::IValue& v, at::DeviceType want, const std::string& path, std::string& where,
                    at::Device& got) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (!t.defined() || t.device().type() == want) return false;
    where = path;
    got = t.device();
    return true;
  }
  if (!v.isTuple() && !v.isList()) return false;
  const std::vector<c10::IValue> items = v.isTuple() ? v.toTupleRef().elements().vec() : v.toListRef().vec();
  for (std::size_t i = 0; i < items.size(); ++i)
    if (leaf_elsewhere(items[i], want, path + "[" + std::to_string(i) + "]", where, got)) return true;
  return false;
}

}  // namespace

/// The output of a run moved to the CPU, with what failed if it could not be.
bool outputs_to_host(RunOutcome& o, std::string& error) {
  try {
    o.output = to_host(o.output);
    for (auto& t : o.written) t = host_copy(t);
    return true;
  } catch (...) {
    error = op_error_of(std::current_exception()).text();
    return false;
  }
}

at::Tensor copy_with_layout(const at::Tensor& t, const at::Device& device) {
  if (t.numel() == 0) return at::empty_strided(t.sizes(), t.strides(), t.options().device(device));
  if (t.is_contiguous() && t.storage_offset() == 0) {
    at::Tensor out = at::empty(t.sizes(), t.options().device(device));
    out.copy_(t);
    return out;
  }
  std::int64_t extent = t.storage_offset() + 1;
  for (std::int64_t d = 0; d < t.dim(); ++d) extent += (t.size(d) - 1) * t.stride(d);
  const at::Tensor span = t.as_strided({extent}, {1}, 0);
  at::Tensor base = at::empty({extent}, t.options().device(device));
  base.copy_(span);
  return base.as_strided(t.sizes(), t.strides(), t.storage_offset());
}

at::Tensor host_copy(const at::Tensor& t) {
  if (!t.defined() || t.device().is_cpu()) return t;
  if (t.layout() != at::kStrided || t.is_non_overlapping_and_dense() || t.is_conj() || t.is_neg()) return t.cpu();
  return copy_with_layout(t, at::kCPU);
}

c10::IValue to_host(const c10::IValue& v) {
  if (v.isTensor()) return host_copy(v.toTensor());
  if (v.isTensorList()) {
    std::vector<at::Tensor> out;
    for (const auto& t : v.toTensorVector()) out.push_back(host_copy(t));
    return out;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> out;
    for (const auto& it : v.toTupleRef().elements()) out.push_back(to_host(it));
    return c10::ivalue::Tuple::create(std::move(out));
  }
  if (v.isList()) {
    c10::impl::GenericList out(v.toList().elementType());
    for (const auto& it : v.toListRef()) out.push_back(to_host(it));
    return out;
  }
  return v;
}

bool bitwise_equal(const c10::IValue& a, const c10::IValue& b, std::string& where, const std::string& path) {
  if (a.isTensor() && b.isTensor()) {
    if (!a.toTensor().defined() || !b.toTensor().defined()) {
      if (a.toTensor().defined() == b.toTensor().defined()) return true;
      where = path + ": an undefined tensor in one run, a defined one in another";
      return false;
    }
    at::Tensor x = a.toTensor().cpu(), y = b.toTensor().cpu();
    if (x.layout() != y.layout()) {
      where = path + ": layout differs between runs";
      return false;
    }
    // A sparse output: its values (how it stores them may vary run to run).
    x = dense_values(x).contiguous();
    y = dense_values(y).contiguous();
    if (x.scalar_type() != y.scalar_type() || x.sizes() != y.sizes()) {
      where = path + ": dtype or shape differs between runs";
      return false;
    }
    const auto n = static_cast<std::size_t>(x.numel()) * x.element_size();
    if (n && std::memcmp(x.data_ptr(), y.data_ptr(), n) != 0) {
      const std::int64_t differing = x.reshape({-1}).view(at::kByte).ne(y.reshape({-1}).view(at::kByte)).sum().item<std::int64_t>();
      where = path + ": " + std::to_string(differing) + " of " + std::to_string(n) + " bytes differ";
      return false;
    }
    return true;
  }
  if (a.isTensorList() && b.isTensorList()) {
    const auto x = a.toTensorVector(), y = b.toTensorVector();
    if (x.size() != y.size()) {
      where = path + ": list length differs between runs";
      return false;
    }
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!bitwise_equal(x[i], y[i], where, path + "[" + std::to_string(i) + "]")) return false;
    return true;
  }
  if (a.isTuple() && b.isTuple()) {
    const auto& x = a.toTupleRef().elements();
    const auto& y = b.toTupleRef().elements();
    if (x.size() != y.size()) {
      where = path + ": tuple length differs between runs";
      return false;
    }
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!bitwise_equal(x[i], y[i], where, path + "[" + std::to_string(i) + "]")) return false;
    return true;
  }
  if (a.isDouble() && b.isDouble()) {
    const double x = a.toDouble(), y = b.toDouble();
    if (std::memcmp(&x, &y, sizeof x) == 0) return true;
    where = path + ": " + std::to_string(x) + " vs " + std::to_string(y);
    return false;
  }
  if (a.tagKind() != b.tagKind()) {
    where = path + ": a " + a.tagKind() + " in one run, a " + b.tagKind() + " in another";
    return false;
  }
  if (a.isInt() || a.isBool() || a.isNone() || a.isString()) {
    if (a == b) return true;
    where = path + ": values differ between runs";
    return false;
  }
  return true;
}

// Every tensor a device run returns must be where a correct run puts it (expected_output_device): a kernel that
// hands back host memory would otherwise pass, its values compared as if they were the device's.
std::optional<Verdict> CaseRun::check_output_device(const RunOutcome& out,
                                                    const std::vector<at::Tensor>& tensors) const {
  if (out.error) return std::nullopt;
  const at::Device want = expected_output_device(tensors);
  std::string where;
  at::Device got(at::kCPU);
  if (!leaf_elsewhere(out.output, want.type(), "output", where, got)) return std::nullopt;
  return Verdict{Stage::INCORRECT_RESULT,
                 where + ": device mismatch: expected a tensor on " + want.str() +
                     (want.type() == dev_.type() ? " (the device under test)" : "") + ", got one on " + got.str() +
                     (values_defined_ ? "" : " (the values of an uninitialised output are not compared)")};
}

// Where a correct run puts its outputs: where a device argument says (`device='cuda'` is the device under test,
// `'cpu'` the host; the device wins when both are named); else on the device under test when the call gave it a
// tensor there, else on the host (a literal, or inputs all placed on the host), as the reference does.
at::Device CaseRun::expected_output_device(const std::vector<at::Tensor>& tensors) const {
  RunContext ctx;
  ctx.device = dev_;
  bool names_device = false, names_host = false;
  const auto look = [&](const ArgRef& a) {
    if (a.kind != ArgRef::Kind::Value) return;
    if (const std::optional<at::Device> d = device_of(a.value, ctx)) (d->is_cpu() ? names_host : names_device) = true;
  };
  for (const ArgRef& a : res_.call.args.positional) look(a);
  for (const auto& kw : res_.call.args.keywords) look(kw.second);
  if (names_device) return dev_;
  if (names_host) return at::Device(at::kCPU);
  const bool given_device_tensor = std::any_of(tensors.begin(), tensors.end(), [&](const at::Tensor& t) {
    return t.defined() && t.device().type() == dev_.type();
  });
  return given_device_tensor ? dev_ : at::Device(at::kCPU);
}

// A wrong result may come from the transfer rather than the op: the call's inputs and the reference's outputs,
// copied to the device and back, must come back with the host's bits; and where the call copied on the device
// (a `.to(dtype)`, a mask made float), small probes converted there between the case's own dtypes (those of its
// inputs and outputs), then with bool, int64 and float32, must match the host's conversion. Says how the first that
// does not differs, naming only the case's own dtypes; "" when all do (or the check itself raised: a transfer that
// raises is the op's own verdict's business).
std::string CaseRun::transfer_changes_values() const {
  std::vector<at::Tensor> outputs;
  std::function<void(const c10::IValue&)> leaves = [&](const c10::IValue& v) {
    if (v.isTensor() && v.toTensor().defined()) outputs.push_back(v.toTensor());
    if (v.isTensorList())
      for (const at::Tensor& t : v.toTensorVector()) leaves(t);
    if (v.isTuple())
      for (const c10::IValue& e : v.toTupleRef().elements()) leaves(e);
    if (v.isList())
      for (const c10::IValue& e : v.toListRef()) leaves(e);
  };
  leaves(ref_.outcome.output);
  const bool copied_in_call = std::any_of(r_.device_ops.begin(), r_.device_ops.end(), [](const DeviceOp& d) {
    return d.in_call && (d.op == "aten::_copy_from" || d.op == "aten::_copy_from_and_resize");
  });
  auto name = [](at::ScalarType t) { return torch_dtype(t).substr(6); };
  try {
    const at::NoGradGuard no_grad;
    std::string where;
    std::vector<at::Tensor> all = host_;
    all.insert(all.end(), outputs.begin(), outputs.end());
    std::vector<at::ScalarType> dtypes;  // the case's own, inputs first
    for (const at::Tensor& t : all) {
      if (!t.defined() || !t.device().is_cpu()) continue;
      if (std::find(dtypes.begin(), dtypes.end(), t.scalar_type()) == dtypes.end()) dtypes.push_back(t.scalar_type());
      if (t.numel() > 0 && !bitwise_equal(t, t.to(dev_).cpu(), where, "the copy"))
        return name(t.scalar_type()) + " to " + dev_.str() + " and back: " + where;
    }
    if (!copied_in_call) return {};
    // Then the dtypes a call converts between inside it (a bool mask made float, an int64 index): probed after the
    // case's own pairs, and never named, since they are not the case's.
    const auto own_end = static_cast<std::ptrdiff_t>(dtypes.size());
    for (at::ScalarType t : {at::kBool, at::kLong, at::kFloat})
      if (std::find(dtypes.begin(), dtypes.end(), t) == dtypes.end()) dtypes.push_back(t);
    auto own = [&](at::ScalarType t) { return std::find(dtypes.begin(), dtypes.begin() + own_end, t) != dtypes.begin() + own_end; };
    for (const bool own_pairs : {true, false})
      for (at::ScalarType from : dtypes) {
        const at::Tensor probe = at::arange(4, at::TensorOptions().dtype(at::kLong)).remainder(from == at::kBool ? 2 : 4).to(from);
        for (at::ScalarType to : dtypes) {
          // A float to an integer is undefined out of range: only conversions to floating dtypes are held to bits.
          if (to == from || !(at::isFloatingType(to) || at::isComplexType(to)) || (own(from) && own(to)) != own_pairs)
            continue;
          if (!bitwise_equal(probe.to(to), probe.to(dev_).to(to).cpu(), where, "the copy"))
            return (own(from) ? name(from) : std::string("a dtype the call makes inside")) + " converted to " +
                   (own(to) ? name(to) : std::string("another dtype")) + " on " + dev_.str() + ": " + where;
        }
      }
  } catch (const std::exception&) {
    // A transfer that raises is not what this check looks for: the op's own verdict stands.
  }
  return {};
}

}  // namespace opcheck::exec
