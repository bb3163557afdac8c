#!/usr/bin/env bash
# The LLM-scale reliability table (docs/evaluation.md#reliability-at-llm-scale): one
# 16,384-GPU job (2,048 nodes x 8 H100) for 54 simulated days at the Llama 3 failure rate
# (419 interruptions in 54 days), effective training time = productive / wall, median of
# SEEDS seeds per cell, beside the Young/Daly estimate.
#   1. checkpoint interval {10, 30, 60, 180} min x spares {0, 16, 64} nodes, at a 60-s
#      checkpoint cost, 10-min restart and 4-h repair;
#   2. restart latency {1, 3, 10, 30} min at a 20-min interval (near Young/Daly's
#      optimum) and 16 spares;
#   3. a 10-s checkpoint (asynchronous writes) at an 8-min interval, restart {1, 3} min.
# Usage: bench/run_llm_reliability.sh [TOOL] [OUT]   (SEEDS=5 by default)
set -euo pipefail
TOOL=${1:-build/release/src/sim/corral-sim-reliability}
OUT=${2:-out/llm-reliability}
SEEDS=${SEEDS:-5}
mkdir -p "$OUT"
COMMON=(--nodes 2048 --gpus-per-node 8 --days 54 --interruptions 419 --repair-h 4
        --seeds "$SEEDS" --cycle-interval-s 10 --check-every 1)
# The three tables run side by side (each run is single-threaded).
"$TOOL" "${COMMON[@]}" --checkpoint-cost-s 60 --restart-min 10 --spares 0,16,64 \
  --checkpoint-interval-min 10,30,60,180 --csv "$OUT/grid.csv" >"$OUT/grid.md" &
pids=($!)
"$TOOL" "${COMMON[@]}" --checkpoint-cost-s 60 --restart-min 1,3,10,30 --spares 16 \
  --checkpoint-interval-min 20 --csv "$OUT/restart.csv" >"$OUT/restart.md" &
pids+=($!)
"$TOOL" "${COMMON[@]}" --checkpoint-cost-s 10 --restart-min 1,3 --spares 16 \
  --checkpoint-interval-min 8 --csv "$OUT/async.csv" >"$OUT/async.md" &
pids+=($!)
for pid in "${pids[@]}"; do wait "$pid"; done  # fails (set -e) if a run did
cat "$OUT/grid.md" "$OUT/restart.md" "$OUT/async.md"
