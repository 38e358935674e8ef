#include "opcheck/result.h"

#include <array>

namespace opcheck {
namespace {
constexpr std::array<const char*, 8> kOutcomes{"passed",  "failed",  "error",         "skipped",
                                               "xfailed", "xpassed", "not_supported", "no_device_op"};
constexpr std::array<const char*, 15> kStages{
    "PASSED",  "INCORRECT_RESULT", "NONDETERMINISTIC", "FAILED_TRANSFER", "FAILED_RUNTIME",   "CRASHED", "TIMEOUT",
    "NOT_SUPPORTED", "FAILED_COMPILE", "INVALID_CASE", "FAILED_INPUT", "FAILED_REFERENCE", "SKIPPED", "FAILED_SETUP",
    "NO_DEVICE_OP"};
static_assert(kOutcomes.size() == static_cast<std::size_t>(kLastOutcome) + 1, "a name per outcome");
static_assert(kStages.size() == static_cast<std::size_t>(kLastStage) + 1, "a name per stage");
}  // namespace

const char* outcome_name(Outcome o) { return kOutcomes[static_cast<std::size_t>(o)]; }
const char* stage_name(Stage s) { return kStages[static_cast<std::size_t>(s)]; }

bool parse_outcome(const std::string& s, Outcome& out) {
  for (std::size_t i = 0; i < kOutcomes.size(); ++i)
    if (s == kOutcomes[i]) { out = static_cast<Outcome>(i); return true; }
  return false;
}

bool parse_stage(const std::string& s, Stage& out) {
  for (std::size_t i = 0; i < kStages.size(); ++i)
    if (s == kStages[i]) { out = static_cast<Stage>(i); return true; }
  return false;
}

bool parse_verdict_kind(std::string_view s, VerdictKind& out) {
  for (const VerdictKindSpec& k : kVerdictKinds)
    if (s == k.name) {
      out = k.id;
      return true;
    }
  return false;
}

namespace {
constexpr std::array<const char*, 5> kPhases{"", "inputs", "reference", "device", "compare"};
}  // namespace

const char* case_phase_name(CasePhase p) { return kPhases[static_cast<std::size_t>(p)]; }

bool parse_case_phase(const std::string& s, CasePhase& out) {
  for (std::size_t i = 0; i < kPhases.size(); ++i)
    if (s == kPhases[i]) { out = static_cast<CasePhase>(i); return true; }
  return false;
}

const std::vector<std::string_view>& all_comparator_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const ComparatorSpec& c : kComparators) out.push_back(c.name);
    return out;
  }();
  return names;
}

const char* comparator_name(Comparator c) { return comparator_spec(c).name; }

bool parse_comparator(std::string_view s, Comparator& out) {
  for (const ComparatorSpec& c : kComparators)
    if (s == c.name) {
      out = c.id;
      return true;
    }
  return false;
}

Outcome stage_outcome(Stage s) {
  switch (s) {
    case Stage::PASSED: return Outcome::Passed;
    case Stage::SKIPPED: return Outcome::Skipped;
    case Stage::NOT_SUPPORTED: return Outcome::NotSupported;
    case Stage::NO_DEVICE_OP: return Outcome::NoDeviceOp;
    case Stage::INVALID_CASE: case Stage::FAILED_INPUT: case Stage::FAILED_REFERENCE: case Stage::FAILED_SETUP:
      return Outcome::Error;
    default: return Outcome::Failed;
  }
}

bool fails_run(Outcome o, XfailStrictness strictness, const RunPolicy& policy) {
  switch (o) {
    case Outcome::Failed: case Outcome::Error: return true;
    case Outcome::NotSupported: return !policy.not_supported_ok;
    case Outcome::XPassed: return strictness == XfailStrictness::Strict && !policy.xpass_ok;
    default: return false;
  }
}

}  // namespace opcheck
