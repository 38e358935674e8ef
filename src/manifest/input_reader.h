// Reading an op call's arguments from YAML: values, keyword arguments, inputs and tensors, with their checks and
// located messages. v1 manifests and v2 test_suite_config files write calls alike and share this reader.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/typed_yaml.h"
#include "opcheck/case.h"

namespace opcheck {

struct InitRecipe;

/// A Python identifier (marks, keyword names).
bool is_python_identifier(std::string_view s);
/// Letters, digits, '_', '.' and ':': how an op may be spelled (torch.add, aten::add.Tensor).
bool is_op_spelling(std::string_view s);

/// True after reporting, at `n`, that `op` is an op opcheck refuses to run (common/refused_ops.h) and why.
bool refuse_machine_op(TypedYaml& r, yaml::NodeRef n, const std::string& op);

/// Names are echoed into every report (ids, JUnit, metrics, HTML, the console) and looked up with did-you-mean: a
/// generated one megabytes long would make reports of megabytes. Longer names are refused where they are written.
inline constexpr std::size_t kMaxNameBytes = 256;
/// "WHAT 'name...' (N bytes) is longer than 256 bytes".
std::string too_long(const std::string& what, const std::string& name);

/// Reads the arguments of one call; every problem is located and names the case being read (set_case_id).
class InputReader : public TypedYaml {
 public:
  using TypedYaml::TypedYaml;

  /// File paths as v2 configs write them: ${TORCH_ROOT} and ${TORCH_DEVICE_ROOT} expanded from the environment,
  /// absolute paths and paths outside the config's folder allowed (a relative one starts at the config's folder).
  void use_v2_file_paths() { v2_paths_ = true; }

  /// A value as YAML types it (null, bool, int, float, list), a string being read as string_values.h says.
  bool read_value(yaml::NodeRef n, std::string_view key, PyValue& out);
  /// A mapping of keyword arguments, merged over `out` (a later value replaces an earlier one in its place).
  bool read_kwargs(yaml::NodeRef n, std::string_view key, KwArgs& out);
  bool read_dtype(yaml::NodeRef n, std::string_view key, DType& out, std::string& spelling);
  /// One `- tensor:` / `- tensor_list:` / `- value:` / `- py:` / `- file:` item of a case's inputs.
  bool read_input(yaml::NodeRef item, const Case& c, Input& out);
  /// The input `item` as its `kind` key (tensor, tensor_list, value, py, file) with that key's value `v`.
  bool read_input_kind(yaml::NodeRef item, std::string_view kind, yaml::NodeRef v, const Case& c, Input& out);
  /// One tensor mapping; the case gives the default dtype.
  bool read_tensor(yaml::NodeRef t, const Case& c, TensorSpec& out);

 private:
  struct TensorFields;
  struct TensorFileName;
  /// The keys a tensor mapping may hold.
  static const std::vector<std::string_view>& tensor_keys();
  static TensorFields tensor_fields(yaml::NodeRef t);

  // A tensor's parts, one job each, in the order read_tensor reads them (tensor_reader.cpp).
  void read_placement(yaml::NodeRef device, TensorSpec& out);
  const InitRecipe* read_init_kind(const TensorFields& f, bool has_path, TensorSpec& out);  // null when unusable
  bool read_shape(yaml::NodeRef t, const TensorFields& f, bool has_path, TensorSpec& out);  // true when usable
  void read_init_args(const TensorFields& f, const InitRecipe& init, TensorSpec& out, TensorFileName& file);
  void check_init_args(yaml::NodeRef t, const TensorFields& f, bool have_shape, const TensorSpec& out);
  void read_layout(yaml::NodeRef t, const TensorFields& f, bool have_shape, TensorSpec& out);
  void read_stride(const TensorFields& f, bool claims_contiguous, TensorSpec& out);
  void read_preset(const TensorFields& f, TensorSpec& out);
  bool read_data(yaml::NodeRef n, const std::vector<std::int64_t>& shape, std::size_t dim, DType dtype, PyValue& out);
  /// Checks the tensor file `n` names (where it is, that it is sound, its shape and dtype) and records its path.
  bool resolve_file(yaml::NodeRef n, const std::string& key, bool dtype_given, TensorSpec& out);

  bool v2_paths_ = false;                 // v2 configs: ${TORCH_ROOT}/${TORCH_DEVICE_ROOT} expanded, any folder allowed
  std::filesystem::path root_;            // absolute folder of the file read, for file: inputs
  std::filesystem::path root_canonical_;  // ... with symlinks resolved (computed on first use)
};

}  // namespace opcheck
