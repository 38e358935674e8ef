// The normalize step of the load stage: one parsed manifest document -> fully resolved Cases.
#pragma once

#include <memory>
#include <string>
#include <vector>
#include <string_view>

#include "common/yaml_tree.h"
#include "manifest/string_values.h"
#include "opcheck/case.h"

namespace opcheck {

/// Turns the document of the manifest at `path` into `out` (model, description, cases; the caller fills path,
/// variant, is_template and sha256). Bad cases are dropped with their diagnostics. Returns false, with
/// diagnostics, when the file as a whole is unusable (not a mapping, no model, no cases list, bad defaults or
/// file-level marks, unknown top-level keys); its cases are still checked so that every problem is reported.
/// `file:` inputs are resolved against the folder holding `path`.
bool normalize_manifest(const yaml::Tree& tree, const std::string& path, Manifest& out, DiagnosticList& diags);

/// The v1 loader's readers (typed scalars, keyword arguments, inputs and tensors), with its checks and messages,
/// for other dialects of the same calls (v2 test_suite_config files). Diagnostics name the case set last.
class CallReader {
 public:
  CallReader(const std::string& path, DiagnosticList& diags);
  ~CallReader();
  CallReader(const CallReader&) = delete;
  CallReader& operator=(const CallReader&) = delete;

  void set_case_id(std::string id);
  /// File paths as v2 configs write them: ${TORCH_ROOT} and ${TORCH_DEVICE_ROOT} expanded from the environment,
  /// absolute paths and paths outside the config's folder allowed (a relative one starts at the config's folder).
  void use_v2_file_paths();
  bool check_keys(yaml::NodeRef map, const std::vector<std::string_view>& allowed, const std::string& where);
  bool want_mapping(yaml::NodeRef n, std::string_view key);
  bool read_string(yaml::NodeRef n, std::string_view key, std::string& out);
  bool read_int(yaml::NodeRef n, std::string_view key, std::int64_t& out);
  bool read_number(yaml::NodeRef n, std::string_view key, double& out);
  bool read_bool(yaml::NodeRef n, std::string_view key, bool& out);
  bool read_kwargs(yaml::NodeRef n, std::string_view key, KwArgs& out);
  /// One `- tensor:` / `- tensor_list:` / `- value:` / `- py:` item, read as a v1 `inputs:` item.
  bool read_input(yaml::NodeRef item, const Case& c, Input& out);
  bool read_tensor(yaml::NodeRef t, const Case& c, TensorSpec& out);
  static bool is_op_name(std::string_view s);
  static bool is_mark_name(std::string_view s);  // a Python identifier

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The names of the keys each manifest level accepts, for documentation and schema generation.
const std::vector<std::string_view>& manifest_top_keys();
const std::vector<std::string_view>& manifest_case_keys();
const std::vector<std::string_view>& manifest_tensor_keys();

}  // namespace opcheck
