#include "common/regular_file.h"

#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace opcheck {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a folder";
  return "a special file";
}

}  // namespace

int open_regular_file(const std::string& path, std::string& why, bool refuse_links, bool* missing) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. The check is on the descriptor, so a
  // file swapped for a FIFO after a stat cannot slip through.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | (refuse_links ? O_NOFOLLOW : 0));
  if (missing) *missing = fd < 0 && errno == ENOENT;
  if (fd < 0) {
    why = refuse_links && errno == ELOOP ? "is a symbolic link, not a regular file" : std::strerror(errno);
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    why = ::fstat(fd, &st) != 0 ? std::string(std::strerror(errno))
                                : std::string("is ") + kind_of(st.st_mode) + ", not a regular file";
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

bool read_regular_file(const std::string& path, std::string& out, std::string& why, std::size_t max_bytes) {
  const int fd = open_regular_file(path, why);
  if (fd < 0) return false;
  struct stat st {};
  ::fstat(fd, &st);
  if (static_cast<std::size_t>(st.st_size) > max_bytes) {
    why = "is larger than " + std::to_string(max_bytes) + " bytes";
    ::close(fd);
    return false;
  }
  out.clear();
  out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why = std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > max_bytes) {
      why = "is larger than " + std::to_string(max_bytes) + " bytes";
      ::close(fd);
      return false;
    }
  }
  ::close(fd);
  return true;
}

std::string why_not_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0)
    return S_ISREG(st.st_mode) ? std::string() : std::string("is ") + kind_of(st.st_mode) + ", not a regular file";
  const int err = errno;
  if (err == ELOOP) return "is a symbolic link loop (its links lead back to themselves)";
  if (err == ENOENT && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    return "is a dangling symbolic link (what it names does not exist)";
  if (err == ENOENT || err == ENOTDIR) return "does not exist";
  return std::strerror(err);
}

std::string absolute_path(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path a = std::filesystem::absolute(path, ec);
  return ec ? path : a.lexically_normal().string();
}

}  // namespace opcheck
