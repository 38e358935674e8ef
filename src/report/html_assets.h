// The HTML report's script and style sheet, from src/report/html_assets/, compiled into the binary by CMake
// (opcheck_embed_text) so the page stays one self-contained file and nothing is looked up at run time.
#pragma once

#include <string_view>

namespace opcheck {

/// report.js: fixed text (never run data), allowed to run by its hash in the page's Content-Security-Policy.
std::string_view html_report_script();
/// report.css.
std::string_view html_report_style();

}  // namespace opcheck
