// `opcheck repro`: finding the case (in manifests or in a failure bundle), the device the reproduction runs on, and
// the command line that reruns the case alone. The script itself is repro/script.h. No libtorch, no printing: every
// problem comes back as a message that says what is wrong and ends with a `Fix:`.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "config/status_config.h"
#include "opcheck/case.h"
#include "repro/script.h"
#include "settings/run_settings.h"

namespace opcheck::repro {

/// What a bundle's failure.json says, as far as a reproduction uses it.
struct BundleFacts {
  std::string stage;    // "" when the run did not finish the case, or no failure.json
  std::string message;  // the failure's message
  std::vector<std::string> rerun_device_args;                     // the run's device flags
  std::vector<std::pair<std::string, std::string>> environment;  // the run's device faults
  std::vector<std::size_t> written_slots;                         // tensor slots the op writes in place
};

/// The bundle folder `bundle` means for `case_id`: `bundle` itself when it holds a bundle, else its sub-folder for
/// the case (a --save-failures folder). "" with `error` set when there is none.
std::string find_bundle_folder(const std::string& bundle, const std::string& case_id, std::string& error);

/// The facts of the bundle in `folder`; none when it has no failure.json, and `warning` set when that is not
/// readable JSON. `error` is set (located at the file, with a Fix) when its environment map names a variable that is
/// not a name, or not one a run records for its rerun (opcheck/device_environment.h): the facts are then not to be
/// used.
BundleFacts read_bundle_facts(const std::string& folder, std::string& warning, std::string& error);

/// The case `id` names: among `selected` first, then any case of `set` (templates and variants are not selected by
/// default, but a case named by id is still found), then with the model part matched as --model matches it. nullptr
/// with `error` set (near ids and a Fix) when none does.
const Case* find_case(const ManifestSet& set, const std::vector<const Case*>& selected, const std::string& id,
                      std::string& error);

/// The manifest of `set` that holds `c`; nullptr when none does.
const Manifest* manifest_of(const ManifestSet& set, const Case& c);

/// The `opcheck run` settings arguments of the reproduction: the bundle's recorded ones, each flag the user gave
/// (`given`, as the settings table spells them) replaced by what `settings` (resolved) rerun with; without recorded
/// ones, what `settings` rerun with.
std::vector<std::string> device_args(const std::vector<std::string>& given, const RunSettings& settings,
                                     const BundleFacts& facts);

/// A case reproduced from its manifest (no bundle) as the run would have run it: the status config's tolerances and
/// comparator applied for the device the run names (--device-name, else the device `args` select), and the device
/// faults of this environment (`settings`) carried into `facts`, so the command and the script keep them. A bundle
/// carries both already.
void as_the_run_would(const StatusConfig& config, const RunSettings& settings, const std::vector<std::string>& args,
                      Case& c, BundleFacts& facts);

/// The value after `flag` in `args` ("" when absent).
std::string arg_value(const std::vector<std::string>& args, const char* flag);

/// Where the script runs the device half for the run flags `args`: the torch device string and the library to load
/// (auto resolved as the run resolves it). `library_dirs` are where opcheck's own libraries are installed (the
/// loopback device, the Python packages of its Python devices), in order. False with `error` set when the device
/// cannot be set up (the loopback library is missing).
bool script_device(const std::vector<std::string>& args, const std::vector<std::string>& library_dirs,
                   ScriptDevice& out, std::string& error);

/// Gives the script the run's environment as its rerun line carries it (`environment`, opcheck/device_environment.h's
/// names only): the device's faults and modes, set before the device loads; the PYTHONPATH entries that held the
/// device's modules or installed backend, put on sys.path before torch loads; OPCHECK_PYTHON, the interpreter it runs
/// under; TORCH_DEVICE_BACKEND_AUTOLOAD, set before torch loads.
void carry_environment(const std::vector<std::pair<std::string, std::string>>& environment, ScriptDevice& device);

/// What the script says about the bundle in `folder`, with the run's device faults as carry_environment gives them.
ScriptBundle script_bundle(const std::string& folder, const BundleFacts& facts, ScriptDevice& device);

/// Where the rerun command takes the case from.
struct RerunSource {
  std::string bundle;         // a bundle folder; "" = the manifest below
  std::string manifest;       // the case's manifest file
  std::string config;         // --config given to repro; "" = none
};

/// The words of the `opcheck run` command that reruns `c` alone (`binary` is opcheck's path), ending in -v.
std::vector<std::string> rerun_words(const std::string& binary, const Case& c, const RerunSource& source,
                                     const std::vector<std::string>& device_args);

/// What `opcheck repro` prints without --python: a comment naming the case (and bundle, and `note` when not ""), then
/// the command with the bundle's device faults as environment assignments.
std::string rerun_text(const Case& c, const std::string& bundle, const BundleFacts& facts,
                       const std::vector<std::string>& words, const std::string& note);

/// Environment assignments a POSIX shell reads in front of a command: "NAME=value " for each (the value quoted
/// where it needs it); "" for none.
std::string environment_prefix(const std::vector<std::pair<std::string, std::string>>& environment);

/// Command words as one line a POSIX shell reads back (each quoted where it needs it).
std::string join_words(const std::vector<std::string>& words);

}  // namespace opcheck::repro
