// A case's call as the failure reports show it: `torch.add(bf16[1,32,64], fp32[4,8]{stride 1,4}, alpha=2)`.
#pragma once

#include <string>
#include <string_view>

#include "opcheck/case.h"

namespace opcheck {

/// The call of a case in one line, for a reader of a failure: the op as the manifest writes it, then each input,
/// a tensor as DTYPE[DIMS] (dtype spelled as the metrics spell it: bf16, f32), with `{stride ..; offset N}` where
/// its layout is not the contiguous one, `@cpu` where it stays on the host, a tensor list in brackets, a value as its
/// Python repr, then the keyword arguments as `name=repr`. Long lists and long values are elided with "...", so the
/// line stays readable whatever the manifest holds (a tensor list of 100 tensors, a 4 KB `data` literal).
std::string call_signature(const Case& c);

/// The dtype a call is about, read from its call signature ("aten::to(i64[1,11], dtype=torch.float32)"): its first
/// floating (or complex) tensor input's, else its first tensor input's (an int64 index, a bool mask), spelled as the
/// signature spells it ("i64"); "" when the call has no tensor input. Failure groups and headers name it rather than
/// the manifest's default dtype.
std::string call_dtype(std::string_view call);

}  // namespace opcheck
