#include "opcheck/case_fields.h"

#include <algorithm>
#include <cstring>

namespace opcheck {

std::array<const CaseField*, kCaseFieldCount> case_fields_in_key_order() {
  std::array<const CaseField*, kCaseFieldCount> out{};
  for (std::size_t i = 0; i < kCaseFieldCount; ++i) out[i] = &kCaseFields[i];
  std::stable_sort(out.begin(), out.end(), [](const CaseField* a, const CaseField* b) {
    return a->key != b->key ? a->key < b->key : a->key_rank < b->key_rank;
  });
  return out;
}

const CaseField* find_case_field(const char* name) {
  for (const CaseField& f : kCaseFields)
    if (std::strcmp(f.name, name) == 0) return &f;
  return nullptr;
}

bool field_is_unset(const CaseSettings& s, const CaseField& f) {
  return std::visit(
      [&](auto m) {
        using T = std::decay_t<decltype(s.*m)>;
        if constexpr (std::is_same_v<T, bool>) return !(s.*m);
        else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, double> ||
                           std::is_same_v<T, Comparator>)
          return false;
        else if constexpr (std::is_same_v<T, std::optional<double>> || std::is_same_v<T, std::optional<ExpectedError>>)
          return !(s.*m).has_value();
        else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::vector<std::string>> ||
                           std::is_same_v<T, std::vector<PyValue>> || std::is_same_v<T, KwArgs>)
          return (s.*m).empty();
        else
          static_assert(unhandled_field_type<T>, "field_is_unset: a field type without its rule");
      },
      f.member);
}

void copy_field(CaseSettings& to, const CaseSettings& from, const CaseField& f) {
  std::visit([&](auto m) { to.*m = from.*m; }, f.member);
}

void SettingsLayer::override_with(const SettingsLayer& o) {
  for (std::size_t i = 0; i < kCaseFieldCount; ++i)
    if (o.has(i)) {
      copy_field(values, o.values, kCaseFields[i]);
      mark(i);
    }
}

void SettingsLayer::apply_to(CaseSettings& s) const {
  for (std::size_t i = 0; i < kCaseFieldCount; ++i)
    if (has(i)) copy_field(s, values, kCaseFields[i]);
}

}  // namespace opcheck
