#!/usr/bin/env bash
# The Pollux (OSDI'21) job-load table on corral-sim: mean JCT over workloads 1-8 at 0.5x,
# 1.0x, 1.5x and 2.0x load, for the policies given (default: tiresias), beside the
# artifact's published means. Setup per docs/evaluation.md ("Pollux table").
# Usage: bench/run_pollux_table.sh [SIM] [OUT] [policy...]   (e.g. tiresias corral corral-elastic)
# SIM_FLAGS="--scheduler-config FILE.yaml" bench/run_pollux_table.sh ...: other Corral knobs
set -euo pipefail
SIM=${1:-build/release/src/sim/corral-sim}
OUT=${2:-out/pollux}
shift $(( $# > 2 ? 2 : $# )) || true
POLICIES=("$@")
[ ${#POLICIES[@]} -eq 0 ] && POLICIES=(tiresias)
P=${POLLUX:-${CORRAL_SHARED:-../shared}/traces/pollux-workloads}  # run from the repository root
# The artifact's Tiresias: two queues split at 16 GPU-hours, no minimum run time before a
# preemption, no cap on preemptions; every (re)start costs 30 s; a preempted job resumes
# where it stopped; 60-s scheduling interval.
FLAGS=(--cycle-interval-s 60 --start-s 30 --checkpoint-on-stop --las-thresholds-gpu-s 57600
       --preempt-min-runtime-s 0 --max-preemptions 1000000 --check-every 1 --quiet)
# SIM_FLAGS: more corral-sim flags, e.g. "--scheduler-config my.yaml" for Corral's knobs.
read -r -a MORE <<< "${SIM_FLAGS:-}"
FLAGS+=(${MORE[@]+"${MORE[@]}"})
declare -A DIR=([0.5]=workloads-0.5 [1.0]=workloads [1.5]=workloads-1.5 [2.0]=workloads-2.0)
for load in 0.5 1.0 1.5 2.0; do
  for w in 1 2 3 4 5 6 7 8; do
    args=()
    for p in "${POLICIES[@]}"; do args+=(--policy "$p"); done
    "$SIM" --fleet examples/fleets/pollux-64.yaml --workload "$P/${DIR[$load]}/workload-$w.csv" \
      --workload-format pollux "${args[@]}" "${FLAGS[@]}" --out "$OUT/$load/w$w"
  done
done
python3 - "$OUT" "$P" "${POLICIES[@]}" <<'PY'
import json, sys
out, p, policies = sys.argv[1], sys.argv[2], sys.argv[3:]
pub = {}
for pol in ("tiresias", "pollux"):
    for load in ("0.5", "1.0", "1.5", "2.0"):
        pub[pol, load] = json.load(open(f"{p}/results-jobload/{pol}-{load}/summary.json"))["mean"] / 3600
print("| load | " + " | ".join(f"{x} (ours)" for x in policies) + " | Tiresias (artifact) | Pollux (artifact) |")
print("| --- |" + " --- |" * (len(policies) + 2))
for load in ("0.5", "1.0", "1.5", "2.0"):
    cells = []
    for pol in policies:
        jcts = [json.load(open(f"{out}/{load}/w{w}/summary.json"))["policies"][pol]["mean_jct_s"]
                for w in range(1, 9)]
        mean_h = sum(jcts) / len(jcts) / 3600
        cells.append(f"{mean_h:.2f} h")
    print(f"| {load}x | " + " | ".join(cells) +
          f" | {pub['tiresias', load]:.2f} h | {pub['pollux', load]:.2f} h |")
PY
