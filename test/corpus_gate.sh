#!/usr/bin/env bash
# Runs a corpus test (one whose point is the real torch-spyre corpus, ../shared/fixtures by default) when the corpus
# is there. Without it the test exits 77, which ctest shows as skipped (SKIP_RETURN_CODE), with the reason; a clone
# has no corpus, and its own fixtures (test/fixtures) cover the features. With OPCHECK_REQUIRE_CORPUS=1 (CI, which
# has the corpus) a missing corpus fails instead: there a skip would hide a test that stopped running.
# Usage: corpus_gate.sh CORPUS_DIR -- COMMAND...
corpus="$1"
shift 2
if [ ! -d "$corpus" ]; then
  if [ "${OPCHECK_REQUIRE_CORPUS:-0}" = 1 ]; then
    echo "no torch-spyre corpus at $corpus, and OPCHECK_REQUIRE_CORPUS=1 says it must be there." \
      "Fix: put the corpus there, or configure with -DOPCHECK_FIXTURES=DIR" >&2
    exit 1
  fi
  echo "SKIPPED (no corpus): the real torch-spyre corpus is not at $corpus." \
    "Fix: to run this test, configure with -DOPCHECK_FIXTURES=DIR, DIR holding torch-spyre/, torch-spyre-v2/, op-traces/"
  exit 77
fi
exec "$@"
