// Root-cause groups: failures that share a signature (the stage, the error text with its numbers, shapes and dtypes
// masked, and the op it happened in) are one group, so a run over thousands of cases says "7 root causes".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "opcheck/report.h"

namespace opcheck {

/// The error text as a signature holds it: numbers, shapes ("[2, 3]", "(0, 2)"), dtypes ("bf16", "torch.float32",
/// "'Half'"), addresses ("0x7f3a...") and paths masked; op and identifier names ("aten::mul.Tensor", "as_strided")
/// kept, so two missing kernels stay two texts.
std::string masked_error_text(std::string_view text);

/// What identifies the root cause of one failing record: "STAGE | OP | TEXT". TEXT is the masked first paragraph of
/// the message (without the device-ops note); OP is, for a raised error, the op that raised where the text names it
/// ("aten::rsqrt", or a device op by its bare name: "as_strided: ...") (else the last op that reached the device,
/// else the case's resolved op), and for a wrong result the case's
/// resolved op with the ops that ran on the device during its call. The same bug gives the same signature in every
/// run: no case id, path, address, timing or value is in it. "" for a record that is not failed, error or
/// not_supported.
std::string failure_signature(const CaseRecord& rec);

/// The failing occurrences of one root cause.
struct FailureGroup {
  std::string signature;  // "STAGE | OP | TEXT": as failure_signature, a wrong result's OP being the op blamed
  Stage stage = Stage::PASSED;
  std::string op;                   // the op the group blames (a raised error's op; a wrong result's suspect)
  std::string text;                 // the masked error text
  std::int64_t count = 0;           // occurrences
  std::int64_t unique = 0;          // unique cases among them (by dedupe key)
  std::vector<std::string> cases;   // the occurrences' ids, in run order
  std::vector<std::string> ops, models, dtypes;  // the cases' ops (as the manifests name them), models, dtypes; sorted
  std::string example;              // the id of the occurrence with the fewest input bytes (ties: the first)
  std::string minimal;              // the shrunk call (`run --shrink`); "" until shrunk
  std::int64_t differs_between_runs = 0;  // occurrences whose device runs also differed from each other
};

/// The run's failing occurrences (failed, error, not_supported) grouped by root cause, largest group first (ties by
/// signature). A wrong result is blamed on one op of its call, of the ops that computed on the device during it (a
/// decomposition's inner ops, not the composite around them): one that also failed as a case's own op if there is
/// one (a biased aten::mul fails the mul cases, so an rms_norm whose decomposition runs mul groups with them), then
/// the one most suspect over the whole run, as fault localisation ranks statements: failed(op) / sqrt(failed(op) +
/// passed(op)) over the unique cases whose calls ran the op (Ochiai): add or copy_, which passing cases also ran,
/// rank below the op that fails wherever it runs.
std::vector<FailureGroup> group_failures(const RunReport& report);

/// Whether a record fails in a way groups count: failed, error or not_supported.
bool in_failure_groups(const CaseRecord& rec);

}  // namespace opcheck
