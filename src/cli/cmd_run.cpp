// `opcheck run`: its flags, which fill the run's request; the runner (runner/run.h) does the rest.
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include "cli/cli.h"
#include "cli/cmd_import.h"
#include "cli/cmd_run.h"
#include "cli/exec_library.h"
#include "common/fault_kinds.h"
#include "common/child_processes.h"

namespace opcheck::cli {
namespace {

// The end of a run that got as far as its reports: output is flushed and the process ends here, without freeing
// every record and manifest and without libtorch's static destructors (together ~80 ms for 10,000 cases). Every
// file the run wrote is complete and closed by now; the workers have exited. What else is left (the device's start-up
// process, a helper a --device-import module forked) is ended first, so that nothing the run started outlives it.
[[noreturn]] void end_process(int rc) {
  end_child_processes();
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(rc);
}

void add_run_flags(CLI::App& app, RunFlags& f) {
  add_manifest_flags(app, f.request.selection, true);
  add_case_id_args(app, f.request.selection);
  add_settings_flags(app, f.request.settings);
  app.add_flag("--no-dedupe", f.request.no_dedupe, "Run every occurrence, even when the same call appears again");
  app.add_flag("--collect-only,--co", f.request.collect_only,
               "Print the plan (unique cases and what each dedupes) without running anything or loading libtorch");
  app.add_option("--shard", f.request.settings.shard,
                 "Run shard I of N of the unique cases (0-based), e.g. 1/3; also OPCHECK_SHARD_INDEX/"
                 "OPCHECK_TOTAL_SHARDS or JOB_COMPLETION_INDEX")
      ->type_name("I/N");
  app.add_option("--durations-from", f.request.settings.durations_from,
                 "Split the shards by the case times an earlier run recorded (its --metrics-json file, merged or not, "
                 "or its journal.jsonl) instead of by size; cases it does not know are estimated from their size. "
                 "Give every shard the same file")
      ->type_name("FILE");
  app.add_option("--maxfail", f.request.maxfail, "Stop after N failures or errors (0: never)")
      ->type_name("N")
      ->check(whole_number("--maxfail", 0));
  app.add_flag("-x,--exitfirst", f.exitfirst, "Stop after the first failure or error (--maxfail 1)");
  app.add_option("--durations", f.request.durations, "Show the N slowest cases before the summary (0: all)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--shrink", f.request.shrink,
               "Shrink each failure group's example to the smallest call that fails the same way (as opcheck shrink, "
               "at most 100 calls and 60 s per group); metrics carry it as failure_groups[].minimal");
  app.add_flag("--no-groups", f.no_groups,
               "Leave the failure groups (root causes, largest first) out of the console: failures case by case only");
  app.add_option("--deadline", f.request.settings.deadline, "End the run after this long, e.g. 90m, 2h: no case starts after it, and the cases still running "
                 "are ended (not run (deadline)); the reports follow within 2 s")
      ->type_name("DURATION");
  add_report_flags(app, f.request.reports, kRunCommand);
  app.add_option("--artifact-dir", f.request.session.artifact_dir, "Where the journal of results (journal.jsonl) is kept")
      ->capture_default_str();
  app.add_option("--results-cache", f.request.session.results_cache,
                 "Keep verdicts by dedupe key in FILE (valid for the same opcheck, libtorch and device library)")
      ->type_name("FILE");
  app.add_flag("--reuse-results", f.request.session.reuse_results,
               "Serve unchanged cases from --results-cache instead of running them (off by default)");
  app.add_flag("--resume", f.request.session.resume, "Continue a killed run: reuse the results in the artifact dir's journal");
  app.add_flag("--last-failed,--lf", f.request.session.last_failed,
               "Run only what failed or errored in the previous run (its journal); everything when nothing did");
  app.add_option("--baseline", f.request.baseline,
                 "Compare with an earlier metrics file at the end; exit 1 on regressions, 2 when it ran on another "
                 "device")
      ->type_name("OLD.json");
  app.add_flag("--allow-device-change", f.request.allow_device_change,
               "Compare with a --baseline of another device (its type or name) anyway; the change heads the comparison");
  app.add_option("-j,--jobs", f.request.settings.jobs, "Worker processes (default: one per core, one intra-op thread each)")
      ->check(positive_finite("-j"));
  app.add_option("--intra-op-threads", f.request.settings.intra_op_threads,
                 "libtorch intra-op threads per worker (default: cores / jobs)")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  app.add_flag("--no-isolation", f.no_isolation, "Run cases in this process (debugging; a crash ends the run)");
  app.add_option("--devices", f.request.settings.devices, "Device indices of one backend, one worker per index, e.g. 0,1")
      ->delimiter(',')
      ->allow_extra_args(false);
  app.add_option("--config", f.request.config,
                 "Status config (known failures, skips, tolerances per device); default: opcheck.yaml in a "
                 "manifest folder")
      ->type_name("FILE");
  app.add_option("--save-failures", f.request.settings.save_failures_dir,
                 "Write a folder per failed or errored case into DIR: the case alone as a manifest of its exact input "
                 "tensors, the device and reference outputs, and a README with the commands that rerun it")
      ->type_name("DIR");
  app.add_option("--module-ops", f.request.settings.module_ops_dir,
                 "Write the ATen calls of every module case's CPU run into DIR as op manifests with their very "
                 "inputs, each distinct call once across the run (docs/modules.md): `run --manifests DIR` then covers "
                 "exactly the ops the layers run")
      ->type_name("DIR");
  app.add_flag("--xpass-ok", f.request.policy.xpass_ok,
               "A case expected to fail that passes (XPASS) does not fail the run");
  app.add_flag("--not-supported-ok", f.request.policy.not_supported_ok,
               "A call the device has no kernel for (NOT_SUPPORTED) does not fail the run; JUnit then writes it as "
               "skipped");
  app.add_option("--tb", f.tb,
                 "Failures section after the run, as pytest's --tb: short (file:line, op and overload, the message "
                 "with its figures, the repro command), long (everything the reports carry, captured stderr "
                 "included), no (none); auto: short, but over 20 failures a block per failure group (its example), "
                 "the others a line each in the short summary")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "short", "long", "no"}));
  app.add_option("-r", f.report_chars,
                 "Short summary, as pytest's -r: f failed, E error, s skipped, x xfailed, X xpassed, p passed, "
                 "a all but passed, A all, N none (e.g. -rA, -rfE)")
      ->type_name("CHARS")
      ->capture_default_str();
  app.add_flag("-v,--verbose", f.request.verbose, "A line per case");
  app.add_flag("-q,--quiet", f.request.quiet, "Only failures and the summary line");
}


