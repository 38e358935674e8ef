#!/usr/bin/env bash
# Builds opcheck's libFuzzer targets into build-fuzz/ and fuzzes each for SECONDS (default 60).
# Fails when any target finds a crash, a sanitizer report, a timeout or an out-of-memory; the reproducer is kept
# under build-fuzz/findings/<target>/ (replay it with build-fuzz/fuzz_<target> FILE).
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]      targets: py_literal match_expr cond_expr manifest writers
# OPCHECK_FUZZ_CRASH_ONLY=1 drops the round-trip properties (to fuzz for crashes past a known property finding).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(py_literal match_expr cond_expr manifest writers)
build="${OPCHECK_FUZZ_BUILD:-$root/build-fuzz}"
fixtures="${OPCHECK_FIXTURES:-$root/../shared/fixtures}"

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPCHECK_FUZZ=ON \
  -DOPCHECK_BUILD_EXEC=OFF -DOPCHECK_FIXTURES="$fixtures" >/dev/null
cmake --build "$build" --target "${targets[@]/#/fuzz_}" -j "${OPCHECK_FUZZ_BUILD_JOBS:-2}"

failed=()
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"      # grows across runs; seeds are copied in, never the other way
  findings="$build/findings/$t/"
  rm -rf "$findings"  # a finding from an earlier run is either fixed or found again
  mkdir -p "$corpus" "$findings"
  cp -n "$root/test/fuzz/corpus/$t/"* "$corpus/" 2>/dev/null || true
  if [ "$t" = manifest ]; then
    # The real corpus's manifests where it is present; the repository's own torch-spyre fixtures always.
    for f in "$fixtures"/torch-spyre/*.yaml "$root"/test/fixtures/torch-spyre/*.yaml "$root"/test/manifest/bad/*.yaml "$root"/manifests/*.yaml; do
      [ -f "$f" ] && cp -n "$f" "$corpus/seed-$(basename "$f")"
    done
  fi
  dict=()
  [ -f "$root/test/fuzz/$t.dict" ] && dict=(-dict="$root/test/fuzz/$t.dict")
  echo "== fuzz_$t for ${seconds}s"
  rc=0
  "$build/fuzz_$t" "$corpus" "${dict[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -artifact_prefix="$findings" -print_final_stats=1 >"$build/fuzz_$t.log" 2>&1 || rc=$?
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)' "$build/fuzz_$t.log" || true
  if [ "$rc" -ne 0 ] || [ -n "$(ls -A "$findings")" ]; then
    echo "fuzz_$t: FINDING (exit $rc); log: $build/fuzz_$t.log; reproducers: $findings"
    grep -E 'ERROR:|SUMMARY:|abort|round-trip|==[0-9]+==' "$build/fuzz_$t.log" | head -20 || true
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing found problems in: ${failed[*]}"
  exit 1
fi
echo "fuzzing: ${#targets[@]} targets, ${seconds}s each, no findings"
