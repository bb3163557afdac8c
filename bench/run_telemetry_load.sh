#!/usr/bin/env bash
# Submissions per second with and without telemetry, in one run on one corrald (release,
# SQLite): a fleet of NODES simulated nodes x 8 GPUs is joined and cordoned (its agents
# exist, jobs stay pending as in bench/run_submit_load.sh), then bench/submit_load runs
# alone, then again beside bench/telemetry_load sending every GPU's sample every 10 s
# (10,000 GPUs: 1,000 samples/s). Prints both results and their ratio, and what the
# telemetry sink wrote. Figures go to docs/performance.md by hand, from a release build.
#   bench/run_telemetry_load.sh [CLIENTS] [SECONDS] [NODES]
set -euo pipefail
cd "$(dirname "$0")/.."
clients=${1:-8}
seconds=${2:-10}
nodes=${3:-1250}
build=${CORRAL_BENCH_BUILD:-build/release}
if [[ -z "${CORRAL_BENCH_BUILD:-}" ]]; then
  cmake --preset release -DCORRAL_BUILD_BENCH=ON >/dev/null
  cmake --build --preset release -j2 --target corrald submit_load telemetry_load >/dev/null
fi

dir=$(mktemp -d /tmp/corral-telemetry-bench.XXXXXX)
pid=
cleanup() {
  [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
# A generous admission limit (this measures the store, not the rate limiter); agents that
# never heartbeat are not declared lost during the run.
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
load=("$build/bench/telemetry_load" --server "$addr" --join-token "$join" --admin-token "$admin"
      --nodes "$nodes" --tokens "$dir/tokens")

echo "joining and cordoning $nodes nodes ($((nodes * 8)) GPUs)..."
"${load[@]}" --setup-only

submit() {  # $1: Idempotency-Key prefix
  "$build/bench/submit_load" --server "$addr" --token "$admin" --clients "$clients" \
    --seconds "$seconds" --key-prefix "$1"
}
without=$(submit alone)
echo "without telemetry: $without"

# Telemetry starts a second early and ends a second late, so it covers the whole submit run.
"${load[@]}" --interval 10 --seconds "$((seconds + 2))" >"$dir/telemetry.json" &
tl=$!
sleep 1
with=$(submit beside)
wait "$tl" || { echo "telemetry_load failed:"; cat "$dir/telemetry.json"; }
echo "with telemetry:    $with"
echo "telemetry:         $(cat "$dir/telemetry.json")"

rate() { sed -E 's/.*"per_second": ([0-9.]+).*/\1/' <<<"$1"; }
awk -v a="$(rate "$without")" -v b="$(rate "$with")" \
  'BEGIN { if (a > 0) printf "submissions/s with telemetry / without: %.2f\n", b / a }'
if command -v sqlite3 >/dev/null; then
  echo "telemetry_raw rows: $(sqlite3 "$dir/corral.db" 'SELECT COUNT(*) FROM telemetry_raw')," \
    "1-minute rollups: $(sqlite3 "$dir/corral.db" 'SELECT COUNT(*) FROM telemetry_rollup_1m')"
fi
