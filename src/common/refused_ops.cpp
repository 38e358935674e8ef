#include "common/refused_ops.h"

#include <algorithm>

#include "common/op_names.h"
#include "common/text.h"

namespace opcheck {
namespace {

// Reviewed op by op against the schemas of the torch opcheck is built with (test/exec/refused_ops_test.cpp walks
// them). An entry `ns::` names a namespace, `name*` a prefix of `ns::name.overload`; other entries are an op with
// every overload (`aten::from_file`) or a Python name (`torch.save`).
const std::vector<OpDecision>& table() {
  static const std::vector<OpDecision> t = {
      // Files.
      {"aten::from_file", true, "reads a file, and with shared=True creates or extends it"},
      {"aten::save", true, "writes a file"},
      {"torch.save", true, "writes a file"},
      {"torch.load", true, "reads and unpickles a file"},
      {"debugprims::", true, "loads tensors from a store outside the call"},
      // Other processes.
      {"c10d::", true, "talks to other processes (collective communication)"},
      {"_c10d_functional::", true, "talks to other processes (collective communication)"},
      {"_c10d_functional_autograd::", true, "talks to other processes (collective communication)"},
      {"symm_mem::", true, "shares memory with other processes (symmetric memory)"},
      // State of the process beyond the call.
      {"profiler::", true, "changes the process's profiler state"},
      {"aten::_print", true, "writes to opcheck's own output"},
      {"prim::Print", true, "writes to opcheck's own output"},
      {"aten::record_stream", true, "changes the allocator's record of the tensor's streams"},
      {"aten::_cufft_set_plan_cache_max_size", true, "changes a process-wide cuFFT plan cache"},
      {"aten::_cufft_clear_plan_cache", true, "changes a process-wide cuFFT plan cache"},
      {"aten::manual_seed", true, "reseeds a global random generator"},
      {"aten::seed", true, "reseeds a global random generator"},
      {"torch.manual_seed", true, "reseeds the global random generators"},
      {"torch.seed", true, "reseeds the global random generators"},
      {"torch.set_rng_state", true, "replaces the global random generator's state"},
      {"torch.set_default_dtype", true, "changes the process's default dtype"},
      {"torch.set_default_tensor_type", true, "changes the process's default tensor type"},
      {"torch.set_default_device", true, "changes the process's default device"},
      {"torch.set_num_threads", true, "changes the process's thread count"},
      {"torch.set_num_interop_threads", true, "changes the process's thread count"},
      {"torch.set_flush_denormal", true, "changes the process's floating-point mode"},
      {"torch.set_printoptions", true, "changes the process's print options"},
      {"torch.set_float32_matmul_precision", true, "changes the process's matmul precision"},
      {"torch.use_deterministic_algorithms", true, "changes the process's algorithm choice"},
      {"torch.set_deterministic_debug_mode", true, "changes the process's algorithm choice"},
      {"torch.set_warn_always", true, "changes the process's warning policy"},
      {"torch.set_grad_enabled", true, "changes the thread's autograd mode"},
      {"torch.set_anomaly_enabled", true, "changes the thread's autograd mode"},
      {"torch.set_autocast_enabled", true, "changes the thread's autocast mode"},
      // Looks machine-touching, is not.
      {"aten::einsum", false, "`path` is the contraction order, a list of ints, not a file path"},
      {"aten::set.source_Storage*", false, "opcheck builds no Storage argument, so these overloads are never bound"},
      {"aten::set_.source_Storage*", false, "opcheck builds no Storage argument, so these overloads are never bound"},
      {"aten::_test_string_default", false, "a test op that only returns its arguments"},
      {"aten::initial_seed", false, "reads a generator's seed and changes nothing"},
      {"aten::_cufft_get_plan_cache_max_size", false, "reads a cache's size and changes nothing"},
      {"aten::_cufft_get_plan_cache_size", false, "reads a cache's size and changes nothing"},
  };
  return t;
}

// The last names of a Python spelling opcheck does not read (torch.UntypedStorage.from_file, torch.cuda.manual_seed)
// that still say what the call does.
const std::vector<std::string_view> kRefusedLastNames = {
    "from_file", "save", "load", "manual_seed", "manual_seed_all", "seed", "seed_all", "set_rng_state",
    "set_num_threads", "set_num_interop_threads", "set_default_dtype", "set_default_device", "set_default_tensor_type"};

bool entry_matches(const std::string& entry, const std::string& qualified, const std::string& with_overload) {
  if (entry.size() > 2 && entry.compare(entry.size() - 2, 2, "::") == 0) return qualified.rfind(entry, 0) == 0;
  if (entry.back() == '*') return with_overload.rfind(entry.substr(0, entry.size() - 1), 0) == 0;
  return entry == qualified || entry == with_overload;
}

const OpDecision* find_decision(const std::string& qualified, const std::string& with_overload) {
  for (const auto& d : table())
    if (entry_matches(d.name, qualified, with_overload)) return &d;
  return nullptr;
}

std::string last_name(const std::string& written) {
  const std::string s(trim_blanks(written, kWhitespace));
  const auto cut = s.find_last_of(".:");
  return cut == std::string::npos ? s : s.substr(cut + 1);
}

}  // namespace

std::optional<std::string> refused_op_reason(const std::string& written) {
  const OpName n = parse_op_name(written);
  const OpDecision* d = nullptr;
  if (n.form == OpName::Form::Schema) {
    const std::string overload = n.overload && !n.overload->empty() ? "." + *n.overload : "";
    d = find_decision(n.qualified, n.qualified + overload);
  } else if (n.form == OpName::Form::Python) {
    d = find_decision(n.python, n.python);
    if (!d) d = find_decision(n.qualified, n.qualified);
  } else if (is_one_of(last_name(written), kRefusedLastNames)) {
    return "reaches outside the call (" + last_name(written) + " reads or writes files or global state)";
  }
  if (d && d->refused) return d->reason;
  return std::nullopt;
}

std::optional<std::string> allowed_op_reason(const std::string& schema_name) {
  const auto dot = schema_name.find('.', schema_name.find("::"));
  const OpDecision* d = find_decision(schema_name.substr(0, dot), schema_name);
  if (d && !d->refused) return d->reason;
  return std::nullopt;
}

std::vector<OpDecision> decided_ops() {
  std::vector<OpDecision> out = table();
  std::stable_partition(out.begin(), out.end(), [](const OpDecision& d) { return d.refused; });
  return out;
}

}  // namespace opcheck
