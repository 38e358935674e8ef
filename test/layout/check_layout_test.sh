#!/usr/bin/env bash
# check_layout.sh itself, on small trees written here: it names a 151-line function (C++ or Python), an 801-line
# source file (C++ or Python, in src/ or in include/) and a 301-line file in cli/, and passes each at its limit.
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
# A Python function whose definition spans $2 lines, named $1.
python_function_of() {
  local i
  echo "def $1(x):"
  for ((i = 3; i <= $2; i++)); do echo "    x += $i"; done
  echo "    return x"
}
# A file of $1 lines.
lines_of() { local i; for ((i = 1; i <= $1; i++)); do echo "// line $i"; done; }
python_lines_of() { local i; for ((i = 1; i <= $1; i++)); do echo "# line $i"; done; }

mkdir -p "$tmp/over/src/cli" "$tmp/over/src/stage" "$tmp/over/include/pub" "$tmp/within/src/cli" \
         "$tmp/within/src/stage" "$tmp/within/include/pub"
{ function_of small 20; function_of long_one 151; } > "$tmp/over/src/stage/a.cpp"
{ echo "namespace n {"; function_of inline_long 160; echo "}"; } > "$tmp/over/src/stage/b.h"
lines_of 301 > "$tmp/over/src/cli/cmd_big.cpp"
{ python_function_of short_py 10; echo; echo "class K:"; python_function_of long_py 151 | sed 's/^/    /'; } \
  > "$tmp/over/src/stage/p.py"
{ function_of small_big 3; lines_of 798; } > "$tmp/over/src/stage/big.cpp"        # 801 lines
{ python_function_of tiny 3; python_lines_of 798; } > "$tmp/over/src/stage/big.py"  # 801 lines
{ function_of in_header 3; lines_of 798; } > "$tmp/over/include/pub/big.h"         # 801 lines
{ function_of small 20; function_of at_limit 150; } > "$tmp/within/src/stage/a.cpp"
lines_of 300 > "$tmp/within/src/cli/cmd_big.cpp"
echo "int f() { return 1; }" > "$tmp/within/src/cli/main.cpp"
python_function_of py_at_limit 150 > "$tmp/within/src/stage/p.py"
{ python_function_of tiny 3; python_lines_of 797; } > "$tmp/within/src/stage/big.py"  # 800 lines
{ function_of in_header 3; lines_of 797; } > "$tmp/within/include/pub/big.h"         # 800 lines

out="$("$check" "$tmp/over/src" "$tmp/over/include" 2>&1)"; rc=$?
echo "$out"
[ $rc -eq 1 ] || fail "a tree with offenders exits $rc, not 1"
grep -qx "src/stage/a.cpp: function long_one is 151 lines (lines 21-171; the limit is 150)" <<<"$out" \
  || fail "the 151-line function is not named with its file and length"
grep -qx "src/stage/b.h: function inline_long is 160 lines (lines 2-161; the limit is 150)" <<<"$out" \
  || fail "the 160-line function in a header is not named"
grep -qx "src/cli/cmd_big.cpp: 301 lines (the limit is 300)" <<<"$out" || fail "the 301-line cli file is not named"
grep -qx "src/stage/p.py: function long_py is 151 lines (lines 13-163; the limit is 150)" <<<"$out" \
  || fail "the 151-line Python method is not named with its file and length"
grep -qx "src/stage/big.cpp: 801 lines (the limit is 800)" <<<"$out" || fail "the 801-line C++ file is not named"
grep -qx "src/stage/big.py: 801 lines (the limit is 800)" <<<"$out" || fail "the 801-line Python file is not named"
grep -qx "include/pub/big.h: 801 lines (the limit is 800)" <<<"$out" || fail "the 801-line file in include/ is not named"
! grep -q "small\|short_py\|tiny\|in_header" <<<"$out" || fail "a short function is named"
! grep -q "a.cpp: [0-9]* lines\|p.py: [0-9]* lines\|b.h: [0-9]* lines" <<<"$out" || fail "a short file is named"

out="$("$check" "$tmp/within/src" "$tmp/within/include" 2>&1)"; rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "a tree within the limits exits $rc, not 0"
grep -q "^layout: 5 functions in src/" <<<"$out" || fail "the passing tree's functions were not counted"
grep -q "^layout: 1 functions in include/, none over 150 lines; 1 C, C++ and Python files" <<<"$out" \
  || fail "the passing include/ was not measured"

mkdir -p "$tmp/empty/src"
out="$("$check" "$tmp/empty/src" 2>&1)"; rc=$?
[ $rc -eq 1 ] || fail "a tree where ctags finds no function passes (exit $rc): nothing was measured"
echo "PASS"
