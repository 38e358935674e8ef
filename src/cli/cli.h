// Shared pieces of the subcommands: manifest discovery, load + select (exit codes: opcheck/exit_code.h).
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "config/status_config.h"
#include "opcheck/case.h"
#include "report/report_format.h"
#include "opcheck/exit_code.h"
#include "runner/case_probe.h"
#include "settings/run_settings.h"
#include "runner/selection.h"
#include "select/select.h"

namespace CLI {
class App;
class Validator;
}

namespace opcheck {
struct ReportFiles;
}

namespace opcheck::cli {

/// The subcommands of one command line: each file registers its own with its flags (add_*_command), and main runs
/// the one that was parsed.
struct Commands {
  struct Entry {
    CLI::App* app;
    std::function<int()> run;
  };
  std::vector<Entry> entries;
  std::vector<std::string> argv;  // the arguments after the program name, once parsed
  void add(CLI::App* app, std::function<int()> run) { entries.push_back({app, std::move(run)}); }
};

void add_list_commands(CLI::App& app, Commands& commands);      // list-models, list-cases (cmd_list.cpp)
void add_validate_command(CLI::App& app, Commands& commands);   // cmd_validate.cpp
void add_run_command(CLI::App& app, Commands& commands);        // cmd_run.cpp
void add_report_commands(CLI::App& app, Commands& commands);    // merge, diff, report (cmd_report.cpp)
void add_import_command(CLI::App& app, Commands& commands);     // import-traces (cmd_import.cpp)
void add_import_opinfo_command(CLI::App& app, Commands& commands);  // cmd_import_opinfo.cpp
void add_repro_command(CLI::App& app, Commands& commands);      // cmd_repro.cpp
void add_shrink_command(CLI::App& app, Commands& commands);     // cmd_shrink.cpp
void add_sweep_command(CLI::App& app, Commands& commands);      // cmd_sweep.cpp

/// The flags shrink and sweep share with run (cmd_shrink.cpp): the case, its selection, the device settings.
void add_probe_flags(CLI::App& app, ProbeRequest& p, bool& no_isolation);
/// Loads the exec layer and calls `body` with a host whose executor comes from it (cmd_shrink.cpp).
int run_probe(ProbeRequest& p, bool no_isolation, const std::vector<std::string>& argv,
              const std::function<int(RunHost&)>& body);

/// The report flags of `command` (report_flags.cpp): one per report format that command takes (report_formats()),
/// in the table's order, each bound to its entry of `files`.
void add_report_flags(CLI::App& app, ReportFiles& files, ReportCommand command);

/// The flags of a run's settings (--device ... --timeout) that `run`, `repro` and `shrink` share, from the settings
/// table (setting_fields).
void add_settings_flags(CLI::App& app, RunSettings& s);
/// Which of those flags were given on the command line of `app`, in the table's order.
std::vector<std::string> given_setting_flags(const CLI::App& app);
/// A CLI11 check: a finite number greater than zero ("nan", "inf", 0 and negatives are usage errors).
CLI::Validator positive_finite(const char* what);
/// A CLI11 check: a whole number of at least `least` (--maxfail -1, -j 0 and 2.5 are usage errors).
CLI::Validator whole_number(const char* what, long long least);

/// Flags every manifest-reading subcommand shares: the selection request they parse into.
using ManifestFlags = SelectionRequest;

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

}  // namespace opcheck::cli
