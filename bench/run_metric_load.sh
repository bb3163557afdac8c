#!/usr/bin/env bash
# Submissions per second with and without runs' metric reports, in one run on one corrald
# (release, SQLite): WORKERS 1-GPU jobs are placed on simulated nodes that are then
# cordoned (their agents exist, new jobs stay pending as in bench/run_submit_load.sh),
# then bench/submit_load runs alone, then again beside bench/metric_load, each worker
# reporting 10 points every 10 s (1,000 workers: 100 reports and 1,000 points a second).
# Prints both results, their ratio, and what the metric load saw. Figures go to
# docs/performance.md by hand.
#   bench/run_metric_load.sh [CLIENTS] [SECONDS] [WORKERS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/corrald.sh
clients=${1:-8}
seconds=${2:-10}
workers=${3:-1000}
build_release
cmake --build --preset release -j2 --target metric_load >/dev/null

# Agents that never heartbeat are not declared lost during the run.
start_corrald "$unlimited_config
agents: {nodeLostAfterMs: 3600000}"
trap stop_corrald EXIT
load=("$build/bench/metric_load" --server "$corrald_addr" --admin-token "$corrald_token"
      --join-token "$(cat "$corrald_dir/join.token")" --workers "$workers"
      --state "$corrald_dir/workers")
echo "placing $workers workers' jobs..."
"${load[@]}" --setup-only

submit() {  # $1: Idempotency-Key prefix
  "$build/bench/submit_load" --server "$corrald_addr" --token "$corrald_token" \
    --clients "$clients" --seconds "$seconds" --key-prefix "$1"
}
without=$(submit alone)
echo "without metrics: $without"
# The reports start a second early and end a second late, so they cover the whole run.
"${load[@]}" --interval 10 --seconds "$((seconds + 2))" >"$corrald_dir/metrics.json" &
ml=$!
sleep 1
with=$(submit beside)
wait "$ml" || { echo "metric_load failed:"; cat "$corrald_dir/metrics.json"; }
echo "with metrics:    $with"
echo "metrics:         $(cat "$corrald_dir/metrics.json")"
awk -v a="$(json_field "$without" per_second)" -v b="$(json_field "$with" per_second)" \
  'BEGIN { if (a > 0) printf "submissions/s with metrics / without: %.2f\n", b / a }'
