#include "cli/exec_library.h"

#include <dlfcn.h>

#include <filesystem>

#include "cli/cli.h"

namespace fs = std::filesystem;

namespace opcheck::cli {

std::vector<std::string> library_dirs() {
  const fs::path dir = exe_dir();
  return {dir.string(), (dir / ".." / OPCHECK_INSTALL_LIBDIR / "opcheck").string()};
}

ExecLibrary::ExecLibrary() : thread_([this] { load(); }) {}

ExecLibrary::~ExecLibrary() {
  if (thread_.joinable()) thread_.join();
}

void ExecLibrary::load() {
  std::string tried;
  for (const auto& dir : library_dirs()) {
    const fs::path path = fs::path(dir) / "libopcheck_exec.so";
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      tried += " " + path.string();
      continue;
    }
    // RTLD_GLOBAL: device plugins loaded later must see the same libtorch symbols.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!handle) {
      error_ = std::string("cannot load the exec layer: ") + dlerror();
      return;
    }
    create_ = reinterpret_cast<CreateExecutorFn>(dlsym(handle, "opcheck_create_executor"));
    if (!create_) error_ = path.string() + " does not export opcheck_create_executor";
    return;
  }
  error_ = "libopcheck_exec.so not found (looked at" + tried + ")";
}

std::unique_ptr<Executor> ExecLibrary::create(const ExecOptions& opts, std::string& error, bool& setup_failed) {
  if (thread_.joinable()) thread_.join();
  setup_failed = false;
  if (!create_) {
    error = error_;
    return nullptr;
  }
  std::unique_ptr<Executor> ex(create_(&opts, &error));
  setup_failed = !ex;
  return ex;
}

}  // namespace opcheck::cli
