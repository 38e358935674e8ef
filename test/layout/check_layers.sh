#!/usr/bin/env bash
# The layers of docs/design.md point down only: each folder of SRC may include the headers of the folders listed
# for it here and of include/opcheck/, and of no other. Prints each include that reaches elsewhere (file:line, the
# header, the folders it may include) and exits 1 when there is one.
#   test/layout/check_layers.sh src
set -uo pipefail
src="${1:?usage: check_layers.sh SRC_DIR}"
[ -d "$src" ] || { echo "check_layers: no folder $src" >&2; exit 1; }

# folder: the folders below it that it may include (the layer list of docs/design.md, lowest first)
declare -A may=(
  [common]=""
  [judge]="common"
  [manifest]="common"
  [select]="common"
  [config]="common"
  [plan]="common"
  [traces]="common manifest"
  [settings]="common plan"
  [repro]="common config judge manifest select settings"
  [exec]="common judge manifest plan repro settings"
  [report]="common judge repro settings"
  [runner]="common config manifest plan report repro select settings"
  [pyhost]="exec"
  [opinfo]="common judge report runner settings"
  [cli]="common config manifest opinfo plan report repro runner select settings traces"
)

status=0 checked=0
for dir in "$src"/*/; do
  folder=$(basename "$dir")
  if [ -z "${may[$folder]+set}" ]; then
    echo "$dir: a folder the layer list does not name (add it to test/layout/check_layers.sh and docs/design.md)"
    status=1
    continue
  fi
  while IFS= read -r hit; do
    [ -n "$hit" ] || continue
    file=${hit%%:*} rest=${hit#*:} line=${rest%%:*}
    header=$(sed -n 's/.*#include "\([^"]*\)".*/\1/p' <<<"${rest#*:}")
    target=${header%%/*}
    checked=$((checked + 1))
    [ "$target" = "$header" ] && continue           # a header of the same folder, named without one
    [ "$target" = opcheck ] || [ "$target" = "$folder" ] && continue
    case " ${may[$folder]} " in *" $target "*) continue ;; esac
    echo "$file:$line: $folder includes $header, but $folder may include only: ${may[$folder]:-(none)} (and opcheck/)"
    status=1
  done < <(grep -rn --include='*.h' --include='*.cpp' '^#include "' "$dir")
done
if [ "$checked" -eq 0 ]; then
  echo "check_layers: no include found in $src: nothing was checked" >&2
  exit 1
fi
[ $status -eq 0 ] && echo "layers: $checked includes in $(basename "$src")/, each pointing down"
exit $status
