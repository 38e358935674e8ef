// The flags of a run's settings (runner/run_settings.h) that `run` and `repro` share, so that a rerun line printed
// by one is read the same way by the other.
#include <CLI/CLI.hpp>

#include <cmath>
#include <stdexcept>

#include "cli/cli.h"

namespace opcheck::cli {
namespace {

constexpr const char* kSettingsFlags[] = {"--device",          "--device-lib", "--device-import",
                                          "--compile-backend", "--device-name", "--reference-dtype",
                                          "--repeat",          "--max-case-bytes", "--timeout",
                                          "--start-timeout"};

}  // namespace

// A count or a limit that must be a finite number greater than zero: "nan", "inf", 0 and negatives are usage errors
// (a nan timeout would fail every case as TIMEOUT; -j 0 or a negative byte limit would mean nothing).
CLI::Validator positive_finite(const char* what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        double v = 0;
        std::size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != text.size() || used == 0) return std::string(what) + " must be a number, got '" + text + "'";
        if (!std::isfinite(v) || v <= 0)
          return std::string(what) + " must be a finite number greater than 0, got '" + text + "'";
        return {};
      },
      "> 0");
}

void add_settings_flags(CLI::App& app, RunSettings& s) {
  app.add_option("--device", s.device,
                 "Device under test: auto (the device library configured, else the one backend installed as a "
                 "torch.backends entry point, else loopback), cpu (self-check), loopback, privateuseone, the name a "
                 "backend registers (a library's, or one an installed torch.backends entry point registers when "
                 "`import torch` loads it; such a name wins over a built-in device type of the same name, e.g. "
                 "opencl), cuda, xpu, mps. TORCH_DEVICE_BACKEND_AUTOLOAD=0 leaves the entry points out")
      ->capture_default_str();
  app.add_option("--device-lib", s.device_lib,
                 "PrivateUse1 backend library to load before any case runs (also OPCHECK_DEVICE_LIB)")
      ->type_name("PATH");
  app.add_option("--device-import", s.device_imports,
                 "Python module whose import registers the device under test (repeatable; also "
                 "OPCHECK_DEVICE_IMPORT, comma-separated): each worker hosts a Python interpreter, e.g. "
                 "--device-import torch_spyre --device spyre")
      ->type_name("MODULE")
      ->allow_extra_args(false);
  app.add_option("--compile-backend", s.compile_backend,
                 "Run the device side of every case as torch.compile(backend=NAME) of the op's Python callable: "
                 "inductor, aot_eager, eager, any registered backend, or none (eager, the default; also "
                 "TEST_COMPILE_BACKEND)")
      ->type_name("NAME");
  app.add_option("--device-name", s.device_name,
                 "Name skip_if expressions and reports see for the device (e.g. spyre)");
  app.add_option("--reference-dtype", s.reference_dtype,
                 "Reference compute dtype: same, float32, float64 (default: the case's dtype, float32 where the "
                 "CPU lacks a kernel)")
      ->check(CLI::IsMember({"same", "float32", "float64"}));
  app.add_option("--repeat", s.repeat, "Device runs per case to detect nondeterminism (default 2, 1 on cpu)");
  app.add_option("--max-case-bytes", s.max_case_bytes, "Skip cases whose tensors need more bytes than this")
      ->check(positive_finite("--max-case-bytes"));
  app.add_option("--reference-cache", s.reference_cache_dir,
                 "Keep each case's CPU reference in DIR, filed by libtorch's build, the case's dedupe key and input "
                 "digests and the reference dtype; a later run reads it instead of computing it (several shards may "
                 "share DIR)")
      ->type_name("DIR");
  app.add_option("--reference-cache-size", s.reference_cache_size,
                 "Cap of the --reference-cache folder; least recently used entries go first (default 4G)")
      ->type_name("SIZE");
  app.add_option("--reference-cache-max-entry", s.reference_cache_max_entry,
                 "References larger than this are not kept in --reference-cache (default 256M; 0 keeps any size)")
      ->type_name("SIZE");
  app.add_option("--timeout", s.timeout_s, "Seconds a case may take before its worker is killed (TIMEOUT); > 0")
      ->capture_default_str()
      ->check(positive_finite("--timeout"));
  app.add_option("--start-timeout", s.start_timeout_s,
                 "Seconds a Python device's start (importing torch and its modules) and each worker's start may "
                 "take before the run reports the device as not started; > 0")
      ->capture_default_str()
      ->check(positive_finite("--start-timeout"));
}

bool settings_given(const CLI::App& app) {
  for (const char* flag : kSettingsFlags)
    if (app.count(flag) > 0) return true;
  return false;
}

}  // namespace opcheck::cli
