#include "settings/run_identity.h"

#include <algorithm>

#include "plan/plan.h"

namespace opcheck {
namespace {

std::string listed(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& x : items) out += (out.empty() ? "" : "; ") + x;
  return out;
}

std::string shown(const std::string& value) { return value.empty() ? "none" : "'" + value + "'"; }

const std::string* part(const IdentityParts& parts, const std::string& what) {
  const auto it =
      std::find_if(parts.begin(), parts.end(), [&](const auto& p) { return p.first == what; });
  return it == parts.end() ? nullptr : &it->second;
}

}  // namespace

IdentityParts run_identity(const RunSettings& settings, const ExecInfo& executor,
                           const std::string& status_config_sha256, const std::vector<SettingField>& fields) {
  IdentityParts out = {
      {"opcheck version", OPCHECK_VERSION},
      {"libtorch version", executor.torch_version},
      {"libtorch folder", executor.torch_path},
      {"device", executor.device},
      {"device name", executor.device_name},
      {"device library", executor.device_lib},
      {"device library digest", executor.device_lib_sha256},
      {"Python modules", listed(executor.python_modules)},
  };
  for (auto& p : settings_identity(settings, fields)) out.push_back(std::move(p));
  out.emplace_back("status config digest", status_config_sha256);
  out.emplace_back("dedupe-key version", kDedupeKeyVersion);
  return out;
}

std::vector<IdentityChange> identity_changes(const RunInfo& then, const RunInfo& now) {
  std::vector<IdentityChange> out;
  for (const auto& [what, value] : now.identity) {
    const std::string* before = part(then.identity, what);
    if (before == nullptr || *before != value) out.push_back({what, before ? *before : std::string(), value});
  }
  for (const auto& [what, value] : then.identity)
    if (part(now.identity, what) == nullptr) out.push_back({what, value, ""});
  return out;
}

std::vector<IdentityChange> verdict_changes(std::vector<IdentityChange> changes, const std::vector<SettingField>& fields) {
  const auto split_only = [&](const IdentityChange& c) {
    return std::any_of(fields.begin(), fields.end(),
                       [&](const SettingField& f) { return f.split_only && f.identity != nullptr && c.what == f.identity; });
  };
  changes.erase(std::remove_if(changes.begin(), changes.end(), split_only), changes.end());
  return changes;
}

std::string describe_changes(const std::vector<IdentityChange>& changes) {
  std::string out;
  for (const auto& c : changes) out += "  " + c.what + ": " + shown(c.then) + " -> " + shown(c.now) + "\n";
  return out;
}

}  // namespace opcheck
