#include "report/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/regular_file.h"
#include "report/report_error.h"

namespace opcheck {
namespace {

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
  throw ReportError(path + ": error: cannot write report: " + what + ": " + std::strerror(err) +
                    (err == ENOSPC || err == EDQUOT
                         ? "\n  Fix: free space on that file system, or write the report elsewhere"
                         : "\n  Fix: check that the directory exists and is writable"));
}

// The temporary file beside the target; removed on destruction unless renamed into place.
class TempFile {
 public:
  explicit TempFile(const std::string& path) : path_(path) {
    // The writer's pid in the name lets a later run tell a temporary file left by a killed writer from one being
    // written right now.
    std::string tmpl = path + ".tmp." + std::to_string(::getpid()) + ".XXXXXX";
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    fd_ = ::mkstemp(name.data());
    if (fd_ < 0) fail(path, "creating a temporary file in " + directory_of(path), errno);
    tmp_ = name.data();
    // mkstemp makes the file 0600; a report should get the permissions any newly created file would.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd_, 0666 & ~mask);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
  }

  void write(std::string_view bytes) {
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        fail(path_, "writing", errno);
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }

  void commit() {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail(path_, "closing", errno);
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) fail(path_, "renaming the temporary file into place", errno);
    tmp_.clear();
  }

 private:
  std::string path_;
  std::string tmp_;
  int fd_ = -1;
};

// Removes the temporary files beside `path` that a writer killed mid-write left behind: `<name>.tmp.<pid>.XXXXXX`
// whose process is gone, and the pid-less `<name>.tmp.XXXXXX` of earlier releases once they are an hour old.
void remove_stale_temporaries(const std::string& path) {
  const std::string dir = directory_of(path);
  const std::string prefix = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1) + ".tmp.";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  const std::time_t now = std::time(nullptr);
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const std::string full = dir + "/" + name;
    const auto dot = rest.find('.');
    bool stale = false;
    if (dot != std::string::npos && dot > 0 && rest.size() - dot - 1 == 6 &&
        rest.find_first_not_of("0123456789") == dot) {
      const long pid = std::strtol(rest.substr(0, dot).c_str(), nullptr, 10);
      stale = pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
    } else if (rest.size() == 6 && rest.find('.') == std::string::npos) {
      struct stat st {};
      stale = ::lstat(full.c_str(), &st) == 0 && S_ISREG(st.st_mode) && now - st.st_mtime > 3600;
    }
    if (stale) ::unlink(full.c_str());
  }
  ::closedir(d);
}

}  // namespace


std::string not_a_report_target(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return {};
  const char* what = S_ISDIR(st.st_mode)    ? "a folder"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                     : S_ISFIFO(st.st_mode) ? "a FIFO (named pipe)"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "not a regular file";
  return path + " is " + what + ": a report replaces its file (written beside it, then renamed into place), which "
                "would replace it";
}

namespace {

// A report is never renamed over a device, FIFO or socket (as root, over /dev/full itself).
void refuse_special_target(const std::string& path) {
  if (const std::string why = not_a_report_target(path); !why.empty())
    throw ReportError(path + ": error: cannot write report: " + why + "\n  Fix: name a regular file");
}

}  // namespace

void write_file_atomically(const std::string& path, const std::function<void(TextOut&)>& produce) {
  refuse_special_target(path);
  remove_stale_temporaries(path);
  TempFile file(path);
  TextOut out;
  out.sink = [&](std::string_view bytes) { file.write(bytes); };
  produce(out);
  file.write(out.buf);
  file.commit();
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  refuse_special_target(path);
  remove_stale_temporaries(path);
  TempFile file(path);
  file.write(bytes);
  file.commit();
}

std::string read_file_bytes(const std::string& path) {
  std::string text, why;
  if (!read_regular_file(path, text, why)) throw ReportError(path + ": error: cannot read report: " + why);
  return text;
}

}  // namespace opcheck
