#include "runner/run_settings.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "common/text.h"

namespace opcheck {
namespace {

constexpr const char* kNameChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.";

}  // namespace

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

bool parse_duration(const std::string& text, double& seconds) {
  if (text.empty()) return false;
  seconds = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t used = 0;
    double v;
    try {
      v = std::stod(text.substr(pos), &used);
    } catch (const std::exception&) {
      return false;
    }
    if (v < 0) return false;
    pos += used;
    char unit = pos < text.size() ? text[pos] : 's';
    double mult = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : unit == 'd' ? 86400 : -1;
    if (mult < 0) return false;
    if (pos < text.size()) ++pos;
    seconds += v * mult;
  }
  return true;
}

bool resolve_shard(const std::string& flag, const EnvLookup& env, int& index, int& total, std::string& error) {
  std::string spec = flag;
  if (spec.empty()) {
    const auto i = env("OPCHECK_SHARD_INDEX");
    const auto n = env("OPCHECK_TOTAL_SHARDS");
    if (i && n)
      spec = *i + "/" + *n;
    else if (const auto k = env("JOB_COMPLETION_INDEX"); k && n)
      spec = *k + "/" + *n;
  }
  if (spec.empty()) {
    index = 0;
    total = 1;
    return true;
  }
  auto slash = spec.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    std::size_t used = 0;
    index = std::stoi(spec.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument("index");
    total = std::stoi(spec.substr(slash + 1), &used);
    if (used != spec.size() - slash - 1) throw std::invalid_argument("total");
  } catch (const std::exception&) {
    error = "invalid shard '" + spec + "': expected I/N with 0 <= I < N, e.g. --shard 0/3";
    return false;
  }
  if (total < 1 || index < 0 || index >= total) {
    error = "invalid shard '" + spec + "': expected I/N with 0 <= I < N";
    return false;
  }
  return true;
}

WorkerLayout layout_workers(int jobs, int intra_op_threads, std::size_t device_indices, bool isolation, int cores) {
  cores = std::max(1, cores);
  WorkerLayout w;
  w.jobs = jobs > 0 ? jobs : cores;
  if (device_indices > 0) w.jobs = std::max<int>(w.jobs, static_cast<int>(device_indices));
  if (!isolation) w.jobs = 1;
  w.intra_op_threads = intra_op_threads > 0 ? intra_op_threads : std::max(1, cores / w.jobs);
  return w;
}

bool resolve_python_device(const std::vector<std::string>& import_flags, const std::string& backend_flag,
                           const EnvLookup& env, PythonDeviceSettings& out, std::string& error) {
  out = {};
  out.imports = import_flags;
  if (out.imports.empty())
    if (const auto list = env("OPCHECK_DEVICE_IMPORT")) out.imports = split_list(*list);
  for (const auto& m : out.imports) {
    const bool ok =
        !m.empty() && m.find_first_not_of(kNameChars) == std::string::npos && m.front() != '.' && m.back() != '.';
    if (!ok) {
      error = "--device-import '" + m + "' is not a Python module name\n" +
              "  Fix: name the module as `import` takes it, e.g. --device-import torch_spyre";
      return false;
    }
  }
  std::string backend = backend_flag;
  if (backend.empty())
    if (const auto b = env("TEST_COMPILE_BACKEND")) backend = std::string(trim_blanks(*b));
  if (backend == "none") backend.clear();
  if (!backend.empty() && backend.find_first_not_of(std::string(kNameChars) + "-") != std::string::npos) {
    error = "--compile-backend '" + backend + "' is not a backend name\n" +
            "  Fix: inductor, aot_eager, eager, a registered backend's name, or none";
    return false;
  }
  out.compile_backend = backend;
  if (const auto py = env("OPCHECK_PYTHON"); py && !py->empty()) out.python = *py;
  return true;
}

}  // namespace opcheck
