// Checks a tensor file written by torch.save without libtorch: the zip archive, the pickled tensor record, and that
// the tensor's sizes, strides and offset stay inside its storage bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace opcheck {

/// What the pickled record of a single saved tensor says.
struct PtTensor {
  std::string storage_type;  // "FloatStorage", "BFloat16Storage", ...
  std::int64_t element_size = 0;
  std::int64_t storage_elements = 0;  // as recorded
  std::int64_t storage_bytes = 0;     // of the data entry in the archive
  std::int64_t offset = 0;
  std::vector<std::int64_t> sizes, strides;
};

/// Reads `path` as torch.save's zip format and checks it. Returns "" and fills `out` when the file holds one tensor
/// whose layout fits its storage; otherwise says what is wrong ("is truncated: ...", "holds a dict, not a tensor",
/// "sizes [..] with strides [..] and offset N reach element M of a storage of K elements", ...).
/// A dict (torch.save({"w": t}), a state_dict) holds one tensor per key: `key` picks one, and is required then; a key
/// given for a single-tensor file sets `note` and the tensor is used.
std::string check_pt_file(const std::string& path, PtTensor& out, const std::string& key = {},
                          std::string* note = nullptr);

/// Why a layout reaches outside its storage, or "" when it fits: negative sizes, strides or offset, an extent past
/// `storage_bytes`, or arithmetic that overflows int64.
std::string extent_problem(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides,
                           std::int64_t offset, std::int64_t storage_bytes, std::int64_t element_size);

}  // namespace opcheck
