// The run record every report is written from: one entry per selected occurrence, plus run facts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "opcheck/case_fields.h"
#include "opcheck/result.h"

namespace opcheck {

/// Facts about one run (or a merge of shard runs).
/// How the device under test was chosen: what --device asked, what the run took and why, and, for `auto`, where a
/// backend was looked for, each place with what it held.
struct DeviceChoice {
  std::string asked;                  // --device as given: "auto", "loopback", "spyre", ...
  std::string chosen;                 // the device the run took, by the name the reports use: "loopback", "spyre"
  std::string why;                    // one clause: "opcheck's stand-in, as no backend was found", ...
  bool stand_in = false;              // `auto` took opcheck's loopback because it found no backend
  std::vector<std::string> searched;  // `auto`: each place looked in, with what it held
};

struct RunInfo {
  std::string opcheck_version;
  std::string torch_version;
  std::string device;         // e.g. "privateuseone:0"
  std::string device_name;    // e.g. "loopback", "spyre"
  std::string device_lib;
  std::string device_lib_sha256;
  std::string torch_path;                   // folder of the libtorch the exec layer was built against
  std::vector<std::string> python_modules;  // --device-import: the interpreter's torch, each module and its version
  std::string compile_backend;              // --compile-backend; "" = eager
  std::vector<std::string> device_environment;  // "NAME=value" of each device setting set (fault injection)
  DeviceChoice device_choice;               // how the device was chosen (asked empty: not recorded)
  std::string status_config_sha256;         // content hash of the status config used; "" = none
  std::string dedupe_key_version;           // version of the dedupe keys the results are filed under
  /// What, changed, could change a verdict (runner/run_identity.h), as named parts in order: --resume, the results
  /// cache and merge compare it part by part.
  std::vector<std::pair<std::string, std::string>> identity;
  std::string host;
  std::string started_at;     // ISO-8601 UTC
  double duration_s = 0;
  std::vector<std::string> argv;            // selection arguments as given
  std::string shard;                        // "I/N" or ""
  std::int64_t selection_occurrences = 0;   // sharded runs: the whole selection's occurrences (0: unknown)
  std::string selection_sha256;  // digest of the whole selection's occurrence ids, before --shard ("" = unknown)
  std::string cases_sha256;      // digest of the occurrence ids this run planned: what `cases` holds ("" = unknown)
  std::map<std::string, std::string> manifests;  // path -> sha256 of every manifest read
  std::vector<std::string> enabled_ops;     // device's enabled ops (coverage); empty when unknown
  bool interrupted = false;                 // stopped by SIGINT/SIGTERM, --maxfail or --deadline
  std::string stop_reason;
  std::string stopped_by;                   // "", "signal", "maxfail" or "deadline": what stopped it early
  std::int64_t deselected = 0;              // occurrences left out by -m/-k/--model (pytest's "N deselected")
  std::int64_t not_run = 0;                 // selected occurrences never run because the run stopped early
  RunPolicy policy;                         // what the run forgives (--xpass-ok)
  std::vector<std::string> warnings;        // load and validate warnings, formatted; listed, never counted
  std::int64_t shard_count = 0;             // merged runs: how many files were merged (0: not a merge)
  double shard_longest_s = 0;               // merged runs: the longest shard's wall time
  double shard_sum_s = 0;                   // merged runs: the shards' wall times summed
  std::int64_t workers_started = 0;         // worker processes that finished starting (with --no-isolation: 1)
  double worker_start_mean_s = 0;           // their start (device set-up, a Python device's interpreter and imports)
  double worker_start_max_s = 0;
  double cases_wall_s = 0;                  // wall time from the first worker ready to the last result, summed over
                                            // the run's batches: the cases' own, without start-up and reports
  std::map<std::string, std::string> shrunk;  // run --shrink: a failure group's example id -> its minimal call
  std::string durations_from;               // --durations-from: the earlier run's file the split was timed by
  std::string durations_sha256;             // its digest ("" = the split was by size)
  std::int64_t durations_recorded = 0;      // unique cases (of the whole split) with a recorded time
  std::int64_t durations_estimated = 0;     // unique cases estimated from their size
  std::vector<double> expected_shard_s;     // each shard's expected wall time at this run's -j; empty = unknown
};

/// Adds the start times of a batch of workers to info's workers_started / worker_start_{mean,max}_s.
inline void note_worker_starts(RunInfo& info, const std::vector<double>& start_s) {
  for (double s : start_s) {
    const double n = static_cast<double>(++info.workers_started);
    info.worker_start_mean_s += (s - info.worker_start_mean_s) / n;
    if (s > info.worker_start_max_s) info.worker_start_max_s = s;
  }
}

/// One selected occurrence of a case and its verdict (a deduplicated occurrence carries the result of the
/// occurrence that ran, with deduplicated_from naming it).
/// One label of a case record: a case field's value that reports carry along (case_fields.h: record_label).
struct CaseLabel {
  const CaseField* field;  // an entry of kCaseFields
  std::string value;
};

struct CaseRecord {
  std::string id;           // model::name
  int index = -1;           // position in the whole selection before sharding (orders merged shards); -1 unknown
  std::string model;
  std::string name;
  std::string op;
  std::string dtype;        // canonical dtype name of the case
  std::string file;
  int line = 0;
  std::vector<std::string> marks;
  std::string key;          // dedupe key (hex)
  std::string signature;    // op + input signature (shapes/dtypes), for coverage
  std::string call;         // the call as failures show it (common/call_signature.h): op(bf16[1,32,64], ...)
  std::string deduplicated_from;  // "" when this occurrence ran
  std::string status;       // triage status from the config ("", expected_passing, xfail, skip)
  std::string status_reason;
  Outcome outcome = Outcome::Passed;  // after skip/xfail rules
  XfailStrictness xfail_strictness = XfailStrictness::Strict;  // NonStrict: v2 `mode: xfail`, `strict: false`
  /// The case's labels (kCaseFields' record_label: upstream_test, issue, ...), in table order, the non-empty ones.
  std::vector<CaseLabel> labels;
  /// The label's value, "" when the case has none.
  const std::string& label(std::string_view record_label) const {
    static const std::string none;
    for (const CaseLabel& l : labels)
      if (record_label == l.field->record_label) return l.value;
    return none;
  }
  Result result;            // stage, message, figures, timings of the run that decided it
};

/// Whether this occurrence fails the run it belongs to (see fails_run in result.h).
inline bool fails_run(const CaseRecord& rec, const RunInfo& info) {
  return fails_run(rec.outcome, rec.xfail_strictness, info.policy);
}

/// Everything a run produced; JUnit XML, metrics JSON, console summary and HTML are views of it.
struct RunReport {
  RunInfo info;
  std::vector<CaseRecord> cases;  // in selection order
};

}  // namespace opcheck
