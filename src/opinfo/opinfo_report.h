// What `import-opinfo` does with the files its Python wrote: takes cases (and their status rules) out of them, and
// counts the report (no libtorch, no Python).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace opcheck::opinfo {

/// Removes from a file written by the importer the blocks of lines that start with `  - <key>: <value>` for the
/// given values, or whose value starts with one of `prefixes` (a case `  - name: x` up to the next `  - ` line of its
/// list, a status rule `  - id: "..."`; the prefix `x.float32.3.call` takes every call case of a sample). Returns the
/// number of blocks left.
std::size_t drop_blocks(const std::filesystem::path& path, const std::string& key, const std::set<std::string>& values,
                        const std::set<std::string>& prefixes = {});

/// A case the bind check found unbound: its id (`model::name`), manifest file and why.
struct UnboundCase {
  std::string id;
  std::string file;
  std::string message;
};

/// Takes the unbound cases out of their manifests and of DIR/opcheck.yaml, each as a not-written sample of its entry
/// in `report` (`unbound_call`); a case that is one ATen call of a sample (`<entry>.<dtype>.<sample>.call<k>`) takes
/// the sample's other calls with it, since a sample is written whole or not at all. Samples written as their own call
/// go into `whole_unbound` ({entry: {dtype: {sample: why}}}), for a second pass that writes them as their ATen
/// calls. A manifest left without cases is removed.
void drop_unbound(const std::vector<UnboundCase>& cases, const std::filesystem::path& dir, nlohmann::json& report,
                  nlohmann::json& whole_unbound);

/// Sets the report's counts (samples, written, as_calls, cases, not_written, by_reason) from its entries and
/// not_written list.
void recount(nlohmann::json& report);

/// `N ops, N samples, N written as N cases (N as their ATen calls), N not written (N reason, ...); N OpInfo skips and
/// xfails, N dropped (...), N applied` (the last part once the expectations were checked).
std::string summary_line(const nlohmann::json& report);

}  // namespace opcheck::opinfo
