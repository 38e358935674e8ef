#!/usr/bin/env bash
# check_layout.sh itself, on small trees written here: it names a 151-line function and a 301-line file in cli/, and
# passes a 150-line function and a 300-line file in cli/.
set -uo pipefail
check="$(dirname "${BASH_SOURCE[0]}")/check_layout.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# A C++ function whose definition spans $2 lines, named $1.
function_of() {
  local i
  echo "int $1(int x) {"
  for ((i = 3; i <= $2; i++)); do echo "  x += $i;"; done
  echo "}"
}
# A file of $1 lines.
lines_of() { local i; for ((i = 1; i <= $1; i++)); do echo "// line $i"; done; }

mkdir -p "$tmp/over/src/cli" "$tmp/over/src/stage" "$tmp/within/src/cli" "$tmp/within/src/stage"
{ function_of small 20; function_of long_one 151; } > "$tmp/over/src/stage/a.cpp"
{ echo "namespace n {"; function_of inline_long 160; echo "}"; } > "$tmp/over/src/stage/b.h"
lines_of 301 > "$tmp/over/src/cli/cmd_big.cpp"
{ function_of small 20; function_of at_limit 150; } > "$tmp/within/src/stage/a.cpp"
lines_of 300 > "$tmp/within/src/cli/cmd_big.cpp"
echo "int f() { return 1; }" > "$tmp/within/src/cli/main.cpp"

out="$("$check" "$tmp/over/src" 2>&1)"; rc=$?
echo "$out"
[ $rc -eq 1 ] || fail "a tree with offenders exits $rc, not 1"
grep -qx "src/stage/a.cpp: function long_one is 151 lines (lines 21-171; the limit is 150)" <<<"$out" \
  || fail "the 151-line function is not named with its file and length"
grep -qx "src/stage/b.h: function inline_long is 160 lines (lines 2-161; the limit is 150)" <<<"$out" \
  || fail "the 160-line function in a header is not named"
grep -qx "src/cli/cmd_big.cpp: 301 lines (the limit is 300)" <<<"$out" || fail "the 301-line cli file is not named"
! grep -q "small" <<<"$out" || fail "a short function is named"

out="$("$check" "$tmp/within/src" 2>&1)"; rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "a tree within the limits exits $rc, not 0"
grep -q "^layout: 3 functions in src/" <<<"$out" || fail "the passing tree's functions were not counted"

mkdir -p "$tmp/empty/src"
out="$("$check" "$tmp/empty/src" 2>&1)"; rc=$?
[ $rc -eq 1 ] || fail "a tree where ctags finds no function passes (exit $rc): nothing was measured"
echo "PASS"
