#!/usr/bin/env bash
# Validates the manifest JSON Schema against good and bad manifests (see validate.mjs). Installs the pinned npm
# packages on first use.
# Usage: run.sh [TORCH_SPYRE_DIR]   the torch-spyre manifests to validate (default: the repository's own,
#                                   test/fixtures/torch-spyre; the corpus test passes the real corpus's)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
spyre="${1:-$root/test/fixtures/torch-spyre}"
if [ ! -d "$here/node_modules" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi
exec node "$here/validate.mjs" "$root/schemas/manifest.schema.json" "$spyre" "$root/manifests" \
  "$root/test/manifest/bad" "$root/test/manifest/good"
