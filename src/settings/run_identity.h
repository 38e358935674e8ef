// A run's identity: everything that, changed, could change a verdict. --resume, --results-cache and merge reuse or
// combine results only under the same identity. It is derived from the run's settings (settings/run_settings.h: every
// setting with an identity name is a part by construction) and the facts the executor found (libtorch, the device
// as resolved, its library's digest, the Python modules), plus the status config's digest and the dedupe-key version.
#pragma once

#include <string>
#include <vector>

#include "opcheck/exec_api.h"
#include "opcheck/report.h"
#include "settings/run_settings.h"

namespace opcheck {

/// The identity of a run under `settings` on the executor that reported `executor`, in the order it is printed.
IdentityParts run_identity(const RunSettings& settings, const ExecInfo& executor,
                           const std::string& status_config_sha256,
                           const std::vector<SettingField>& fields = setting_fields());

/// One part of the identity that differs between the run that wrote results and this one.
struct IdentityChange {
  std::string what;  // "device", "fault settings", ...
  std::string then;  // as recorded by the earlier run ("" = none)
  std::string now;
};

/// The parts in which `now` differs from `then` (RunInfo::identity of each), in `now`'s order, then any part only
/// `then` has. A `then` that records no identity (written by an older opcheck) differs in every part.
std::vector<IdentityChange> identity_changes(const RunInfo& then, const RunInfo& now);

/// The changes that could change a verdict: `changes` less the parts of fields marked split_only (a cache of results
/// by dedupe key serves them whatever the split).
std::vector<IdentityChange> verdict_changes(std::vector<IdentityChange> changes,
                                            const std::vector<SettingField>& fields = setting_fields());

/// One line per change, "  device: 'privateuseone:0' -> 'cpu'", each ending in a newline.
std::string describe_changes(const std::vector<IdentityChange>& changes);

}  // namespace opcheck
