#include "common/device_choice.h"

namespace opcheck {

std::string resolve_auto_device(const std::string& device, const std::string& device_lib, bool device_imports,
                                std::string* why) {
  if (why) why->clear();
  if (!device.empty() && device != "auto") return device;
  if (device_imports) {
    if (why) *why = "auto: the device the imported modules register";
    return "privateuseone";
  }
  if (!device_lib.empty()) {
    if (why) *why = "auto: device library configured";
    return "privateuseone";
  }
  if (why) *why = "auto: no device library configured, using the loopback stand-in";
  return "loopback";
}

}  // namespace opcheck
