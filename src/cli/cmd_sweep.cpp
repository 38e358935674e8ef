// `opcheck sweep` and its flags; the variants and the table are the runner's (runner/sweep.h).
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <memory>

#include "cli/cli.h"
#include "runner/sweep.h"

namespace opcheck::cli {

void add_sweep_command(CLI::App& app, Commands& commands) {
  auto r = std::make_shared<SweepRequest>();
  auto no_isolation = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "sweep", "Run one case's call across dtypes, layouts and nearby shapes and print a table of verdicts, one row "
               "per variant, to see where failing starts and stops");
  cmd->footer(
      "Examples (the shipped manifests; add --manifests PATH for others):\n"
      "  OPCHECK_LOOPBACK_FAULTS='aten::mul.Tensor=bias:1e-1' opcheck sweep gpt_oss::torch.mul.3 --device loopback\n"
      "  opcheck sweep gpt_oss::torch.mul.3 --device loopback --max-variants 10 --junit-xml sweep.xml --metrics-json sweep.json\n"
      "Variants: every dtype of fp32, fp16, bf16, int32, int64 with each layout (as written, contiguous, transposed,\n"
      "sliced with step 2, storage offset 3), then each dim position at 1, +-1 and the powers of two around it.\n"
      "Each variant is a case with the id MODEL::CASE[dtype,layout,shapes] in the reports.\n"
      "Exit codes are run's: 0 every variant passed, 1 a variant failed, 2 interrupted, 3 a report could not be\n"
      "written, 4 usage error.");
  add_probe_flags(*cmd, r->probe, *no_isolation);
  cmd->add_option("--max-variants", r->max_variants, "Variants to run at most (the original call first)")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  add_report_flags(*cmd, r->reports, kSweepCommand);
  commands.add(cmd, [r, no_isolation, &commands] {
    r->color = isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR");
    return run_probe(r->probe, *no_isolation, commands.argv,
                     [&](RunHost& host) { return sweep_request(*r, host); });
  });
}

}  // namespace opcheck::cli
