#include "exec/reference_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <caffe2/serialize/in_memory_adapter.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/import_read.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/version.h>

#include "common/regular_file.h"
#include "common/sha256.h"
#include "common/text.h"
#include "common/xxh64.h"
#include "exec/compare.h"
#include "exec/op_error.h"

namespace opcheck::exec {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMagic = "opcheck-reference-cache 2";
constexpr const char* kEntrySuffix = ".ref";
constexpr const char* kTempMarker = ".ref.tmp-";
// A temporary file this old is a writer that died mid-write (an entry takes seconds to write, not an hour).
constexpr auto kStaleTemp = std::chrono::hours(1);

const char* reference_dtype_word(ReferenceDtype d) {
  switch (d) {
    case ReferenceDtype::Auto: return "auto";
    case ReferenceDtype::Same: return "same";
    case ReferenceDtype::Float32: return "float32";
    case ReferenceDtype::Float64: return "float64";
  }
  return "auto";
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string size_text(std::int64_t b) {
  char buf[64];
  if (b >= (std::int64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1 << 20));
  else std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(b));
  return buf;
}

// An entry's digest binds its payload to its key: the payload's XXH64 seeded with the key's. An entry copied under
// another entry's file name, its key line edited to match, fails it as a corrupt one does.
std::string bound_digest(const std::string& key, const char* payload, std::size_t bytes) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(xxh64(payload, bytes, xxh64(key.data(), key.size()))));
  return hex;
}

std::string entry_header(const std::string& key, const std::vector<char>& payload) {
  return std::string(kMagic) + "\nkey " + key + "\nbytes " + std::to_string(payload.size()) + "\nxxh64 " +
         bound_digest(key, payload.data(), payload.size()) + "\n\n";
}

// The entry's payload back to a reference; throws std::runtime_error for a payload of another shape.
CachedReference decode(const c10::IValue& v) {
  if (!v.isTuple() || v.toTupleRef().elements().size() != 3) throw std::runtime_error("its payload is not a reference");
  const auto& items = v.toTupleRef().elements();
  CachedReference ref;
  ref.output = items[0];
  if (!items[1].isList() || !items[2].isBool()) throw std::runtime_error("its payload is not a reference");
  for (const c10::IValue& t : items[1].toListRef()) {
    if (!t.isTensor()) throw std::runtime_error("its written tensors are not tensors");
    ref.written.push_back(t.toTensor());
  }
  ref.upcast = items[2].toBool();
  return ref;
}

constexpr std::size_t kMaxHeader = 1024;  // an entry's header (magic, key, size, digest) is far shorter

// An entry opened read-only; fd is -1 when it cannot be opened. Only a regular file in the folder is opened, without
// blocking: a FIFO, device or link put in the cache's place is refused (`why` says what it is), so the case's
// reference is computed instead of its read hanging until the case's timeout. Its size is known before a byte is read.
struct EntryFile {
  explicit EntryFile(const std::string& path) {
    bool missing = false;
    fd = open_regular_file(path, why, /*refuse_links=*/true, &missing);
    opened = !missing;
    struct stat st {};
    if (fd >= 0 && ::fstat(fd, &st) == 0) size = static_cast<std::size_t>(st.st_size);
  }
  ~EntryFile() {
    if (data) ::munmap(const_cast<char*>(data), size);
    if (fd >= 0) ::close(fd);
  }
  EntryFile(const EntryFile&) = delete;
  EntryFile& operator=(const EntryFile&) = delete;
  /// The first bytes, up to the header's largest size (read, not mapped: a sparse 10 GB file costs one read).
  std::string head() const {
    std::string out(std::min(size, kMaxHeader + 2), '\0');
    const ssize_t n = out.empty() ? 0 : ::pread(fd, out.data(), out.size(), 0);
    out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return out;
  }
  /// Maps the whole file, once its size was checked against its header; false when it cannot be mapped.
  bool map() {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (p == MAP_FAILED) return false;
    data = static_cast<const char*>(p);
    return true;
  }
  bool opened = false;  // there is an entry, whether or not it could be opened
  std::string why;      // why an entry there could not be opened
  int fd = -1;
  const char* data = nullptr;
  std::size_t size = 0;
};

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (from <= text.size()) {
    const std::size_t eol = std::min(text.find('\n', from), text.size());
    out.emplace_back(text.substr(from, eol - from));
    from = eol + 1;
  }
  return out;
}

