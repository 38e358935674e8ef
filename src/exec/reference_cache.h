// References kept across runs (--reference-cache DIR): each unique case's CPU reference, filed under the identity of
// what computed it, so that a nightly run that meets the same calls again reads them instead of computing them.
//
// One file per entry, <key>.ref, written to a temporary file beside it and renamed, so a reader sees a whole entry
// or none; each holds its payload's size and XXH64 digest (common/xxh64.h: SHA-256 would take longer to check than
// many references take to compute), checked on every read. Several processes (shards, and the workers
// of each) share one folder: a store evicts the least recently used entries (file modification time, renewed on
// every read) once the folder is above its cap, and an entry removed while another process reads it stays readable
// to that reader (POSIX keeps an unlinked file's data while it is open).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include "opcheck/case.h"
#include "opcheck/exec_api.h"

namespace opcheck::exec {

/// What an entry keeps of a reference: its output, the tensors it wrote in place, and whether it was upcast.
struct CachedReference {
  c10::IValue output;
  std::vector<at::Tensor> written;
  bool upcast = false;
};

/// What a read found: a checked entry, none, or one that failed its check (`problem` says how).
struct CacheRead {
  enum class Status { Hit, Missing, Rejected };
  Status status = Status::Missing;
  CachedReference reference;
  std::string problem;
};

/// What a store did: written or not (`not_stored` says why: above the entry limit, or the write failed, with
/// `failed` set), and how many entries it evicted.
struct CacheStore {
  bool stored = false;
  bool failed = false;
  std::string not_stored;
  std::int64_t evicted = 0;
};

/// The --reference-cache folder.
class ReferenceCache {
 public:
  ReferenceCache(std::string dir, std::int64_t max_bytes, std::int64_t max_entry_bytes);

  /// The entry for `key`, checked against its digest; its use renews its place in the least-recently-used order.
  CacheRead read(const std::string& key) const;
  /// Writes the entry for `key` (replacing any), then evicts down to the cap. Never throws.
  CacheStore store(const std::string& key, const CachedReference& ref) const;
  /// Where the entry for `key` lives.
  std::string entry_path(const std::string& key) const;

 private:
  std::int64_t evict() const;

  std::string dir_;
  std::int64_t max_bytes_;
  std::int64_t max_entry_bytes_;  // 0 = any size
};

/// The key an entry is filed under: sha256 (hex) of everything that decides the reference: the entry format,
/// opcheck's version, libtorch's version and build configuration (its commit and CPU capability among them), the
/// worker's intra-op threads (a CPU reduction's order), the op as resolved, the case's dedupe key (its call and
/// input recipes, file digests included), the digests of the inputs as built, and the reference dtype.
std::string reference_key(const std::string& dedupe_key, const std::string& resolved_op,
                          const std::vector<std::string>& input_digests, ReferenceDtype dtype);

/// sha256 of libtorch's build configuration (at::show_config(): version, commit, CPU capability, flags), which
/// every key holds; computed once per process (prepare_worker asks for it before the first case, off the cases' clock).
const std::string& libtorch_build_digest();

/// Why the reference of `c` (resolved to `resolved_op`) is computed every time and never kept; "" when it may be
/// kept. An expected error (its reference raises), a case marked nondeterministic, an op that draws random numbers
/// (ATen's nondeterministic_seeded tag, or a Generator argument: its reference depends on the generator's state) and
/// an op whose output is uninitialised memory are never cached.
std::string not_cacheable_reason(const Case& c, const std::string& resolved_op);

}  // namespace opcheck::exec
