// Imported expectations mean what they say: an OpInfo skip or xfail applies to a case only when the failure it is
// about happens in opcheck's own check. `import-opinfo` runs the case of each one on the CPU against itself; one that
// passes there is about PyTorch's test harness (as_strided.partial_views' xfail of TestCommon.test_compare_cpu), and
// its rule is dropped from DIR/opcheck.yaml with the reason recorded in the report (docs/opinfo.md).
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "opcheck/exec_api.h"

namespace opcheck::opinfo {

struct ExpectationCounts {
  std::size_t total = 0;    // expectations of the cases written
  std::size_t dropped = 0;  // their case passes opcheck's check of the CPU against itself: rule dropped
  std::size_t applied = 0;  // kept: the check fails too, or cannot decide the expectation (an undefined output)
};

/// Decides every expectation of `report` (its `expectations` list, as the importer wrote it: case, status, reason,
/// source, check). Those whose `check` is `run` have their case run by an executor of the CPU (`make_executor`),
/// in `jobs` worker processes: a pass drops the case's rule from DIR/opcheck.yaml. Each expectation gets `applied`
/// and `decision`; those of cases no longer written (taken out by the bind check) are removed; the counts go to
/// report.counts.expectations. An executor that cannot be made leaves every rule applied, saying why.
ExpectationCounts check_expectations(const std::function<std::unique_ptr<Executor>(std::string&)>& make_executor,
                                     const std::filesystem::path& dir, nlohmann::json& report, int jobs);

/// Marks every expectation applied, undecided (`import-opinfo --no-bind-check` runs nothing of opcheck's).
void leave_expectations_unchecked(nlohmann::json& report, const char* why);

}  // namespace opcheck::opinfo
