#include "report/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

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
                    "\n  Fix: check that the directory exists and is writable");
}

// The temporary file beside the target; removed on destruction unless renamed into place.
class TempFile {
 public:
  explicit TempFile(const std::string& path) : path_(path) {
    std::string tmpl = path + ".tmp.XXXXXX";
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

}  // namespace

void write_file_atomically(const std::string& path, const std::function<void(TextOut&)>& produce) {
  TempFile file(path);
  TextOut out;
  out.sink = [&](std::string_view bytes) { file.write(bytes); };
  produce(out);
  file.write(out.buf);
  file.commit();
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  TempFile file(path);
  file.write(bytes);
  file.commit();
}

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ReportError(path + ": error: cannot read report: " + std::strerror(errno));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw ReportError(path + ": error: cannot read report: read failed");
  return ss.str();
}

}  // namespace opcheck
