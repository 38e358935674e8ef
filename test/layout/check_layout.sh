#!/usr/bin/env bash
# The layout limits of CONTRIBUTING.md, in each DIR given: no function longer than 150 lines, C, C++ or Python,
# counted by Universal Ctags from its first line to its last; no C, C++ or Python source file over 800 lines; no file
# in DIR/cli/ over 300 lines. Prints each offender (file, name, length) and exits 1 when there is one.
#   test/layout/check_layout.sh src include
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: check_layout.sh DIR [DIR...]" >&2; exit 1; }
max_function=150
max_file=800
max_cli_file=300

if ! ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
  echo "check_layout: needs Universal Ctags (apt-get install universal-ctags; scripts/test.sh installs it)" >&2
  exit 1
fi
for dir in "$@"; do
  [ -d "$dir" ] || { echo "check_layout: no folder $dir" >&2; exit 1; }
done

# The sources whose length is limited: C, C++ and Python.
is_source='\.(c|cc|cpp|cxx|h|hh|hpp|hxx|py)$'

status=0
functions=""
files=""
cli_files=""
summary=""
for dir in "$@"; do
  # One line per function definition: END|LINE|FILE|NAME (the name last: an operator's name may hold any character).
  # Python's kinds f (functions, nested ones included) and m (methods). Run from DIR's parent, so that files are
  # named as in the repository (src/cli/main.cpp).
  parent="$(dirname "$dir")"
  base="$(basename "$dir")"
  if ! tags="$(cd "$parent" && ctags -R --languages=C,C++,Python --kinds-c=f --kinds-c++=f --kinds-python=fm \
                  --fields=+ne -x --_xformat='%{end}|%{line}|%F|%N' "$base")"; then
    echo "check_layout: ctags failed on $dir" >&2
    exit 1
  fi
  functions+="$(awk -F'|' -v max="$max_function" '
    NF < 4 { next }
    {
      name = $4
      for (i = 5; i <= NF; i++) name = name "|" $i
      if ($1 !~ /^[0-9]+$/) { printf "0\t%s: %s (line %s): ctags gives no last line, so its length is unknown\n", $3, name, $2; next }
      len = $1 - $2 + 1
      if (len > max) printf "%d\t%s: function %s is %d lines (lines %d-%d; the limit is %d)\n", len, $3, name, len, $2, $1, max
    }' <<<"$tags")"$'\n'
  count="$(awk -F'|' 'NF >= 4' <<<"$tags" | wc -l)"
  if [ "$count" -eq 0 ]; then
    echo "check_layout: ctags found no function in $dir: nothing was measured" >&2
    status=1
  fi

  sources="$(cd "$parent" && find "$base" -type f | grep -E "$is_source" | sort)"
  nsources=0
  if [ -n "$sources" ]; then
    nsources="$(wc -l <<<"$sources")"
    files+="$(cd "$parent" && tr '\n' '\0' <<<"$sources" | xargs -0 wc -l | awk -v max="$max_file" '
      $2 != "total" && $1 > max { printf "%d\t%s: %d lines (the limit is %d)\n", $1, $2, $1, max }')"$'\n'
  fi

  if [ -d "$dir/cli" ]; then
    over="$(cd "$parent" && find "$base/cli" -type f -print0 | xargs -0 -r wc -l | awk -v max="$max_cli_file" '
      $2 != "total" && $1 > max { printf "%s: %d lines (the limit is %d)\n", $2, $1, max }')"
    [ -n "$over" ] && cli_files+="Files in $base/cli/ over $max_cli_file lines (move code to a stage or a helper;"\
" CONTRIBUTING.md):"$'\n'"$over"$'\n'
  fi
  summary+="layout: $count functions in $base/, none over $max_function lines; $nsources C, C++ and Python files, none"
  summary+=" over $max_file lines"
  [ -d "$dir/cli" ] && summary+="; no file in $base/cli/ over $max_cli_file lines"
  summary+=$'\n'
done

# Each list longest first, without the blank lines the folders left.
longest_first() { grep -v '^$' | sort -t$'\t' -k1,1nr | cut -f2-; }
functions="$(longest_first <<<"$functions")"
files="$(longest_first <<<"$files")"
cli_files="$(grep -v '^$' <<<"$cli_files")"
if [ -n "$functions" ]; then
  echo "Functions over $max_function lines (split them; CONTRIBUTING.md):"
  echo "$functions"
  status=1
fi
if [ -n "$files" ]; then
  echo "Files over $max_file lines (split them by job; CONTRIBUTING.md):"
  echo "$files"
  status=1
fi
if [ -n "$cli_files" ]; then
  echo "$cli_files"
  status=1
fi

[ $status -eq 0 ] && printf '%s' "$summary"
exit $status
