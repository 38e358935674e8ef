// Combining shard runs into the run one machine would have reported.
#pragma once

#include <string>
#include <vector>

#include "opcheck/report.h"

namespace opcheck {

/// Concatenates the shards' cases, ordered by selection index (then file, line, id when indexes are unknown),
/// and unites their run facts: earliest start, wall-clock span as duration, union of manifests and enabled ops,
/// distinct hosts joined with ",", the first shard's argv without --shard, shard "" once every shard I/N is
/// present (else the shards joined with ",").
/// Throws ReportError when two shards hold the same case id, read other manifests (paths and digests), ran another
/// selection (run.selection_sha256), or ran with a different opcheck, libtorch, device or device library; when a
/// shard's case list is not the one it planned (run.cases_sha256: emptied or edited); when the files mix splits, or shards with whole runs, or
/// hold a shard twice; and when a shard of the split is missing, unless `allow_partial` (then `*partial`, when
/// given, says which shards were merged and which are missing).
/// The merged run records the longest shard's wall time and the sum over the shards beside the span.
/// `files` (optional) names each shard's file in the errors.
/// The digest of a list of occurrence ids (sorted, one per line): RunInfo::selection_sha256 and cases_sha256.
std::string case_list_sha256(std::vector<std::string> ids);

RunReport merge_reports(const std::vector<RunReport>& shards, bool allow_partial = false, std::string* partial = nullptr,
                        const std::vector<std::string>& files = {});

}  // namespace opcheck
