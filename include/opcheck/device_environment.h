// Environment variables that change what opcheck's own devices compute (fault injection, loopback's modes, pyloop's eager mode).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace opcheck {

/// Bundles record the ones set so their rerun sets them too; a run's identity holds them, so results computed under
/// one fault setting are never reused under another.
inline constexpr const char* kDeviceEnvironment[] = {"OPCHECK_LOOPBACK_FAULTS", "OPCHECK_LOOPBACK_MODE",
                                                     "OPCHECK_PYLOOP_FAULTS", "OPCHECK_PYLOOP_EAGER"};

/// Where the device came from (run_settings' origin environment): the other variables a rerun sets.
inline constexpr const char* kOriginEnvironment[] = {"PYTHONPATH", "OPCHECK_PYTHON", "TORCH_DEVICE_BACKEND_AUTOLOAD"};

/// Whether `name` is one a run records for its rerun (kDeviceEnvironment or kOriginEnvironment): a failure bundle
/// naming any other is refused, since its rerun line puts the name in front of a command, unquoted.
inline bool is_rerun_environment_name(std::string_view name) {
  const auto is = [name](const char* known) { return name == known; };
  return std::any_of(std::begin(kDeviceEnvironment), std::end(kDeviceEnvironment), is) ||
         std::any_of(std::begin(kOriginEnvironment), std::end(kOriginEnvironment), is);
}

/// Whether `name` is a shell variable name: [A-Za-z_][A-Za-z0-9_]*.
inline bool is_environment_name(std::string_view name) {
  const auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (name.empty() || !letter(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

/// The ones set (and not empty) in this process, as (name, value), in kDeviceEnvironment's order.
inline std::vector<std::pair<std::string, std::string>> device_environment_set() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* name : kDeviceEnvironment)
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') out.emplace_back(name, v);
  return out;
}

}  // namespace opcheck
