#!/usr/bin/env bash
# A/B of durable submissions per second between corrald binaries, in one window: each
# round runs every binary once (SQLite, 16 clients, 10 s, no nodes), so machine noise
# hits all of them alike; compare medians over the rounds. Build the variants first and
# copy each corrald aside, e.g. cp build/release/src/server/corrald /tmp/corrald-a.
#   bench/ab_submit.sh BIN_A BIN_B [...]   (ROUNDS=3 CLIENTS=16 DURATION=10)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release -DCORRAL_BUILD_BENCH=ON >/dev/null
cmake --build --preset release -j2 --target submit_load >/dev/null
for round in $(seq "${ROUNDS:-3}"); do
  for bin in "$@"; do
    dir=$(mktemp -d /tmp/corral-ab.XXXXXX)
    # A generous admission limit: this measures the store and the loop, not the limiter.
    printf 'tenants:\n  default: {submitRatePerSecond: 1000000, submitBurst: 1000000, maxPendingJobs: 10000000}\n' >"$dir/config.yaml"
    "$bin" --data-dir "$dir" --listen 127.0.0.1:0 --http-threads 32 \
      --config "$dir/config.yaml" >"$dir/log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do [[ -s "$dir/corrald.addr" ]] && break; sleep 0.1; done
    result=$(build/release/bench/submit_load --server "$(cat "$dir/corrald.addr")" \
      --token "$(cat "$dir/admin.token")" --clients "${CLIENTS:-16}" --seconds "${DURATION:-10}")
    echo "round $round $bin: $result"
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    rm -rf "$dir"
  done
done
