// The Engine, the Executor of `opcheck run`: its set-up and workers, a case taken through its steps (CaseRun,
// exec/case_run.h) with its stage settled and its bundle kept, and the exec layer's factory.
#include "exec/engine.h"
#include "exec/startup_process.h"

#include <exception>
#include <memory>
#include <optional>
#include <string>

#include <ATen/Parallel.h>
#include <torch/version.h>

#include "exec/case_run.h"
#include "exec/cpu_features.h"
#include "exec/device_ops.h"
#include "exec/module_case.h"
#include "exec/python_device.h"
#include "exec/reference_cache.h"

namespace opcheck::exec {

Engine::Engine(const ExecOptions& opts, DeviceSetup device) : opts_(opts), device_(std::move(device)) {
  info_.torch_version = TORCH_VERSION;
  info_.device = device_.device.str();
  info_.device_name = device_.name;
  info_.device_lib = device_.lib;
  info_.device_lib_sha256 = device_.lib_sha256;
  info_.log_line = device_.log_line;
  info_.enabled_ops = device_.enabled_ops;
  info_.torch_path = OPCHECK_TORCH_PREFIX;
  info_.python_modules = device_.python_modules;
  info_.compile_backend = opts_.compile_backend;
  if (!device_.python_device.empty()) info_.device = device_.python_device;
  if (!opts_.save_failures_dir.empty())
    bundles_ = std::make_unique<FailureBundles>(opts_.save_failures_dir, opts_, info_);
  if (!opts_.reference_cache_dir.empty())
    reference_cache_ = std::make_unique<ReferenceCache>(opts_.reference_cache_dir, opts_.reference_cache_max_bytes,
                                                        opts_.reference_cache_max_entry_bytes);
}

bool Engine::starts_workers() const {
  // An installed backend has no --device-import.
  return startup_process_running() && (wants_python_host(opts_) || !device_.python_device.empty());
}

int Engine::start_worker(WorkerEntry entry, const WorkerChannels& channels, std::string* error) {
  std::string why;
  const int pid = start_worker_from_startup(entry, channels, why);
  if (pid < 0 && error != nullptr) *error = why;
  return pid;
}

bool Engine::prepare_worker(int device_index, std::string* error) {
  // Thread pools start here, in the worker, never in a parent that is about to fork.
  if (opts_.intra_op_threads > 0) at::set_num_threads(opts_.intra_op_threads);
  if (wants_python_host(opts_) || !device_.python_device.empty()) {
    // A worker from the start-up process has the interpreter already; one forked by the pool (--no-isolation runs
    // in the pool's own process) starts its own.
    PythonHostFacts facts;
    std::string why;
    if (python_host(python_host_config(opts_), facts, why) == nullptr) {
      if (error) *error = why;
      return false;
    }
  }
  std::string why;
  if (!use_device_index(device_, device_index, why)) {
    if (error) *error = why;
    return false;
  }
  if (device_index >= 0) info_.device = device_.device.str();
  if (reference_cache_) libtorch_build_digest();  // part of every cache key: read once, before the first case
  return true;
}

Result Engine::run(const Case& c) {
  Result r;
  r.case_id = c.id;
  // --save-failures: the bundle is staged before anything runs, so a worker that dies on the case leaves it.
  CaseEvidence evidence;
  // A module case leaves no bundle of its own: its traced op calls are op cases (docs/modules.md).
  FailureBundles* bundles = c.is_module() ? nullptr : bundles_.get();
  if (bundles) bundles->stage(c);
  try {
    run_case(c, r, bundles ? &evidence : nullptr);
  } catch (...) {
    if (is_allocation_failure(std::current_exception())) {
      // opcheck's own work (the host copy of an output, its comparison) needs more memory than there is: the case
      // is too large for this machine, which is no finding about the device.
      r.stage = Stage::INVALID_CASE;
      r.kind = VerdictKind::TooLargeForMachine;
      r.message = own_allocation_failure(c, r.phase, op_error_of(std::current_exception()).message);
    } else {
      // Every stage catches its own errors; reaching here is a bug in opcheck, reported rather than fatal.
      r.stage = Stage::CRASHED;
      r.message = "opcheck internal error: " + op_error_of(std::current_exception()).text();
    }
  }
  r.outcome = stage_outcome(r.stage);
  if (bundles) bundles->finish(c, r, evidence);
  return r;
}

// The case's one stage, decided where it ends: every report (case line, metrics, JUnit, failure groups, shrink) reads
// it. A device error a transfer op raised (the dispatcher's innermost op when it was thrown) is FAILED_TRANSFER
// whether it moved the inputs, the outputs, or ran inside the call.
static void settle_stage(Result& r) {
  if (r.stage != Stage::FAILED_RUNTIME) return;
  for (const DeviceOp& d : r.device_ops)
    if (d.raised && is_transfer_op(d.op)) r.stage = Stage::FAILED_TRANSFER;
}

void Engine::run_case(const Case& c, Result& r, CaseEvidence* ev) {
  if (c.is_module()) {  // a module case: built and run by the Python host, judged leaf by leaf (exec/module_case.h)
    run_module_case(opts_, device_.device, device_.compile_unsupported, c, r);
    settle_stage(r);
    return;
  }
  CaseRun run(*this, c, r, ev);
  if (std::optional<Verdict> verdict = run.steps()) {
    r.stage = verdict->stage;
    r.kind = verdict->kind;
    r.message = std::move(verdict->message);
    // A decomposition or the fallback that ran instead of the device's kernel is said, not left to be guessed.
    const std::string note = device_ops_note(r.resolved_op, r.device_ops);
    if (stage_outcome(r.stage) == Outcome::Failed && !note.empty()) r.message += "\n" + note;
    settle_stage(r);
    return;
  }
  r.stage = Stage::PASSED;
  settle_device_pass(r, device_.device, device_.name);
}

Result Engine::check_call(const Case& c) {
  Result r;
  r.case_id = c.id;
  if (c.is_module()) {
    r.stage = Stage::SKIPPED;
    r.message = "a module case: its module is imported and built when it runs";
    r.outcome = stage_outcome(r.stage);
    return r;
  }
  try {
    // The same resolution run_case starts with, so validate says what a run would.
    Resolution res = resolver_.resolve(c);
    if (!res.skip_reason.empty()) {
      r.stage = Stage::SKIPPED;
      r.message = res.skip_reason;
    } else if (!res.invocation) {
      r.stage = Stage::INVALID_CASE;
      r.kind = res.kind;
      r.message = res.error;
    } else {
      r.stage = Stage::PASSED;
      r.resolved_op = res.invocation->resolved_op;
    }
  } catch (...) {
    r.stage = Stage::INVALID_CASE;
    r.kind = VerdictKind::InternalError;
    r.message = "opcheck internal error: " + op_error_of(std::current_exception()).text();
  }
  r.outcome = stage_outcome(r.stage);
  return r;
}

}  // namespace opcheck::exec

extern "C" opcheck::Executor* opcheck_create_executor(const opcheck::ExecOptions* opts, std::string* error) {
  using namespace opcheck::exec;
  prepare_cpu();
  const opcheck::ExecOptions options = opts ? *opts : opcheck::ExecOptions{};
  DeviceSetup setup;
  std::string why;
  try {
    if (!setup_device(options, setup, why)) {
      if (error) *error = why;
      return nullptr;
    }
    auto* engine = new Engine(options, std::move(setup));
    // The start-up process served the device probe; workers that host no Python need it no longer.
    if (!engine->starts_workers()) stop_startup_process();
    return engine;
  } catch (...) {
    if (error) *error = "setting up the exec layer failed: " + op_error_of(std::current_exception()).text();
    return nullptr;
  }
}
