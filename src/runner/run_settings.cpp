#include "runner/run_settings.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "common/device_choice.h"
#include "common/regular_file.h"
#include "common/text.h"
#include "opcheck/device_environment.h"

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
    // The variables are a set: one without its partner would run every case in every shard, silently.
    const auto i = env("OPCHECK_SHARD_INDEX");
    const auto n = env("OPCHECK_TOTAL_SHARDS");
    const auto k = env("JOB_COMPLETION_INDEX");
    if (i && n) {
      spec = *i + "/" + *n;
    } else if (k && n) {
      spec = *k + "/" + *n;
    } else if (i || n) {
      error = std::string(i ? "OPCHECK_SHARD_INDEX" : "OPCHECK_TOTAL_SHARDS") + " is set without " +
              (i ? "OPCHECK_TOTAL_SHARDS" : "OPCHECK_SHARD_INDEX (or a Kubernetes Indexed Job's JOB_COMPLETION_INDEX)") +
              ": this shard would run every case\n  Fix: set both, or pass --shard I/N";
      return false;
    } else if (k) {
      error = "JOB_COMPLETION_INDEX=" + *k +
              " is set (a Kubernetes Indexed Job) but OPCHECK_TOTAL_SHARDS is not: every pod would run every case\n"
              "  Fix: set OPCHECK_TOTAL_SHARDS to the Job's completions, or pass --shard 0/1 to run all cases here";
      return false;
    }
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

std::vector<std::pair<std::string, std::string>> device_environment_of(const EnvLookup& env) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* name : kDeviceEnvironment)
    if (const auto v = env(name); v && !v->empty()) out.emplace_back(name, *v);
  return out;
}

namespace {

std::string bullet_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += "\n    " + i;
  return out;
}

}  // namespace

bool resolve_installed_backends(RunSettings& s, const EnvLookup& env, std::string& error) {
  s.installed_backends.clear();
  s.installed_backends_note.clear();
  if (!may_be_installed_backend(s.device, s.device_lib, !s.device_imports.empty())) return true;
  const auto autoload = env("TORCH_DEVICE_BACKEND_AUTOLOAD");
  InstalledBackends found =
      list_installed_backends(hosting_python(s.python), backend_autoload_off(autoload ? autoload->c_str() : nullptr));
  s.installed_backends = std::move(found.entry_points);
  s.installed_backends_note = std::move(found.note);
  if (s.device == "auto" && s.installed_backends.size() > 1) {
    // import torch loads every one of them: which registers the device under test is no choice opcheck can make.
    error = "--device auto: " + std::to_string(s.installed_backends.size()) + " backends are installed as " +
            "torch.backends entry points in " + hosting_python(s.python) + ", and `import torch` loads them all:" +
            bullet_list(s.installed_backends) +
            "\n  Fix: name the device one of them registers (--device NAME), or set TORCH_DEVICE_BACKEND_AUTOLOAD=0 "
            "and name the module that registers it (--device-import MODULE --device NAME)";
    return false;
  }
  return true;
}

bool resolve_run_settings(RunSettings& s, const EnvLookup& env, const std::string& artifact_dir, std::string& error) {
  if (!s.reference_dtype.empty() && s.reference_dtype != "same" && s.reference_dtype != "float32" &&
      s.reference_dtype != "float64") {
    error = "--reference-dtype '" + s.reference_dtype + "' is not one\n  Fix: same, float32 or float64";
    return false;
  }
  PythonDeviceSettings py;
  if (!resolve_python_device(s.device_imports, s.compile_backend, env, py, error)) return false;
  s.device_imports = py.imports;
  s.compile_backend = py.compile_backend;
  if (!py.python.empty()) s.python = py.python;
  // A configured library is the default device, unless Python modules register it (one backend per process).
  if (s.device_lib.empty() && s.device_imports.empty())
    if (const auto lib = env("OPCHECK_DEVICE_LIB")) s.device_lib = *lib;
  if (s.device.empty()) s.device = "auto";
  if (!resolve_installed_backends(s, env, error)) return false;
  s.device_environment = device_environment_of(env);
  if (!resolve_shard(s.shard, env, s.shard_index, s.shard_total, error)) return false;
  // A file that cannot split the run is found before any case runs, not by the shards' merge.
  s.durations = {};
  if (!s.durations_from.empty() && !read_recorded_durations(s.durations_from, s.timeout_s, s.durations, error))
    return false;
  s.deadline_s = 0;
  if (!s.deadline.empty() && !parse_duration(s.deadline, s.deadline_s)) {
    error = "invalid --deadline '" + s.deadline + "'\n  Fix: use seconds or a unit, e.g. 90s, 45m, 2h";
    return false;
  }
  // Inductor's on-disk caches live with the run's artifacts, so a second run compiles from them.
  if (!s.compile_backend.empty()) {
    std::error_code ec;
    s.inductor_cache_dir = std::filesystem::absolute(std::filesystem::path(artifact_dir) / "inductor-cache", ec).string();
  }
  return true;
}

