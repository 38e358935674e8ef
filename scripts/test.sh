#!/usr/bin/env bash
# Builds and runs every test: the ctest suite (unit + end-to-end), the sanitizer suite, and the fuzzers.
#   scripts/test.sh            everything (what CI runs)
#   scripts/test.sh --quick    only the main ctest suite
#   scripts/test.sh --ci       everything, in a clone with nothing beside it (.ci/run makes one): the proof that a
#                              clone needs nothing but itself
# The corpus tests read the real torch-spyre corpus in OPCHECK_FIXTURES (default ../shared/fixtures); without it they
# are skipped, and listed with the reason at the end. Every other test reads only the repository (test/fixtures).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
quick=0 ci=0
case "${1:-}" in
  --quick) quick=1 ;;
  --ci) ci=1 ;;
esac

# Debian packages the tests need beyond the build, each with the tests that need it (said before installing); the
# Python ones (pytest, PyYAML, NumPy) go into the torch's environment.
declare -A OPCHECK_PACKAGE_WHY=(
  [nodejs]="node, for the JUnit readers, the JSON Schema check and the HTML report test (test/report, test/schema, test/html)"
  [npm]="npm, which installs those tests' pinned packages (package-lock.json in each folder)"
  [chromium]="a headless browser for the HTML report test (test/html)"
  [fonts-dejavu-core]="a font for that browser's page layout"
  [universal-ctags]="ctags, which the layout_limits test uses to measure functions"
  [clang]="clang, for the fuzzers (scripts/fuzz.sh; not with --quick)"
  [libclang-rt-14-dev]="libFuzzer and the sanitizer runtimes for clang (not with --quick)")
OPCHECK_TEST_PACKAGES=(node:nodejs npm:npm chromium:chromium fonts-dejavu-core universal-ctags)
[ $quick -eq 0 ] && OPCHECK_TEST_PACKAGES+=(clang libclang-rt-14-dev)

if [ $ci -eq 1 ]; then
  beside=$(ls -A "$(dirname "$OPCHECK_ROOT")" | grep -vxF "$(basename "$OPCHECK_ROOT")" || true)
  if [ -n "$beside" ]; then
    opcheck_log "--ci proves that a clone needs nothing beside it, so it runs in a folder holding only the clone;" \
      "beside $OPCHECK_ROOT: $(echo $beside | head -c 200)."
    opcheck_log "Fix: run .ci/run (it clones HEAD into an empty temporary folder), or scripts/test.sh without --ci."
    exit 2
  fi
fi
opcheck_bootstrap --tests "${OPCHECK_TEST_PACKAGES[@]}" || exit 3
status=0
corpus="${OPCHECK_FIXTURES:-$(dirname "$OPCHECK_ROOT")/shared/fixtures}"
log="$OPCHECK_BUILD_DIR/Testing/test-sh.log"
mkdir -p "$(dirname "$log")"

# ctest with the corpus tests reading folder $1; the rest of the arguments go to ctest. Reconfiguring changes only
# what ctest passes the tests (nothing is compiled again).
ctest_with_corpus() {
  local dir="$1"; shift
  cmake -DOPCHECK_FIXTURES="$dir" "$OPCHECK_BUILD_DIR" >/dev/null || return 1
  (cd "$OPCHECK_BUILD_DIR" && ctest --output-on-failure -j 2 --timeout 1500 "$@") | tee -a "$log"
  return "${PIPESTATUS[0]}"
}

: >"$log"
if [ $ci -eq 1 ]; then
  # What a clone sees: every test but the corpus tests, with the corpus hidden (a folder that does not exist), so
  # that a test reading it unawares fails here; the corpus tests run once, next, with the corpus, which CI has.
  opcheck_log "ctest: main suite, the corpus hidden (as in a clone)"
  ctest_with_corpus "$OPCHECK_BUILD_DIR/no-corpus" -LE corpus || status=1
  opcheck_log "ctest: the corpus tests, on $corpus"
  OPCHECK_REQUIRE_CORPUS=1 ctest_with_corpus "$corpus" -L corpus || status=1
else
  opcheck_log "ctest: main suite"
  ctest_with_corpus "$corpus" || status=1
fi

# Only corpus tests skip, and only without the corpus; a skip with the corpus present is a test that stopped running.
skipped=$(sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) .*\*\*\*Skipped.*/\1/p' "$log" | sort -u)
if [ -n "$skipped" ]; then
  corpus_tests=$(cd "$OPCHECK_BUILD_DIR" && ctest -N -L corpus | sed -n 's/^ *Test *#[0-9]*: //p' | sort -u)
  stray=$(comm -23 <(echo "$skipped") <(echo "$corpus_tests"))
  if [ -n "$stray" ]; then
    opcheck_log "skipped, but not corpus tests (only corpus tests may skip):"; sed 's/^/[opcheck]   /' <<<"$stray" >&2
    status=1
  fi
  if [ -d "$corpus" ]; then
    opcheck_log "corpus tests skipped although the corpus is at $corpus:"; sed 's/^/[opcheck]   /' <<<"$skipped" >&2
    status=1
  else
    opcheck_log "skipped: $(wc -l <<<"$skipped") corpus tests, because the real torch-spyre corpus is not at $corpus"
    opcheck_log "(set OPCHECK_FIXTURES=DIR to run them):"
    sed 's/^/[opcheck]   /' <<<"$skipped" >&2
  fi
fi

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
