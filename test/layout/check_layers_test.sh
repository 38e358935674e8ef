#!/usr/bin/env bash
# check_layers.sh itself, on small trees written here: it names an include that reaches up (repro including a runner
# header) and a folder the layer list does not know, and passes includes that point down.
set -uo pipefail
check="$(dirname "${BASH_SOURCE[0]}")/check_layers.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$tmp/up/src/repro" "$tmp/up/src/runner" "$tmp/up/src/newstage" "$tmp/down/src/repro" "$tmp/down/src/runner"
printf '#include "repro/script.h"\n#include "common/text.h"\n#include "runner/run_session.h"\n' > "$tmp/up/src/repro/a.cpp"
printf '#include "repro/a.h"\n' > "$tmp/up/src/runner/b.cpp"
printf '#include "common/text.h"\n' > "$tmp/up/src/newstage/c.cpp"
printf '#include "settings/run_settings.h"\n#include "opcheck/case.h"\n#include "repro/a.h"\n' > "$tmp/down/src/repro/a.cpp"
printf '#include "repro/a.h"\n#include "settings/run_settings.h"\n' > "$tmp/down/src/runner/b.cpp"

out="$("$check" "$tmp/up/src" 2>&1)"; rc=$?
echo "$out"
[ $rc -eq 1 ] || fail "a tree with an upward include exits $rc, not 1"
grep -q "src/repro/a.cpp:3: repro includes runner/run_session.h, but repro may include only: " <<<"$out" \
  || fail "the upward include is not named with its file, line and header"
grep -q "newstage/: a folder the layer list does not name" <<<"$out" || fail "an unknown folder is not named"
! grep -q "common/text.h\|b.cpp" <<<"$out" || fail "an include that points down is named"

out="$("$check" "$tmp/down/src" 2>&1)"; rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "a tree whose includes point down exits $rc, not 0"
echo "check_layers: catches an upward include and an unknown folder, passes includes that point down"
