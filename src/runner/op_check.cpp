#include "runner/op_check.h"

#include <string>

namespace opcheck {

std::size_t check_case_ops(Executor& ex, const std::vector<const Case*>& cases, DiagnosticList& out) {
  std::size_t checked = 0;
  for (const Case* c : cases) {
    const Result r = ex.check_call(*c);
    ++checked;
    if (r.stage != Stage::INVALID_CASE) continue;
    // The resolver's messages may end in their own ". Fix: ..."; it becomes the diagnostic's hint.
    std::string message = r.message;
    std::string fix;
    if (const auto at = message.find(". Fix: "); at != std::string::npos) {
      fix = message.substr(at + 7);
      message = message.substr(0, at);
    } else if (r.kind == VerdictKind::UnknownOp) {
      fix = "write the op as PyTorch names it (torch.add, torch.nn.functional.silu, aten::add.Tensor); a run "
            "reports this case as INVALID_CASE";
    } else {
      fix = "give the case the arguments one of the op's overloads takes (each overload's reason is listed); a run "
            "reports this case as INVALID_CASE";
    }
    out.error(c->loc, message, c->id, fix);
  }
  return checked;
}

std::vector<std::string> unresolved_op_names(Executor& ex, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& name : names) {
    Case c;  // the name alone, with no arguments: only its resolution is asked about
    c.op = name;
    c.model = "opinfo";
    c.name = "resolve";
    c.id = "opinfo::resolve";
    if (names_no_op(ex.check_call(c).kind)) out.push_back(name);
  }
  return out;
}

}  // namespace opcheck
