// The layout of a failure bundle (`opcheck run --save-failures DIR`): the names the exec layer writes and
// `opcheck repro` reads. No libtorch, no exec: both sides include it from here.
//
// DIR/<bundle_folder_name(id)>/:
//   case.yaml            the case alone; its tensors are `init: file` inputs holding the exact tensors the run used
//                        (inputs/<i>.pt, inputs/<i>_<j>.pt for tensor_list elements) with their shape, stride and
//                        storage_offset; values and keyword arguments as in the original case
//   reference.pt         the CPU reference output (as the op returns it: a tensor, tuple, list or number)
//   device.pt            the device output of run 1 (device_run<N>.pt: the run that differed, NONDETERMINISTIC)
//   reference_written.pt / device_written.pt   the inputs the op wrote in place, after the run (a list)
//   failure.json         id, stage, message, figures, the device flags and faults of the run (for `opcheck repro`)
//   README.md            the same for people, with the commands that rerun the case and write its Python repro
// Every .pt file is torch.save's format: Python's torch.load reads it, views keep their storage, stride and offset.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace opcheck::repro {

inline constexpr const char* kBundleManifest = "case.yaml";
inline constexpr const char* kBundleReadme = "README.md";
inline constexpr const char* kBundleFacts = "failure.json";
inline constexpr const char* kBundleReference = "reference.pt";
inline constexpr const char* kBundleDevice = "device.pt";
inline constexpr const char* kBundleReferenceWritten = "reference_written.pt";
inline constexpr const char* kBundleDeviceWritten = "device_written.pt";

/// The folder name of a case's bundle: the id with `::` as `__` and every character other than letters, digits,
/// `.`, `_`, `-` as `_`. When that loses information (other characters replaced, a `__` in the id, a leading dot,
/// more than 120 characters), `-` and 8 hex digits of the id's SHA-256 follow, so distinct ids never share a folder.
std::string bundle_folder_name(const std::string& case_id);

/// The file of input `input`'s tensor (element `element` of a tensor_list) inside a bundle: inputs/<i>.pt or
/// inputs/<i>_<j>.pt.
std::string bundle_input_file(std::size_t input, std::size_t element, bool list);

/// The words of a printed rerun command that name its inputs: `--manifests PATH` for each manifest, then
/// `--config PATH` when there is one, every path absolute. The console's rerun line, `repro`, `shrink` and bundles
/// all write them through this.
std::vector<std::string> input_words(const std::vector<std::string>& manifests, const std::string& config = {});

/// A command word as a POSIX shell reads it back: as is when it holds only safe characters, else single-quoted.
/// A word holding a control character is written as bash's $'...' with \xNN escapes, so the command stays one line of
/// printable ASCII. For the commands bundles and `opcheck repro` print.
std::string shell_word(const std::string& s);

}  // namespace opcheck::repro
