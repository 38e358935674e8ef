#include "common/opened_files.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

namespace opcheck {
namespace {

// Where the kernel says the open descriptor's file is.
std::string real_path_of(int fd) {
  char buf[PATH_MAX + 1];
  const ssize_t n = ::readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), buf, PATH_MAX);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

bool beneath(const std::string& path, const std::string& folder) {
  if (folder.empty()) return true;
  const std::string prefix = folder.back() == '/' ? folder : folder + "/";
  return path.compare(0, prefix.size(), prefix) == 0;
}

std::mutex g_mutex;
std::map<std::string, int> g_opened;  // path -> its checked descriptor, for the process's life (or until closed)

}  // namespace

std::string file_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return path + '\0' + std::to_string(st.st_dev) + ':' + std::to_string(st.st_ino) + ':' + std::to_string(st.st_size) +
         ':' + std::to_string(st.st_mtim.tv_sec) + '.' + std::to_string(st.st_mtim.tv_nsec);
}

void close_opened_files() {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (const auto& [path, fd] : g_opened) ::close(fd);
  g_opened.clear();
}

int open_checked_file(const std::string& path, const std::string& folder, std::string& problem) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto& opened = g_opened;
  int fd = -1;
  if (const auto it = opened.find(path); it != opened.end()) {
    fd = it->second;
  } else {
    // O_NONBLOCK: a FIFO swapped in is refused below, never waited on.
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
      problem = std::string("cannot be opened: ") + std::strerror(errno);
      return -1;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) problem = std::string("cannot be examined: ") + std::strerror(errno);
    else if (!S_ISREG(st.st_mode)) problem = "is not a regular file";
    if (!problem.empty()) {
      ::close(fd);
      return -1;
    }
    opened.emplace(path, fd);
  }
  if (const std::string real = real_path_of(fd); !beneath(real, folder)) {
    problem = "resolves to " + real + " when opened, outside the manifest's folder";
    return -1;
  }
  return fd;
}

}  // namespace opcheck
