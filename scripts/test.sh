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

# What the build needs first; the packages only the tests run (a browser, PyTorch,
# PostgreSQL, promtool: most of a fresh machine's set-up) install beside the build.
step scripts/setup.sh --build
setup_log=$(mktemp)
(
  start=$SECONDS
  scripts/setup.sh
  echo "setup: the tests' packages took $((SECONDS - start)) s, beside the build"
) >"$setup_log" 2>&1 &
setup_pid=$!
# Waits for that set-up (once) and shows what it said; fails where it failed.
wait_for_setup() {
  [[ -n "$setup_pid" ]] || return 0
  local rc=0
  wait "$setup_pid" || rc=$?
  setup_pid=""
  cat "$setup_log"
  rm -f "$setup_log"
  return "$rc"
}
# On every exit, even a failed build: never leave apt half done.
trap 'wait_for_setup || true; report' EXIT

step tools/check_deps.sh
step tools/format.sh --check
step cmake --preset asan >/dev/null
step cmake --build --preset asan
step wait_for_setup
# PostgreSQL tests need a server: a throwaway one lives for the length of ctest. One test
# per core and one more: a quarter of the tests' time is spent waiting (on a child, a
# timer, a socket), and the extra test fills it (on 2 cores: 357 s against 391 s). Twice
# as many as cores made each test three times slower and tight timings flaky.
step scripts/with_postgres.sh ctest --preset asan --parallel "$(($(nproc) + 1))" "$@"