bool op_draws_random_numbers(const std::string& op) {
  const auto colons = op.find("::");
  const auto dot = op.find('.', colons == std::string::npos ? 0 : colons);
  const std::string name = op.substr(0, dot);
  const std::string overload = dot == std::string::npos ? std::string() : op.substr(dot + 1);
  const auto handle = c10::Dispatcher::singleton().findSchema({name, overload == "default" ? "" : overload});
  if (!handle) return false;
  if (handle->hasTag(at::Tag::nondeterministic_seeded)) return true;
  const auto& args = handle->schema().arguments();
  return std::any_of(args.begin(), args.end(),
                     [](const c10::Argument& a) { return a.type()->str().find("Generator") != std::string::npos; });
}

}  // namespace

ReferenceCache::ReferenceCache(std::string dir, std::int64_t max_bytes, std::int64_t max_entry_bytes)
    : dir_(std::move(dir)), max_bytes_(max_bytes), max_entry_bytes_(max_entry_bytes) {}

std::string ReferenceCache::entry_path(const std::string& key) const {
  return (fs::path(dir_) / (key + kEntrySuffix)).string();
}

CacheRead ReferenceCache::read(const std::string& key) const {
  CacheRead out;
  const std::string path = entry_path(key);
  // Mapped, not copied: the payload is checked where it lies and its tensors are copied once, into their storage.
  // The descriptor keeps the file's data while it is mapped, even if another process evicts (unlinks) it meanwhile.
  // Its size is checked first, against the cache's limits and then against its header: a damaged or planted file of
  // gigabytes is refused at once, never read whole.
  EntryFile file(path);
  if (!file.opened) return out;  // no entry (or evicted since)
  const auto reject = [&](const std::string& why) {
    out.status = CacheRead::Status::Rejected;
    out.problem = "reference cache entry " + path + " " + why + "; the reference was computed again";
    return out;
  };
  if (file.fd < 0) return reject(file.why.empty() ? "cannot be opened" : file.why);
  if (file.size == 0) return reject("is empty");
  const auto limit = static_cast<std::size_t>(max_entry_bytes_ > 0 ? std::min(max_entry_bytes_, max_bytes_)
                                                                     : max_bytes_);
  if (file.size > limit)
    return reject("is " + size_text(static_cast<std::int64_t>(file.size)) + ", larger than any entry the cache " +
                  "keeps (" + size_text(static_cast<std::int64_t>(limit)) + ", --reference-cache-max-entry and " +
                  "--reference-cache-size); it was not read (corrupt, or not an opcheck reference)");
  const std::string head = file.head();
  if (head.compare(0, std::strlen(kMagic) + 1, std::string(kMagic) + "\n") != 0)
    return reject("is not an opcheck reference (corrupt header)");
  const std::size_t header_end = head.find("\n\n");
  if (header_end == std::string::npos || header_end > kMaxHeader) return reject("is truncated in its header");
  const std::vector<std::string> lines = split_lines(std::string_view(head).substr(0, header_end));
  if (lines.size() != 4 || lines[1] != "key " + key) return reject("has a corrupt header");
  std::int64_t bytes = -1;
  try {
    if (lines[2].rfind("bytes ", 0) == 0) bytes = std::stoll(lines[2].substr(6));
  } catch (const std::exception&) {
    bytes = -1;
  }
  const auto present = static_cast<std::int64_t>(file.size - header_end - 2);
  if (bytes < 0) return reject("has a corrupt header (its size line)");
  if (present < bytes)
    return reject("is truncated: " + std::to_string(present) + " of its " + std::to_string(bytes) +
                  " payload bytes are there");
  if (present > bytes) return reject("is longer than its header says (corrupt)");
  if (!file.map()) return reject("cannot be mapped");
  const char* payload = file.data + header_end + 2;
  if (lines[3] != "xxh64 " + bound_digest(key, payload, static_cast<std::size_t>(bytes)))
    return reject("does not match its digest (corrupt, edited, or another key's entry under this name)");
  try {
    caffe2::serialize::PyTorchStreamReader archive(
        std::make_shared<caffe2::serialize::MemoryReadAdapter>(payload, static_cast<off_t>(bytes)));
    out.reference = decode(torch::jit::readArchiveAndTensors("data", "", "", std::nullopt, std::nullopt, std::nullopt,
                                                             archive));
  } catch (...) {
    return reject("cannot be read: " + op_error_of(std::current_exception()).message);
  }
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // used now: the last to be evicted
  out.status = CacheRead::Status::Hit;
  return out;
}

