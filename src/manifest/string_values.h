// How the loader reads a string found where a value goes (`value:`, attrs, kwmap, init_args): the rules the loader
// applies and every manifest writer must respect to have its strings read back as written. No loader in here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "opcheck/value.h"

namespace opcheck {

/// How a device spelling is read: `cpu`/`cpu:N` stay on the host; cuda, spyre, aiu, privateuseone, xpu, mps, hpu
/// and loopback (each with an optional `:N`) mean the device under test.
enum class DeviceKind { NotADevice, Host, DeviceUnderTest };
DeviceKind classify_device(std::string_view spelling);

/// The device types (without `:N`) that mean the device under test.
const std::vector<std::string_view>& accelerator_names();

/// Classifies a string of `value:`, `attrs`, `kwmap` or `init_args` (after YAML typing made it a string):
/// None/True/False, inf/-inf/nan, a Python literal when it starts with '(' or '[', a `torch.` dtype, a device,
/// else a plain string. Returns false (with error and 1-based column in `text`) when a literal does not parse.
bool classify_string(std::string_view text, PyValue& out, std::string& error, int& error_col);

}  // namespace opcheck
