// XXH64 (Yann Collet's xxHash, 64-bit): a fast checksum for data opcheck wrote itself and reads back, such as
// --reference-cache entries, where SHA-256 would cost more than what it guards. It detects corruption and truncation;
// it is no defence against a deliberate forgery (neither is a digest stored next to the data it covers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace opcheck {

/// XXH64 of `len` bytes at `data`, as the reference implementation computes it (XXH64(data, len, seed)).
std::uint64_t xxh64(const void* data, std::size_t len, std::uint64_t seed = 0);

/// xxh64 as 16 lowercase hex digits.
std::string xxh64_hex(const void* data, std::size_t len);

}  // namespace opcheck
