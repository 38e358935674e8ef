// The worker pool's wire: writing frames, reading case requests, and the capture file of what cases print.

#include "runner/worker_protocol.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "runner/result_wire.h"

namespace opcheck::workers {

bool write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

/// What a case printed (stdout and stderr share one in-memory file per worker); long output keeps head and tail.
std::string read_capture(int fd, std::size_t max_bytes) {
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size <= 0) return {};
  const auto size = static_cast<std::size_t>(st.st_size);
  auto read_at = [fd](std::size_t offset, std::size_t n) {
    std::string out(n, '\0');
    std::size_t got = 0;
    while (got < n) {
      ssize_t r = ::pread(fd, &out[got], n - got, static_cast<off_t>(offset + got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += static_cast<std::size_t>(r);
    }
    out.resize(got);
    return out;
  };
  if (size <= max_bytes) return read_at(0, size);
  const std::size_t head = max_bytes / 2, tail = max_bytes - head;
  return read_at(0, head) + "\n[... opcheck: " + std::to_string(size - head - tail) + " bytes of output omitted ...]\n" +
         read_at(size - tail, tail);
}

/// Empties the capture file. stdout and stderr share its file offset, so one lseek rewinds both.
void reset_capture(int fd) {
  if (::ftruncate(fd, 0) == 0) ::lseek(fd, 0, SEEK_SET);
}

/// What the case just printed; leaves the file empty for the next one. A quiet case costs one fstat.
std::string take_capture(int fd, std::size_t max_bytes) {
  std::fflush(stdout);
  std::fflush(stderr);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size <= 0) return {};
  std::string out = read_capture(fd, max_bytes);
  reset_capture(fd);
  return out;
}

int make_capture_file() {
  int fd = ::memfd_create("opcheck-case-output", MFD_CLOEXEC);
  if (fd >= 0) return fd;
  FILE* f = std::tmpfile();  // kernels without memfd: an unlinked temporary file does the same
  return f ? ::dup(::fileno(f)) : -1;
}

bool RequestReader::next(int fd, const Case*& c, std::uint64_t& position) {
  for (;;) {
    if (take(c, position)) return true;
    if (malformed) return false;
    if (used > 0) std::memmove(in.data(), in.data() + used, end - used);
    end -= used;
    used = 0;
    if (end == in.size()) in.resize(2 * in.size());  // a case larger than what is read at once
    const ssize_t r = ::read(fd, in.data() + end, in.size() - end);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    end += static_cast<std::size_t>(r);
  }
}

bool RequestReader::take(const Case*& c, std::uint64_t& position) {
  const std::size_t have = end - used;
  if (have < sizeof position) return false;
  std::memcpy(&position, in.data() + used, sizeof position);
  if (cases != nullptr) {
    if (position >= cases->size()) return !(malformed = true);
    c = (*cases)[position];
    used += sizeof position;
    return true;
  }
  std::uint32_t length = 0;
  if (have < sizeof position + sizeof length) return false;
  std::memcpy(&length, in.data() + used + sizeof position, sizeof length);
  if (have < sizeof position + sizeof length + length) return false;
  std::string error;
  if (!decode_case(in.data() + used + sizeof position + sizeof length, length, decoded, error))
    return !(malformed = true);
  used += sizeof position + sizeof length + length;
  c = &decoded;
  return true;
}

}  // namespace opcheck::workers
