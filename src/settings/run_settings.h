// A run's settings, from flags and the environment together, resolved once into one value (RunSettings), with the
// two derivations everything else uses: the arguments that rerun a case (the rerun line, `repro`, failure bundles,
// generated scripts) and the identity (resume, the results cache, merge). Each setting is read here once, with the
// usage error a person can act on, so that `opcheck run`, `opcheck repro` and their tests read them the same way.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "opcheck/exec_api.h"
#include "opcheck/report.h"

namespace opcheck {

/// Looks up an environment variable (nullopt when unset); tests pass their own.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
/// The process environment.
EnvLookup process_environment();

/// "90", "90s", "15m", "2h", "1h30m", "1d" -> seconds. False for anything else (negative numbers, unknown units).
bool parse_duration(const std::string& text, double& seconds);

/// The default cap of a --reference-cache folder, and the default size above which an entry is not kept.
inline constexpr std::int64_t kReferenceCacheDefaultBytes = std::int64_t{4} << 30;      // 4 GiB
inline constexpr std::int64_t kReferenceCacheDefaultEntryBytes = std::int64_t{256} << 20;  // 256 MiB

/// "1000", "512K", "256M", "4G", "1.5T" (binary units; a trailing "B" or "iB" allowed) -> bytes. False for anything
/// else (negative numbers, unknown units).
bool parse_byte_size(const std::string& text, std::int64_t& bytes);

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

/// The times one earlier run recorded (--durations-from; read by runner/recorded_durations.h).
struct RecordedDurations {
  std::string path;    // as given
  std::string sha256;  // of the file's bytes: every shard of a split must be given the same file
  std::unordered_map<std::string, double> seconds;  // dedupe key -> seconds its case took
};

/// Every setting of one run that decides what a case computes or how the run goes. The CLI writes flags into it;
/// resolve_run_settings() completes it from the environment and checks it.
struct RunSettings {
  // The device under test.
  std::string device = "auto";              // --device
  std::string device_lib;                   // --device-lib, else OPCHECK_DEVICE_LIB (none with --device-import)
  bool device_lib_from_environment = false;  // resolved: device_lib is OPCHECK_DEVICE_LIB's
  std::string device_name;                  // --device-name: the name skip_if, the status config and reports see
  std::vector<std::string> device_imports;  // --device-import, else OPCHECK_DEVICE_IMPORT
  std::string compile_backend;              // --compile-backend, else TEST_COMPILE_BACKEND; "" = eager
  std::string python;                       // OPCHECK_PYTHON: the interpreter to host ("" = the build's)
  /// The interpreter's `torch.backends` entry points, listed when the device may be one (resolve_run_settings).
  std::vector<std::string> installed_backends;
  std::string installed_backends_note;  // why none is used although some may exist
  /// OPCHECK_LOOPBACK_FAULTS and the other variables that change what opcheck's own devices compute, as set.
  std::vector<std::pair<std::string, std::string>> device_environment;
  /// The variables that decided where the device came from, as a rerun from a fresh shell must set them
  /// (origin_environment_of): the PYTHONPATH entries that hold the device's modules, OPCHECK_PYTHON,
  /// TORCH_DEVICE_BACKEND_AUTOLOAD. Not a part of the identity (the executor's facts name the modules and versions).
  std::vector<std::pair<std::string, std::string>> origin_environment;
  /// --require-backend: `auto` must find a real backend (a device library, --device-import, an installed
  /// torch.backends entry point); the loopback alone is a usage error.
  bool require_backend = false;
  // How a case is judged.
  std::string reference_dtype;      // --reference-dtype: "" (the case's), same, float32, float64
  int repeat = -1;                  // --repeat: device runs per case; -1 = 2 on a device, 1 on cpu
  double timeout_s = 300;           // --timeout
  /// --start-timeout: a Python device's start-up process (its imports) and each worker's start; over it the device
  /// did not start. It decides no case's verdict, so it is a rerun argument but not a part of the identity.
  double start_timeout_s = 300;
  std::int64_t max_case_bytes = 0;  // --max-case-bytes; 0 = no limit
  std::int64_t module_memory_budget = -1;  // --module-memory-budget; -1 = half the machine's memory, 0 = no limit
  // How the run goes; none of these changes a verdict.
  std::string shard;     // --shard as given, else from the sharding variables
  int shard_index = 0;   // resolved
  int shard_total = 1;
  /// --durations-from as given: the shards split the unique cases by these recorded times. Every shard of a split
  /// must be given the same file, so its digest is a part of the identity (merge refuses shards that differ in it).
  std::string durations_from;
  RecordedDurations durations;  // resolved: the file read, its digest
  std::string deadline;  // --deadline as given
  double deadline_s = 0;  // resolved; 0 = none
  int jobs = 0;               // -j; 0 = one per core
  int intra_op_threads = 0;   // --intra-op-threads; 0 = cores / jobs
  std::vector<int> devices;   // --devices: one worker per device index
  bool isolation = true;      // false with --no-isolation
  std::string save_failures_dir;   // --save-failures
  std::string module_ops_dir;      // --module-ops: module cases' ATen calls written as op manifests
  // References kept across runs (src/exec/reference_cache.h); none of these changes a verdict.
  std::string reference_cache_dir;        // --reference-cache DIR; "" = none
  std::string reference_cache_size;       // --reference-cache-size as given ("8G"); "" = the default cap
  std::string reference_cache_max_entry;  // --reference-cache-max-entry as given; "" = the default, "0" = any size
  std::int64_t reference_cache_max_bytes = 0;        // resolved
  std::int64_t reference_cache_max_entry_bytes = 0;  // resolved; 0 = any size
  std::string inductor_cache_dir;  // with a compile backend: <artifact dir>/inductor-cache
};

/// Lists the interpreter's `torch.backends` entry points into `s` when the device may be one of them
/// (settings/device_choice.h), honouring TORCH_DEVICE_BACKEND_AUTOLOAD. False with a usage error when `auto` finds
/// several: `import torch` loads them all, and which one registers the device is not opcheck's to guess.
bool resolve_installed_backends(RunSettings& s, const EnvLookup& env, std::string& error);

/// Completes `s` from the environment (the device library, the Python device, the shard, the device's fault
/// variables), resolves the deadline and checks every value. `artifact_dir` holds inductor's caches. False with a
/// usage error (what is wrong and a Fix). Without `choose_device` (a run that only lists its cases: --collect-only)
/// no device is chosen, so the interpreter's backends are not listed: that costs a Python start, about a third of
/// listing 10,000 cases.
bool resolve_run_settings(RunSettings& s, const EnvLookup& env, const std::string& artifact_dir, std::string& error,
                          bool choose_device = true);

/// The device's fault variables set (and not empty) in `env`, as (name, value), in kDeviceEnvironment's order.
std::vector<std::pair<std::string, std::string>> device_environment_of(const EnvLookup& env);

/// The variables that decided where the device of `s` came from (with its device settings resolved), as (name,
/// value): PYTHONPATH, narrowed to the entries that hold a module the device imports (--device-import, or an
/// installed torch.backends entry point's, with the distributions declaring one); OPCHECK_PYTHON when Python hosts the
/// device (or a compile backend) and the interpreter is not the one a fresh shell finds (the build's);
/// TORCH_DEVICE_BACKEND_AUTOLOAD as set, when the device may be an installed backend. The device library needs none:
/// the rerun names it (--device-lib, absolute).
std::vector<std::pair<std::string, std::string>> origin_environment_of(const RunSettings& s, const EnvLookup& env);

/// How the device of `s` (resolved) is chosen, as the metrics' run.device_choice records it: `chosen` is what `auto`
/// resolves to (the caller names the device the executor took instead, once it has one).
DeviceChoice device_choice_of(const RunSettings& s);

/// How one setting shows in the two derivations. A setting with a flag is a rerun argument (one `flag value` pair per
/// value, none when it has no value); one with `environment` set is rerun as environment assignments (its values are
/// NAME=value); one with `identity` set is a part of the run's identity named so (all its values joined by "; ").
struct SettingField {
  const char* identity = nullptr;  // e.g. "reference dtype"; nullptr = the executor's facts stand for it
  const char* flag = nullptr;      // e.g. "--reference-dtype"
  bool environment = false;
  std::function<std::vector<std::string>(const RunSettings&)> values;  // empty = the default
  /// A part that decides which cases a shard runs, not what a case computes: merge and --resume hold to it, the
  /// results cache (by dedupe key) serves across it.
  bool split_only = false;
  /// A flag's command-line side: its help, the name of its value in the help ("" = CLI11's), the default the help
  /// shows ("" = none), and how one value given on the command line goes into the settings: "" when taken, else what
  /// is wrong with it (a usage error).
  const char* help = nullptr;
  const char* type_name = "";
  const char* default_text = "";
  bool repeatable = false;  // given again, each value is set in turn (--device-import); else one value
  bool is_switch = false;   // a flag without a value (--require-backend): `set` is called with ""
  std::function<std::string(RunSettings&, const std::string&)> set;
};

/// The settings a rerun must repeat and the identity must hold, in the order the rerun command gives them. The one
/// table of the settings flags: `run`, `repro` and `shrink` register their flags from it, and `repro` reads the
/// flags given back through it.
const std::vector<SettingField>& setting_fields();

/// The settings flags, in the table's order.
std::vector<std::string> setting_flags();

/// "" when `text` is a finite number greater than 0, else the usage error that says so for `flag` ("nan", "inf", 0
/// and negatives: a nan timeout would fail every case as TIMEOUT, a negative byte limit would mean nothing).
std::string positive_finite_error(const std::string& text, const char* flag);

/// "" when `text` is a whole number of at least `least` (and at most 2^31 - 1), else the usage error that says so for
/// `flag` (--repeat 0 would judge nothing, --maxfail -1 would wrap to a limit never reached).
std::string whole_number_error(const std::string& text, const char* flag, long long least);

/// The command-line part of a rerun: environment assignments, then arguments.
struct RerunArguments {
  std::vector<std::pair<std::string, std::string>> environment;
  std::vector<std::string> args;
};

/// What reruns a case under the same settings: `--device` resolved as the run resolved `auto`, the device library as
/// an absolute path, and every other field that has a value.
RerunArguments rerun_arguments(const RunSettings& s, const std::vector<SettingField>& fields = setting_fields());

/// One named part of a run's identity, as RunInfo::identity holds them.
using IdentityParts = std::vector<std::pair<std::string, std::string>>;

/// The identity parts that come from the settings (fields with an identity name), in the table's order.
IdentityParts settings_identity(const RunSettings& s, const std::vector<SettingField>& fields = setting_fields());

/// The options the exec layer takes, from the settings.
ExecOptions exec_options(const RunSettings& s);

}  // namespace opcheck
