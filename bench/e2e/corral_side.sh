#!/usr/bin/env bash
# The Corral half of the end-to-end comparison with Slurm (issue #6): a release corrald
# on SQLite plus 8 corral-agents with simulated 8-GPU DGX H100 nodes (two leaves of 4),
# all on loopback, then bench/e2e/e2e_load.py (burst, par, idle, gang; see its header).
#   bench/e2e/corral_side.sh [extra e2e_load.py flags, e.g. --n 2000 --only "burst idle"]
# bench/e2e/side_by_side.sh runs this and Slurm's bench.sh in one go.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${CORRAL_BUILD:-build/release}
cmake --preset release >/dev/null
cmake --build --preset release -j2 --target corrald corral corral-agent >/dev/null

dir=$(mktemp -d /tmp/corral-e2e.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [[ -n "${KEEP:-}" ]] && echo "kept $dir" >&2 || rm -rf "$dir"
}
trap cleanup EXIT

# Admission limits out of the way: this measures the path from submit to done.
printf 'tenants:\n  default: {submitRatePerSecond: 1000000, submitBurst: 1000000, maxPendingJobs: 10000000}\n' >"$dir/config.yaml"
"$build/src/server/corrald" --data-dir "$dir/data" --listen 127.0.0.1:0 \
  --config "$dir/config.yaml" >"$dir/corrald.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [[ -s "$dir/data/corrald.addr" ]] && break; sleep 0.1; done
server="http://$(cat "$dir/data/corrald.addr")"
for i in 1 2 3 4 5 6 7 8; do
  leaf=l$(((i - 1) / 4 + 1))
  "$build/src/agent/corral-agent" --server "$server" --join-token-file "$dir/data/join.token" \
    --node "n$i" --simulate dgx-h100 --labels "spine=s1,leaf=$leaf,rack=r$i" \
    --state-dir "$dir/agent-n$i" >"$dir/agent-n$i.log" 2>&1 &
  pids+=($!)
done
# Wait until every node has joined.
for _ in $(seq 100); do
  n=$(curl -sf -H "Authorization: Bearer $(cat "$dir/data/admin.token")" "$server/v1/nodes" |
    python3 -c 'import json,sys; print(len(json.load(sys.stdin)["nodes"]))' || echo 0)
  [[ "$n" == 8 ]] && break
  sleep 0.1
done
python3 bench/e2e/e2e_load.py --server "$server" --token-file "$dir/data/admin.token" \
  --corral "$build/src/cli/corral" "$@"
# CPU seconds (user+sys) of corrald and of the agents with their supervisors, over the
# whole run, to set beside the job count (Slurm's bench reports the same per daemon).
cpu() { awk '{print ($14 + $15 + $16 + $17) / 100}' "/proc/$1/stat"; }
agents=0
for p in "${pids[@]:1}"; do agents=$(python3 -c "print($agents + $(cpu "$p"))"); done
echo "CPU corrald=$(cpu "${pids[0]}")s agents=${agents}s (including their exited supervisors and workers)"
