// Root-cause groups: failures that share a signature (the stage, the error text with its numbers, shapes and dtypes
// masked, and the op it happened in) are one group, so a run over thousands of cases says "7 root causes".
#pragma once

#include <string>
#include <string_view>

#include "opcheck/report.h"

namespace opcheck {

/// The error text as a signature holds it: numbers, shapes ("[2, 3]", "(0, 2)"), dtypes ("bf16", "torch.float32",
/// "'Half'"), addresses ("0x7f3a...") and paths masked; op and identifier names ("aten::mul.Tensor", "as_strided")
/// kept, so two missing kernels stay two texts.
std::string masked_error_text(std::string_view text);

/// What identifies the root cause of one failing record: "STAGE | OP | TEXT". TEXT is the masked first paragraph of
/// the message (without the device-ops note); OP is, for a raised error, the op that raised where the text names it
/// (else the last op that reached the device, else the case's resolved op), and for a wrong result the case's
/// resolved op with the ops that ran on the device during its call. The same bug gives the same signature in every
/// run: no case id, path, address, timing or value is in it. "" for a record that is not failed, error or
/// not_supported.
std::string failure_signature(const CaseRecord& rec);

}  // namespace opcheck
