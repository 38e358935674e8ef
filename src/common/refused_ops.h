// The one list of ops opcheck refuses to run: ops that read or write files, talk to other processes, or change
// state of the process beyond their own call (global generators, default dtype, thread counts, the profiler).
// Manifests, v2 configs and traces come from other teams' generators and run as root in CI; a case must not reach
// the machine. The loaders (v1, v2, traces) refuse these at load time, with the reason; the exec layer's test walks
// every operator schema torch registers and fails on one whose signature looks machine-touching and that this list
// has not decided (refused, or allowed with a reason).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace opcheck {

/// Why opcheck refuses to run the op written `written` (any spelling parse_op_name reads, or a Python spelling it
/// does not, such as torch.UntypedStorage.from_file), or nullopt when the op may run.
std::optional<std::string> refused_op_reason(const std::string& written);

/// Why an op whose schema looks machine-touching (an argument named like a path, a Storage argument, a name like
/// a global setter) may still run, or nullopt when the list says nothing about it. `schema_name` is
/// `ns::name.overload` (`ns::name` for the default overload).
std::optional<std::string> allowed_op_reason(const std::string& schema_name);

/// One decided op for docs/design.md and the tests: its name as the list holds it, refused or allowed, and why (a verb
/// phrase: "writes a file").
struct OpDecision {
  std::string name;  // `aten::from_file` (every overload), `torch.save` (a Python name), `c10d::` (a namespace)
  bool refused = true;
  std::string reason;
};

/// Every entry of the list, refused first.
std::vector<OpDecision> decided_ops();

}  // namespace opcheck
