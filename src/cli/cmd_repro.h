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
  std::string case_id;      // positional; optional with --bundle
  std::string bundle;       // a bundle folder, or a --save-failures folder holding the case's bundle
  bool python = false;      // print the PyTorch script instead of the opcheck command
  std::string device;       // default: the bundle's device, else auto
  std::string device_lib;   // default: the bundle's, else OPCHECK_DEVICE_LIB
  std::string device_name;  // for the status config's device overrides
  std::vector<std::string> device_imports;  // --device-import: modules that register the device (default: the bundle's)
  std::string compile_backend;              // --compile-backend (default: the bundle's)
  std::string config;       // status config (default: opcheck.yaml in a manifest folder)
};

/// Registers the `repro` subcommand on `app`.
CLI::App* add_repro_command(CLI::App& app, ReproFlags& f);

/// Prints the reproduction on stdout. Exit 0; 4 for an unknown case or bundle; 2 when a manifest does not load.
int cmd_repro(const ReproFlags& f);

}  // namespace opcheck::cli
