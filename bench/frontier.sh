#!/usr/bin/env bash
# The fairness frontier (docs/evaluation.md, "Fairness frontier"): Corral's default at each
# value of its `fairness` knob, beside FIFO and Tiresias, on the traces with several
# tenants; per trace, mean JCT against Jain's index. Each run's report.html draws the
# frontier (plot "Fairness frontier"); this prints the table.
# Usage: bench/frontier.sh [SIM] [OUT]   (run from the repository root)
set -euo pipefail
SIM=${1:-build/release/src/sim/corral-sim}
OUT=${2:-out/frontier}
T=${CORRAL_SHARED:-../shared}/traces
A=$T/philly-pollux/anchors
SWEEP=0,0.25,0.5,0.75,1
run() {  # name fleet workload format [flags...]
  local name=$1 fleet=$2 workload=$3 format=$4
  shift 4
  "$SIM" --fleet "$fleet" --workload "$workload" --workload-format "$format" --policy fifo \
    --policy tiresias --sweep-fairness "$SWEEP" --no-failures --check-every 100 --quiet "$@" \
    --out "$OUT/$name"
}
run skewed-overload examples/fleets/skewed-128.yaml examples/workloads/skewed-overload.yaml synthetic &
run skewed-moderate examples/fleets/skewed-128.yaml examples/workloads/skewed-moderate.yaml synthetic
wait
run philly-64 examples/fleets/philly-64-shared.yaml "$A/philly_octnov_11vc_f0.125_seed42.csv" normalized &
run gavel-500 examples/fleets/gavel-500.yaml "$T/philly-gavel-msr/normalized_seed0_v100.csv" normalized --max-jobs 5000
wait
python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
print("| trace | policy | mean JCT | Jain |")
print("| --- | --- | ---: | ---: |")
for name in sorted(os.listdir(out)):
    policies = json.load(open(os.path.join(out, name, "summary.json")))["policies"]
    for p in sorted(policies, key=lambda p: (not p.startswith("corral"), p)):
        m = policies[p]
        print(f"| {name} | {p} | {m['mean_jct_s'] / 3600:.2f} h | {m['jain_index']:.3f} |")
PY
