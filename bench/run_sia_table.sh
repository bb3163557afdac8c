#!/usr/bin/env bash
# The Sia (SOSP'23) workloads on corral-sim: mean JCT, makespan, GPU allocation and cost
# over each set's workloads (philly 1-8, saturn 1-10, newtrace 1-10) on the artifact's
# 64-GPU cluster of three types (examples/fleets/sia-64.yaml), for the policies given
# (default: tiresias corral corral-elastic). Setup per docs/evaluation.md ("Sia workloads").
# Usage: bench/run_sia_table.sh [SIM] [OUT] [policy...]
# SIM_FLAGS="--scheduler-config FILE.yaml" bench/run_sia_table.sh ...: other Corral knobs
set -euo pipefail
SIM=${1:-build/release/src/sim/corral-sim}
OUT=${2:-out/sia}
shift $(( $# > 2 ? 2 : $# )) || true
POLICIES=("$@")
[ ${#POLICIES[@]} -eq 0 ] && POLICIES=(tiresias corral corral-elastic)
S=${SIA:-${CORRAL_SHARED:-../shared}/traces/sia-workloads}  # run from the repository root
# Sia's 60-s scheduling round; every (re)start costs 30 s; a stopped job resumes where it
# stopped (the artifact checkpoints on every reallocation).
FLAGS=(--cycle-interval-s 60 --start-s 30 --checkpoint-on-stop --quiet)
read -r -a MORE <<< "${SIM_FLAGS:-}"
FLAGS+=(${MORE[@]+"${MORE[@]}"})
declare -A COUNT=([philly]=8 [saturn]=10 [newtrace]=10)
for set in philly saturn newtrace; do
  for w in $(seq 1 "${COUNT[$set]}"); do
    args=()
    for p in "${POLICIES[@]}"; do args+=(--policy "$p"); done
    "$SIM" --fleet examples/fleets/sia-64.yaml --workload "$S/workloads/$set/workload-$w.csv" \
      --workload-format sia "${args[@]}" "${FLAGS[@]}" --out "$OUT/$set/w$w" >/dev/null
  done
done
python3 - "$OUT" "${POLICIES[@]}" <<'PY'
import json, sys
out, policies = sys.argv[1], sys.argv[2:]
count = {"philly": 8, "saturn": 10, "newtrace": 10}
print("| workloads | policy | mean JCT | makespan | GPU allocation | cost |")
print("| --- | --- | --- | --- | --- | --- |")
for s, n in count.items():
    for p in policies:
        rows = [json.load(open(f"{out}/{s}/w{w}/summary.json"))["policies"][p]
                for w in range(1, n + 1)]
        mean = lambda k: sum(r[k] for r in rows) / len(rows)
        print(f"| {s} ({n}) | {p} | {mean('mean_jct_s') / 3600:.2f} h | "
              f"{mean('makespan_s') / 3600:.1f} h | {mean('gpu_allocation'):.2f} | "
              f"${mean('total_cost_usd'):,.0f} |")
PY
