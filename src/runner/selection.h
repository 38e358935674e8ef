// The load and select stages as a run (and every manifest-reading command) asks for them: which manifest files,
// the marker registry beside them, the selection, and the status config that goes with them.
#pragma once

#include <string>
#include <vector>

#include "config/status_config.h"
#include "opcheck/case.h"
#include "select/select.h"

namespace opcheck {

/// What to load and which cases to choose, as the selection flags give it.
struct SelectionRequest {
  std::vector<std::string> manifests;  // --manifests (repeatable)
  std::vector<std::string> models;     // --model (repeatable)
  std::string variant;                 // --variant
  std::string mark_expr;               // -m
  std::string keyword_expr;            // -k
  bool strict_markers = false;         // --strict-markers
  std::vector<std::string> ids;        // positional case ids (MODEL::CASE, globs allowed)
  std::vector<std::string> deselect;   // --deselect (repeatable)
  DiagnosticList input_problems;       // found before loading (trace lines not converted): the run reports them
};

/// --manifests if given, else `shipped` (the installation's manifests) plus OPCHECK_MANIFESTS (':'-separated).
std::vector<std::string> manifest_paths(const SelectionRequest& r, const std::string& shipped);

/// Loaded manifests, the chosen cases, and everything said on the way.
struct Loaded {
  ManifestSet set;
  Selected selected;
  DiagnosticList diagnostics;               // load + registry + selection
  std::vector<std::string> registered_marks;  // the marker registry's names, as the selection saw them
};

/// Loads manifests and the marker registry (markers.yaml in `shipped` and in every given folder), then selects.
Loaded load_and_select(const SelectionRequest& r, const std::string& shipped);

/// The selection `r` asks for over manifests already loaded (load_and_select's second half). `validate` loads every
/// file but also selects as `run` would with the same flags, so that both report the same selection warnings.
Selected select_loaded(const ManifestSet& set, const SelectionRequest& r,
                       const std::vector<std::string>& registered_marks);

/// The status config that goes with the manifests: `flag` (--config), else opcheck.yaml beside `manifest_paths`; an
/// empty config when there is none. False when it cannot be loaded; `diagnostics` gets its problems either way.
bool load_status_config_for(const std::string& flag, const std::vector<std::string>& manifest_paths, StatusConfig& out,
                            DiagnosticList& diagnostics);

}  // namespace opcheck
