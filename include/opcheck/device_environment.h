// Environment variables that change what opcheck's own devices compute (fault injection, loopback's modes, pyloop's eager mode).
#pragma once

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace opcheck {

/// Bundles record the ones set so their rerun sets them too; a run's identity holds them, so results computed under
/// one fault setting are never reused under another.
inline constexpr const char* kDeviceEnvironment[] = {"OPCHECK_LOOPBACK_FAULTS", "OPCHECK_LOOPBACK_MODE",
                                                     "OPCHECK_PYLOOP_FAULTS", "OPCHECK_PYLOOP_EAGER"};

/// The ones set (and not empty) in this process, as (name, value), in kDeviceEnvironment's order.
inline std::vector<std::pair<std::string, std::string>> device_environment_set() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* name : kDeviceEnvironment)
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') out.emplace_back(name, v);
  return out;
}

}  // namespace opcheck
