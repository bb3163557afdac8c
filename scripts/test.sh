#!/usr/bin/env bash
# README's test command: installs what is missing, checks the module dependency rule and
# formatting, builds with ASan+UBSan (warnings as errors) and runs every test but fuzzing.
# Extra arguments go to ctest (e.g. -R '^Agent\.'). At the end it prints each step's wall
# time (docs/development.md, "Where the time goes").
set -euo pipefail
cd "$(dirname "$0")/.."

times=()
step() {
  local start=$SECONDS
  "$@"
  times+=("$((SECONDS - start)) s: $*")
}
report() { printf 'test.sh took %s\n' "${times[@]}"; }
trap report EXIT

step scripts/setup.sh
step tools/check_deps.sh
step tools/format.sh --check
step cmake --preset asan >/dev/null
step cmake --build --preset asan
# PostgreSQL tests need a server: a throwaway one lives for the length of ctest. One test
# per core: under ASan the tests keep the cores busy (twice as many at once made each one
# three times slower, the whole run barely shorter, and tight timings flaky).
step scripts/with_postgres.sh ctest --preset asan --parallel "$(nproc)" "$@"
