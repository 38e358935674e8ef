// opcheck: checks that torch ops give the same answers on a device under test as on the CPU reference.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/cli.h"
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

// A first word that names no subcommand (`opcheck lst-cases`): the subcommand that was probably meant. CLI11 takes
// such a word for an extra argument and says only that a subcommand is required.
void suggest_subcommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return;
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  const std::string word = argv[1];
  if (std::find(names.begin(), names.end(), word) != names.end()) return;
  const std::string guess = opcheck::closest_spelling(word, names);
  std::cerr << "opcheck: '" << word << "' is not a subcommand";
  if (!guess.empty()) std::cerr << "; did you mean " << guess << "?";
  std::cerr << "\n  Fix: run `opcheck --help` for the list\n";
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
      "  opcheck validate                # the shipped manifests; opcheck validate PATH checks yours\n"
      "  opcheck run --model gpt_oss --device loopback\n"
      "Exit codes (pytest's): 0 ok, 1 failures, 2 interrupted or invalid input, 3 internal error, 4 usage error, "
      "5 nothing selected.");
  app.set_version_flag("--version", std::string("opcheck ") + OPCHECK_VERSION + " (built against libtorch " +
                                           OPCHECK_TORCH_VERSION + " from " + OPCHECK_TORCH_PREFIX + ")");
  app.require_subcommand(1);

  Commands commands;
  try {
    add_list_commands(app, commands);
    add_validate_command(app, commands);
    add_run_command(app, commands);
    add_report_commands(app, commands);
    add_import_command(app, commands);
    add_import_opinfo_command(app, commands);
    add_repro_command(app, commands);
    add_shrink_command(app, commands);
    add_sweep_command(app, commands);
  } catch (const std::logic_error& e) {
    // A table a command's flags are made from is unsound (report/report_format.h): no command can run.
    std::cerr << "opcheck: internal error: " << e.what();
    return kInternalError;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    if (rc != 0) {
      suggest_subcommand(app, argc, argv);
      suggest_flags(app, argc, argv);
    }
    return rc == 0 ? kOk : kUsageError;
  }
  commands.argv.assign(argv + 1, argv + argc);

  try {
    for (const auto& c : commands.entries)
      if (*c.app) return c.run();
  } catch (const std::exception& e) {
    std::cerr << "opcheck: internal error: " << e.what() << "\n";
    return kInternalError;
  }
  return kUsageError;
}
