// torch-spyre's v2 dialect (root key `test_suite_config`): its edits.ops.include entries as Cases.
#pragma once

#include <string>
#include <vector>

#include "common/yaml_tree.h"
#include "opcheck/case.h"

namespace opcheck {

/// The test every torch-spyre model-op config runs its entries under; entries of any other test are not run.
inline constexpr const char* kV2ModelOpsTest = "TestSpyreModelOps::test_model_ops_db";

/// True when the document is a mapping holding `test_suite_config` (a v2 file, whatever else it holds).
bool is_v2_config(const yaml::Tree& tree);

/// Turns a v2 document into one Manifest per model its tests name (model, variant and cases; the caller fills
/// path, is_template and sha256). Modes become skip/xfail conditions, dtypes outside `supported_dtypes` are
/// skipped occurrences, so every entry is reported. Problems are located diagnostics with a Fix: hint; bad entries
/// are dropped. Returns false when the file as a whole is unusable.
bool normalize_v2_config(const yaml::Tree& tree, const std::string& path, std::vector<Manifest>& out,
                         DiagnosticList& diags);

/// `test_model_ops_db_<op, '.' as '_'>__<index>_spyre_<torch dtype name>`: the name torch-spyre's runner gives the
/// entry at 0-based `index` of its file.
std::string v2_upstream_test_name(const std::string& op, std::size_t index, DType dtype);

}  // namespace opcheck
