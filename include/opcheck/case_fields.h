// The field tables of a case: every setting of a Case (CaseSettings) and every field of a module case's module
// (ModuleSpec, in case.h) is declared once, as a Field: its name, the member it lives in, whether it is part of the
// dedupe key and how the key spells it, the manifest and status-config keys that may set it, when the manifest writer
// writes it, the repro script's name for it, and the case record's label for it. The v1 normaliser, the status
// config, the plan's dedupe key, the worker wire, the case record (journal, metrics, JUnit, HTML, console), the
// manifest writer and the repro script loop over these tables; each of them holds one codec per value type (a
// visitor over FieldMember), so a field of an existing type is one member and one entry here. docs/design.md:
// "Adding a case field".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "opcheck/comparators.h"
#include "opcheck/value.h"

namespace opcheck {

/// `expects_error`: both runs must raise an error of this Python type whose message matches `match` (regex search).
struct ExpectedError {
  std::string type;   // RuntimeError, ValueError, TypeError, IndexError, NotImplementedError, AssertionError, ...
  std::string match;  // ECMAScript regex; empty = any message
  bool operator==(const ExpectedError& o) const { return type == o.type && match == o.match; }
};

/// The settings of a case that kCaseFields declares: how it is judged and labelled. Case derives from it, so
/// `c.rtol` reads as before and one table of member pointers serves the Case and the settings layers the manifest's
/// defaults and the status config's rules are made of.
struct CaseSettings {
  std::int64_t seed = 0;
  std::optional<double> rtol, atol;  // absent => per-dtype defaults of torch.testing.assert_close
  Comparator compare = Comparator::AllClose;
  double pcc_min = 0.999;            // for Comparator::Pcc
  bool equal_nan = true;
  std::optional<double> timeout_s;
  bool nondeterministic_ok = false;  // `nondeterministic: true`: repeated device runs may differ
  std::optional<ExpectedError> expects_error;
  std::vector<std::string> marks;
  std::string description;
  std::string upstream_test;  // v2 configs: the test name torch-spyre's runner gives this entry (for dashboards)
  std::string issue;          // `issue:`: the tracker link or id of the known bug this case shows
};

/// The member a field lives in. Each alternative is one value type; every loop over a table visits it with one
/// branch per type, and a type a loop does not handle fails to compile there (see `unhandled_field_type`).
template <class Owner>
using FieldMember =
    std::variant<bool Owner::*, std::int64_t Owner::*, double Owner::*, std::optional<double> Owner::*,
                 std::string Owner::*, std::vector<std::string> Owner::*, Comparator Owner::*,
                 std::optional<ExpectedError> Owner::*, std::vector<PyValue> Owner::*, KwArgs Owner::*>;

/// For the `else` branch of a visitor over FieldMember: `static_assert(unhandled_field_type<M>, "...")`.
template <class M>
inline constexpr bool unhandled_field_type = false;

/// Where the dedupe key's canonical text holds a field (plan/plan.h). Its order is the key format's
/// (kDedupeKeyVersion): `key_rank` orders the fields of one place, so the table's order (the writer's) need not be the
/// key's.
enum class KeyPlace { None, BeforeInputs, AfterInputs };

/// When the manifest writer writes a field: always, only when it differs from "nothing" (an absent optional, an
/// empty string or list, a false bool), only when the case's comparator reads it (kComparators' settings), never.
enum class Written { Always, WhenSet, WhenComparatorReads, Never };

/// What a manifest or status-config reader checks a number against, and how each file's voice words a miss:
/// "rtol must <manifest_rule>, got X" and "`rtol` must <config_rule>, not X".
struct NumberRule {
  bool (*holds)(double) = nullptr;  // nullptr: any number
  const char* manifest_rule = "";
  const char* config_rule = "";
  const char* config_fix = "";
};

/// One field of `Owner` (CaseSettings or ModuleSpec), declared once.
template <class Owner>
struct Field {
  const char* name;             // the name messages, the wire and (unless key_label) the dedupe key use
  FieldMember<Owner> member;
  KeyPlace key = KeyPlace::None;
  int key_rank = 0;             // order within its KeyPlace in the canonical text
  const char* key_label = nullptr;  // "cmp" for `|cmp=allclose`; nullptr = name
  /// A bool's spellings in the key when true and when false ("|nan=eq" / "|nan=ne"; "|nondet" / "").
  const char* key_true = nullptr;
  const char* key_false = nullptr;
  const char* manifest_key = nullptr;  // its key in a v1 case; nullptr = not a v1 key
  bool in_defaults = false;            // a v1 manifest's `defaults:` may set it too
  /// Read by the normaliser's own code, not the table's typed read: a spelling of its own (`mark`/`marks`, the
  /// file's marks merged in; expects_error's {type, match} mapping and its regex check).
  bool own_reader = false;
  bool any_scalar = false;             // a string field takes any scalar's text, null's too (`description: ~`)
  NumberRule number;                   // int and real fields: the range a read checks
  const char* config_key = nullptr;    // its key in a status-config rule or device override; nullptr = not settable
  Written written = Written::Never;    // by the manifest writer (manifest/manifest_writer.h)
  bool written_before_inputs = false;  // the writer puts it before `inputs:` (seed, beside dtype)
  const char* script_name = nullptr;   // the repro script's template name (RTOL); nullptr = the script reads none
  /// The case record's label (journal, metrics, JUnit property; a string field, written when not empty); nullptr =
  /// none. `shown` labels are also on the console's failure line and in the HTML row.
  const char* record_label = nullptr;
  bool shown = false;
  /// What the field means, in one sentence: the manifest schema's description of its key (test/schema/gen_schema.py
  /// reads it from this file for the keys it does not describe itself).
  const char* doc = "";

