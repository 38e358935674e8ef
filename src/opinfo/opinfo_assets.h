// The OpInfo importer's Python (src/opinfo/*.py), carried in the binary: `import-opinfo` runs the four files as one
// program with `python -c` (opinfo_importer_program), so nothing is looked up at run time.
#pragma once

#include <string>
#include <string_view>

namespace opcheck {

std::string_view opinfo_expectations_script();  // src/opinfo/opinfo_expectations.py: PyTorch's skips, xfails, tolerances
std::string_view opinfo_writing_script();       // src/opinfo/opinfo_writing.py: manifest text and tensor files
std::string_view opinfo_running_script();       // src/opinfo/opinfo_running.py: running a sample on the CPU
std::string_view opinfo_import_script();        // src/opinfo/import_opinfo.py: drawing the samples, main

/// The importer as one program: its parts in one namespace, main last.
inline std::string opinfo_importer_program() {
  std::string out;
  for (std::string_view part : {opinfo_expectations_script(), opinfo_writing_script(), opinfo_running_script(),
                                opinfo_import_script()})
    (out += part) += "\n";
  return out;
}

}  // namespace opcheck
