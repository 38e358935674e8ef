// Environment variables that change what opcheck's own devices compute (fault injection, pyloop's eager mode).
#pragma once

namespace opcheck {

/// Bundles record the ones set so their rerun sets them too; a run's identity holds them, so results computed under
/// one fault setting are never reused under another.
inline constexpr const char* kDeviceEnvironment[] = {"OPCHECK_LOOPBACK_FAULTS", "OPCHECK_PYLOOP_FAULTS",
                                                     "OPCHECK_PYLOOP_EAGER"};

}  // namespace opcheck