namespace {

// The device library the run loads: none with imports (they register the device) or on a device that uses none.
std::string loaded_library(const RunSettings& s) {
  if (!s.device_imports.empty()) return {};
  const std::string device = resolve_auto_device(s.device, s.device_lib, false);
  if (device == "cpu" || device == "loopback") return {};
  return s.device_lib;
}

// A number as the flag takes it back: "300", "2.5", "1e+09".
std::string number_word(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

std::vector<std::string> one_if(bool given, std::string value) {
  if (!given) return {};
  return {std::move(value)};
}

}  // namespace

const std::vector<SettingField>& setting_fields() {
  // Device, library and name are in the identity as the executor resolved them (ExecInfo), not as given.
  static const std::vector<SettingField> fields = {
      {nullptr, "--device", false,
       [](const RunSettings& s) {
         // With imports the rerun keeps what was given: its own imports register the device again.
         if (!s.device_imports.empty()) return std::vector<std::string>{s.device.empty() ? "auto" : s.device};
         return std::vector<std::string>{
             resolve_auto_device(s.device, s.device_lib, false, nullptr, s.installed_backends)};
       }},
      {nullptr, "--device-lib", false,
       [](const RunSettings& s) {
         const std::string lib = loaded_library(s);
         return one_if(!lib.empty(), absolute_path(lib));
       }},
      {nullptr, "--device-name", false, [](const RunSettings& s) { return one_if(!s.device_name.empty(), s.device_name); }},
      {"reference dtype", "--reference-dtype", false,
       [](const RunSettings& s) { return one_if(!s.reference_dtype.empty(), s.reference_dtype); }},
      {"repeat", "--repeat", false,
       [](const RunSettings& s) { return one_if(s.repeat > 0, std::to_string(s.repeat)); }},
      {nullptr, "--device-import", false, [](const RunSettings& s) { return s.device_imports; }},
      {"compile backend", "--compile-backend", false,
       [](const RunSettings& s) { return one_if(!s.compile_backend.empty(), s.compile_backend); }},
      {"timeout", "--timeout", false,
       [](const RunSettings& s) { return one_if(s.timeout_s != RunSettings{}.timeout_s, number_word(s.timeout_s)); }},
      {"max case bytes", "--max-case-bytes", false,
       [](const RunSettings& s) { return one_if(s.max_case_bytes > 0, std::to_string(s.max_case_bytes)); }},
      // Not a rerun argument: a rerun runs one case, unsharded, and its verdict does not depend on the split.
      {"durations file digest", nullptr, false,
       [](const RunSettings& s) { return one_if(!s.durations.sha256.empty(), s.durations.sha256); }, true},
      {"fault settings", nullptr, true,
       [](const RunSettings& s) {
         std::vector<std::string> out;
         for (const auto& [name, value] : s.device_environment) out.push_back(name + "=" + value);
         return out;
       }},
  };
  return fields;
}

RerunArguments rerun_arguments(const RunSettings& s, const std::vector<SettingField>& fields) {
  RerunArguments out;
  for (const auto& f : fields) {
    for (const auto& v : f.values(s)) {
      if (f.environment) {
        const auto eq = v.find('=');
        out.environment.emplace_back(v.substr(0, eq), eq == std::string::npos ? std::string() : v.substr(eq + 1));
      } else if (f.flag != nullptr) {
        out.args.insert(out.args.end(), {f.flag, v});
      }
    }
  }
  return out;
}

IdentityParts settings_identity(const RunSettings& s, const std::vector<SettingField>& fields) {
  IdentityParts out;
  for (const auto& f : fields) {
    if (f.identity == nullptr) continue;
    std::string joined;
    for (const auto& v : f.values(s)) joined += (joined.empty() ? "" : "; ") + v;
    out.emplace_back(f.identity, joined);
  }
  return out;
}

ExecOptions exec_options(const RunSettings& s) {
  ExecOptions o;
  o.device = s.device;
  o.device_lib = s.device_lib;
  o.device_name = s.device_name;
  o.device_imports = s.device_imports;
  o.compile_backend = s.compile_backend;
  o.python = s.python;
  o.installed_backends = s.installed_backends;
  o.installed_backends_note = s.installed_backends_note;
  o.inductor_cache_dir = s.inductor_cache_dir;
  o.reference_dtype = s.reference_dtype == "same"      ? ReferenceDtype::Same
                      : s.reference_dtype == "float32" ? ReferenceDtype::Float32
                      : s.reference_dtype == "float64" ? ReferenceDtype::Float64
                                                       : ReferenceDtype::Auto;
  o.repeat = s.repeat;
  o.max_case_bytes = s.max_case_bytes;
  o.intra_op_threads = s.intra_op_threads;
  o.save_failures_dir = s.save_failures_dir;
  o.rerun = rerun_arguments(s).args;
  return o;
}

}  // namespace opcheck
