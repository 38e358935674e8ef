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
    } else if (message.rfind("unknown op", 0) == 0) {
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

}  // namespace opcheck
