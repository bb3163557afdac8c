#!/usr/bin/env bash
# Submissions per second with and without runs' metric reports, in one run on one corrald
# (release, SQLite): WORKERS 1-GPU jobs are placed on simulated nodes that are then
# cordoned (their agents exist, new jobs stay pending as in bench/run_submit_load.sh),
# then bench/submit_load runs alone, then again beside bench/metric_load, each worker
# reporting 10 points every 10 s (1,000 workers: 100 reports and 1,000 points a second).
# Prints both results, their ratio, and what the metric load saw. Figures go to
# docs/performance.md by hand, from a release build.
#   bench/run_metric_load.sh [CLIENTS] [SECONDS] [WORKERS]
set -euo pipefail
cd "$(dirname "$0")/.."
clients=${1:-8}
seconds=${2:-10}
workers=${3:-1000}
build=${CORRAL_BENCH_BUILD:-build/release}
if [[ -z "${CORRAL_BENCH_BUILD:-}" ]]; then
  cmake --preset release -DCORRAL_BUILD_BENCH=ON >/dev/null
  cmake --build --preset release -j2 --target corrald submit_load metric_load >/dev/null
fi

dir=$(mktemp -d /tmp/corral-metric-bench.XXXXXX)
pid=
cleanup() {
  [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
cat >"$dir/config.yaml" <<YAML
tenants:
  default: {submitRatePerSecond: 1000000, submitBurst: 1000000, maxPendingJobs: 10000000}
agents: {nodeLostAfterMs: 3600000}
YAML
"$build/src/server/corrald" --data-dir "$dir" --listen 127.0.0.1:0 --http-threads 64 \
  --config "$dir/config.yaml" >"$dir/log" 2>&1 &
pid=$!
for _ in $(seq 100); do [[ -s "$dir/corrald.addr" ]] && break; sleep 0.1; done
addr=$(cat "$dir/corrald.addr")
admin=$(cat "$dir/admin.token")
join=$(cat "$dir/join.token")
load=("$build/bench/metric_load" --server "$addr" --join-token "$join" --admin-token "$admin"
      --workers "$workers" --state "$dir/workers")

echo "placing $workers workers' jobs..."
"${load[@]}" --setup-only

submit() {  # $1: Idempotency-Key prefix
  "$build/bench/submit_load" --server "$addr" --token "$admin" --clients "$clients" \
    --seconds "$seconds" --key-prefix "$1"
}
without=$(submit alone)
echo "without metrics: $without"

# The reports start a second early and end a second late, so they cover the whole run.
"${load[@]}" --interval 10 --seconds "$((seconds + 2))" >"$dir/metrics.json" &
ml=$!
sleep 1
with=$(submit beside)
wait "$ml" || { echo "metric_load failed:"; cat "$dir/metrics.json"; }
echo "with metrics:    $with"
echo "metrics:         $(cat "$dir/metrics.json")"

rate() { sed -E 's/.*"per_second": ([0-9.]+).*/\1/' <<<"$1"; }
awk -v a="$(rate "$without")" -v b="$(rate "$with")" \
  'BEGIN { if (a > 0) printf "submissions/s with metrics / without: %.2f\n", b / a }'
if command -v sqlite3 >/dev/null; then
  echo "run_metrics rows: $(sqlite3 "$dir/corral.db" 'SELECT COUNT(*) FROM run_metrics')"
fi
