// pytest's exit codes, which every opcheck subcommand speaks.
#pragma once

namespace opcheck {

enum ExitCode : int { kOk = 0, kTestsFailed = 1, kInterrupted = 2, kInternalError = 3, kUsageError = 4, kNoTests = 5 };

}  // namespace opcheck
