// Root-cause groups: failures that share a signature (the stage, the error text with its numbers, shapes and dtypes
// masked, and the op it happened in) are one group, so a run over thousands of cases says "7 root causes".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "opcheck/report.h"

namespace opcheck {

/// The error text as a signature holds it: values masked (numbers, shapes "[2, 3]", "(0, 2)", dtypes "bf16",
/// "torch.float32", "'Half'", addresses "0x7f3a...", paths "/usr/lib/x.so", "a/b.py:12", URLs); words kept: op and
/// identifier names ("aten::mul.Tensor", "as_strided"), so two missing kernels stay two texts, and backend names and
/// dispatch keys ("CPU/CUDA/MKLDNN", "PrivateUse1").
std::string masked_error_text(std::string_view text);

/// What identifies the root cause of one failing record: "STAGE | OP | TEXT", built only from what identifies the
/// bug. TEXT is the masked first paragraph of the message (without the device-ops note, and without whether the runs
/// also differed, which depends on what the device's memory held). OP is, for a raised error, the op the text names
/// ("aten::rsqrt", or a device op by its bare name: "as_strided: ..."), else the op that raised it (the device op
/// marked `raised`: the innermost op active on the device when it was thrown), else the last op of the call that
/// computed, else the case's resolved op; a transfer op that raised signs as FAILED_TRANSFER with the error itself
/// as TEXT, wherever it ran. For NOT_SUPPORTED, OP is the missing kernel with its dtype when the message names one
/// ("aten::fill_.Scalar for Half"). For a wrong result, OP is the copy when the runner's copy round trip differed
/// ("the device's aten::_copy_from changes values: ..." leads the message, and is then the whole TEXT), else the
/// case's resolved op with the ops that computed on the device during its call (allocations, views and copies left
/// out unless the case calls one). No case id, path, address, timing or value is in it. "" for a record that is not
/// failed, error or not_supported.
std::string failure_signature(const CaseRecord& rec);

/// The dtype a failure names for its call: that of the call's floating (else first) tensor input, as the call
/// signature shows it (an int64 index call says i64); the case's dtype for a record without a call.
std::string record_dtype(const CaseRecord& rec);

/// The failing occurrences of one root cause.
struct FailureGroup {
  std::string signature;  // "STAGE | OP | TEXT": as failure_signature, a wrong result's OP being the op blamed
  Stage stage = Stage::PASSED;
  std::string op;                   // the op the group blames (a raised error's op; a wrong result's suspect)
  std::string text;                 // the masked error text
  std::int64_t count = 0;           // occurrences
  std::int64_t unique = 0;          // unique cases among them (by dedupe key)
  std::vector<std::string> cases;   // the occurrences' ids, in run order
  std::vector<std::string> ops, models, dtypes;  // the cases' ops (as the manifests name them), models, call dtypes (record_dtype); sorted
  std::string example;              // the id of the occurrence with the fewest input bytes (ties: the first)
  std::string minimal;              // the shrunk call (`run --shrink`); "" until shrunk
  std::int64_t differs_between_runs = 0;  // occurrences whose device runs also differed from each other
};

/// The run's failing occurrences (failed, error, not_supported) grouped by root cause, largest group first (ties by
/// signature). A wrong result the copy round trip does not explain is blamed on one op of its call, of the ops that
/// computed on the device during it (a decomposition's inner ops, not the composite around them; no allocation, view
/// or copy unless the case calls it): one that also failed as a case's own op if there is
/// one (a biased aten::mul fails the mul cases, so an rms_norm whose decomposition runs mul groups with them), then
/// the one most suspect over the whole run, as fault localisation ranks statements: failed(op) / sqrt(failed(op) +
/// passed(op)) over the unique cases whose calls ran the op (Ochiai): add or copy_, which passing cases also ran,
/// rank below the op that fails wherever it runs.
std::vector<FailureGroup> group_failures(const RunReport& report);

/// Whether a record fails in a way groups count: failed, error or not_supported.
bool in_failure_groups(const CaseRecord& rec);

}  // namespace opcheck
