// What `--device auto` means, in one place: the run, its failure bundles and `repro` all decide it here.
#pragma once

#include <string>

namespace opcheck {

/// The device `--device auto` (or no --device, "") stands for: the PrivateUse1 device when modules register one
/// (`device_imports`) or a device library is configured, else opcheck's loopback stand-in. Any other device is
/// returned as given. `why`, when not null, gets the reason for the log line ("" for a device given by name).
std::string resolve_auto_device(const std::string& device, const std::string& device_lib, bool device_imports,
                                std::string* why = nullptr);

}  // namespace opcheck
