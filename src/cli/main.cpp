// opcheck: checks that torch ops give the same answers on a device under test as on the CPU reference.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/cmd_report.h"
#include "cli/cmd_import.h"
#include "cli/cmd_repro.h"
#include "cli/cmd_run.h"
#include "common/spelling.h"

using namespace opcheck::cli;
using opcheck::kInternalError;
using opcheck::kOk;
using opcheck::kUsageError;

namespace {

// After any parse error: for each `--flag` on the command line that the chosen subcommand does not have, the flag
// that was probably meant, as pytest's argparse says it. Scanning the words (not CLI11's message) also covers the
// errors CLI11 reports first, such as a required option missing because its name was mistyped.
void suggest_flags(const CLI::App& app, int argc, char** argv) {
  const CLI::App* cmd = &app;
  for (const CLI::App* sub : app.get_subcommands()) cmd = sub;
  if (cmd == &app && argc > 1) {
    try {
      cmd = app.get_subcommand(argv[1]);
    } catch (const CLI::Error&) {
      cmd = &app;
    }
  }
  std::vector<std::string> flags;
  for (const CLI::App* a : {cmd, static_cast<const CLI::App*>(&app)})
    for (const CLI::Option* opt : a->get_options()) {
      for (const auto& l : opt->get_lnames()) flags.push_back("--" + l);
      for (const auto& s : opt->get_snames()) flags.push_back("-" + s);
    }
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;
    if (word.size() < 3 || word.compare(0, 2, "--") != 0) continue;
    const std::string flag = word.substr(0, word.find('='));
    if (std::find(flags.begin(), flags.end(), flag) != flags.end()) continue;
    const std::string guess = opcheck::closest_spelling(flag, flags);
    if (!guess.empty()) std::cerr << "opcheck: " << flag << ": did you mean " << guess << "?\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"opcheck: per-op conformance runner for PyTorch devices (PrivateUse1 backends such as Spyre).\n"
               "Loads per-model YAML manifests of real op calls, runs each call on the device under test and on the "
               "CPU reference, compares, and writes JUnit XML and JSON metrics.",
               "opcheck"};
  app.footer(
      "Examples:\n"
      "  opcheck list-models\n"
      "  opcheck list-cases --model gpt_oss -k linear\n"
      "  opcheck validate ../manifests\n"
      "  opcheck run --model gpt_oss --device loopback\n"
      "Exit codes (pytest's): 0 ok, 1 failures, 2 interrupted or invalid input, 3 internal error, 4 usage error, "
      "5 nothing selected.");
  app.set_version_flag("--version", std::string("opcheck ") + OPCHECK_VERSION + " (built against libtorch " +
                                           OPCHECK_TORCH_VERSION + " from " + OPCHECK_TORCH_PREFIX + ")");
  app.require_subcommand(1);

  ManifestFlags list_models_flags;
  auto* list_models = app.add_subcommand("list-models", "One line per manifest: model, file, case count, variant");
  list_models->footer("Example: opcheck list-models --manifests ../shared/fixtures/torch-spyre");
  add_manifest_flags(*list_models, list_models_flags, false);

  ManifestFlags list_cases_flags;
  bool list_json = false;
  auto* list_cases = app.add_subcommand("list-cases", "One line per selected case: model::case  op  (path:line)");
  list_cases->footer("Example: opcheck list-cases --model gpt-oss-20b -m \"not bf16operation\" -k linear\n"
                     "         opcheck list-cases 'gpt_oss::torch.add.*' --deselect gpt_oss::torch.add.3");
  add_manifest_flags(*list_cases, list_cases_flags, true);
  add_case_id_args(*list_cases, list_cases_flags);
  list_cases->add_flag("--json", list_json, "Print a JSON array instead");

  ManifestFlags validate_flags;
  ValidateFlags validate_more;
  auto* validate = app.add_subcommand("validate", "Check manifests and report every problem with file:line (exit 2 on errors)");
  validate->footer("Example: opcheck validate manifests/ my_model.yaml\n"
                   "         opcheck validate --ops manifests/   # also resolve every op and bind its arguments");
  add_manifest_flags(*validate, validate_flags, false);
  validate->add_flag("--strict-markers", validate_flags.strict_markers, "A mark not registered in markers.yaml is an error");
  validate->add_option("-m", validate_flags.mark_expr,
                       "Check a marker expression (as run -m takes it) against the marks the manifests use and "
                       "markers.yaml declares")
      ->type_name("EXPR");
  validate->add_option("--config", validate_more.config,
                       "Status config to check against the manifests (stale and ambiguous entries); default: "
                       "opcheck.yaml in a manifest folder")
      ->type_name("FILE");
  validate->add_flag("--ops", validate_more.ops,
                     "Also resolve every case's op and bind its arguments against the op schemas, as a run would "
                     "(loads libtorch; nothing runs)");
  validate->add_option("--device-import", validate_more.device_imports,
                       "With --ops: Python module to import first, so the ops it registers resolve (repeatable)")
      ->type_name("MODULE")
      ->allow_extra_args(false);
  validate->add_option("paths", validate_more.paths, "Manifest files or folders (default: as --manifests)");

