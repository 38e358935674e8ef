// The real torch-spyre corpus that the corpus tests read (test/CMakeLists.txt): OPCHECK_FIXTURES from the
// environment, which ctest sets to the configured folder. Read at run time, not compiled in, so that pointing the
// build at another corpus (or at none, as a clone has) reconfigures without recompiling the tests.
#pragma once

#include <cstdlib>
#include <string>

namespace opcheck::test {

inline std::string corpus_dir() {
  const char* dir = std::getenv("OPCHECK_FIXTURES");
  return dir && *dir ? dir : "../shared/fixtures";
}

}  // namespace opcheck::test
