// The plan stage: canonical dedupe keys, the unique cases to run, and shards of them.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "opcheck/case.h"

namespace opcheck {

/// Version of the dedupe key format. Bump it whenever canonical_case_text changes what it covers or how it
/// spells it, so results cached under an older format are never mistaken for the new one.
inline constexpr const char* kDedupeKeyVersion = "k4";

/// Everything that decides what a case computes and how it is judged, in one canonical text (see docs/formats.md,
/// "Dedupe key"): key version, canonical op, seed, every input (kind, shape, stride, storage offset,
/// dtype, placement, init, init_args, data, sha256 of file contents), keyword arguments, comparator, tolerances,
/// equal_nan, pcc_min, expects_error, nondeterministic. Not the model, case name, description or marks.
std::string canonical_case_text(const Case& c);

/// sha256 of canonical_case_text, hex, first 32 digits, prefixed with the key version: "k4:3fa2...".
std::string dedupe_key(const Case& c);

/// A short signature of the call for coverage: `op(fp16[4,128], fp16[128], 1.0)`.
std::string input_signature(const Case& c);

/// The unique cases to execute and, for every selected occurrence, which unique case decides it.
struct Plan {
  std::vector<const Case*> occurrences;       // every selected case, selection order
  std::vector<std::string> keys;              // dedupe key per occurrence
  std::vector<std::size_t> unique_of;         // occurrence -> index into `unique`
  std::vector<const Case*> unique;            // first occurrence of each key, in order
  std::vector<std::size_t> unique_first;      // unique -> occurrence index of its first occurrence
  std::vector<std::size_t> selection_index;   // occurrence -> position in the whole selection (before sharding)
};

/// Dedupe keys already computed, by case (a run computes them while libtorch loads).
using KnownKeys = std::unordered_map<const Case*, std::string>;

/// Builds the plan. With dedupe off every occurrence is its own unique case. Keys in `known` are taken as they
/// are; the other cases are hashed here.
Plan make_plan(const std::vector<const Case*>& selected, bool dedupe, const KnownKeys* known = nullptr);

/// Estimated relative cost of running a case (bytes touched), used to balance shards.
double estimated_cost(const Case& c);

/// Keeps only the unique cases of shard `index` of `total` (0-based), balanced by estimated cost and
/// deterministic for the same selection; occurrences of dropped unique cases are dropped too.
Plan shard_plan(const Plan& plan, int index, int total);

/// What each unique case of a plan is expected to take, in seconds, from the times an earlier run recorded by dedupe
/// key (--durations-from). A case they do not know is estimated from its size: estimated_cost scaled by the seconds
/// per cost unit of the plan's recorded cases, so that both kinds weigh alike.
struct ExpectedTimes {
  std::vector<double> seconds;  // per unique case
  std::size_t recorded = 0;     // unique cases with a recorded time
  std::size_t estimated = 0;    // unique cases estimated from their size
  /// False when no unique case has a recorded time: `seconds` are then the size estimates, not seconds.
  bool in_seconds = true;
};
ExpectedTimes expected_times(const Plan& plan, const std::unordered_map<std::string, double>& recorded_s);

/// shard_plan balanced by `cost` (one per unique case) instead of the size estimate: the costliest case first, onto
/// the least loaded shard (fewest cases on a tie), ties between cases by key. `loads`, when given, receives the
/// summed cost of every shard.
Plan shard_plan(const Plan& plan, int index, int total, const std::vector<double>& cost,
                std::vector<double>* loads = nullptr);

/// The plan as a user reviews it (--collect-only): each unique case with its key and the occurrences it serves, then
/// the counts.
std::string describe_plan(const Plan& plan);

}  // namespace opcheck