// Colour only for a person at a terminal, and never when NO_COLOR is set (no-color.org).
bool color_stdout() { return isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR"); }

int cmd_run(RunFlags& f, const std::vector<std::string>& argv) {
  RunRequest& r = f.request;
  // libtorch loads on another thread while the manifests are read and planned.
  std::optional<ExecLibrary> exec_library;
  if (!r.collect_only) exec_library.emplace();
  std::string error;
  if (!parse_traceback_style(f.tb, r.failures.style) || !parse_report_chars(f.report_chars, r.report_chars, error)) {
    std::cerr << "opcheck: error: " << (error.empty() ? "--tb must be auto, short, long or no" : error) << "\n";
    return kUsageError;
  }
  if (!f.traces.empty())
    if (int rc = prepare_trace_run(f.traces, r); rc >= 0) return rc;
  if (f.exitfirst) r.maxfail = 1;
  r.failure_groups = !f.no_groups;
  r.settings.isolation = !f.no_isolation;
  r.shipped_manifests = shipped_manifest_dir();
  r.binary = opcheck_binary();
  r.argv = argv;
  r.color = color_stdout();
  r.progress = isatty(STDERR_FILENO);
  RunHost host{std::cout, std::cerr,
               [&exec_library](const ExecOptions& opts, std::string& err, bool& setup_failed) {
                 return exec_library->create(opts, err, setup_failed);
               },
               [](int rc) { end_process(rc); }, static_cast<int>(std::thread::hardware_concurrency())};
  return run_request(std::move(r), host);
}

}  // namespace

void add_run_command(CLI::App& app, Commands& commands) {
  auto f = std::make_shared<RunFlags>();
  auto* run = app.add_subcommand("run", "Run the selected cases on the device under test and the CPU reference");
  // The fault kinds' lines come from their one table (src/common/fault_kinds.h).
  run->footer(
      std::string("Example: opcheck run --model gpt_oss --device loopback -m \"not bf16operation\"\n"
      "         opcheck run gpt_oss::torch.add.2 '*::torch.mul.1' --device cpu   # by case id, globs allowed\n\n"
      "Fault injection on --device loopback, to prove a failure mode is caught:\n"
      "  OPCHECK_LOOPBACK_FAULTS='OP=KIND[;OP=KIND...]', OP an ATen name with or without its overload\n"
      "  (aten::exp, aten::add.Tensor), as the reports' resolved op names it (aten::softmax.int for torch.softmax);\n"
      "  an operator the dispatcher does not know stops the run. KIND:\n") +
      fault_kind_help(4, 116) +
      "  e.g. OPCHECK_LOOPBACK_FAULTS='aten::add.Tensor=bias:1e-2;aten::rsqrt=segv' opcheck run --model gpt_oss\n"
      "  A fault whose op no case reached on the device is a warning (\"fault ... never fired\").\n"
      "  OPCHECK_LOOPBACK_MODE='MODE[,MODE...]' makes loopback behave like a real accelerator: fork_sensitive (a\n"
      "  process forked after using the device fails, as CUDA does), precise (float64 compute, rounded once),\n"
      "  stats_fp32 (norm statistics in float32 for fp16/bf16), any_writer (repeated-index writes in reverse,\n"
      "  ties broken the other way), shuffle_accumulate (index accumulations in another order every call,\n"
      "  products and sums in reverse).\n"
      "The Python device pyloop (--device-import opcheck_pyloop --device pyloop) takes\n"
      "  OPCHECK_PYLOOP_FAULTS='OP=KIND[;...]', KIND bias:X (INCORRECT_RESULT), host (INCORRECT_RESULT),\n"
      "  raise (FAILED_RUNTIME), segv (CRASHED) or hang (TIMEOUT).");
  add_run_flags(*run, *f);
  add_run_traces_flag(*run, f->traces);
  commands.add(run, [f, &commands] { return cmd_run(*f, commands.argv); });
}

}  // namespace opcheck::cli
