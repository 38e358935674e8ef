// The select stage: which loaded cases a run covers (--model, --variant, -m, -k, --strict-markers).
#pragma once

#include <string>
#include <vector>

#include "opcheck/case.h"
#include "opcheck/diagnostic.h"

namespace opcheck {

/// What the user asked for on the command line.
struct Selection {
  /// --model, repeatable. Each matches a manifest's model name case-insensitively with `-` and `_` alike, or is a
  /// glob (*, ?, [...]) matched the same way. Empty = every non-template model.
  std::vector<std::string> models;
  /// --variant: "" = base files only; a variant name ("spyre") = that variant's file instead of the base where the
  /// model has one; "all" = base and variant files.
  std::string variant;
  std::string mark_expr;     // -m, pytest's marker expression; "" = no filter
  std::string keyword_expr;  // -k, pytest's keyword expression; "" = no filter
  bool strict_markers = false;
  std::vector<std::string> registered_markers;  // from the marker registry
  /// Positional case ids, like pytest's node ids: MODEL::CASE as list-cases prints them, either part a glob, the
  /// model part spelled as --model takes it. A case is selected when one of them matches it; empty = no filter.
  /// Without --model they also choose the files (a template only when named exactly).
  std::vector<std::string> ids;
  /// --deselect: ids of the same syntax whose cases are left out (counted as deselected).
  std::vector<std::string> deselect;
};

/// The cases a run covers, in manifest load order then file order, and what went wrong choosing them.
struct Selected {
  std::vector<const Case*> cases;  // point into the ManifestSet passed to select_cases
  DiagnosticList diagnostics;
  /// The selection itself is malformed (unknown model, bad -m/-k, unknown variant): pytest's exit code 4.
  bool usage_error = false;
  std::size_t deselected = 0;  // cases of the chosen files that -m/-k filtered out
};

Selected select_cases(const ManifestSet& set, const Selection& sel);

/// True when `name` (a --model argument) would be read as a glob.
bool is_model_glob(const std::string& name);

/// Does a --model argument (plain or glob) match a manifest's model name?
bool model_matches(const std::string& pattern, const std::string& model);

/// Does a case id pattern (MODEL::CASE; either part plain or a glob) match case `c`? A part matches when it is the
/// same text, or as a glob; the model part also as --model matches (case-insensitive, `-` and `_` alike).
bool case_id_matches(const std::string& pattern, const Case& c);

/// The id pattern that matches exactly the case `model::name`: glob characters of the name are bracketed.
std::string exact_case_id(const std::string& model, const std::string& name);

/// Model names from `known` that look like `wanted` (typos, prefixes), best first; at most `limit`.
std::vector<std::string> suggest_models(const std::string& wanted, const std::vector<std::string>& known,
                                        std::size_t limit = 3);

}  // namespace opcheck
