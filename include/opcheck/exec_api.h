// The boundary between the front half and the libtorch exec layer (libopcheck_exec.so, loaded by `run`).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "opcheck/case.h"
#include "opcheck/result.h"

namespace opcheck {

enum class ReferenceDtype { Auto, Same, Float32, Float64 };

/// Options that shape execution (flags of `opcheck run`).
struct ExecOptions {
  std::string device = "auto";   // auto | cpu | loopback | privateuseone | <registered name> | cuda | ...
  std::string device_lib;        // PrivateUse1 backend library to dlopen (or OPCHECK_DEVICE_LIB)
  std::string device_name;       // name seen by skip_if/config/reports; default: the backend's name
  std::string loopback_lib;      // path of libopcheck_loopback.so (found next to the exec library when empty)
  ReferenceDtype reference_dtype = ReferenceDtype::Auto;
  int repeat = -1;               // device runs per case; -1 = 2 on a non-CPU device, 1 on cpu
  std::int64_t max_case_bytes = 0;  // 0 = no limit
  int intra_op_threads = 0;      // 0 = libtorch default
  /// --save-failures DIR: every failed or errored case leaves a bundle folder here that reruns it alone
  /// (src/exec/bundle.h); "" = none.
  std::string save_failures_dir;
  /// --device-import: Python modules whose import registers the device under test (torch-spyre: torch_spyre).
  /// Each worker then hosts a Python interpreter (src/pyhost/); no PrivateUse1 library is loaded besides.
  std::vector<std::string> device_imports;
  /// --compile-backend: device calls run as torch.compile(backend=...) of the op's Python callable; "" = eager.
  std::string compile_backend;
  /// The interpreter whose environment the Python host uses; "" = the one opcheck was built with.
  std::string python;
  /// The interpreter's `torch.backends` entry points ("name = module:attr (distribution version)"), listed by the run's
  /// settings when the device may be one of them (settings/device_choice.h). `import torch` loads them, so a device one
  /// registers is hosted by Python in the workers with no --device-import.
  std::vector<std::string> installed_backends;
  /// Why no entry point is used although some may be installed (TORCH_DEVICE_BACKEND_AUTOLOAD=0, the interpreter
  /// failed); "" = the list is what was found.
  std::string installed_backends_note;
  /// Inductor's on-disk cache (TORCHINDUCTOR_CACHE_DIR unless the environment sets it); "" = inductor's default.
  std::string inductor_cache_dir;
  /// --reference-cache DIR: CPU references kept across runs (src/exec/reference_cache.h); "" = none.
  std::string reference_cache_dir;
  std::int64_t reference_cache_max_bytes = 0;        // --reference-cache-size: the folder's cap
  std::int64_t reference_cache_max_entry_bytes = 0;  // --reference-cache-max-entry: larger entries are not kept; 0 = any
  /// The `opcheck run` arguments that rerun a case under this run's settings (runner/run_settings.h), which failure
  /// bundles record.
  std::vector<std::string> rerun;
  /// The environment assignments that go with `rerun`: the device's fault variables and the variables that decided
  /// where the device came from (PYTHONPATH entries, OPCHECK_PYTHON, ...), as (name, value).
  std::vector<std::pair<std::string, std::string>> rerun_environment;
  /// --module-ops DIR: every module case's CPU-run ATen calls written as op manifests there (each distinct call once
  /// across the run); "" = none.
  std::string module_ops_dir;
  /// --module-memory-budget: bytes a module case's copies (CPU, device, float64) may take; a module past it is not
  /// run. -1 = half the machine's memory; 0 = no limit.
  std::int64_t module_memory_budget = -1;
  /// --start-timeout: seconds a Python device's start-up process may take to import torch and the device modules
  /// (and a worker to start); it is stopped then, and the run reports the device as not started.
  double start_timeout_s = 300;
  /// Set (by the run's SIGINT/SIGTERM handler) when the run must stop: a start in progress ends within 200 ms.
  const volatile bool* stop_requested = nullptr;
};

class Executor;

/// A worker's ends of the pool's channels, for a worker a Python device's start-up process starts (it shares no
/// memory with the pool: cases come over `request_fd` in full, runner/result_wire.h).
struct WorkerChannels {
  int request_fd = -1;
  int result_fd = -1;
  int capture_fd = -1;  // the worker's stdout and stderr
  int clock_fd = -1;    // a CaseClock to map shared; -1 = none
  int device_index = -1;
  std::uint64_t max_output = 0;
  int parent = 0;  // the pool's process id: the worker dies with it
};

/// A worker's body (runner/worker_pool.cpp), run in the started worker with that process's executor; never returns.
using WorkerEntry = void (*)(Executor& ex, const WorkerChannels& channels);

/// Facts about the execution environment, for logs and reports.
struct ExecInfo {
  std::string torch_version;
  std::string device;        // resolved device string, e.g. "privateuseone:0", "cpu"
  std::string device_name;   // name used by skip_if and reports
  std::string device_lib;    // library loaded, or ""
  std::string device_lib_sha256;
  std::vector<std::string> enabled_ops;  // aten ops with a kernel for the device's dispatch key (coverage)
  std::string log_line;      // how the device was chosen, for the run's first log line
  std::string torch_path;    // folder of the libtorch the exec layer was built against
  /// With a Python host: the interpreter's torch and each --device-import with its version ("torch_spyre 1.2").
  std::vector<std::string> python_modules;
  std::string compile_backend;  // "" = eager
};

/// Where a running case's time goes, shared by a worker and the parent that enforces --timeout: the time the executor
/// spends on opcheck's own work (building inputs, digests, comparing) is not charged to the case's timeout. Times are
/// nanoseconds of std::chrono::steady_clock, which every process of the machine reads alike.
struct CaseClock {
  std::atomic<std::uint64_t> case_tag{0};   // which case the figures are about (set by the worker; 0 = none)
  std::atomic<std::int64_t> own_ns{0};      // own work finished so far in that case
  std::atomic<std::int64_t> own_since_ns{0};  // start of own work in progress; 0 = none
  std::atomic<int> phase{0};  // the CasePhase running now, so that a worker that dies still says where it was
};

/// Runs cases on the reference and the device under test. One instance per process.
class Executor {
 public:
  virtual ~Executor() = default;
  virtual const ExecInfo& info() const = 0;
  /// Runs one case (skip_if/xfail_if already evaluated by the caller). Never throws for a bad case:
  /// every problem becomes a Result with the right Stage.
  virtual Result run(const Case& c) = 0;
  /// Called once in each worker process right after it is forked, before its first case (and once in-process with
  /// --no-isolation): make this process drive device index `device_index` (-1: the configured device) and start
  /// per-process state such as intra-op threads, which must not exist in the parent before it forks. Returns false
  /// and sets *error when this process cannot run cases.
  virtual bool prepare_worker(int device_index, std::string* error) {
    if (device_index < 0) return true;
    if (error != nullptr) *error = "this executor cannot select device index " + std::to_string(device_index);
    return false;
  }
  /// Resolves the case's op and binds its arguments against the schemas, running nothing (`validate --ops`): PASSED
  /// with resolved_op set, INVALID_CASE with the message a run would give, or SKIPPED for a call that is not a
  /// tensor op. An executor that cannot check calls says so as INVALID_CASE.
  virtual Result check_call(const Case& c) {
    Result r;
    r.case_id = c.id;
    r.stage = Stage::INVALID_CASE;
    r.outcome = Outcome::Error;
    r.message = "this executor cannot check op calls without running them";
    return r;
  }
  /// Where to publish opcheck's own time while a case runs (see CaseClock); an executor that never does charges
  /// everything to the timeout.
  virtual void set_case_clock(CaseClock* clock) { (void)clock; }
  /// Whether workers come from a start-up process that has imported the Python device once (start_worker) rather
  /// than from a fork of the caller.
  virtual bool starts_workers() const { return false; }
  /// Starts a worker from the start-up process, running entry(its executor, channels): a child of this process
  /// (which becomes their reaper). Its pid, or -1 and *error.
  virtual int start_worker(WorkerEntry entry, const WorkerChannels& channels, std::string* error) {
    (void)entry;
    (void)channels;
    if (error != nullptr) *error = "this executor has no start-up process";
    return -1;
  }
};

/// Signature of the factory exported by libopcheck_exec.so as `opcheck_create_executor`.
/// Returns nullptr and fills *error when the device cannot be set up.
using CreateExecutorFn = Executor* (*)(const ExecOptions* opts, std::string* error);

}  // namespace opcheck

extern "C" opcheck::Executor* opcheck_create_executor(const opcheck::ExecOptions* opts, std::string* error);
