// Tensor files an input may load (`init: file`): torch.save's .pt, NumPy's .npy and .safetensors. Checked here,
// without libtorch, from their headers and records, so validate and run report a bad file at the manifest's line;
// the exec layer reads the data through the same description.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "opcheck/dtype.h"

namespace opcheck {

enum class TensorFileFormat { Pt, Npy, Safetensors };

/// The format a path names by its extension (.pt/.pth, .npy, .safetensors), or nullopt.
std::optional<TensorFileFormat> tensor_file_format(const std::string& path);

/// What a tensor file says about the one tensor an input takes from it.
struct TensorFileEntry {
  TensorFileFormat format = TensorFileFormat::Pt;
  std::optional<DType> dtype;         // nullopt: a dtype opcheck's tensors do not have (dtype_text names it)
  std::string dtype_text;             // as the file names it: "HalfStorage", "<f2", "BF16"
  std::vector<std::int64_t> shape;
  // .npy and .safetensors: where the tensor's bytes are (row-major, little-endian; column-major when fortran_order)
  std::uint64_t data_offset = 0, data_bytes = 0;
  bool fortran_order = false;
};

/// Checks the file at `path` and describes the tensor an input takes from it: `key` names an entry of a dict-like
/// file (a .pt dict, a .safetensors name); empty means the file's only tensor. Returns "" or what is wrong, worded
/// to follow "file 'x' ": truncated, garbage, a layout outside its storage, an unknown key (with the keys there),
/// several tensors and no key. `note` is set for something that is not an error (a key given for a file that holds
/// a single tensor, which is then used). `named`, when given, is the path whose extension names the format (`path`
/// may be the checked descriptor's /proc/self/fd/N, TensorSpec::file_source).
std::string check_tensor_file(const std::string& path, const std::string& key, TensorFileEntry& out,
                              std::string& note, const std::string& named = {});

/// Expands `${TORCH_ROOT}` and `${TORCH_DEVICE_ROOT}` in a v2 config's path from the environment. Returns "" or the
/// problem: an unset variable, or an unknown `${NAME}`.
std::string expand_path_tokens(const std::string& raw, std::string& out);

}  // namespace opcheck
