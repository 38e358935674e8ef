// The OpInfo importer's process: its Python runs as a child of opcheck, and asks opcheck once, over a pipe, which of
// its entries' op names opcheck's resolver does not know (no libtorch here: the answer is a callback).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace opcheck::opinfo {

/// Which of `names` (Python op names) opcheck's resolver does not know: the importer writes the samples of such an op
/// as the ATen calls they make (docs/opinfo.md).
using UnknownNames = std::function<std::vector<std::string>(const std::vector<std::string>&)>;

/// Runs `args` (the interpreter first, found on PATH) with PYTHONPATH set to `pythonpath` (when not empty) and
/// TORCH_CPP_LOG_LEVEL=ERROR unless set. With `unknown`, the child finds two pipe descriptors in
/// OPCHECK_OPINFO_RESOLVE_FDS (write,read): it writes a JSON list of names and a newline, and reads back the JSON list
/// `unknown` gives. Returns the child's exit status (128 + signal when killed; -1 when it could not be forked).
int run_importer_process(std::vector<std::string> args, const std::string& pythonpath, const UnknownNames& unknown);

}  // namespace opcheck::opinfo
