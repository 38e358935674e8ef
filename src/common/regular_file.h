// Reading a whole file that must be a regular file: a FIFO, socket or device named by mistake is refused, never
// opened for a blocking read; and a path as the commands opcheck prints spell it.
#pragma once

#include <cstddef>
#include <string>

namespace opcheck {

/// Opens `path` for reading when it is a regular file, without ever blocking (a FIFO is refused, not waited on).
/// With `refuse_links`, a symbolic link is refused too: a cache folder's entries are files opcheck wrote, and a link
/// could lead out of the folder. Returns the descriptor (the caller closes it), or -1 with `why` saying why ("is a
/// FIFO (named pipe), not a regular file", the system's error text) and `missing` set when there is no such file.
int open_regular_file(const std::string& path, std::string& why, bool refuse_links = false, bool* missing = nullptr);

/// Reads `path` into `out` when it is a regular file of at most `max_bytes`. Otherwise returns false and says why in
/// `why` ("is a FIFO (named pipe), not a regular file", "is larger than N bytes", the system's error text).
bool read_regular_file(const std::string& path, std::string& out, std::string& why,
                       std::size_t max_bytes = static_cast<std::size_t>(1) << 40);

/// Why `path` is not a regular file (through its links), in words a message puts after the path: "" for a regular
/// file; else "does not exist", "is a symbolic link loop", "is a dangling symbolic link", "is a FIFO (named pipe),
/// not a regular file", "is a folder, not a regular file", or the system's error text. Never opens the file.
std::string why_not_regular_file(const std::string& path);

/// `path` made absolute and normal (no `.` or `..` parts), as printed commands and bundles name files; `path` itself
/// when the working folder cannot be read.
std::string absolute_path(const std::string& path);

}  // namespace opcheck
