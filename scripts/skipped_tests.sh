#!/usr/bin/env bash
# Lists the tests the last ctest run skipped, each with the reason it gave (GoogleTest's
# GTEST_SKIP message, which ctest's own summary leaves out).
# Usage: bash scripts/skipped_tests.sh [build folder, default build]
set -euo pipefail
log="${1:-build}/Testing/Temporary/LastTest.log"
[ -f "$log" ] || { echo "skipped_tests: no $log (run ctest first)" >&2; exit 1; }
awk '
  / Skipped$/ { reason = ""; getline reason; next }
  /^\[  SKIPPED \] [^ ]+ \([0-9]+ ms\)$/ { print "skipped: " $4 ": " reason; count++ }
  END { print (count + 0) " test(s) skipped" }
' "$log"
