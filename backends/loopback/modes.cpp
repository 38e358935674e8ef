// Device modes: OPCHECK_LOOPBACK_MODE=MODE[,MODE...] makes the loopback behave like a real accelerator in one
// respect each, so that opcheck's handling of that behaviour is proven on a CPU machine. Read once, when first asked
// (at the latest when opcheck asks for the library's load error); an unknown mode is that load error.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string_view>

#include <torch/library.h>

#include "common/spelling.h"
#include "loopback.h"

namespace opcheck::loopback {
namespace {

struct ModeName {
  const char* name;
  Mode mode;
};
constexpr ModeName kModes[] = {
    {"fork_sensitive", Mode::ForkSensitive}, {"precise", Mode::Precise},
    {"stats_fp32", Mode::StatsFp32},         {"any_writer", Mode::AnyWriter},
    {"shuffle_accumulate", Mode::ShuffleAccumulate},
};

struct Modes {
  unsigned bits = 0;
  std::string error;
};

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1));
}

const Modes& modes() {
  static const Modes m = [] {
    Modes out;
#ifndef OPCHECK_PYLOOP  // pyloop is configured by its own variables
    const char* env = std::getenv("OPCHECK_LOOPBACK_MODE");
    if (env != nullptr && !parse_modes(env, out.bits, out.error)) out.bits = 0;
#endif
    return out;
  }();
  return m;
}

/// The process that first used the device (fork_sensitive); 0 until one has.
std::atomic<pid_t> g_user{0};

}  // namespace

std::string mode_list() {
  std::string out;
  for (const auto& m : kModes) out += std::string(out.empty() ? "" : ", ") + m.name;
  return out;
}

bool parse_modes(const std::string& spec, unsigned& bits, std::string& error) {
  unsigned parsed = 0;
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    auto comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    const std::string word = trim(std::string_view(spec).substr(pos, comma - pos));
    pos = comma + 1;
    if (word.empty()) continue;
    const ModeName* found = nullptr;
    std::vector<std::string> names;
    for (const auto& m : kModes) {
      names.emplace_back(m.name);
      if (word == m.name) found = &m;
    }
    if (found == nullptr) {
      error = "OPCHECK_LOOPBACK_MODE: unknown mode '" + word + "'" + did_you_mean(word, names) +
              ". Fix: use one or more of " + mode_list() + ", separated by commas";
      return false;
    }
    parsed |= static_cast<unsigned>(found->mode);
  }
  bits = parsed;
  return true;
}

bool mode_on(Mode m) { return (modes().bits & static_cast<unsigned>(m)) != 0; }

const std::string& mode_error() { return modes().error; }

bool used_in_parent_before_fork() {
  if (!mode_on(Mode::ForkSensitive)) return false;
  const pid_t self = ::getpid();
  pid_t user = g_user.load();
  if (user == self) return false;
  if (user == 0 && g_user.compare_exchange_strong(user, self)) return false;
  return user != self;
}

void note_device_use() {
  if (!used_in_parent_before_fork()) return;
  TORCH_CHECK(false, "loopback error: initialization error: the loopback device was initialised in process ",
              g_user.load(), ", and this process (", ::getpid(),
              ") was forked from it afterwards. Like CUDA's, a loopback device used before fork() cannot be used in "
              "the forked child (OPCHECK_LOOPBACK_MODE=fork_sensitive). Fix: use the device only after forking, in "
              "the process that runs the cases");
}

namespace {

// native_layer_norm and native_group_norm have composite kernels for every backend without one of their own (they
// decompose into native_batch_norm and addcmul, var_mean and friends, each rounding to the input's dtype); CUDA owns
// both. The modes that behave as an accelerator does (precise, stats_fp32, any_writer, shuffle_accumulate) own them
// too, through the fallback: computed whole (in float64 under precise), statistics in float32 under stats_fp32. The
// default loopback keeps the composites, so that a decomposition on the device is still exercised.
const bool g_norm_kernels = [] {
  if (!mode_on(Mode::Precise) && !mode_on(Mode::StatsFp32) && !mode_on(Mode::AnyWriter) &&
      !mode_on(Mode::ShuffleAccumulate))
    return false;
  static torch::Library lib(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__, __LINE__);
  lib.impl("native_layer_norm", torch::CppFunction::makeFromBoxedFunction<&cpu_fallback_with_faults>());
  lib.impl("native_group_norm", torch::CppFunction::makeFromBoxedFunction<&cpu_fallback_with_faults>());
  return true;
}();

}  // namespace

}  // namespace opcheck::loopback
