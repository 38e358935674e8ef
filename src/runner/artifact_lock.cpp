#include "runner/artifact_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace opcheck {

ArtifactLock::~ArtifactLock() {
  if (fd_ >= 0) ::close(fd_);
}

std::string ArtifactLock::file_in(const std::string& dir) {
  return (std::filesystem::path(dir) / "opcheck.lock").string();
}

bool ArtifactLock::acquire(const std::string& dir, const std::string& holder, std::string& error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::error_code is_dir_ec;
  if (!fs::is_directory(dir, is_dir_ec)) {
    const bool exists = fs::exists(fs::symlink_status(dir, is_dir_ec));
    error = "--artifact-dir " + dir + (exists ? " is not a folder" : " cannot be created: " + ec.message()) +
            "\n  Fix: pass a folder opcheck can create and write, or none for ./opcheck-out";
    return false;
  }
  const std::string path = file_in(dir);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd < 0) {
    error = "--artifact-dir " + dir + ": cannot write in it (" + path + ": " + std::strerror(errno) +
            ")\n  Fix: pass a folder opcheck can write, or make this one writable";
    return false;
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string who(512, '\0');
    const ssize_t n = ::pread(fd, &who[0], who.size(), 0);
    who.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    while (!who.empty() && (who.back() == '\n' || who.back() == '\0')) who.pop_back();
    ::close(fd);
    error = err == EWOULDBLOCK
                ? dir + " is in use by another opcheck run (" + (who.empty() ? std::string("holder unknown") : who) +
                      "); its journal would be lost\n  Fix: wait for that run to end, or give this one its own "
                      "--artifact-dir"
                : "--artifact-dir " + dir + ": cannot lock " + path + ": " + std::strerror(err) +
                      "\n  Fix: pass a folder on a file system that supports locks (flock)";
    return false;
  }
  // Only the holder writes the file, so what a refused run reads is the holder's own line.
  if (::ftruncate(fd, 0) == 0) {
    const std::string line = holder + "\n";
    if (::pwrite(fd, line.data(), line.size(), 0) < 0) { /* the lock holds without the note */ }
  }
  fd_ = fd;
  return true;
}

}  // namespace opcheck
