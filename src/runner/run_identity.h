// A run's identity: everything that, changed, could change a verdict. --resume and --results-cache reuse a result
// only under the same identity.
#pragma once

#include <string>
#include <vector>

#include "opcheck/report.h"

namespace opcheck {

/// One part of the identity that differs between the run that wrote results and this one.
struct IdentityChange {
  std::string what;  // "device", "fault settings", ...
  std::string then;  // as recorded by the earlier run ("" = none)
  std::string now;
};

/// The parts of the identity in which `now` differs from `then`: opcheck and libtorch versions, the libtorch
/// folder, the device, its name, library and library digest, the Python modules with their versions, the compile
/// backend, the device settings (fault injection), the status config's content hash and the dedupe-key version.
std::vector<IdentityChange> identity_changes(const RunInfo& then, const RunInfo& now);

/// One line per change, "  device: 'privateuseone:0' -> 'cpu'", each ending in a newline.
std::string describe_changes(const std::vector<IdentityChange>& changes);

/// "NAME=value" of each device setting set in this process's environment (opcheck/device_environment.h).
std::vector<std::string> device_environment_now();

}  // namespace opcheck
