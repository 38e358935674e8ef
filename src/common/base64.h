// Base64 (RFC 4648, the standard alphabet with '=' padding), e.g. for a Content-Security-Policy hash source.
#pragma once

#include <string>
#include <string_view>

namespace opcheck {

/// The base64 text of `bytes`: base64_encode("opc") == "b3Bj".
std::string base64_encode(std::string_view bytes);

}  // namespace opcheck
