#!/usr/bin/env bash
# corral-sim's scale goal: 100,000 synthetic jobs on the 10,000-GPU example fleet, one
# policy, sched::check() off, 60-s cycles. Runs it REPEAT times and prints each run's CPU
# (user+sys) and wall time, then the medians. Use the release build.
# Usage: bench/run_sim_scale.sh [SIM] [REPEAT] [POLICY]
set -euo pipefail
SIM=${1:-build/release/src/sim/corral-sim}
REPEAT=${2:-3}
POLICY=${3:-corral}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for i in $(seq "$REPEAT"); do
  /usr/bin/time -f "%U %S %e %M" -o "$OUT/time.$i" "$SIM" \
    --fleet examples/fleets/fleet-10k.yaml --workload examples/workloads/synthetic-100k.yaml \
    --workload-format synthetic --policy "$POLICY" --check-every 0 --cycle-interval-s 60 \
    --quiet --out "$OUT/run.$i"
  read -r u s e m < "$OUT/time.$i"
  cycles=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['policies'][sys.argv[2]]['cycles'])" "$OUT/run.$i/summary.json" "$POLICY")
  echo "run $i: cpu=$(python3 -c "print(round($u+$s,1))") s (user $u, sys $s) wall=$e s rss=$((m/1024)) MiB cycles=$cycles"
  echo "$(python3 -c "print($u+$s)") $e" >> "$OUT/all"
done
python3 - "$OUT/all" <<'PY'
import statistics, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
print(f"median of {len(rows)}: cpu={statistics.median(r[0] for r in rows):.1f} s "
      f"wall={statistics.median(r[1] for r in rows):.1f} s")
PY
