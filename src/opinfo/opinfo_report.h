// What `import-opinfo` does with the files its Python wrote: takes cases (and their status rules) out of them, and
// counts the report (no libtorch, no Python).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace opcheck::opinfo {

/// Removes from a file written by the importer the blocks of lines that start with `  - <key>: <value>` for the
/// given values (a case `  - name: x` up to the next `  - ` line of its list, a status rule `  - id: "..."`).
void drop_blocks(const std::filesystem::path& path, const std::string& key, const std::set<std::string>& values);

/// Sets the report's counts (samples, written, not_written, by_reason) from its entries and not_written list.
void recount(nlohmann::json& report);

/// `N ops, N samples, N cases written, N not written (N reason, ...)`.
std::string summary_line(const nlohmann::json& report);

}  // namespace opcheck::opinfo
