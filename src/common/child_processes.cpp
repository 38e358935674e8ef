#include "common/child_processes.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace opcheck {

std::vector<pid_t> child_processes(pid_t parent) {
  std::vector<pid_t> out;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  while (const dirent* e = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    char path[64], stat[512];
    std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    const ssize_t n = ::read(fd, stat, sizeof stat - 1);
    ::close(fd);
    if (n <= 0) continue;
    stat[n] = '\0';
    const char* after_name = std::strrchr(stat, ')');  // the name may hold spaces and parentheses
    char state = 0;
    long ppid = 0;
    if (after_name != nullptr && std::sscanf(after_name + 1, " %c %ld", &state, &ppid) == 2 && ppid == parent)
      out.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(proc);
  return out;
}

void end_child_processes() {
  for (int round = 0; round < 64; ++round) {
    const std::vector<pid_t> left = child_processes(::getpid());
    if (left.empty()) return;
    for (const pid_t pid : left) ::kill(pid, SIGKILL);
    for (const pid_t pid : left)
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
  }
}

}  // namespace opcheck