  constexpr Field(const char* n, FieldMember<Owner> m) : name(n), member(m) {}
  constexpr Field in_key(KeyPlace place, int rank, const char* label = nullptr) const {
    Field f = *this;
    f.key = place, f.key_rank = rank, f.key_label = label;
    return f;
  }
  constexpr Field bool_key(int rank, const char* when_true, const char* when_false) const {
    Field f = in_key(KeyPlace::AfterInputs, rank);
    f.key_true = when_true, f.key_false = when_false;
    return f;
  }
  constexpr Field manifest(bool defaults = false) const {
    Field f = *this;
    f.manifest_key = name, f.in_defaults = defaults;
    return f;
  }
  constexpr Field read_by_normaliser() const {
    Field f = *this;
    f.own_reader = true;
    return f;
  }
  constexpr Field any_scalar_text() const {
    Field f = *this;
    f.any_scalar = true;
    return f;
  }
  constexpr Field checked(NumberRule rule) const {
    Field f = *this;
    f.number = rule;
    return f;
  }
  constexpr Field config() const {
    Field f = *this;
    f.config_key = name;
    return f;
  }
  constexpr Field writes(Written when, bool before_inputs = false) const {
    Field f = *this;
    f.written = when, f.written_before_inputs = before_inputs;
    return f;
  }
  constexpr Field script(const char* n) const {
    Field f = *this;
    f.script_name = n;
    return f;
  }
  constexpr Field recorded(const char* label, bool show) const {
    Field f = *this;
    f.record_label = label, f.shown = show;
    return f;
  }
  constexpr Field described(const char* text) const {
    Field f = *this;
    f.doc = text;
    return f;
  }
};

using CaseField = Field<CaseSettings>;

namespace field_rules {
inline bool non_negative_finite(double x) { return x >= 0 && x <= std::numeric_limits<double>::max(); }
inline bool correlation(double x) { return x >= -1.0 && x <= 1.0; }
inline bool positive_finite(double x) { return x > 0 && x <= std::numeric_limits<double>::max(); }
inline bool non_negative(double x) { return x >= 0; }
}  // namespace field_rules

/// Every setting of a case, in the manifest writer's order. The dedupe key's order is each entry's key_rank.
inline constexpr CaseField kCaseFields[] = {
    CaseField("seed", &CaseSettings::seed)
        .in_key(KeyPlace::BeforeInputs, 0)
        .manifest(true)
        .checked({field_rules::non_negative, "be >= 0", "be >= 0", ""})
        .writes(Written::Always, /*before_inputs=*/true),
    CaseField("rtol", &CaseSettings::rtol)
        .in_key(KeyPlace::AfterInputs, 1)
        .manifest(true)
        .checked({field_rules::non_negative_finite, "be a finite number >= 0", "be >= 0", ""})
        .config()
        .writes(Written::WhenSet)
        .script("RTOL"),
    CaseField("atol", &CaseSettings::atol)
        .in_key(KeyPlace::AfterInputs, 2)
        .manifest(true)
        .checked({field_rules::non_negative_finite, "be a finite number >= 0", "be >= 0", ""})
        .config()
        .writes(Written::WhenSet)
        .script("ATOL"),
    CaseField("compare", &CaseSettings::compare)
        .in_key(KeyPlace::AfterInputs, 0, "cmp")
        .manifest(true)
        .config()
        .writes(Written::Always)
        .script("COMPARE"),
    CaseField("pcc_min", &CaseSettings::pcc_min)
        .in_key(KeyPlace::AfterInputs, 3)
        .manifest(true)
        .checked({field_rules::correlation, "be between -1 and 1", "lie between -1 and 1",
                  "a Pearson correlation is at most 1; 0.999 is usual"})
        .config()
        .writes(Written::WhenComparatorReads)
        .script("PCC_MIN"),
    CaseField("equal_nan", &CaseSettings::equal_nan)
        .bool_key(4, "|nan=eq", "|nan=ne")
        .manifest(true)
        .config()
        .writes(Written::Always)
        .script("EQUAL_NAN"),
    CaseField("timeout", &CaseSettings::timeout_s)
        .manifest(true)
        .checked({field_rules::positive_finite, "be a positive number of seconds", "be a positive number of seconds",
                  ""})
        .config()
        .writes(Written::WhenSet),
    CaseField("nondeterministic", &CaseSettings::nondeterministic_ok)
        .bool_key(6, "|nondet", "")
        .manifest()
        .writes(Written::WhenSet),
    CaseField("expects_error", &CaseSettings::expects_error)
        .in_key(KeyPlace::AfterInputs, 5, "err")
        .manifest()
        .read_by_normaliser()
        .writes(Written::WhenSet)
        .script("EXPECTED_ERROR"),
    CaseField("marks", &CaseSettings::marks).manifest().read_by_normaliser().writes(Written::WhenSet),
    CaseField("description", &CaseSettings::description).manifest().any_scalar_text().writes(Written::WhenSet),
    // v2 configs only (the entry's torch-spyre test name): no v1 key, so a written manifest cannot carry it.
    CaseField("upstream_test", &CaseSettings::upstream_test).recorded("upstream_test", /*show=*/false),
    CaseField("issue", &CaseSettings::issue)
        .manifest()
        .config()
        .writes(Written::WhenSet)
        .recorded("issue", /*show=*/true)
        .described("The tracker link or id of the known bug this case shows; reports show it beside the case."),
};
inline constexpr std::size_t kCaseFieldCount = sizeof(kCaseFields) / sizeof(kCaseFields[0]);

/// The settings layers (a manifest's defaults, a case's own keys, a status-config rule) say which fields they set
/// in one bit each.
static_assert(kCaseFieldCount <= 32, "a settings layer marks the fields it sets in a 32-bit mask");

namespace field_checks {
constexpr bool same_text(const char* a, const char* b) {
  if (!a || !b) return a == b;
  for (; *a && *a == *b; ++a, ++b) {
  }
  return *a == *b;
}
template <class Owner, std::size_t N>
constexpr bool names_unique(const Field<Owner> (&fields)[N]) {
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = i + 1; j < N; ++j)
      if (same_text(fields[i].name, fields[j].name)) return false;
  return true;
}
// A bool in the key has its spellings; no other field has them. Ranks within a place are distinct.
template <class Owner, std::size_t N>
constexpr bool keys_well_formed(const Field<Owner> (&fields)[N]) {
  for (std::size_t i = 0; i < N; ++i) {
    const bool is_bool = std::holds_alternative<bool Owner::*>(fields[i].member);
    if (fields[i].key != KeyPlace::None && is_bool != (fields[i].key_true != nullptr)) return false;
    for (std::size_t j = i + 1; j < N; ++j)
      if (fields[i].key != KeyPlace::None && fields[i].key == fields[j].key && fields[i].key_rank == fields[j].key_rank)
        return false;
  }
  return true;
}
// Only string fields are labels of the case record (CaseRecord::labels holds strings).
constexpr bool labels_are_strings() {
  for (const CaseField& f : kCaseFields)
    if (f.record_label && !std::holds_alternative<std::string CaseSettings::*>(f.member)) return false;
  return true;
}
}  // namespace field_checks
static_assert(field_checks::names_unique(kCaseFields), "every case field has its own name");
static_assert(field_checks::keys_well_formed(kCaseFields),
              "a bool in the dedupe key needs its spellings (bool_key); key ranks are distinct within a place");
