#!/usr/bin/env bash
# Usage: run.sh REPORT_SAMPLE_BIN METRICS_SCHEMA. Installs the pinned npm packages when missing, writes the sample
# reports with report_sample and runs node's test runner on them.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sample="$1"
schema="$2"
cd "$here"
if [ ! -d node_modules ]; then
  npm ci --no-audit --no-fund
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$sample" sample --junit-xml "$out/sample.xml" --metrics-json "$out/sample.json"
"$sample" parity --metrics-json "$out/parity.json"
"$sample" empty --metrics-json "$out/empty.json"
"$sample" verdicts --junit-xml "$out/verdicts.xml" --metrics-json "$out/verdicts.json"
OPCHECK_REPORT_OUT="$out" OPCHECK_METRICS_SCHEMA="$schema" node --test consumers.test.mjs
