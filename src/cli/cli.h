// Shared pieces of the subcommands: manifest discovery, load + select (exit codes: opcheck/exit_code.h).
#pragma once

#include <exception>
#include <string>
#include <vector>

#include "config/status_config.h"
#include "opcheck/case.h"
#include "opcheck/exit_code.h"
#include "select/select.h"

namespace CLI {
class App;
}

namespace opcheck::cli {

/// Flags every manifest-reading subcommand shares.
struct ManifestFlags {
  std::vector<std::string> manifests;  // --manifests (repeatable)
  std::vector<std::string> models;     // --model (repeatable)
  std::string variant;                 // --variant
  std::string mark_expr;               // -m
  std::string keyword_expr;            // -k
  bool strict_markers = false;         // --strict-markers
  std::vector<std::string> ids;        // positional case ids (MODEL::CASE, globs allowed)
  std::vector<std::string> deselect;   // --deselect (repeatable)
};

void add_manifest_flags(CLI::App& app, ManifestFlags& f, bool with_selection);
/// Positional case ids and --deselect (run and list-cases).
void add_case_id_args(CLI::App& app, ManifestFlags& f);

/// The folder of the running executable.
std::string exe_dir();

/// Where opcheck's own libraries are, in order: beside the binary (build tree), then <prefix>/<libdir>/opcheck
/// (installed; libdir as configured, e.g. lib or lib64). The exec layer, the loopback device and the Python
/// packages of opcheck's Python devices are looked up there.
std::vector<std::string> library_dirs();

/// Manifests shipped with opcheck: installed share/opcheck/manifests, else the source tree's manifests/.
std::string shipped_manifest_dir();

/// --manifests if given, else the shipped manifests plus OPCHECK_MANIFESTS (':'-separated).
std::vector<std::string> manifest_paths(const ManifestFlags& f);

/// Loaded manifests, the chosen cases, and everything said on the way.
struct Loaded {
  ManifestSet set;
  Selected selected;
  DiagnosticList diagnostics;  // load + registry + selection
};

/// Loads manifests and the marker registry (markers.yaml in the shipped folder and in every given folder),
/// then selects. Prints nothing.
Loaded load_and_select(const ManifestFlags& f);

/// The status config a command uses: `flag` (--config), else opcheck.yaml beside the manifests of `f`; an empty
/// config when there is none. Prints its problems (all of them when it cannot be loaded, else errors only) and
/// returns false when it cannot be loaded.
bool load_command_config(const std::string& flag, const ManifestFlags& f, StatusConfig& out);

/// Prints diagnostics to stderr, one per entry. With errors_only, warnings are counted in one closing line that
/// points at `opcheck validate` (listing commands stay readable; validate shows everything).
void print_diagnostics(const DiagnosticList& d, bool errors_only = false);

/// Prints a failure to stderr: a message that is already located ("path: error: what") as it is, anything else as
/// "opcheck: error: <context>what". Never two "error:" prefixes.
void print_error(const std::exception& e, const std::string& context = {});

/// The opcheck binary that is running (its path), for the commands opcheck prints.
std::string opcheck_binary();

int cmd_list_models(const ManifestFlags& f);
int cmd_list_cases(const ManifestFlags& f, bool json);
/// What `validate` checks beyond the manifests themselves.
struct ValidateFlags {
  std::vector<std::string> paths;           // manifest files or folders
  std::string config;                       // --config
  bool ops = false;                         // --ops: resolve every op and bind its arguments (loads the exec layer)
  std::vector<std::string> device_imports;  // --device-import, with --ops
};

int cmd_validate(ManifestFlags f, const ValidateFlags& v);

}  // namespace opcheck::cli
