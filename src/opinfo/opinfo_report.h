// What `import-opinfo` does with the files its Python wrote: takes cases (and their status rules) out of them, and
// counts the report (no libtorch, no Python).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace opcheck::opinfo {

/// Removes from a file written by the importer the blocks of lines that start with `  - <key>: <value>` for the
/// given values, or whose value starts with one of `prefixes` (a case `  - name: x` up to the next `  - ` line of its
/// list, a status rule `  - id: "..."`; the prefix `x.float32.3.call` takes every call case of a sample). Returns the
/// number of blocks left.
std::size_t drop_blocks(const std::filesystem::path& path, const std::string& key, const std::set<std::string>& values,
                        const std::set<std::string>& prefixes = {});

/// Sets the report's counts (samples, written, as_calls, cases, not_written, by_reason) from its entries and
/// not_written list.
void recount(nlohmann::json& report);

/// `N ops, N samples, N written as N cases (N as their ATen calls), N not written (N reason, ...)`.
std::string summary_line(const nlohmann::json& report);

}  // namespace opcheck::opinfo
