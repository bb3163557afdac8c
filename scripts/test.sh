#!/usr/bin/env bash
# README's test command: installs what is missing, checks the module dependency rule and
# formatting, builds with ASan+UBSan (warnings as errors) and runs every test but fuzzing.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
tools/check_deps.sh
tools/format.sh --check
cmake --preset asan >/dev/null
cmake --build --preset asan
# PostgreSQL tests need a server: a throwaway one lives for the length of ctest.
scripts/with_postgres.sh ctest --preset asan "$@"
