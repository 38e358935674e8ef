// Tensor files in torch.save's format that Python's torch.load reads with its default weights_only=True.
#pragma once

#include <filesystem>

#include <ATen/core/ivalue.h>

namespace opcheck::exec {

/// Writes `v` to `path` as torch.save does (a zip archive: the pickle plus one record per storage), replacing the
/// file atomically (a temporary beside it, then a rename, so a hard link to another file is never written through).
/// Lists are written as plain Python lists and tuples as tuples, at every depth, with no TorchScript type tags:
/// torch.load's weights-only unpickler (its default since torch 2.6) refuses the torch.jit._pickle helpers that
/// torch::jit::pickle_save writes for typed lists. Tensors keep their storage, so views keep their layout; a sparse
/// tensor is written dense (torch.load's rebuild of libtorch's sparse pickle takes other arguments and raises).
/// Throws std::runtime_error when the file cannot be written.
void save_for_torch_load(const std::filesystem::path& path, const c10::IValue& v);

}  // namespace opcheck::exec
