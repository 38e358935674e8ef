// The worker pool's wire (worker_pool.cpp, worker_process.cpp): frames from a worker to the pool, case requests from
// the pool to a worker, and the file per worker that holds what its cases print.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "opcheck/case.h"

namespace opcheck::workers {

// Worker -> parent frames: a fixed header, then `length` bytes (an encoded Result, the start-up error text, or the
// seconds the worker took to start as a double).
enum class FrameKind : std::uint32_t { Result = 1, StartFailed = 2, Ready = 3 };
struct FrameHeader {
  FrameKind kind;
  std::uint32_t length;
  std::uint64_t position;  // index into the cases vector
};

// Parent -> worker: each request is one little-endian std::uint64_t case position. A closed pipe means "exit".

bool write_all(int fd, const void* data, std::size_t n);

/// Writes one frame whose payload `fill` appends; `buf` is reused so a case costs no allocation here.
template <class Fill>
bool send_frame(int fd, std::vector<std::uint8_t>& buf, FrameKind kind, std::uint64_t position, Fill fill) {
  buf.resize(sizeof(FrameHeader));
  fill(buf);
  const FrameHeader h{kind, static_cast<std::uint32_t>(buf.size() - sizeof(FrameHeader)), position};
  std::memcpy(buf.data(), &h, sizeof h);
  return write_all(fd, buf.data(), buf.size());
}

/// What a case printed (stdout and stderr share one in-memory file per worker); long output keeps head and tail.
std::string read_capture(int fd, std::size_t max_bytes);
/// Empties the capture file. stdout and stderr share its file offset, so one lseek rewinds both.
void reset_capture(int fd);
/// What the case just printed; leaves the file empty for the next one. A quiet case costs one fstat.
std::string take_capture(int fd, std::size_t max_bytes);
/// A worker's capture file: in memory where the kernel has memfd, else an unlinked temporary file.
int make_capture_file();

/// The cases a worker is sent: case positions into `cases` it inherited, or (cases == nullptr) each position followed
/// by the case itself (a u32 length, then encode_case's bytes).
struct RequestReader {
  explicit RequestReader(const std::vector<const Case*>* inherited) : cases(inherited), in(65536) {}
  const std::vector<const Case*>* cases;
  std::vector<std::uint8_t> in;  // in[used, end) is read and not yet taken
  std::size_t used = 0;
  std::size_t end = 0;
  Case decoded;
  bool malformed = false;

  /// The next case; false when the pipe closed or a request was malformed.
  bool next(int fd, const Case*& c, std::uint64_t& position);
  bool take(const Case*& c, std::uint64_t& position);
};

}  // namespace opcheck::workers
