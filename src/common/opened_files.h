// Tensor files a run reads are opened once, when their manifest loads, and checked on the descriptor opened: later
// reads (the dedupe key's digest, the worker that builds the input) go through that descriptor
// (TensorSpec::file_source), never the path again, so a file or symlink swapped in after the check is not followed.
#pragma once

#include <string>

namespace opcheck {

/// Opens `path` for the rest of the process (forked workers inherit the descriptor; one descriptor per path) and
/// checks the opened file: a regular file whose real path, as the kernel resolved the open, lies in `folder` (any
/// folder when `folder` is empty). Returns the descriptor, or -1 with `problem` worded to follow "file 'x' ".
int open_checked_file(const std::string& path, const std::string& folder, std::string& problem);

/// What a per-process cache of a file's contents keys an entry by: the path with the file's device, inode, size and
/// modification time (nanoseconds) as stat says now, so that a file replaced or rewritten is read again; "" when stat
/// fails (nothing to cache).
std::string file_identity(const std::string& path);

/// Closes every descriptor open_checked_file opened, for a process that has let go of every manifest loaded so far
/// and loads files rewritten since (import-opinfo's second pass): the next open of a path opens the new file.
void close_opened_files();

}  // namespace opcheck
