#!/usr/bin/env bash
# The front door: installs what is missing, builds Release into build/ (incrementally), runs opcheck with your arguments.
# It builds the binary and the libraries `run` loads, not the tests (scripts/test.sh builds those, in the same build/).
#   scripts/run.sh run --model gpt_oss
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
opcheck_bootstrap --run || exit 3
opcheck_command_requirements "${1:-}" || exit 3
exec "$OPCHECK_BUILD_DIR/opcheck" "$@"
