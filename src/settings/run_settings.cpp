#include "settings/run_settings.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "common/regular_file.h"
#include "common/text.h"
#include "common/text_escape.h"
#include "opcheck/device_environment.h"
#include "settings/device_choice.h"

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

bool parse_byte_size(const std::string& text, std::int64_t& bytes) {
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return false;
  }
  if (!std::isfinite(v) || v < 0 || std::isalpha(static_cast<unsigned char>(text[0]))) return false;
  std::string unit = text.substr(used);
  if (unit.size() >= 2 && unit.compare(unit.size() - 2, 2, "iB") == 0) unit.resize(unit.size() - 2);
  else if (!unit.empty() && unit.back() == 'B') unit.pop_back();
  static const std::string kUnits = "KMGT";
  double scale = 1;
  if (unit.size() > 1) return false;
  if (unit.size() == 1) {
    const auto k = kUnits.find(static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0]))));
    if (k == std::string::npos) return false;
    scale = std::ldexp(1.0, 10 * static_cast<int>(k + 1));
  }
  const double b = v * scale;
  if (b >= 9.0e18) return false;
  bytes = static_cast<std::int64_t>(b);
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
  for (const auto& spec : out.imports) {
    // MODULE, or MODULE:FUNCTION (the function is called after the import, as torch calls an entry point's).
    const auto colon = spec.find(':');
    const std::string m = spec.substr(0, colon);
    const std::string function = colon == std::string::npos ? std::string() : spec.substr(colon + 1);
    const bool ok =
        !m.empty() && m.find_first_not_of(kNameChars) == std::string::npos && m.front() != '.' && m.back() != '.';
    const bool function_ok =
        colon == std::string::npos ||
        (!function.empty() && function.find_first_not_of(kNameChars) == std::string::npos &&
         function.find('.') == std::string::npos && !std::isdigit(static_cast<unsigned char>(function[0])));
    if (!ok || !function_ok) {
      error = "--device-import '" + spec + "' is not a Python module name (or MODULE:FUNCTION)\n" +
              "  Fix: name the module as `import` takes it, e.g. --device-import torch_spyre, or the function to "
              "call after the import as a torch.backends entry point names it, e.g. --device-import "
              "torch_spyre:_autoload";
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

std::vector<std::pair<std::string, std::string>> origin_environment_of(const RunSettings& s, const EnvLookup& env) {
  std::vector<std::pair<std::string, std::string>> out;
  const bool installed = !s.installed_backends.empty();
  const bool hosted = !s.device_imports.empty() || installed || !s.compile_backend.empty();
  if (!hosted) return out;
  if (const auto path = env("PYTHONPATH"); path && !path->empty()) {
    std::vector<std::string> modules;
    for (const auto& spec : s.device_imports) modules.push_back(top_level_module(spec));
    for (const auto& e : s.installed_backends) modules.push_back(top_level_module(e));
    const std::vector<std::string> entries = python_path_entries_holding(*path, modules, installed);
    std::string joined;
    for (const auto& e : entries) joined += (joined.empty() ? "" : ":") + e;
    if (!joined.empty()) out.emplace_back("PYTHONPATH", joined);
  }
  if (!hosting_python_is_the_builds(s.python)) out.emplace_back("OPCHECK_PYTHON", hosting_python(s.python));
  if (may_be_installed_backend(s.device, s.device_lib, !s.device_imports.empty()))
    if (const auto autoload = env("TORCH_DEVICE_BACKEND_AUTOLOAD"))
      out.emplace_back("TORCH_DEVICE_BACKEND_AUTOLOAD", *autoload);
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

DeviceChoice device_choice_of(const RunSettings& s) {
  DeviceSearch search;
  search.device = s.device;
  search.device_lib = s.device_lib;
  search.device_lib_from_environment = s.device_lib_from_environment;
  search.imports = s.device_imports;
  search.installed = s.installed_backends;
  search.installed_note = s.installed_backends_note;
  search.python = hosting_python(s.python);
  return describe_device_choice(search);
}

namespace {

// --require-backend: a nightly that lost its backend fails here, before any case, instead of going green on the
// loopback. False with the usage error that names every place `auto` looked in.
bool require_backend(const RunSettings& s, std::string& error) {
  const DeviceChoice choice = device_choice_of(s);
  if (choice.chosen != "loopback" && choice.chosen != "cpu") return true;
  if (choice.asked != "auto") {
    error = "--require-backend: --device " + choice.asked + " is " +
            (choice.chosen == "cpu" ? "the CPU reference itself" : "opcheck's loopback stand-in") +
            ", not a backend\n  Fix: name the backend's device (--device NAME, or auto), or drop --require-backend";
    return false;
  }
  error = "--device auto --require-backend: no backend found, and only opcheck's loopback stand-in is left. "
          "Searched:" + bullet_list(choice.searched) +
          "\n  Fix: install the backend in " + hosting_python(s.python) +
          " (its distribution's torch.backends entry point; OPCHECK_PYTHON names another interpreter), or pass "
          "--device-import MODULE, or --device-lib PATH (or set OPCHECK_DEVICE_LIB); drop --require-backend to run on "
          "the loopback";
  return false;
}

// --reference-cache's folder exists (made when missing) and its limits are sizes. False with a usage error.
bool resolve_reference_cache(RunSettings& s, std::string& error) {
  s.reference_cache_max_bytes = kReferenceCacheDefaultBytes;
  s.reference_cache_max_entry_bytes = kReferenceCacheDefaultEntryBytes;
  const std::pair<const char*, std::pair<const std::string*, std::int64_t*>> limits[] = {
      {"--reference-cache-size", {&s.reference_cache_size, &s.reference_cache_max_bytes}},
      {"--reference-cache-max-entry", {&s.reference_cache_max_entry, &s.reference_cache_max_entry_bytes}}};
  for (const auto& [flag, given] : limits) {
    if (given.first->empty()) continue;
    if (!parse_byte_size(*given.first, *given.second)) {
      error = std::string(flag) + " '" + *given.first +
              "' is not a size\n  Fix: bytes, or with a binary unit: 512M, 4G";
      return false;
    }
  }
  if (s.reference_cache_max_bytes <= 0) {
    error = "--reference-cache-size must be above 0\n"
            "  Fix: a cap such as 4G (the default), or leave out --reference-cache";
    return false;
  }
  if (s.reference_cache_dir.empty()) return true;
  std::error_code ec;
  std::filesystem::create_directories(s.reference_cache_dir, ec);
  const bool folder = !ec && std::filesystem::is_directory(s.reference_cache_dir, ec);
  // Found now, not as a warning from every case of the night.
  if (folder && ::access(s.reference_cache_dir.c_str(), W_OK | X_OK) == 0) return true;
  error = "cannot use the --reference-cache folder " + s.reference_cache_dir + ": " +
          (ec ? ec.message() : std::string(folder ? "not writable" : "not a folder")) +
          "\n  Fix: pass a writable folder";
  return false;
}

}  // namespace

namespace {

constexpr long long kMaxLoopbackDevices = 64;  // backends/loopback/device.cpp: kMaxDevices

// OPCHECK_LOOPBACK_DEVICES, read by the loopback itself, which takes its default (4) for a value it cannot use: a
// run on the loopback refuses such a value before it starts rather than run on devices nobody asked for.
bool loopback_devices_ok(const RunSettings& s, const EnvLookup& env, std::string& error) {
  const auto v = env("OPCHECK_LOOPBACK_DEVICES");
  if (!v || v->empty()) return true;
  const std::string device =
      resolve_auto_device(s.device, s.device_lib, !s.device_imports.empty(), nullptr, s.installed_backends);
  if (device.substr(0, device.find(':')) != "loopback") return true;
  if (!whole_number_error(*v, "OPCHECK_LOOPBACK_DEVICES", 1).empty() || std::stoll(*v) > kMaxLoopbackDevices) {
    error = "OPCHECK_LOOPBACK_DEVICES must be a whole number from 1 to " + std::to_string(kMaxLoopbackDevices) +
            ", got '" + printable_text(*v) + "'\n  Fix: set it to how many loopback devices to make (default 4), " +
            "or unset it";
    return false;
  }
  return true;
}

}  // namespace

bool resolve_run_settings(RunSettings& s, const EnvLookup& env, const std::string& artifact_dir, std::string& error,
                          bool choose_device) {
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
  s.device_lib_from_environment = false;
  if (s.device_lib.empty() && s.device_imports.empty())
    if (const auto lib = env("OPCHECK_DEVICE_LIB"); lib && !lib->empty()) {
      s.device_lib = *lib;
      s.device_lib_from_environment = true;
    }
  if (s.device.empty()) s.device = "auto";
  if (choose_device && !resolve_installed_backends(s, env, error)) return false;
  if (choose_device && s.require_backend && !require_backend(s, error)) return false;
  s.device_environment = device_environment_of(env);
  s.origin_environment = origin_environment_of(s, env);
  if (!resolve_shard(s.shard, env, s.shard_index, s.shard_total, error)) return false;
  s.deadline_s = 0;
  if (!s.deadline.empty() && !parse_duration(s.deadline, s.deadline_s)) {
    error = "invalid --deadline '" + s.deadline + "'\n  Fix: use seconds or a unit, e.g. 90s, 45m, 2h";
    return false;
  }
  if (!s.deadline.empty() && !(std::isfinite(s.deadline_s) && s.deadline_s > 0)) {
    // 0 would end the run before its first case; leave the flag out for a run without a deadline.
    error = "--deadline must be a time above 0, got '" + printable_text(s.deadline) +
            "'\n  Fix: use seconds or a unit, e.g. 90s, 45m, 2h; leave --deadline out for no deadline";
    s.deadline_s = 0;
    return false;
  }
  if (!loopback_devices_ok(s, env, error)) return false;
  if (!resolve_reference_cache(s, error)) return false;
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

using Values = std::function<std::vector<std::string>(const RunSettings&)>;
using Setter = std::function<std::string(RunSettings&, const std::string&)>;

// A setting with a flag: how it shows in the derivations, and its command-line side.
SettingField flag_field(const char* identity, const char* flag, Values values, const char* help, Setter set,
                        const char* type_name = "", const char* default_text = "") {
  SettingField f;
  f.identity = identity;
  f.flag = flag;
  f.values = std::move(values);
  f.help = help;
  f.set = std::move(set);
  f.type_name = type_name;
  f.default_text = default_text;
  return f;
}

SettingField repeatable(SettingField f) {
  f.repeatable = true;
  return f;
}

Setter text_into(std::string RunSettings::*member) {
  return [member](RunSettings& s, const std::string& v) {
    s.*member = v;
    return std::string();
  };
}

bool positive_finite(const std::string& text, double& v, std::string& error, const char* flag) {
  error = positive_finite_error(text, flag);
  if (error.empty()) v = std::stod(text);
  return error.empty();
}

Setter seconds_into(double RunSettings::*member, const char* flag) {
  return [member, flag](RunSettings& s, const std::string& v) {
    std::string error;
    double seconds = 0;
    if (positive_finite(v, seconds, error, flag)) s.*member = seconds;
    return error;
  };
}

// A guard on the run, not a setting of a case: no rerun argument (the rerun names the device the run resolved) and no
// part of the identity.
SettingField require_backend_field() {
  SettingField f;
  f.flag = "--require-backend";
  f.is_switch = true;
  f.values = [](const RunSettings&) { return std::vector<std::string>{}; };
  f.help = "With --device auto: fail (exit 4) unless a backend is found (a device library, --device-import, an "
           "installed torch.backends entry point), instead of taking opcheck's loopback stand-in; what a nightly "
           "should pass";
  f.set = [](RunSettings& s, const std::string&) {
    s.require_backend = true;
    return std::string();
  };
  return f;
}

std::vector<SettingField> device_fields() {
  return {
      flag_field(nullptr, "--device",
                 [](const RunSettings& s) {
                   // With imports the rerun keeps what was given: its own imports register the device again.
                   if (!s.device_imports.empty()) return std::vector<std::string>{s.device.empty() ? "auto" : s.device};
                   return std::vector<std::string>{
                       resolve_auto_device(s.device, s.device_lib, false, nullptr, s.installed_backends)};
                 },
                 "Device under test: auto (the device library configured, else the one backend installed as a "
                 "torch.backends entry point, else loopback), cpu (self-check), loopback, privateuseone, the name a "
                 "backend registers (a library's, or one an installed torch.backends entry point registers when "
                 "`import torch` loads it; such a name wins over a built-in device type of the same name, e.g. "
                 "opencl), cuda, xpu, mps. TORCH_DEVICE_BACKEND_AUTOLOAD=0 leaves the entry points out",
                 text_into(&RunSettings::device), "", "auto"),
      flag_field(nullptr, "--device-lib",
                 [](const RunSettings& s) {
                   const std::string lib = loaded_library(s);
                   return one_if(!lib.empty(), absolute_path(lib));
                 },
                 "PrivateUse1 backend library to load before any case runs (also OPCHECK_DEVICE_LIB)",
                 text_into(&RunSettings::device_lib), "PATH"),
      flag_field(nullptr, "--device-name",
                 [](const RunSettings& s) { return one_if(!s.device_name.empty(), s.device_name); },
                 "Name skip_if expressions and reports see for the device (e.g. spyre)",
                 [](RunSettings& s, const std::string& v) {
                   // It is printed on the console's device line and written into reports and rerun commands.
                   if (const std::size_t bad = first_control_character(v); bad != std::string::npos)
                     return "--device-name '" + printable_text(v) + "' holds a control or format character at byte " +
                            std::to_string(bad) + "; Fix: name the device with printable characters (e.g. spyre)";
                   s.device_name = v;
                   return std::string();
                 }),
      flag_field("reference dtype", "--reference-dtype",
                 [](const RunSettings& s) { return one_if(!s.reference_dtype.empty(), s.reference_dtype); },
                 "Reference compute dtype: same, float32, float64 (default: the case's dtype, float32 where the CPU "
                 "lacks a kernel)",
                 [](RunSettings& s, const std::string& v) {
                   if (v != "same" && v != "float32" && v != "float64")
                     return "--reference-dtype must be same, float32 or float64, got '" + printable_text(v) + "'";
                   s.reference_dtype = v;
                   return std::string();
                 }),
      flag_field("repeat", "--repeat",
                 [](const RunSettings& s) { return one_if(s.repeat > 0, std::to_string(s.repeat)); },
                 "Device runs per case to detect nondeterminism (default 2, 1 on cpu)",
                 [](RunSettings& s, const std::string& v) {
                   if (std::string error = whole_number_error(v, "--repeat", 1); !error.empty()) return error;
                   s.repeat = std::stoi(v);
                   return std::string();
                 },
                 "INT"),
      repeatable(flag_field(nullptr, "--device-import", [](const RunSettings& s) { return s.device_imports; },
                 "Python module whose import registers the device under test (repeatable; also "
                 "OPCHECK_DEVICE_IMPORT, comma-separated): each worker hosts a Python interpreter, e.g. "
                 "--device-import torch_spyre --device spyre; MODULE:FUNCTION also calls that function after the "
                 "import, as torch calls a torch.backends entry point (--device-import torch_opencl:_autoload)",
                 [](RunSettings& s, const std::string& v) {
                   s.device_imports.push_back(v);
                   return std::string();
                 },
                 "MODULE")),
      require_backend_field(),
      flag_field("compile backend", "--compile-backend",
                 [](const RunSettings& s) { return one_if(!s.compile_backend.empty(), s.compile_backend); },
                 "Run the device side of every case as torch.compile(backend=NAME) of the op's Python callable: "
                 "inductor, aot_eager, eager, any registered backend, or none (eager, the default; also "
                 "TEST_COMPILE_BACKEND)",
                 text_into(&RunSettings::compile_backend), "NAME"),
  };
}

std::vector<SettingField> limit_fields() {
  return {
      flag_field("timeout", "--timeout",
                 [](const RunSettings& s) {
                   return one_if(s.timeout_s != RunSettings{}.timeout_s, number_word(s.timeout_s));
                 },
                 "Seconds a case may take before its worker is killed (TIMEOUT); > 0",
                 seconds_into(&RunSettings::timeout_s, "--timeout"), "FLOAT", "300"),
      flag_field(nullptr, "--start-timeout",
                 [](const RunSettings& s) {
                   return one_if(s.start_timeout_s != RunSettings{}.start_timeout_s, number_word(s.start_timeout_s));
                 },
                 "Seconds a Python device's start (importing torch and its modules) and each worker's start may take "
                 "before the run reports the device as not started; > 0",
                 seconds_into(&RunSettings::start_timeout_s, "--start-timeout"), "FLOAT", "300"),
      flag_field("max case bytes", "--max-case-bytes",
                 [](const RunSettings& s) { return one_if(s.max_case_bytes > 0, std::to_string(s.max_case_bytes)); },
                 "Skip cases whose tensors need more bytes than this",
                 [](RunSettings& s, const std::string& v) {
                   std::string error;
                   double bytes = 0;
                   if (positive_finite(v, bytes, error, "--max-case-bytes")) s.max_case_bytes = std::int64_t(bytes);
                   return error;
                 },
                 "INT"),
      flag_field("module memory budget", "--module-memory-budget",
                 [](const RunSettings& s) {
                   return one_if(s.module_memory_budget >= 0, std::to_string(s.module_memory_budget));
                 },
                 "Bytes a module case's copies of its module (CPU, device, float64) may take, counted before it is "
                 "built; a module past it is not run (skipped, with its size and the budget). 0 = no limit; default: "
                 "half the machine's memory",
                 [](RunSettings& s, const std::string& v) {
                   std::string error;
                   double bytes = 0;
                   if (v == "0") s.module_memory_budget = 0;
                   else if (positive_finite(v, bytes, error, "--module-memory-budget"))
                     s.module_memory_budget = std::int64_t(bytes);
                   return error;
                 },
                 "BYTES"),
  };
}

// The cache holds references computed under the identity they are filed by (libtorch's build, the case's dedupe key
// and input digests, the reference dtype), so it cannot change a verdict and is not in the run's identity: a run with
// it resumes, merges and reuses results with one without. It is in the rerun line, so a rerun of a night's failure
// reads the night's references instead of computing them for hours again.
std::vector<SettingField> reference_cache_fields() {
  return {
      flag_field(nullptr, "--reference-cache",
                 [](const RunSettings& s) {
                   return one_if(!s.reference_cache_dir.empty(), absolute_path(s.reference_cache_dir));
                 },
                 "Keep each case's CPU reference in DIR, filed by libtorch's build, the case's dedupe key and input "
                 "digests and the reference dtype; a later run reads it instead of computing it (several shards may "
                 "share DIR)",
                 text_into(&RunSettings::reference_cache_dir), "DIR"),
      flag_field(nullptr, "--reference-cache-size",
                 [](const RunSettings& s) {
                   return one_if(!s.reference_cache_dir.empty() && !s.reference_cache_size.empty(),
                                 s.reference_cache_size);
                 },
                 "Cap of the --reference-cache folder; least recently used entries go first (default 4G)",
                 text_into(&RunSettings::reference_cache_size), "SIZE"),
      flag_field(nullptr, "--reference-cache-max-entry",
                 [](const RunSettings& s) {
                   return one_if(!s.reference_cache_dir.empty() && !s.reference_cache_max_entry.empty(),
                                 s.reference_cache_max_entry);
                 },
                 "References larger than this are not kept in --reference-cache (default 256M; 0 keeps any size)",
                 text_into(&RunSettings::reference_cache_max_entry), "SIZE"),
  };
}

}  // namespace

const std::vector<SettingField>& setting_fields() {
  // Device, library and name are in the identity as the executor resolved them (ExecInfo), not as given.
  static const std::vector<SettingField> fields = [] {
    std::vector<SettingField> all = device_fields();
    for (auto& f : limit_fields()) all.push_back(std::move(f));
    // Not a rerun argument: a rerun runs one case, unsharded, and its verdict does not depend on the split.
    SettingField durations;
    durations.identity = "durations file digest";
    durations.values = [](const RunSettings& s) { return one_if(!s.durations.sha256.empty(), s.durations.sha256); };
    durations.split_only = true;
    all.push_back(std::move(durations));
    for (auto& f : reference_cache_fields()) all.push_back(std::move(f));
    SettingField faults;
    faults.identity = "fault settings";
    faults.environment = true;
    faults.values = [](const RunSettings& s) {
      std::vector<std::string> out;
      for (const auto& [name, value] : s.device_environment) out.push_back(name + "=" + value);
      return out;
    };
    all.push_back(std::move(faults));
    // Where the device came from: a rerun from a fresh shell finds the same modules with the same interpreter.
    SettingField origin;
    origin.environment = true;
    origin.values = [](const RunSettings& s) {
      std::vector<std::string> out;
      for (const auto& [name, value] : s.origin_environment) out.push_back(name + "=" + value);
      return out;
    };
    all.push_back(std::move(origin));
    return all;
  }();
  return fields;
}

std::vector<std::string> setting_flags() {
  std::vector<std::string> out;
  for (const auto& f : setting_fields())
    if (f.flag != nullptr) out.push_back(f.flag);
  return out;
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
  o.module_memory_budget = s.module_memory_budget;
  o.intra_op_threads = s.intra_op_threads;
  o.save_failures_dir = s.save_failures_dir;
  o.module_ops_dir = s.module_ops_dir.empty() ? std::string() : absolute_path(s.module_ops_dir);
  o.reference_cache_dir = s.reference_cache_dir.empty() ? std::string() : absolute_path(s.reference_cache_dir);
  o.reference_cache_max_bytes = s.reference_cache_max_bytes;
  o.reference_cache_max_entry_bytes = s.reference_cache_max_entry_bytes;
  const RerunArguments rerun = rerun_arguments(s);
  o.rerun = rerun.args;
  o.rerun_environment = rerun.environment;
  o.start_timeout_s = s.start_timeout_s;
  return o;
}

std::string positive_finite_error(const std::string& text, const char* flag) {
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || used == 0) return std::string(flag) + " must be a number, got '" + text + "'";
  if (!std::isfinite(v) || v <= 0)
    return std::string(flag) + " must be a finite number greater than 0, got '" + text + "'";
  return {};
}

std::string whole_number_error(const std::string& text, const char* flag, long long least) {
  long long v = 0;
  std::size_t used = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || used == 0 || v < least || v > std::numeric_limits<int>::max())
    return std::string(flag) + " must be a whole number of at least " + std::to_string(least) + ", got '" +
           printable_text(text) + "'";
  return {};
}

}  // namespace opcheck
