#!/usr/bin/env bash
# The layout limits of CONTRIBUTING.md: no function in SRC longer than 150 lines, counted by Universal Ctags from its
# first line to its last; no file in SRC/cli/ over 300 lines. Prints each offender (file, name, length) and exits 1
# when there is one.
#   test/layout/check_layout.sh src
set -uo pipefail
src="${1:?usage: check_layout.sh SRC_DIR}"
max_function=150
max_cli_file=300

if ! ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
  echo "check_layout: needs Universal Ctags (apt-get install universal-ctags; scripts/test.sh installs it)" >&2
  exit 1
fi
[ -d "$src" ] || { echo "check_layout: no folder $src" >&2; exit 1; }

# One line per function definition: END|LINE|FILE|NAME (the name last: an operator's name may hold any character).
# Run from SRC's parent, so that files are named as in the repository (src/cli/main.cpp).
parent="$(dirname "$src")"
base="$(basename "$src")"
if ! tags="$(cd "$parent" && ctags -R --languages=C,C++ --kinds-c=f --kinds-c++=f --fields=+ne -x \
                --_xformat='%{end}|%{line}|%F|%N' "$base")"; then
  echo "check_layout: ctags failed on $src" >&2
  exit 1
fi

status=0
functions="$(awk -F'|' -v max="$max_function" '
  NF < 4 { next }
  {
    name = $4
    for (i = 5; i <= NF; i++) name = name "|" $i
    if ($1 !~ /^[0-9]+$/) { printf "%s: %s (line %s): ctags gives no last line, so its length is unknown\n", $3, name, $2; next }
    len = $1 - $2 + 1
    if (len > max) printf "%d\t%s: function %s is %d lines (lines %d-%d; the limit is %d)\n", len, $3, name, len, $2, $1, max
  }' <<<"$tags" | sort -t$'\t' -k1,1nr | cut -f2-)"
if [ -n "$functions" ]; then
  echo "Functions over $max_function lines (split them; CONTRIBUTING.md):"
  echo "$functions"
  status=1
fi

count="$(awk -F'|' 'NF >= 4' <<<"$tags" | wc -l)"
if [ "$count" -eq 0 ]; then
  echo "check_layout: ctags found no function in $src: nothing was measured" >&2
  status=1
fi

if [ -d "$src/cli" ]; then
  files="$(find "$src/cli" -type f -print0 | xargs -0 -r wc -l | awk -v max="$max_cli_file" -v p="$parent/" '
    $2 != "total" && $1 > max { f = $2; if (index(f, p) == 1) f = substr(f, length(p) + 1); printf "%s: %d lines (the limit is %d)\n", f, $1, max }')"
  if [ -n "$files" ]; then
    echo "Files in $base/cli/ over $max_cli_file lines (move code to a stage or a helper; CONTRIBUTING.md):"
    echo "$files"
    status=1
  fi
fi

[ $status -eq 0 ] && echo "layout: $count functions in $base/, none over $max_function lines; no file in $base/cli/ over $max_cli_file lines"
exit $status
