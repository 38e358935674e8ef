// One run per artifact folder: the journal there belongs to the run holding the folder's lock.
#pragma once

#include <string>

namespace opcheck {

/// An exclusive lock on `<dir>/opcheck.lock`, held until destroyed or the process ends (the kernel releases it when
/// the process dies, so a killed run never leaves the folder locked).
class ArtifactLock {
 public:
  ArtifactLock() = default;
  ~ArtifactLock();
  ArtifactLock(const ArtifactLock&) = delete;
  ArtifactLock& operator=(const ArtifactLock&) = delete;

  /// Takes the lock on `dir` (created if missing) and records who holds it (`holder`: pid, host, start, command).
  /// Returns false with `error` saying why and ending with its Fix, naming the holder when another run has the folder.
  bool acquire(const std::string& dir, const std::string& holder, std::string& error);

  /// The lock's file in `dir`.
  static std::string file_in(const std::string& dir);

 private:
  int fd_ = -1;
};

}  // namespace opcheck
