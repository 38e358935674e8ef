#!/usr/bin/env bash
# Builds and runs every test: the ctest suite (unit + end-to-end), the sanitizer suite, and the fuzzers.
#   scripts/test.sh            everything (what CI runs)
#   scripts/test.sh --quick    only the main ctest suite
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
# Debian packages the tests need beyond the build; the Python ones (pytest, PyYAML, NumPy) go into the torch's environment.
OPCHECK_TEST_PACKAGES=(node:nodejs npm:npm clang libclang-rt-14-dev chromium:chromium fonts-dejavu-core universal-ctags)
quick=0
[ "${1:-}" = "--quick" ] && quick=1

opcheck_bootstrap --tests "${OPCHECK_TEST_PACKAGES[@]}" || exit 3
status=0

opcheck_log "ctest: main suite"
(cd "$OPCHECK_BUILD_DIR" && ctest --output-on-failure -j 2 --timeout 1500) || status=1

if [ $quick -eq 0 ]; then
  opcheck_log "ctest: AddressSanitizer + UndefinedBehaviorSanitizer suite"
  # The suites labelled `sanitize`: the front half that parses untrusted input (manifests, conditions, configs,
  # traces, reports), the worker pool, and the device plugin paths (loopback and an independent backend).
  asan_dir="$OPCHECK_ROOT/build-asan"
  opcheck_configure "$asan_dir" -DOPCHECK_SANITIZE=ON || status=1
  # Only what those suites run (a gtest suite's test is named after its binary), plus the libraries they load. A
  # folder configured earlier is regenerated first, so that test suites added since are in the list.
  cmake "$asan_dir" >/dev/null || status=1
  targets=$(cd "$asan_dir" && ctest -L sanitize --show-only=json-v1 | "$OPCHECK_PYTHON" -c '
import json, sys
print(" ".join(sorted(t["name"] for t in json.load(sys.stdin)["tests"])))')
  cmake --build "$asan_dir" -j "$(nproc)" --target opcheck opcheck_loopback $targets >&2 || status=1
  # Signals stay signals: the crash-isolation tests check that a worker dies by SIGSEGV/SIGABRT.
  (cd "$asan_dir" && ASAN_OPTIONS=detect_leaks=0:handle_segv=0:handle_abort=0:handle_sigill=0:handle_sigbus=0:handle_sigfpe=0 \
    ctest --output-on-failure -j 2 -L sanitize --timeout 1500) || status=1

  opcheck_log "fuzzing"
  "$OPCHECK_ROOT/scripts/fuzz.sh" "${OPCHECK_FUZZ_SECONDS:-60}" || status=1
fi
exit $status
