// `opcheck shrink` and its flags; the search is the runner's (runner/shrink.h).
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <thread>

#include "cli/cli.h"
#include "cli/exec_library.h"
#include "runner/shrink.h"

namespace opcheck::cli {

/// The flags shrink and sweep share with run: the case, its manifests and selection, the device and its settings.
void add_probe_flags(CLI::App& app, ProbeRequest& p, bool& no_isolation) {
  app.add_option("case", p.case_id, "Case id (model::case), as list-cases and the reports print it")->required();
  add_manifest_flags(app, p.selection, true);
  add_settings_flags(app, p.settings);
  app.add_option("--config", p.config, "Status config (default: opcheck.yaml in a manifest folder)")->type_name("FILE");
  app.add_option("-j,--jobs", p.settings.jobs, "Worker processes (default: one per core)")->check(positive_finite("-j"));
  app.add_flag("--no-isolation", no_isolation, "Run calls in this process (debugging; a crash ends it)");
}

/// Runs `request` with the exec layer loaded, as run does: the probe's settings take --no-isolation.
int run_probe(ProbeRequest& p, bool no_isolation, const std::vector<std::string>& argv,
              const std::function<int(RunHost&)>& body) {
  ExecLibrary exec_library;
  p.settings.isolation = !no_isolation;
  p.shipped_manifests = shipped_manifest_dir();
  p.binary = opcheck_binary();
  p.argv = argv;
  RunHost host{std::cout, std::cerr,
               [&exec_library](const ExecOptions& opts, std::string& err, bool& setup_failed) {
                 return exec_library.create(opts, err, setup_failed);
               },
               {}, static_cast<int>(std::thread::hardware_concurrency())};
  return body(host);
}

void add_shrink_command(CLI::App& app, Commands& commands) {
  auto r = std::make_shared<ShrinkRequest>();
  auto no_isolation = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "shrink", "Find the smallest call that still fails the way a case fails (same failure signature): fewer and "
                "smaller dims, contiguous layouts, simpler values, scalar arguments at their defaults");
  cmd->footer(
      "Examples (the shipped manifests; add --manifests PATH for others):\n"
      "  OPCHECK_LOOPBACK_FAULTS='aten::mul.Tensor=bias:1e-1' opcheck shrink gpt_oss::torch.mul.3 --device loopback -o shrunk\n"
      "  OPCHECK_LOOPBACK_FAULTS='aten::mul.Tensor=bias:1e-1' opcheck run --manifests shrunk/minimal.yaml --device loopback\n"
      "  python3 shrunk/repro.py   # plain PyTorch, the fault carried\n"
      "Each candidate call runs in a worker process as `run` runs a case: a crash or hang is that call's verdict.\n"
      "A candidate is kept when it fails with the case's failure signature (stage, op, masked message).\n"
      "Writes DIR/minimal.yaml (the minimal call as a manifest, case MODEL::CASE.min), DIR/repro.py (plain PyTorch,\n"
      "python3 with torch) and DIR/shrink.json (both calls, signatures, the steps kept, what stopped it).\n"
      "Exit codes: 0 wrote a smaller failing call, or the call is already minimal; 1 the case does not fail;\n"
      "2 interrupted before the case ran; 3 a file could not be written; 4 usage error (unknown case, flags).");
  add_probe_flags(*cmd, r->probe, *no_isolation);
  cmd->add_option("-o,--output", r->out_dir, "Folder for minimal.yaml, repro.py and shrink.json")
      ->type_name("DIR")
      ->required();
  cmd->add_option("--budget-steps", r->budget_steps, "Candidate calls to run at most")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--budget-s", r->budget_s, "Seconds after which no new candidate starts")
      ->type_name("SECONDS")
      ->capture_default_str()
      ->check(positive_finite("--budget-s"));
  commands.add(cmd, [r, no_isolation, &commands] {
    r->library_dirs = library_dirs();
    return run_probe(r->probe, *no_isolation, commands.argv,
                     [&](RunHost& host) { return shrink_request(*r, host); });
  });
}

}  // namespace opcheck::cli
