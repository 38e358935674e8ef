// The compact binary form of a Result on the worker -> parent pipe (JSON costs more than the isolation budget).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "opcheck/case.h"
#include "opcheck/result.h"

namespace opcheck {

/// Appends `r` to `out`: every field in declaration order, strings and lists length-prefixed, numbers raw
/// (both ends are the same binary on the same machine, so native byte order is fine).
void encode_result(const Result& r, std::vector<std::uint8_t>& out);

/// Reads a Result written by encode_result from exactly `size` bytes. False (and `error`) on malformed input.
bool decode_result(const std::uint8_t* data, std::size_t size, Result& r, std::string& error);

/// Appends `c` to `out` for a worker that did not inherit the parent's cases (one started by a Python device's
/// start-up process): every field a run reads, in declaration order. skip_if/xfail_if keep their text, not their
/// parsed form (the parent evaluates them before a case is sent).
void encode_case(const Case& c, std::vector<std::uint8_t>& out);

/// Reads a Case written by encode_case from exactly `size` bytes. False (and `error`) on malformed input.
bool decode_case(const std::uint8_t* data, std::size_t size, Case& c, std::string& error);

}  // namespace opcheck
