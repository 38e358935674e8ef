// SHA-256, for manifest digests, dedupe keys and input digests (no external dependency).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace opcheck {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t len);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::string digest();      // finishes the hash: its 32 bytes; call once (or hex_digest once)
  std::string hex_digest();  // finishes the hash: its 64 hex digits; call once

 private:
  void block(const std::uint8_t* p);
  std::uint32_t h_[8];
  std::uint8_t buf_[64];
  std::size_t buf_len_ = 0;
  std::uint64_t total_ = 0;
};

std::string sha256_hex(std::string_view data);
/// Digest of a file's bytes; empty string when it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace opcheck
