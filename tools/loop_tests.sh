#!/usr/bin/env bash
# Runs tests over and over under the test command's conditions (the asan build, a
# throwaway PostgreSQL, the same ctest parallelism) to find the flaky ones. Each test runs
# up to N times and stops at its first failure; the summary lists the tests that failed.
#   tools/loop_tests.sh                 # every test, 20 times
#   tools/loop_tests.sh 50 -R '^Agent\.'  # a subset (any ctest arguments), 50 times
# Build first (cmake --build --preset asan); this does not build.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=20
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  runs=$1
  shift
fi
exec scripts/with_postgres.sh ctest --preset asan --parallel "$(($(nproc) + 1))" \
  --repeat "until-fail:$runs" "$@"