static_assert(field_checks::labels_are_strings(), "a case record label is a string field");

/// The entries in the dedupe key's order: those before the inputs by rank, then those after them by rank.
std::array<const CaseField*, kCaseFieldCount> case_fields_in_key_order();

/// The entry named `name` (its table name), or nullptr.
const CaseField* find_case_field(const char* name);

/// Whether the field holds "nothing": an absent optional, an empty string or list, a false bool. Numbers and the
/// comparator always hold something.
bool field_is_unset(const CaseSettings& s, const CaseField& f);
/// Whether two owners (settings, module specs) agree on the field.
template <class Owner>
bool field_equal(const Owner& a, const Owner& b, const Field<Owner>& f) {
  return std::visit([&](auto m) { return a.*m == b.*m; }, f.member);
}
/// Copies the field from `from` to `to`.
void copy_field(CaseSettings& to, const CaseSettings& from, const CaseField& f);

/// One layer of settings (a manifest's defaults, a case's own keys, a status-config rule or device override): the
/// values it gives and which fields it gives; an absent one leaves the case's value alone.
struct SettingsLayer {
  CaseSettings values;
  std::uint32_t given = 0;  // bit i: kCaseFields[i] is given

  bool has(std::size_t field) const { return (given >> field) & 1u; }
  bool has_any() const { return given != 0; }
  void mark(std::size_t field) { given |= 1u << field; }
  /// Takes every setting `o` gives.
  void override_with(const SettingsLayer& o);
  /// Sets in `s` every setting given here.
  void apply_to(CaseSettings& s) const;
  /// The given value of a field, or nullopt: `layer.get(&CaseSettings::atol)` reads as an optional.
  template <class T>
  std::optional<std::remove_cv_t<T>> get(T CaseSettings::*m) const {
    for (std::size_t i = 0; i < kCaseFieldCount; ++i)
      if (const auto* p = std::get_if<T CaseSettings::*>(&kCaseFields[i].member); p && *p == m && has(i))
        return values.*m;
    return std::nullopt;
  }
};

}  // namespace opcheck
