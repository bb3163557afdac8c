#!/usr/bin/env bash
# The scoreboard (docs/evaluation.md, "Scoreboard"): every public trace in ../shared/traces
# that corral-sim reads, and the skewed-tenant workloads, under FIFO, Slurm (EASY
# backfill), Tiresias and Corral's default, in two worlds: the trace as it is (a preempted
# job restarts from zero) and with periodic checkpoints (every 30 min, 30 s to write one,
# 2 min to restore); the Pollux and Sia workloads also under Corral with every job
# elastic. Prints a table of ratios to the best baseline per trace and metric and one of
# elastic against rigid Corral, and with --write-docs puts them into docs/evaluation.md.
# Usage: bench/scoreboard.sh [SIM] [OUT] [--write-docs]
# SIM_FLAGS="--scheduler-config FILE.yaml" bench/scoreboard.sh ...: other Corral knobs.
# JOBS=N: runs at a time (default: the cores). ONLY=REGEX: only the traces whose name
# matches (a quick look; the docs take the whole board). Run from the repository root.
set -euo pipefail
SIM=${1:-build/release/src/sim/corral-sim}
OUT=${2:-out/scoreboard}
WRITE=${3:-}
T=${CORRAL_SHARED:-../shared}/traces
JOBS=${JOBS:-$(nproc)}
POLICIES=(--policy fifo --policy slurm --policy tiresias --policy corral)
# The workloads whose jobs can run elastic (their profiles give every size's run time)
# also run Corral's default with every job submitted elastic.
ELASTIC="--policy corral-elastic"
read -r -a MORE <<< "${SIM_FLAGS:-}"
declare -A WORLD=([as-is]="" [checkpoints]="--checkpoint-interval-s 1800 --checkpoint-cost-s 30 --restore-s 120")
start=$(date +%s)
mkdir -p "$OUT"

# One line per run: name, fleet, workload, format, flags. The Pollux and Sia workloads
# use their artifacts' 60-s rounds and 30-s (re)starts; the largest traces are cut to
# their first 10,000 jobs by submit time (--max-jobs) to keep the run under 20 minutes.
cases() {
  local load dir w set n
  for load in 0.5 1.0 1.5 2.0; do
    case $load in 0.5) dir=workloads-0.5 ;; 1.0) dir=workloads ;; 1.5) dir=workloads-1.5 ;; 2.0) dir=workloads-2.0 ;; esac
    for w in 1 2 3 4 5 6 7 8; do
      echo "pollux-$load/w$w|examples/fleets/pollux-64.yaml|$T/pollux-workloads/$dir/workload-$w.csv|pollux|--cycle-interval-s 60 --start-s 30 $ELASTIC"
    done
  done
  for set in philly:8 saturn:10 newtrace:10; do
    n=${set#*:}; set=${set%:*}
    for w in $(seq 1 "$n"); do
      echo "sia-$set/w$w|examples/fleets/sia-64.yaml|$T/sia-workloads/workloads/$set/workload-$w.csv|sia|--cycle-interval-s 60 --start-s 30 $ELASTIC"
    done
  done
  local a=$T/philly-pollux/anchors
  echo "philly-64/all|examples/fleets/philly-64-shared.yaml|$a/philly_octnov_11vc_f0.125_seed42.csv|normalized|"
  echo "philly-256/all|examples/fleets/philly-256-shared.yaml|$a/philly_octnov_11vc_f0.5_seed42.csv|normalized|--max-jobs 10000"
  echo "philly-512/all|examples/fleets/philly-512-shared.yaml|$a/philly_octnov_11vc.csv|normalized|--max-jobs 10000"
  echo "gavel-500/all|examples/fleets/gavel-500.yaml|$T/philly-gavel-msr/normalized_seed0_v100.csv|normalized|--max-jobs 5000"
  echo "tiresias-sample/all|examples/fleets/pollux-64.yaml|$T/tiresias-sample/normalized.csv|normalized|"
  echo "skewed-overload/all|examples/fleets/skewed-128.yaml|examples/workloads/skewed-overload.yaml|synthetic|"
  echo "skewed-moderate/all|examples/fleets/skewed-128.yaml|examples/workloads/skewed-moderate.yaml|synthetic|"
}

# One command per run and world, all run JOBS at a time; a failed run fails the scoreboard.
for world in as-is checkpoints; do
  cases | grep -E "^(${ONLY:-.*})" | while IFS='|' read -r name fleet workload format flags; do
    echo "$SIM --fleet $fleet --workload $workload --workload-format $format ${POLICIES[*]}" \
      "--check-every 100 --no-failures --sharing-incentive --quiet $flags ${WORLD[$world]}" \
      "${MORE[*]:-} --out $OUT/$world/$name"
  done
done > "$OUT/commands.txt"
xargs -d '\n' -P "$JOBS" -I CMD bash -c 'CMD || { echo "scoreboard: failed: CMD" >&2; exit 255; }' \
  < "$OUT/commands.txt"
wall=$(( $(date +%s) - start ))
python3 bench/scoreboard.py "$OUT" "$wall" ${MORE[@]+"--flags=${MORE[*]}"} > "$OUT/scoreboard.md"
cat "$OUT/scoreboard.md"
if [[ "$WRITE" == "--write-docs" ]]; then
  python3 bench/scoreboard.py "$OUT" "$wall" --docs docs/evaluation.md
fi
