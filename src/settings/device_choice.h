// What `--device auto` means, in one place: the run, its failure bundles and `repro` all decide it here; and the
// backends torch loads on its own (`torch.backends` entry points), which `auto` and `--device NAME` may take.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "opcheck/report.h"

namespace opcheck {

/// The device `--device auto` (or no --device, "") stands for, in order: the PrivateUse1 device when modules
/// register one (`device_imports`) or a device library is configured; else the one backend installed as a
/// `torch.backends` entry point (`installed`, which `import torch` loads); else opcheck's loopback stand-in. Any other
/// device is returned as given. `why`, when not null, gets the reason for the log line ("" for a device given by
/// name). Several installed backends are the caller's usage error (resolve_run_settings), never decided here.
std::string resolve_auto_device(const std::string& device, const std::string& device_lib, bool device_imports,
                                std::string* why = nullptr, const std::vector<std::string>& installed = {});

/// What `--device auto` looks at, in its order: the device library, the modules that register a device, the
/// backends installed as `torch.backends` entry points (with the interpreter they were listed from).
struct DeviceSearch {
  std::string device;                     // --device as given ("" = auto)
  std::string device_lib;                 // the library configured, "" = none
  bool device_lib_from_environment = false;  // it came from OPCHECK_DEVICE_LIB, not --device-lib
  std::vector<std::string> imports;       // --device-import / OPCHECK_DEVICE_IMPORT
  std::vector<std::string> installed;     // the entry points listed ("name = module:attr (distribution version)")
  std::string installed_note;             // why none is used although some may be installed ("" = the list is all)
  std::string python;                     // the interpreter the entry points were listed from
};

/// How the device of `search` is chosen: asked, chosen (resolve_auto_device's answer: the caller may replace it by
/// the name the device registered), why, whether it is the loopback stand-in, and for `auto` each place searched.
DeviceChoice describe_device_choice(const DeviceSearch& search);

/// The interpreter that hosts Python devices: `configured` (OPCHECK_PYTHON) if set, else the active virtual
/// environment's, else the one opcheck was built with.
std::string hosting_python(const std::string& configured);

/// Whether `hosting_python(configured)` is the interpreter opcheck was built with, which a rerun finds with no
/// OPCHECK_PYTHON and no virtual environment.
bool hosting_python_is_the_builds(const std::string& configured);

/// The entries of `python_path` (PYTHONPATH: ':'-separated folders, relative ones as the current folder makes them)
/// that hold one of `modules` (top-level names: a package folder, a `NAME.py`, or an extension `NAME.*.so`) or, with
/// `entry_points`, an installed distribution that declares a `torch.backends` entry point: the entries that decided
/// where a Python device came from. Absolute, in PYTHONPATH's order, each once.
std::vector<std::string> python_path_entries_holding(const std::string& python_path,
                                                     const std::vector<std::string>& modules, bool entry_points);

/// The top-level module a `--device-import` spec (MODULE or MODULE:FUNCTION) or an entry point
/// ("name = module.sub:attr (distribution version)") imports: "module".
std::string top_level_module(const std::string& spec);

/// Whether the device a run asks for may be a backend installed as a `torch.backends` entry point, so that the
/// entry points must be listed: `auto` or a name that is not cpu or loopback, when no module (--device-import) and
/// no library (--device-lib) names the device already.
bool may_be_installed_backend(const std::string& device, const std::string& device_lib, bool device_imports);

/// The `torch.backends` entry points of an interpreter: what torch's autoload loads on `import torch`.
struct InstalledBackends {
  std::vector<std::string> entry_points;  // "name = module:attr (distribution version)"
  std::string note;  // why none is used although some may exist (autoload off, the interpreter failed); "" = none
};

/// Lists them with a short Python child that imports neither torch nor the backends (importlib.metadata, and that only
/// when a distribution on sys.path declares the group at all, so an environment without any pays for a bare Python
/// start). `autoload_off` (TORCH_DEVICE_BACKEND_AUTOLOAD=0) lists none, as torch then loads none.
InstalledBackends list_installed_backends(const std::string& python, bool autoload_off);

/// Reads what a child writes to `fd` until it closes it, or until `budget` is spent (false: the child is too slow and
/// the caller ends it). Used by the children that ask an interpreter about its torch before any case runs.
bool read_child_answer(int fd, std::chrono::milliseconds budget, std::string& out);

/// Whether TORCH_DEVICE_BACKEND_AUTOLOAD, as set, turns torch's autoload off (torch reads "0" as off).
bool backend_autoload_off(const char* value);

}  // namespace opcheck
