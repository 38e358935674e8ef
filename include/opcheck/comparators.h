// The comparators: how a case's outputs are compared with the reference. Each is one entry of kComparators, which
// every part of opcheck that names or describes a comparator reads: manifests and the status config (its spelling),
// the dedupe key, the manifest schema (test/schema/gen_schema.py reads this file), the repro script (its Python
// verdict, written into each script) and the run (exec/compare.cpp registers its C++ verdict under the same id and
// does not build without one). docs/design.md says which files a new comparator touches.
#pragma once

#include <array>
#include <cstddef>

namespace opcheck {

/// How outputs are compared against the reference: one value per entry of kComparators, in its order.
enum class Comparator { AllClose, Pcc, Exact };
constexpr Comparator kLastComparator = Comparator::Exact;  // the range every reader of a stored comparator checks

/// One comparator, everything about it that is not libtorch code.
struct ComparatorSpec {
  Comparator id;
  const char* name;  // its spelling in manifests, the status config, the schema, repro scripts and the dedupe key
  const char* rule;  // what it checks, in a few words for the schema and messages ("" when the name says it all)
  /// The case settings it reads besides timeout (nullptr where the list ends); a manifest writer writes these.
  std::array<const char*, 4> settings;
  bool bitwise;        // values compared bit for bit (signed zeros and NaN payloads too); tolerances unused
  bool float64_judge;  // a floating leaf that misses the tolerance is judged again against the float64 result
  /// The repro script's verdict on a floating tensor leaf once the tolerance check has run: the body of
  /// `def verdict(e, a, mismatched, path)`, where e and a are the reference and device values in float64 (complex
  /// ones as real pairs) and mismatched the count outside the tolerance; it prints what it found and returns whether
  /// the leaf agrees. The run's twin is the C++ verdict exec/compare.cpp registers for the same id.
  const char* python_verdict;
};

inline constexpr ComparatorSpec kComparators[] = {
    {Comparator::AllClose, "allclose", "rtol/atol", {"rtol", "atol", "equal_nan", nullptr}, false, true,
     "return mismatched == 0\n"},
    {Comparator::Pcc, "pcc", "Pearson correlation >= pcc_min", {"rtol", "atol", "equal_nan", "pcc_min"}, false, false,
     "finite = torch.isfinite(e) & torch.isfinite(a)\n"
     "x, y = e[finite], a[finite]\n"
     "if x.numel() < 2 or float(x.std()) == 0 or float(y.std()) == 0:\n"
     "    pcc = 1.0 if mismatched == 0 else 0.0\n"
     "else:\n"
     "    pcc = float(torch.corrcoef(torch.stack([x, y]))[0, 1])\n"
     "print(f\"{path}: pcc {pcc!r} (minimum {PCC_MIN})\")\n"
     "return pcc >= PCC_MIN\n"},
    {Comparator::Exact, "exact", "", {"equal_nan", nullptr, nullptr, nullptr}, true, false,
     "return mismatched == 0\n"},
};
inline constexpr std::size_t kComparatorCount = sizeof(kComparators) / sizeof(kComparators[0]);

/// The entry of a comparator.
constexpr const ComparatorSpec& comparator_spec(Comparator c) {
  for (const ComparatorSpec& s : kComparators)
    if (s.id == c) return s;
  return kComparators[0];
}

/// Every enum value has its entry, in enum order (the worker wire and journals store a comparator as its index).
constexpr bool comparators_in_enum_order() {
  if (kComparatorCount != static_cast<std::size_t>(kLastComparator) + 1) return false;
  for (std::size_t i = 0; i < kComparatorCount; ++i)
    if (static_cast<std::size_t>(kComparators[i].id) != i) return false;
  return true;
}
static_assert(comparators_in_enum_order(), "kComparators must list every Comparator once, in enum order");

}  // namespace opcheck