CacheStore ReferenceCache::store(const std::string& key, const CachedReference& ref) const {
  CacheStore out;
  std::vector<char> payload;
  try {
    c10::List<at::Tensor> written;
    for (const auto& t : ref.written) written.push_back(t);
    std::vector<c10::IValue> items{ref.output, c10::IValue(written), c10::IValue(ref.upcast)};
    payload = torch::jit::pickle_save(c10::ivalue::Tuple::create(std::move(items)));
  } catch (...) {
    out.not_stored = "the reference cannot be serialised: " + op_error_of(std::current_exception()).message;
    return out;
  }
  const std::string header = entry_header(key, payload);
  const auto entry_bytes = static_cast<std::int64_t>(header.size() + payload.size());
  if ((max_entry_bytes_ > 0 && entry_bytes > max_entry_bytes_) || entry_bytes > max_bytes_) {
    const bool over_cap = entry_bytes > max_bytes_;
    out.not_stored = "its entry would take " + size_text(entry_bytes) + ", more than " +
                     (over_cap ? "--reference-cache-size (" + size_text(max_bytes_) + ")"
                               : "--reference-cache-max-entry (" + size_text(max_entry_bytes_) + ")");
    return out;
  }
  static std::atomic<std::uint64_t> sequence{0};
  const std::string path = entry_path(key);
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(sequence++);
  try {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot create " + tmp);
    f.write(header.data(), static_cast<std::streamsize>(header.size()));
    f.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    f.close();
    if (!f) throw std::runtime_error("writing " + tmp + " failed (disk full?)");
    fs::rename(tmp, path);  // atomic: a reader sees the old entry or the new one, never part of one
  } catch (const std::exception& e) {
    std::error_code ec;
    fs::remove(tmp, ec);
    out.failed = true;
    out.not_stored = std::string("the reference cache could not be written: ") + e.what();
    return out;
  }
  out.stored = true;
  out.evicted = evict();
  return out;
}

std::int64_t ReferenceCache::evict() const {
  struct Entry {
    fs::path path;
    std::int64_t bytes;
    fs::file_time_type used;
  };
  std::vector<Entry> entries;
  std::int64_t total = 0;
  const auto now = fs::file_time_type::clock::now();
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code gone;  // another process may remove any file while this one looks
    const std::string name = it->path().filename().string();
    const auto used = fs::last_write_time(it->path(), gone);
    const auto bytes = static_cast<std::int64_t>(fs::file_size(it->path(), gone));
    if (gone) continue;
    if (ends_with(name, kEntrySuffix)) {
      entries.push_back({it->path(), bytes, used});
      total += bytes;
    } else if (name.find(kTempMarker) != std::string::npos && now - used > kStaleTemp) {
      fs::remove(it->path(), gone);
    }
  }
  if (total <= max_bytes_) return 0;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  std::int64_t evicted = 0;
  for (const Entry& e : entries) {
    if (total <= max_bytes_) break;
    std::error_code gone;
    if (fs::remove(e.path, gone)) ++evicted;  // a concurrent evictor may have taken it: not counted twice
    total -= e.bytes;
  }
  return evicted;
}

const std::string& libtorch_build_digest() {
  static const std::string build = sha256_hex(at::show_config());
  return build;
}

std::string reference_key(const std::string& dedupe_key, const std::string& resolved_op,
                          const std::vector<std::string>& input_digests, ReferenceDtype dtype) {
  std::string text = std::string(kMagic) + "\nopcheck " + OPCHECK_VERSION + "\ntorch " + TORCH_VERSION + "\nbuild " +
                     libtorch_build_digest() + "\nintra-op threads " + std::to_string(at::get_num_threads()) +
                     "\nop " + resolved_op + "\ncase " + dedupe_key + "\ninputs";
  for (const auto& d : input_digests) text += " " + d;
  text += "\nreference dtype " + std::string(reference_dtype_word(dtype)) + "\n";
  return sha256_hex(text);
}

std::string not_cacheable_reason(const Case& c, const std::string& resolved_op) {
  if (c.expects_error) return "the case expects an error: its reference raises, and errors are never kept";
  if (c.nondeterministic_ok) return "the case is marked nondeterministic";
  if (returns_uninitialised(resolved_op)) return "the op returns uninitialised memory";
  for (const auto& op : split_list(resolved_op))
    if (op_draws_random_numbers(op)) return op + " draws random numbers: its reference depends on the generator";
  return {};
}

}  // namespace opcheck::exec
