#!/usr/bin/env bash
# README's first command: installs what is missing, builds the release preset, and runs
# the most useful thing Corral has today.
#
# Today that is the job-spec front door and the scheduler: `corral validate` checks and
# normalizes the example jobs, and bench_sched runs the production scheduler, decide(), over
# a simulated 10,000-GPU fleet. corrald (the control plane on SQLite with simulated GPU
# nodes) replaces this once it lands.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release

echo
echo "== corral validate examples/jobs/* (normalized specs, secrets masked)"
build/release/src/cli/corral validate -q examples/jobs/*
for f in examples/jobs/*; do echo "ok  $f"; done

echo
echo "== the scheduler on a simulated 10,000-GPU fleet (1,250 nodes, 5,000 pending jobs)"
build/release/bench/bench_sched --benchmark_filter='BM_DecideFull10k' --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true
