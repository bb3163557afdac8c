#!/usr/bin/env bash
# Tenant isolation: does one tenant flooding the API slow another tenant's submissions?
# A release corrald on SQLite with two tenants. `quiet` submits from one client, one
# request at a time, for SECONDS; we report its acknowledged/s and p50/p99 latency
#   1. alone,
#   2. while `flood` submits from 16 clients as fast as they can, over its admission
#      limit (submitRatePerSecond 500: most of its calls are answered 429),
#   3. the same flood with no admission limit on `flood` (every call is a commit), to
#      show what the limit buys.
# Each phase gets a fresh corrald. No nodes: every job stays pending.
#   bench/run_tenant_flood.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/corrald.sh
seconds=${1:-10}
build_release

config() {  # $1: flood's submit rate limit
  printf 'tenants:\n  quiet: {submitRatePerSecond: 100000, submitBurst: 100000, maxPendingJobs: 10000000}\n'
  printf '  flood: {submitRatePerSecond: %s, submitBurst: %s, maxPendingJobs: 10000000}\n' "$1" "$1"
}

phase() {  # $1: label, $2: flood limit or empty for no flood
  start_corrald "$(config "${2:-500}")"
  local flood_pid=""
  if [[ -n "$2" ]]; then
    "$build/bench/submit_load" --server "$corrald_addr" --token "$corrald_token" --tenant flood \
      --key-prefix flood --clients 16 --seconds "$((seconds + 2))" >"$corrald_dir/flood.json" &
    flood_pid=$!
    sleep 1  # let the flood build up before measuring
  fi
  local quiet
  quiet=$("$build/bench/submit_load" --server "$corrald_addr" --token "$corrald_token" \
    --tenant quiet --key-prefix quiet --clients 1 --seconds "$seconds")
  echo "$1: quiet $quiet"
  if [[ -n "$flood_pid" ]]; then
    wait "$flood_pid"
    echo "$1: flood $(cat "$corrald_dir/flood.json")"
  fi
  stop_corrald
}

echo "# $(date -u +%FT%TZ) load average $(cut -d' ' -f1-3 /proc/loadavg), commit $(git rev-parse --short HEAD)"
phase alone ""
phase "flood limited to 500/s" 500
phase "flood unlimited" 1000000
