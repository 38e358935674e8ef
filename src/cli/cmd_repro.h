// `opcheck repro`: a standalone reproduction of one case — the opcheck command that runs it alone, or a PyTorch
// script that builds the same inputs and calls the op on the CPU and on the device. The flags only; the work is
// src/repro/.
#pragma once

#include <string>
#include <vector>

#include "cli/cli.h"
#include "opcheck/case.h"

namespace CLI {
class App;
}

namespace opcheck::cli {

/// Flags of `repro`.
struct ReproFlags {
  ManifestFlags manifest;
  std::string case_id;  // positional; optional with --bundle
  std::string bundle;   // a bundle folder, or a --save-failures folder holding the case's bundle
  bool python = false;  // print the PyTorch script instead of the opcheck command
  RunSettings settings;  // the run's settings flags (default: the bundle's, else the environment's)
  std::vector<std::string> given_settings;  // those flags given, in the settings table's spelling
  std::string config;  // status config (default: opcheck.yaml in a manifest folder)
};

/// Prints the reproduction on stdout. Exit 0; 4 for an unknown case or bundle; 2 when a manifest does not load.
int cmd_repro(const ReproFlags& f);

}  // namespace opcheck::cli
