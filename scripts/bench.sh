#!/usr/bin/env bash
# The performance benchmark (issue 6): opcheck end to end against a floor loop, per-phase times, peak RSS, and a
# PASS/MISS table of the targets. Writes bench-results/bench.json. Not part of CI (too noisy on shared machines).
#   scripts/bench.sh            full run (10,000 tiny cases, 5 runs per figure; a few minutes on 2 cores)
#   scripts/bench.sh --quick    small N, 2 runs per figure: a smoke test of about a minute
# Any other flag goes to scripts/bench/bench.py (--reps N, --out DIR, --fixtures DIR). OPCHECK_BUILD_DIR picks the
# build directory (default build/). Measure on a quiet machine: the table records the load average.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
opcheck_install_packages "${OPCHECK_BUILD_PACKAGES[@]}" || exit 3
opcheck_python_env 1 || exit 3
opcheck_configure "$OPCHECK_BUILD_DIR" -DOPCHECK_BUILD_EXEC=ON || exit 3
if ! grep -q '^OPCHECK_BUILD_EXEC:BOOL=ON' "$OPCHECK_BUILD_DIR/CMakeCache.txt"; then
  opcheck_log "$OPCHECK_BUILD_DIR was configured without the exec layer; reconfigure with -DOPCHECK_BUILD_EXEC=ON"
  exit 3
fi
if grep -q '^CMAKE_BUILD_TYPE:STRING=Debug' "$OPCHECK_BUILD_DIR/CMakeCache.txt"; then
  opcheck_log "warning: $OPCHECK_BUILD_DIR is a Debug build; its timings say little about a Release one"
fi
opcheck_compile "$OPCHECK_BUILD_DIR" --target opcheck opcheck_exec opcheck_loopback opcheck_floor || exit 3

cd "$OPCHECK_ROOT"
exec "$OPCHECK_PYTHON" "$OPCHECK_ROOT/scripts/bench/bench.py" --build-dir "$OPCHECK_BUILD_DIR" \
  --out "$OPCHECK_ROOT/bench-results" "$@"
