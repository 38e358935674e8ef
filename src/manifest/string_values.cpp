#include "manifest/string_values.h"

#include <algorithm>
#include <cmath>

#include "manifest/py_literal.h"
#include "opcheck/dtype.h"

namespace opcheck {

const std::vector<std::string_view>& accelerator_names() {
  static const std::vector<std::string_view> names{"cuda", "spyre", "aiu", "privateuseone",
                                                   "xpu",  "mps",   "hpu", "loopback"};
  return names;
}

DeviceKind classify_device(std::string_view s) {
  auto colon = s.find(':');
  std::string_view type = s.substr(0, colon);
  if (colon != std::string_view::npos) {
    std::string_view index = s.substr(colon + 1);
    if (index.empty() || index.size() > 9) return DeviceKind::NotADevice;
    for (char c : index)
      if (c < '0' || c > '9') return DeviceKind::NotADevice;
  }
  if (type == "cpu") return DeviceKind::Host;
  const auto& names = accelerator_names();
  if (std::find(names.begin(), names.end(), type) != names.end()) return DeviceKind::DeviceUnderTest;
  return DeviceKind::NotADevice;
}

bool classify_string(std::string_view s, PyValue& out, std::string& error, int& error_col) {
  error.clear();
  error_col = 0;
  if (s == "None") {
    out = PyValue::none();
  } else if (s == "True" || s == "False") {
    out = PyValue::boolean(s == "True");
  } else if (s == "inf" || s == "+inf") {
    out = PyValue::real(HUGE_VAL);
  } else if (s == "-inf") {
    out = PyValue::real(-HUGE_VAL);
  } else if (s == "nan") {
    out = PyValue::real(std::nan(""));
  } else if (!s.empty() && (s[0] == '(' || s[0] == '[')) {
    return parse_py_literal(s, out, error, error_col);
  } else if (s.substr(0, 6) == "torch." && parse_dtype(s)) {
    out = PyValue::of_dtype(*parse_dtype(s));
  } else if (classify_device(s) != DeviceKind::NotADevice) {
    out = PyValue::device(std::string(s));
  } else {
    out = PyValue::string(std::string(s));
  }
  return true;
}

}  // namespace opcheck