  RunFlags run_flags;
  auto* run = app.add_subcommand("run", "Run the selected cases on the device under test and the CPU reference");
  run->footer(
      "Example: opcheck run --model gpt_oss --device loopback -m \"not bf16operation\"\n"
      "         opcheck run gpt_oss::torch.add.2 '*::torch.mul.1' --device cpu   # by case id, globs allowed\n\n"
      "Fault injection on --device loopback, to prove a failure mode is caught:\n"
      "  OPCHECK_LOOPBACK_FAULTS='OP=KIND[;OP=KIND...]', OP an ATen name with or without its overload\n"
      "  (aten::exp, aten::add.Tensor), as the reports' resolved op names it (aten::softmax.int for torch.softmax);\n"
      "  an operator the dispatcher does not know stops the run. KIND:\n"
      "    bias:X   adds X to every float or complex output element (INCORRECT_RESULT)\n"
      "    ulp      flips the lowest bit of the first output element (INCORRECT_RESULT)\n"
      "    zeros    zeroes the outputs (INCORRECT_RESULT)\n"
      "    nondet   flips a different element on every call (NONDETERMINISTIC)\n"
      "    segv     raises SIGSEGV (CRASHED)       abort    calls abort() (CRASHED)\n"
      "    hang     never returns (TIMEOUT)        oom      fails the op's next device allocation\n"
      "    throw    raises a c10::Error (FAILED_RUNTIME)\n"
      "    notimpl  raises NotImplementedError (NOT_SUPPORTED)\n"
      "  e.g. OPCHECK_LOOPBACK_FAULTS='aten::add.Tensor=bias:1e-2;aten::exp=segv' opcheck run --device loopback\n"
      "The Python device pyloop (--device-import opcheck_pyloop --device pyloop) takes\n"
      "  OPCHECK_PYLOOP_FAULTS='OP=KIND[;...]', KIND bias:X (INCORRECT_RESULT), raise (FAILED_RUNTIME),\n"
      "  segv (CRASHED) or hang (TIMEOUT).");
  add_run_flags(*run, run_flags);

  std::vector<std::string> merge_inputs;
  std::string merge_junit, merge_metrics;
  auto* merge = app.add_subcommand("merge", "Combine shard metrics files into the reports one machine would have written");
  merge->footer("Example: opcheck merge shard-*.json --junit-xml all.xml --metrics-json all.json");
  merge->add_option("metrics", merge_inputs, "Metrics files of the shards")->required();
  merge->add_option("--junit-xml", merge_junit, "Write the merged JUnit XML")->type_name("PATH");
  merge->add_option("--metrics-json", merge_metrics, "Write the merged metrics file")->type_name("PATH");
  bool merge_allow_partial = false;
  merge->add_flag("--allow-partial", merge_allow_partial,
                  "Merge an incomplete shard set (what is missing is printed and the merged run records its shards)");

  std::string diff_old, diff_new;
  auto* diff = app.add_subcommand("diff", "Regressions, fixes, added and removed cases between two metrics files (exit 1 on regressions)");
  diff->footer("Example: opcheck diff last-night.json tonight.json");
  diff->add_option("old", diff_old, "Earlier metrics file")->required();
  diff->add_option("new", diff_new, "Later metrics file")->required();

  std::string report_metrics, report_history, report_html;
  auto* report = app.add_subcommand("report", "Write a self-contained HTML dashboard of a metrics file (with --history: the nightly trend)");
  report->footer("Example: opcheck report tonight.json --history nightly/ --html report.html");
  report->add_option("metrics", report_metrics, "Metrics file of the run")->required();
  report->add_option("--history", report_history, "Folder of earlier runs' metrics files, for the trend")->type_name("DIR");
  report->add_option("--html", report_html, "Write the HTML report here")->type_name("PATH")->required();

  ImportFlags import_flags;
  auto* import_traces = add_import_traces_command(app, import_flags);
  std::vector<std::string> run_traces;
  add_run_traces_flag(*run, run_traces);

  ReproFlags repro_flags;
  auto* repro = add_repro_command(app, repro_flags);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    if (rc != 0) suggest_flags(app, argc, argv);
    return rc == 0 ? kOk : kUsageError;
  }
  run_flags.argv.assign(argv + 1, argv + argc);

  try {
    if (*list_models) return cmd_list_models(list_models_flags);
    if (*list_cases) return cmd_list_cases(list_cases_flags, list_json);
    if (*validate) return cmd_validate(validate_flags, validate_more);
    if (*import_traces) return cmd_import_traces(import_flags);
    if (*run && !run_traces.empty())
      if (int rc = prepare_trace_run(run_traces, run_flags); rc >= 0) return rc;
    if (*run) return cmd_run(run_flags);
    if (*merge) return cmd_merge(merge_inputs, merge_junit, merge_metrics, merge_allow_partial);
    if (*diff) return cmd_diff(diff_old, diff_new);
    if (*report) return cmd_report(report_metrics, report_history, report_html);
    if (*repro) return cmd_repro(repro_flags);
  } catch (const std::exception& e) {
    std::cerr << "opcheck: internal error: " << e.what() << "\n";
    return kInternalError;
  }
  return kUsageError;
}
