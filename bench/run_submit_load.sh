#!/usr/bin/env bash
# Durable submissions per second on SQLite and PostgreSQL: starts a release corrald on
# each store (PostgreSQL through scripts/with_postgres.sh, fsync on), registers no
# nodes (every job stays pending, so the scheduler loop still runs each cycle), and runs
# bench/submit_load with N clients. Results go to docs/performance.md by hand.
#   bench/run_submit_load.sh [CLIENTS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
clients=${1:-8}
seconds=${2:-10}
build=build/release
cmake --preset release -DCORRAL_BUILD_BENCH=ON >/dev/null
cmake --build --preset release -j2 --target corrald submit_load >/dev/null

run_one() {  # $1: label, $2: --store value or empty
  local dir
  dir=$(mktemp -d /tmp/corral-bench.XXXXXX)
  local args=(--data-dir "$dir" --listen 127.0.0.1:0 --http-threads 32)
  [[ -n "$2" ]] && args+=(--store "$2")
  # A generous admission limit: this measures the store, not the rate limiter.
  printf 'tenants:\n  default: {submitRatePerSecond: 1000000, submitBurst: 1000000, maxPendingJobs: 10000000}\n' >"$dir/config.yaml"
  "$build/src/server/corrald" "${args[@]}" --config "$dir/config.yaml" >"$dir/log" 2>&1 &
  local pid=$!
  for _ in $(seq 100); do [[ -s "$dir/corrald.addr" ]] && break; sleep 0.1; done
  local result
  result=$("$build/bench/submit_load" --server "$(cat "$dir/corrald.addr")" \
    --token "$(cat "$dir/admin.token")" --clients "$clients" --seconds "$seconds")
  echo "$1: $result"
  kill "$pid"
  wait "$pid" || true
  rm -rf "$dir"
}

[[ -n "${CORRAL_BENCH_PG_ONLY:-}" ]] || run_one sqlite ""
if [[ -n "${CORRAL_TEST_POSTGRES_URL:-}" ]]; then
  run_one postgresql "$CORRAL_TEST_POSTGRES_URL"
else
  # A throwaway server with fsync on, so its commits are as durable as SQLite's.
  CORRAL_PG_FSYNC=on exec scripts/with_postgres.sh env CORRAL_BENCH_PG_ONLY=1 "$0" "$clients" "$seconds"
fi
