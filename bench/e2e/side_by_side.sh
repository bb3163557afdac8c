#!/usr/bin/env bash
# Issue #6's end-to-end comparison in one invocation on this machine: the Corral half
# (bench/e2e/corral_side.sh: corrald on SQLite + 8 agents with simulated 8-GPU nodes)
# then the Slurm half (bench/e2e/slurm_side.sh: Slurm 22.05 on 8 fake 8-GPU nodes),
# with the same shapes: 2,000 trivial 1-GPU jobs submit -> done from one client, 50
# 1-GPU jobs and 10 16-GPU gangs submit -> start on an idle cluster. Prints both
# SUMMARY lines and the ratios.
#   bench/e2e/side_by_side.sh            # N=2000
#   N=200 PROFILES=tuned bench/e2e/side_by_side.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${N:-2000}
echo "# $(date -u +%FT%TZ) $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
log=$(mktemp /tmp/side-by-side.XXXXXX)
bench/e2e/corral_side.sh --n "$n" --only "burst api idle gang" >"$log" 2>&1
cat "$log"
corral=$(grep '^SUMMARY corral' "$log")
N=$n bench/e2e/slurm_side.sh >"$log" 2>&1
cat "$log"
slurm=$(grep '^SUMMARY slurm' "$log")
rm -f "$log"
field() { grep -o " $2=[0-9.]*" <<<"$1" | head -1 | cut -d= -f2; }
echo
echo "$corral"
echo "$slurm"
while read -r line; do
  profile=$(grep -o ' profile=[a-z]*' <<<"$line" | cut -d= -f2)
  python3 - "$profile" "$(field "$corral" e2e_api_per_s)" "$(field "$line" e2e_serial_per_s)" \
    "$(field "$corral" idle_lat_p50_ms)" "$(field "$line" idle_lat_p50_ms)" \
    "$(field "$corral" gang16_start_p50_ms)" "$(field "$line" gang16_start_p50_ms)" <<'PY'
import sys
profile = sys.argv[1]
c_tp, s_tp, c_idle, s_idle, c_gang, s_gang = map(float, sys.argv[2:])
print(f"vs Slurm {profile}: throughput (Corral API client, Slurm sbatch) {c_tp:.1f} / {s_tp:.1f} jobs/s = {c_tp / s_tp:.1f}x; "
      f"1-GPU start p50 {c_idle:.0f} / {s_idle:.0f} ms = {s_idle / c_idle:.1f}x faster; "
      f"16-GPU gang start p50 {c_gang:.0f} / {s_gang:.0f} ms = {s_gang / c_gang:.1f}x faster")
PY
done <<<"$slurm"
