#!/usr/bin/env bash
# The performance benchmark (issue 6): opcheck end to end against a floor loop, per-phase times, peak RSS, and a
# PASS/MISS table of the targets. Writes bench-results/bench.json. Not part of CI (too noisy on shared machines).
#   scripts/bench.sh                 everything: the core targets (scripts/bench/bench.py: 10,000 tiny cases, 5 runs
#                                    per figure, a few minutes on 2 cores), then the Python-device and compiled-run
#                                    targets (scripts/bench/bench_python.py: about 7 minutes on 2 cores, most of it
#                                    inductor compiling the bundled manifests twice from empty caches)
#   scripts/bench.sh --quick         small N everywhere: a smoke test of a few minutes
#   scripts/bench.sh --core-only     only bench.py;   scripts/bench.sh --python-only   only bench_python.py
#   scripts/bench.sh --core-only --red-only   only the red run: a loopback fault set that makes most cases
#                                    not supported, and what its red cases spend on references and inputs
#   scripts/bench.sh --modules-only  only scripts/bench/bench_modules.py: module cases' overhead and the trace's cost
#                                    on the real-size Granite decoder layer (a few minutes; docs/modules.md)
#   scripts/bench.sh --opinfo-only   only scripts/bench/bench_opinfo.py: `import-opinfo` over the whole op_db at fp32,
#                                    fp16 and bf16, then one `run --device cpu -j 2` over it (docs/opinfo.md; not
#                                    part of the default run: tens of minutes on 2 cores; --subset N runs N cases)
# Any other flag goes to both scripts (--reps N, --out DIR, --keep; bench.py also takes --fixtures DIR).
# OPCHECK_BUILD_DIR picks the build directory (default build/). Measure on a quiet machine: the tables record the
# load average. Exit status: 0 when every target is met, 1 when one is missed, 3 when the build failed.
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
core=1 python=1 opinfo=0 modules=1
args=()
for arg in "$@"; do
  case "$arg" in
    --core-only) python=0 modules=0 ;;
    --python-only) core=0 modules=0 ;;
    --opinfo-only) core=0 python=0 opinfo=1 modules=0 ;;
    --modules-only) core=0 python=0 modules=1 ;;
    *) args+=("$arg") ;;
  esac
done
targets=(opcheck opcheck_exec opcheck_loopback)
[ $core -eq 1 ] && targets+=(opcheck_floor)
[ $python -eq 1 ] && targets+=(opcheck_pyhost opcheck_python_files opcheck_pyloop_device)
[ $modules -eq 1 ] && targets+=(opcheck_pyhost opcheck_python_files)
opcheck_compile "$OPCHECK_BUILD_DIR" --target "${targets[@]}" || exit 3

cd "$OPCHECK_ROOT"
status=0
if [ $core -eq 1 ]; then
  "$OPCHECK_PYTHON" "$OPCHECK_ROOT/scripts/bench/bench.py" --build-dir "$OPCHECK_BUILD_DIR" \
    --out "$OPCHECK_ROOT/bench-results" "${args[@]}" || status=$?
fi
if [ $python -eq 1 ]; then
  "$OPCHECK_PYTHON" "$OPCHECK_ROOT/scripts/bench/bench_python.py" --build-dir "$OPCHECK_BUILD_DIR" \
    --out "$OPCHECK_ROOT/bench-results" "${args[@]}" || status=$((status > 0 ? status : $?))
fi
if [ $modules -eq 1 ]; then
  "$OPCHECK_PYTHON" "$OPCHECK_ROOT/scripts/bench/bench_modules.py" --build-dir "$OPCHECK_BUILD_DIR" \
    --out "$OPCHECK_ROOT/bench-results" "${args[@]}" || status=$((status > 0 ? status : $?))
fi
if [ $opinfo -eq 1 ]; then
  "$OPCHECK_PYTHON" "$OPCHECK_ROOT/scripts/bench/bench_opinfo.py" --build-dir "$OPCHECK_BUILD_DIR" \
    --out "$OPCHECK_ROOT/bench-results" "${args[@]}" || status=$?
fi
exit $status
