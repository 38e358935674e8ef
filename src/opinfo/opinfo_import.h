// `opcheck import-opinfo` as one request: the importer's passes, the bind check that takes out the cases opcheck
// cannot call, the check of OpInfo's expectations and the report files, in that order. The command only parses its
// flags into the request and prints the result (src/cli/cmd_import_opinfo.cpp).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "opcheck/exec_api.h"

namespace opcheck::opinfo {

/// What to import, and how to reach the exec layer and opcheck's Python packages.
struct ImportRequest {
  std::string out_dir;                      // -o: created when missing
  std::vector<std::string> ops, dtypes;     // --ops, --dtypes (empty: every entry, the dtypes each supports)
  std::string config;                       // --config: a torch-spyre v2 test_suite_config, "" = none
  bool device_ops = false;                  // --device-ops: needs a device_import or a device_lib
  std::vector<std::string> device_imports;  // --device-import
  std::vector<std::string> device_libs;     // --device-lib
  int jobs = 0;                             // -j: 0 = the importer's default
  bool quiet = false;                       // -q: no progress lines
  bool no_bind_check = false;               // --no-bind-check: nothing of opcheck's is run on the cases written
  /// Folders holding opcheck's Python packages (pyloop), put first on the importer's PYTHONPATH.
  std::vector<std::string> python_dirs;
  /// An executor of the CPU (the exec layer); nullptr with `error` set when it cannot be made.
  std::function<std::unique_ptr<Executor>(std::string& error)> make_cpu_executor;
};

/// What the import did: its exit code (kOk: cases were written; kNoTests: none could be; kUsageError; kInternalError),
/// the error to print when it failed, and on success the report as written to DIR/opinfo-report.json, the timings
/// (kept out of that file, so two imports of the same samples write the same bytes) and the summary line.
struct ImportResult {
  int exit_code = 0;
  std::string error;  // "opcheck: error: ...\n" (with its Fix lines) when exit_code is a usage or internal error
  nlohmann::json report;
  nlohmann::json seconds = nlohmann::json::object();
  std::string summary;
};

/// Runs the import (docs/opinfo.md). Pass 1 writes every sample as its call; the samples whose call does not bind (a
/// Python function's keywords opcheck does not map) are written by pass 2 as the ATen calls they make, from the same
/// draws, after pass 1's files are removed. Progress lines go to stderr unless `quiet`.
ImportResult import_opinfo(const ImportRequest& request);

}  // namespace opcheck::opinfo
