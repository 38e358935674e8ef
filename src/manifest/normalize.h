// The normalize step of the load stage: one parsed manifest document -> fully resolved Cases.
#pragma once

#include <string>

#include "common/yaml_tree.h"
#include "opcheck/case.h"

namespace opcheck {

/// Turns the document of the manifest at `path` into `out` (model, description, cases; the caller fills path,
/// variant, is_template and sha256). Bad cases are dropped with their diagnostics. Returns false, with
/// diagnostics, when the file as a whole is unusable (not a mapping, no model, no cases list, bad defaults or
/// file-level marks, unknown top-level keys); its cases are still checked so that every problem is reported.
/// `file:` inputs are resolved against the folder holding `path`.
bool normalize_manifest(const yaml::Tree& tree, const std::string& path, Manifest& out, DiagnosticList& diags);

}  // namespace opcheck
