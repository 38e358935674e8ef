// Fault injection: OPCHECK_LOOPBACK_FAULTS names ops that misbehave, so opcheck's failure paths can be exercised on
// purpose. Parsed once when the library loads; every loopback kernel and the fallback consult it by operator name.
#include <atomic>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <memory>
#include <thread>
#include <map>
#include <set>
#include <unordered_map>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/library.h>

#include "loopback.h"
#include "common/fault_kinds.h"
#include "common/spelling.h"

namespace opcheck::loopback {
namespace {

/// A dtype as c10 names it ("Half", "BFloat16", "Long") or as torch spells it ("float16", "torch.bfloat16").
c10::optional<at::ScalarType> scalar_type_named(std::string name) {
  if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  for (int i = 0; i < static_cast<int>(at::ScalarType::NumOptions); ++i) {
    const auto t = static_cast<at::ScalarType>(i);
    if (name == c10::toString(t)) return t;
    try {
      if (name == c10::getDtypeNames(t).first) return t;
    } catch (const std::exception&) {
      // Types without a Python name (the quantised and bit types) are named by c10 only.
    }
  }
  return c10::nullopt;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

/// Whether the dispatcher knows `op` ("ns::name" matches any overload; "ns::name.overload" only that one).
bool operator_exists(const std::string& op) {
  auto& dispatcher = c10::Dispatcher::singleton();
  const auto dot = op.find('.', op.find("::"));
  if (dot != std::string::npos) {
    const std::string overload = op.substr(dot + 1);  // ".default" names the overload without a name
    return dispatcher.findOp({op.substr(0, dot), overload == "default" ? "" : overload}).has_value();
  }
  if (dispatcher.findOp({op, ""}).has_value()) return true;
  for (const auto& name : dispatcher.getAllOpNames())
    if (name.name == op) return true;
  return false;
}

/// For an operator the dispatcher does not know: the overloads its name has (a misspelt overload), else the nearest
/// names (a misspelt name): " (aten::softmax has overloads int, Dimname, int_out)", " (did you mean aten::softmax?)".
std::string spelling_hint(const std::string& op) {
  const auto dot = op.find('.', op.find("::"));
  const std::string name = op.substr(0, dot);
  std::set<std::string> overloads, names;
  for (const auto& n : c10::Dispatcher::singleton().getAllOpNames()) {
    if (n.name == name) overloads.insert(n.overload_name.empty() ? "default" : n.overload_name);
    if (n.name.rfind(name.substr(0, name.find("::") + 2), 0) == 0) names.insert(n.name);
  }
  std::string out;
  if (!overloads.empty()) {
    for (const auto& o : overloads) out += (out.empty() ? "" : ", ") + o;
    return " (" + name + " has overloads " + out + ")";
  }
  const std::string near = closest_spelling(name, std::vector<std::string>(names.begin(), names.end()));
  return near.empty() ? std::string() : " (did you mean " + near + "?)";
}

using FaultTable = std::unordered_map<std::string, Fault>;

// Readers take a shared_ptr copy so a test may swap the table while no op is running without tearing it.
std::mutex g_table_mutex;
std::shared_ptr<const FaultTable> g_table = std::make_shared<FaultTable>();
std::atomic<bool> g_any_fault{false};
std::string g_load_error;
std::atomic<std::uint64_t> g_nondet_calls{0};
std::atomic<std::uint64_t> g_garbage_calls{0};
thread_local bool t_oom_armed = false;

std::shared_ptr<const FaultTable> table() {
  std::lock_guard<std::mutex> lock(g_table_mutex);
  return g_table;
}

const Fault* lookup(const std::string& name, const std::string& overload, std::string& op_out,
                    std::shared_ptr<const void>& keep) {
  if (!g_any_fault.load(std::memory_order_relaxed)) return nullptr;
  auto t = table();
  keep = t;  // the scope holds the table its fault points into, even if a test swaps tables meanwhile
  for (const std::string& key : fault_keys_for(name, overload)) {  // the one rule, most specific key first
    auto it = t->find(key);
    if (it == t->end()) continue;
    op_out = name + (overload.empty() ? "" : "." + overload);
    return &it->second;
  }
  return nullptr;
}

/// The element `flat_index` in row-major order, located through the strides (works for any layout).
void flip_low_bit_strided(const at::Tensor& host, std::int64_t flat_index) {
  std::int64_t offset = 0;
  for (std::int64_t d = host.dim() - 1; d >= 0; --d) {
    const auto size = host.size(d);
    offset += (flat_index % size) * host.stride(d);
    flat_index /= size;
  }
  auto* p = static_cast<unsigned char*>(host.data_ptr()) + offset * static_cast<std::int64_t>(host.element_size());
  p[0] ^= 1u;
}

/// The spacing of `dtype`'s values at magnitude `m` >= 1 (units in the last place); 1 for integers.
double ulp_at(at::ScalarType dtype, double m) {
  int exponent = 0;
  std::frexp(m, &exponent);  // m = f * 2^exponent, f in [0.5, 1)
  const int digits = dtype == at::kHalf ? 11 : dtype == at::kBFloat16 ? 8 : dtype == at::kFloat ? 24
                     : dtype == at::kDouble ? 53 : dtype == at::kFloat8_e4m3fn || dtype == at::kFloat8_e4m3fnuz ? 4
                     : dtype == at::kFloat8_e5m2 || dtype == at::kFloat8_e5m2fnuz ? 3 : 0;
  return digits == 0 ? 1.0 : std::ldexp(1.0, exponent - digits);
}

/// The `off` fault: the first element (row-major) moves by X relative to its magnitude, at least 1 (so a 0 moves
/// too), and by at least 4 units in the last place of its dtype; towards zero, so it never overflows. For a complex
/// element its real part moves; a bool flips.
void move_first_element(const at::Tensor& host, double x) {
  at::Tensor first = host.as_strided({1}, {1});  // the element at the tensor's data pointer: row-major first
  if (first.scalar_type() == at::kBool) {
    first.logical_not_();
    return;
  }
  at::Tensor part = first.is_complex() ? at::view_as_real(first).select(1, 0) : first;
  const double v = part.item<double>();
  const double m = std::max(std::fabs(v), 1.0);
  if (!at::isFloatingType(part.scalar_type())) {
    const double d = std::max(std::ceil(x * std::fabs(v)), 4.0);
    part.fill_(v >= d ? v - d : v + d);
    return;
  }
  // 4.5 units: rounding the moved value to the dtype keeps it at least 4 units away.
  const double d = std::max(std::fabs(x) * m, 4.5 * ulp_at(part.scalar_type(), m));
  part.fill_(std::isfinite(v) ? (v >= 0 ? v - d : v + d) : 0.0);
}

void corrupt(const Fault& f, const at::Tensor& t) {
  if (!t.defined() || t.numel() == 0) return;
  at::Tensor host = host_alias(t);
  switch (f.kind) {
    case FaultKind::Bias:
      if (host.is_floating_point() || host.is_complex()) host.add_(f.number);
      break;
    case FaultKind::Off: move_first_element(host, f.number); break;
    case FaultKind::Zeros: host.zero_(); break;
    case FaultKind::Ulp: flip_low_bit_strided(host, 0); break;
    case FaultKind::Nondet: {
      // Every call flips the lowest bit of a different element (or, for one element, every other call): two runs
      // differ, each within the default tolerances of a floating output (an integer one is off by one: wrong).
      const auto n = g_nondet_calls.fetch_add(1);
      if (host.numel() == 1) {
        if (n % 2 == 0) flip_low_bit_strided(host, 0);
      } else {
        flip_low_bit_strided(host, static_cast<std::int64_t>(n % static_cast<std::uint64_t>(host.numel())));
      }
      break;
    }
    case FaultKind::Garbage: {
      // Bytes that change with every call, as memory a kernel never wrote: wrong, and different in every run.
      auto gen = at::make_generator<at::CPUGeneratorImpl>(0x9e3779b97f4a7c15ULL ^ g_garbage_calls.fetch_add(1));
      at::Tensor bytes = at::randint(0, 256, {host.numel() * static_cast<std::int64_t>(host.element_size())}, gen,
                                     at::TensorOptions().dtype(at::kByte));
      if (host.scalar_type() == at::kBool) bytes.bitwise_and_(1);  // a bool byte holds 0 or 1
      host.copy_(bytes.view(host.scalar_type()).view(host.sizes()));
      break;
    }
    default: break;
  }
}

/// A host copy of every tensor in `v` (tensors and tensor lists): the `host` fault's result.
c10::IValue on_host(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor().defined() ? c10::IValue(host_alias(v.toTensor()).clone()) : v;
  if (!v.isTensorList()) return v;
  c10::List<at::Tensor> out;
  for (const at::Tensor& t : v.toTensorVector()) out.push_back(t.defined() ? host_alias(t).clone() : t);
  return out;
}

/// Own kernels that return the tensor they were given (or a number): their result cannot move to the host.
bool returns_its_argument(const std::string& op) {
  return op == "aten::_copy_from" || op == "aten::_copy_from_and_resize" || op == "aten::resize_" ||
         op == "aten::_local_scalar_dense";
}

}  // namespace

bool parse_faults(const std::string& spec, std::vector<std::pair<std::string, Fault>>& out, std::string& error) {
  std::vector<std::pair<std::string, Fault>> parsed;
  std::size_t pos = 0;
  int entry_no = 0;
  while (pos <= spec.size()) {
    auto semi = spec.find(';', pos);
    if (semi == std::string::npos) semi = spec.size();
    const std::string entry = trim(spec.substr(pos, semi - pos));
    pos = semi + 1;
    if (entry.empty()) continue;
    ++entry_no;
    const std::string where = "OPCHECK_LOOPBACK_FAULTS entry " + std::to_string(entry_no) + " '" + entry + "': ";
    const auto eq = entry.find('=');
    if (eq == std::string::npos) {
      error = where + "missing '='. Fix: write OP=KIND, e.g. aten::add.Tensor=bias:1e-2";
      return false;
    }
    const std::string op = trim(entry.substr(0, eq));
    std::string what = trim(entry.substr(eq + 1));
    if (op.find("::") == std::string::npos || op.rfind("::") == 0 || op.size() <= op.find("::") + 2) {
      error = where + "operator '" + op + "' needs a namespace. Fix: write e.g. aten::exp or aten::add.Tensor";
      return false;
    }
    if (!operator_exists(op)) {
      error = where + "unknown operator '" + op + "'" + spelling_hint(op) +
              ". Fix: write the op as the reports' resolved op names it (e.g. aten::softmax.int), or its name alone "
              "for every overload";
      return false;
    }
    std::string arg;
    const auto colon = what.find(':');
    if (colon != std::string::npos) {
      arg = trim(what.substr(colon + 1));
      what = trim(what.substr(0, colon));
    }
    const FaultKindInfo* kind = fault_kind_named(what);
    if (kind == nullptr) {
      error = where + "unknown fault kind '" + what + "'. Fix: use one of " + fault_kind_list();
      return false;
    }
    Fault f{kind->kind, 0, c10::nullopt};
    if (kind->arg == FaultArg::Number) {
      char* end = nullptr;
      errno = 0;
      f.number = arg.empty() ? 0 : std::strtod(arg.c_str(), &end);
      if (arg.empty() || *end != '\0') {
        error = where + "'" + what + "' needs a number. Fix: write e.g. " + what + ":1e-2";
        return false;
      }
      if (errno == ERANGE && std::fabs(f.number) > 1) {
        error = where + "'" + what + ":" + arg + "' overflows a double. Fix: write a finite number, e.g. " + what +
                ":1e3";
        return false;
      }
    } else if (kind->arg == FaultArg::OptionalDtype && colon != std::string::npos) {
      f.dtype = scalar_type_named(arg);
      if (!f.dtype) {
        error = where + "unknown dtype '" + arg + "'. Fix: name it as c10 or torch does, e.g. " + what + ":Half or " +
                what + ":float16";
        return false;
      }
    } else if (colon != std::string::npos) {
      error = where + "'" + what + "' takes no argument";
      return false;
    }
    if (kind->kind == FaultKind::IgnoreDtype && op != "aten::_copy_from") {
      error = where + "'ignore_dtype' applies to copies only. Fix: write aten::_copy_from=ignore_dtype";
      return false;
    }
    for (const auto& [seen, unused] : parsed)
      if (seen == op) {
        error = where + "operator '" + op + "' has two faults. Fix: keep one entry per operator";
        return false;
      }
    parsed.emplace_back(op, f);
  }
  out = std::move(parsed);
  return true;
}

namespace {

std::string full_name(const c10::OperatorName& n) {
  return n.overload_name.empty() ? n.name : n.name + "." + n.overload_name;
}

bool returns_view(const c10::FunctionSchema& schema) {
  for (const auto& r : schema.returns())
    if (r.alias_info() != nullptr && !r.alias_info()->isWrite()) return true;
  return false;
}

/// The operators that need the fault-aware fallback registered as their own PrivateUse1 kernel. Without one, an op
/// such as aten::add.Tensor never reaches the fallback under its own name: its CompositeExplicitAutogradNonFunctional
/// kernel calls aten::add.out, and a fault keyed by the name the user called would silently never fire.
bool ops_needing_fault_kernels(const std::vector<std::pair<std::string, Fault>>& faults,
                               std::vector<c10::OperatorName>& out, std::string& error) {
  auto& dispatcher = c10::Dispatcher::singleton();
  const auto all = dispatcher.getAllOpNames();
  for (const auto& [key, fault] : faults) {
    bool carried = false;
    std::string view_op;
    for (const auto& n : all) {
      const std::string full = full_name(n);
      if (!fault_op_matches(key, full)) continue;
      if (has_own_kernel(full)) {
        if (fault.kind == FaultKind::Host && returns_its_argument(full)) {
          error = "OPCHECK_LOOPBACK_FAULTS: cannot inject 'host' into '" + full +
                  "': its kernel returns the tensor it was given (or a number). Fix: put it on an op that returns a "
                  "new tensor";
          return false;
        }
        carried = true;
        continue;
      }
      auto handle = dispatcher.findOp(n);
      if (!handle || !handle->hasSchema()) continue;
      if (returns_view(handle->schema())) {
        view_op = full;  // a view must alias its input: it cannot run through a CPU copy
        continue;
      }
      out.push_back(n);
      carried = true;
    }
    if (!carried) {
      error = "OPCHECK_LOOPBACK_FAULTS: cannot inject a fault into '" + key + "': " +
              (view_op.empty() ? std::string("no overload with a schema") : "'" + view_op + "' is a view op") +
              " without a loopback kernel of its own. Fix: put the fault on an op that computes values";
      return false;
    }
  }
  return true;
}

/// Registrations of the fault-aware fallback, one library per namespace; replacing them unregisters the old ones.
std::map<std::string, std::unique_ptr<torch::Library>> g_fault_kernels;

void register_fault_kernels(const std::vector<c10::OperatorName>& ops) {
  g_fault_kernels.clear();
  for (const auto& n : ops) {
    const auto colons = n.name.find("::");
    const std::string ns = n.name.substr(0, colons);
    auto& lib = g_fault_kernels[ns];
    if (!lib) lib = std::make_unique<torch::Library>(torch::Library::IMPL, ns, c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
    const std::string local = full_name(n).substr(colons + 2);
    lib->impl(local.c_str(), torch::CppFunction::makeFromBoxedFunction<&cpu_fallback_with_faults>());
  }
}

}  // namespace

bool set_faults(const std::string& spec, std::string& error) {
  std::vector<std::pair<std::string, Fault>> parsed;
  if (!parse_faults(spec, parsed, error)) return false;
  std::vector<c10::OperatorName> kernels;
  if (!ops_needing_fault_kernels(parsed, kernels, error)) return false;
  auto t = std::make_shared<FaultTable>(parsed.begin(), parsed.end());
  std::lock_guard<std::mutex> lock(g_table_mutex);
  register_fault_kernels(kernels);
  g_any_fault = !t->empty();
  g_table = std::move(t);
  return true;
}

const std::string& load_error() { return g_load_error.empty() ? mode_error() : g_load_error; }

bool allocation_failure_armed() { return t_oom_armed; }
void disarm_allocation_failure() { t_oom_armed = false; }

FaultScope::FaultScope(const c10::OperatorName& op) {
  note_device_use();
  fault_ = lookup(op.name, op.overload_name, op_, keep_);
  begin();
}

FaultScope::FaultScope(const char* name, const char* overload) {
  note_device_use();
  fault_ = lookup(name, overload, op_, keep_);
  begin();
}

FaultScope::~FaultScope() {
  if (fault_ != nullptr && fault_->kind == FaultKind::Oom) t_oom_armed = false;
}

void FaultScope::begin() {
  if (fault_ == nullptr) return;
  switch (fault_->kind) {
    case FaultKind::Segv: std::raise(SIGSEGV); break;
    case FaultKind::Abort: std::abort();
    case FaultKind::Hang:
      // A wedged device: never returns, costs no CPU; only SIGKILL (the runner's timeout) ends it.
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    case FaultKind::Throw: TORCH_CHECK(false, "loopback: injected device failure in ", op_);
    case FaultKind::NotImpl:
      if (fault_->dtype) break;  // check() raises, for calls with a tensor of that dtype
      TORCH_CHECK_NOT_IMPLEMENTED(false, "loopback: ", op_, " is not implemented on this device (injected fault)");
    case FaultKind::Oom: t_oom_armed = true; break;
    default: break;
  }
}

namespace {
template <class F>
bool any_tensor(const c10::IValue& v, F&& pred) {
  if (v.isTensor()) return v.toTensor().defined() && pred(v.toTensor());
  if (v.isTensorList())
    for (const at::Tensor& t : v.toTensorVector())
      if (t.defined() && pred(t)) return true;
  if (v.isOptionalTensorList())
    for (const std::optional<at::Tensor> t : v.toOptionalTensorList())
      if (t.has_value() && t->defined() && pred(*t)) return true;
  return false;
}
}  // namespace

// The messages name no op, as a device's own errors often do not ("clEnqueueCopyBuffer failed"): the runner finds the
// op that raised from the dispatcher.
void FaultScope::check(const std::vector<c10::IValue>& args) const {
  if (fault_ == nullptr) return;
  if (fault_->kind == FaultKind::ContiguousOnly) {
    for (const auto& a : args)
      TORCH_CHECK(!any_tensor(a, [](const at::Tensor& t) { return !t.is_contiguous(); }),
                  "loopback: non-contiguous tensors are not supported (injected fault)");
  } else if (fault_->kind == FaultKind::NotImpl && fault_->dtype) {
    const at::ScalarType dtype = *fault_->dtype;
    for (const auto& a : args)
      TORCH_CHECK_NOT_IMPLEMENTED(!any_tensor(a, [&](const at::Tensor& t) { return t.scalar_type() == dtype; }),
                                  "loopback: not implemented for '", c10::toString(dtype), "' (injected fault)");
  }
}

void FaultScope::after(const at::Tensor& result) {
  if (fault_ == nullptr) return;
  if (fault_->kind == FaultKind::Oom && t_oom_armed) {
    // The op allocated nothing on the device; the injected failure still has to surface.
    t_oom_armed = false;
    C10_THROW_ERROR(OutOfMemoryError, "loopback: out of memory (injected fault) in " + op_);
  }
  corrupt(*fault_, result);
}

at::Tensor FaultScope::result(const at::Tensor& t) {
  after(t);
  if (fault_ == nullptr || fault_->kind != FaultKind::Host || !t.defined()) return t;
  return host_alias(t).clone();
}

void FaultScope::after(torch::jit::Stack& stack, std::size_t num_returns) {
  if (fault_ == nullptr) return;
  if (fault_->kind == FaultKind::Host) {
    for (std::size_t i = stack.size() - num_returns; i < stack.size(); ++i) stack[i] = on_host(stack[i]);
    return;
  }
  bool any = false;
  for (std::size_t i = stack.size() - num_returns; i < stack.size(); ++i) {
    const auto& v = stack[i];
    if (v.isTensor()) {
      after(v.toTensor());
      any = true;
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList().vec()) after(t);
      any = true;
    }
  }
  if (!any) after(at::Tensor());
}

namespace {
// The env spec is read once, when the library is loaded. A bad spec must not throw out of a static initializer
// (that would terminate the process inside dlopen): it is kept and reported by opcheck_backend_load_error.
const bool g_loaded = [] {
  const char* env = std::getenv("OPCHECK_LOOPBACK_FAULTS");
  if (env == nullptr || *env == '\0') return true;
  std::string error;
  try {
    if (!set_faults(env, error)) g_load_error = error;
  } catch (const std::exception& e) {
    g_load_error = std::string("OPCHECK_LOOPBACK_FAULTS: ") + e.what();
  }
  return true;
}();
}  // namespace

}  // namespace opcheck::loopback
