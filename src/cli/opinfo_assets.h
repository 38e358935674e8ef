// The OpInfo importer's Python (src/opinfo/import_opinfo.py), carried in the binary: `import-opinfo` runs it with
// `python -c`, so nothing is looked up at run time.
#pragma once

#include <string_view>

namespace opcheck {

std::string_view opinfo_import_script();

}  // namespace opcheck
