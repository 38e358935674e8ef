// Writing a report so that readers see either the old file or the complete new one, never a torn one.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace opcheck {

/// Text produced piece by piece. Writers append to `buf` and call spill() between records: with a sink (a file
/// being written) a buffer past `chunk` bytes goes to the sink, so a big report never sits in memory whole;
/// without one the text accumulates in `buf`.
struct TextOut {
  std::string buf;
  std::function<void(std::string_view)> sink;
  std::size_t chunk = std::size_t{1} << 20;
  void spill() {
    if (sink && buf.size() >= chunk) {
      sink(buf);
      buf.clear();
    }
  }
};

/// Writes what `produce` appends to a temporary file in the directory of `path` and renames it over `path`, so
/// readers see the old file or the whole new one. There is no fsync: a report is rewritten by the next run, and
/// waiting for the disk would hold up the end of every run. Throws ReportError naming the path and the system's
/// reason on failure (the temporary file is removed and the target left untouched); exceptions from `produce`
/// do the same and pass through.
void write_file_atomically(const std::string& path, const std::function<void(TextOut&)>& produce);
/// Why `path` cannot take a report although it exists: a folder, device, FIFO or socket, which the rename into place
/// would replace; "" for a regular file or a path that does not exist yet.
std::string not_a_report_target(const std::string& path);

/// write_file_atomically for text already in memory.
void write_file_atomically(const std::string& path, std::string_view bytes);

/// The whole file; throws ReportError when it cannot be read.
std::string read_file_bytes(const std::string& path);

}  // namespace opcheck
