// The run record every report is written from: one entry per selected occurrence, plus run facts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "opcheck/result.h"

namespace opcheck {

/// Facts about one run (or a merge of shard runs).
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
  std::string host;
  std::string started_at;     // ISO-8601 UTC
  double duration_s = 0;
  std::vector<std::string> argv;            // selection arguments as given
  std::string shard;                        // "I/N" or ""
  std::map<std::string, std::string> manifests;  // path -> sha256 of every manifest read
  std::vector<std::string> enabled_ops;     // device's enabled ops (coverage); empty when unknown
  bool interrupted = false;                 // stopped by SIGINT/SIGTERM, --maxfail or --deadline
  std::string stop_reason;
  std::int64_t deselected = 0;              // occurrences left out by -m/-k/--model (pytest's "N deselected")
};

/// One selected occurrence of a case and its verdict (a deduplicated occurrence carries the result of the
/// occurrence that ran, with deduplicated_from naming it).
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
  std::string deduplicated_from;  // "" when this occurrence ran
  std::string status;       // triage status from the config ("", expected_passing, xfail, skip)
  std::string status_reason;
  Outcome outcome = Outcome::Passed;  // after skip/xfail rules
  bool xfail_strict = true; // an XPASS fails the run; false for a non-strict xfail (v2 `mode: xfail`, `strict: false`)
  std::string upstream_test;  // v2 configs: torch-spyre's test name of the entry
  Result result;            // stage, message, figures, timings of the run that decided it
};

/// Whether an occurrence fails the run: failed, error, or an XPASS of a strict xfail.
inline bool fails_run(const CaseRecord& r) {
  return r.outcome == Outcome::Failed || r.outcome == Outcome::Error ||
         (r.outcome == Outcome::XPassed && r.xfail_strict);
}

/// Everything a run produced; JUnit XML, metrics JSON, console summary and HTML are views of it.
struct RunReport {
  RunInfo info;
  std::vector<CaseRecord> cases;  // in selection order
};

}  // namespace opcheck
