#!/usr/bin/env bash
# Corral's durable submissions per second beside Slurm's sbatch, in one run on this
# machine, and their ratios.
#
# Corral: a release corrald on SQLite with no nodes (every job stays pending, so the
# scheduler loop keeps running over a growing queue), bench/submit_load with 1, 4 and
# 16 clients, REPEATS runs of SECONDS each (a fresh corrald per run); medians.
# Slurm: ../shared/peers/slurm/bench.sh's `hold` measurement (N x `sbatch -H`, from 1
# client and from 4: the submission path alone, nothing runs), REPEATS fresh clusters;
# medians. Held jobs are the like-for-like peer of Corral's pending jobs: both runs
# measure acknowledged submissions, not execution. Slurm runs after Corral has stopped,
# so neither competes with the other for the two cores.
#
#   bench/compare_submit.sh                 # REPEATS=3 RUN_SECONDS=10 N=2000
#   REPEATS=1 RUN_SECONDS=5 bench/compare_submit.sh
#   SLURM=0 bench/compare_submit.sh         # Corral only
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/corrald.sh
repeats=${REPEATS:-3}
seconds=${RUN_SECONDS:-10}  # not SECONDS: bash owns that name
n=${N:-2000}
peer=${SLURM_PEER:-${CORRAL_SHARED:-../shared}/peers/slurm}  # from the repository root (cd above)

build_release
echo "# $(date -u +%FT%TZ) $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), commit $(git rev-parse --short HEAD)"

declare -A rate p50 p99
for clients in 1 4 16; do
  rates=() p50s=() p99s=()
  for r in $(seq "$repeats"); do
    start_corrald "$unlimited_config"
    out=$("$build/bench/submit_load" --server "$corrald_addr" --token "$corrald_token" \
      --clients "$clients" --seconds "$seconds")
    stop_corrald
    echo "corral sqlite clients=$clients run=$r: $out"
    rates+=("$(json_field "$out" per_second)")
    p50s+=("$(json_field "$out" p50_ms)")
    p99s+=("$(json_field "$out" p99_ms)")
  done
  rate[$clients]=$(median "${rates[@]}")
  p50[$clients]=$(median "${p50s[@]}")
  p99[$clients]=$(median "${p99s[@]}")
done

slurm_serial="" slurm_par4=""
if [[ "${SLURM:-1}" == 1 ]]; then
  [[ -x "$peer/bench.sh" ]] || { echo "no Slurm peer at $peer" >&2; exit 1; }
  slurm_out=$(OUT=$(mktemp -d /tmp/slurm-hold.XXXXXX) N=$n REPEATS=$repeats PAR=4 ONLY=hold "$peer/bench.sh" 2>&1 | tee /dev/stderr)
  summary=$(grep '^SUMMARY' <<<"$slurm_out" | tail -1)
  slurm_serial=$(grep -o 'hold_submit_serial_per_s=[0-9.]*' <<<"$summary" | cut -d= -f2)
  slurm_par4=$(grep -o 'hold_submit_par4_per_s=[0-9.]*' <<<"$summary" | cut -d= -f2)
fi

echo
echo "| clients | Corral (SQLite) acknowledged/s | p50 ms | p99 ms | Slurm sbatch -H /s | Corral ÷ Slurm |"
echo "| --- | --- | --- | --- | --- | --- |"
row() {  # clients slurm_figure
  local ratio="-"
  [[ -n "$2" ]] && ratio=$(awk -v a="${rate[$1]}" -v b="$2" 'BEGIN{printf "%.1f×", a/b}')
  echo "| $1 | ${rate[$1]} | ${p50[$1]} | ${p99[$1]} | ${2:--} | $ratio |"
}
row 1 "$slurm_serial"
row 4 "$slurm_par4"
row 16 ""
[[ -n "$slurm_par4" ]] && awk -v a="${rate[16]}" -v b="$slurm_par4" \
  'BEGIN{printf "Corral at 16 clients ÷ Slurm at 4 clients (its best here): %.1f×\n", a/b}'
echo "(medians of $repeats runs each; Corral ${seconds} s per run; Slurm N=$n per client mode)"
