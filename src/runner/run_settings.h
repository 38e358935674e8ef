// A run's settings that come from flags and the environment together: the shard, the deadline, how many workers
// with how many threads, and the Python device (--device-import, --compile-backend). Each is read here once, with
// the usage error a person can act on, so that `opcheck run` and its tests read them the same way.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace opcheck {

/// Looks up an environment variable (nullopt when unset); tests pass their own.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
/// The process environment.
EnvLookup process_environment();

/// "90", "90s", "15m", "2h", "1h30m", "1d" -> seconds. False for anything else (negative numbers, unknown units).
bool parse_duration(const std::string& text, double& seconds);

/// The shard to run: "I/N" from --shard, else OPCHECK_SHARD_INDEX/OPCHECK_TOTAL_SHARDS (GoogleTest's style), else a
/// Kubernetes Indexed Job's JOB_COMPLETION_INDEX with OPCHECK_TOTAL_SHARDS; 0/1 when none is given. False with
/// `error` for a spec that is not I/N with 0 <= I < N.
bool resolve_shard(const std::string& flag, const EnvLookup& env, int& index, int& total, std::string& error);

/// Worker processes and libtorch threads per worker.
struct WorkerLayout {
  int jobs = 1;
  int intra_op_threads = 1;
};
/// Workers x intra-op threads = cores, so that no core is oversubscribed and every core is busy: `jobs` (-j; 0 = one
/// per core) raised to the number of device indices (one worker per device), 1 without isolation; `intra_op_threads`
/// (0 = cores / jobs, at least 1).
WorkerLayout layout_workers(int jobs, int intra_op_threads, std::size_t device_indices, bool isolation, int cores);

/// The Python device of a run, from --device-import (else OPCHECK_DEVICE_IMPORT, comma-separated) and
/// --compile-backend (else TEST_COMPILE_BACKEND; `none` means eager, as no backend).
struct PythonDeviceSettings {
  std::vector<std::string> imports;
  std::string compile_backend;  // "" = eager
  std::string python;           // OPCHECK_PYTHON: the interpreter to host ("" = the one found at build time)
};
/// False with a usage error (what is wrong and a Fix) for a module or backend name that cannot be one.
bool resolve_python_device(const std::vector<std::string>& import_flags, const std::string& backend_flag,
                           const EnvLookup& env, PythonDeviceSettings& out, std::string& error);

}  // namespace opcheck
