#include "runner/run_identity.h"

#include <cstdlib>

#include "opcheck/device_environment.h"

namespace opcheck {
namespace {

std::string listed(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& x : items) out += (out.empty() ? "" : "; ") + x;
  return out;
}

std::string shown(const std::string& value) { return value.empty() ? "none" : "'" + value + "'"; }

}  // namespace

std::vector<IdentityChange> identity_changes(const RunInfo& then, const RunInfo& now) {
  std::vector<IdentityChange> out;
  auto check = [&](const char* what, const std::string& a, const std::string& b) {
    if (a != b) out.push_back({what, a, b});
  };
  check("opcheck version", then.opcheck_version, now.opcheck_version);
  check("libtorch version", then.torch_version, now.torch_version);
  check("libtorch folder", then.torch_path, now.torch_path);
  check("device", then.device, now.device);
  check("device name", then.device_name, now.device_name);
  check("device library", then.device_lib, now.device_lib);
  check("device library digest", then.device_lib_sha256, now.device_lib_sha256);
  check("Python modules", listed(then.python_modules), listed(now.python_modules));
  check("compile backend", then.compile_backend, now.compile_backend);
  check("fault settings", listed(then.device_environment), listed(now.device_environment));
  check("status config digest", then.status_config_sha256, now.status_config_sha256);
  check("dedupe-key version", then.dedupe_key_version, now.dedupe_key_version);
  return out;
}

std::string describe_changes(const std::vector<IdentityChange>& changes) {
  std::string out;
  for (const auto& c : changes) out += "  " + c.what + ": " + shown(c.then) + " -> " + shown(c.now) + "\n";
  return out;
}

std::vector<std::string> device_environment_now() {
  std::vector<std::string> out;
  for (const auto& [name, value] : device_environment_set()) out.push_back(name + "=" + value);
  return out;
}

}  // namespace opcheck
