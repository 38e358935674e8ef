// --durations-from: the case times an earlier run recorded (its metrics file or its journal), by dedupe key, so that
// --shard splits the unique cases by time (LLVM lit's shard-by-time), and what each shard is then expected to take.
#pragma once

#include <string>
#include <vector>

#include "settings/run_settings.h"  // RecordedDurations

namespace opcheck {

/// Reads a metrics file (`opcheck run|merge --metrics-json`) or a journal (`journal.jsonl`). A case that ran counts
/// with its recorded time; one that timed out with `timeout_s` (it will likely take that long again); skipped and
/// deduplicated records say nothing about a case's time and are left out. False with a located error (the file, what
/// is wrong, a Fix) when the file is missing, unreadable, or neither kind of file, or a journal line is unreadable.
bool read_recorded_durations(const std::string& path, double timeout_s, RecordedDurations& out, std::string& error);

/// The console line of a run split by recorded times: the file, how many unique cases it timed and how many were
/// estimated from their size, and each shard's expected wall time (`shard_s`; this shard `index` marked).
std::string describe_expected_shards(const RecordedDurations& d, std::size_t recorded, std::size_t estimated,
                                     bool in_seconds, const std::vector<double>& shard_s, int index, int jobs);

}  // namespace opcheck
