#!/usr/bin/env bash
# corral-sim end to end: the built binary on example fleets and workloads, its three
# output files, its errors, and report.html rendered in headless Chromium.
# Usage: cli_test.sh CORRAL_SIM SOURCE_DIR CASE
set -euo pipefail
sim=$1
src=$2
case_name=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

run_small() {
  "$sim" --fleet "$src/examples/fleets/small-4node.yaml" \
    --workload "$src/examples/workloads/synthetic-small.yaml" --workload-format synthetic \
    --policy fifo --policy slurm --policy tiresias --policy corral --out "$work/out" --quiet
}

# Renders the page and prints the DOM after its scripts ran.
render() {
  command -v chromium >/dev/null || fail "chromium is not installed (scripts/setup.sh installs it)"
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run \
    --user-data-dir="$work/profile" --dump-dom "file://$1" 2>/dev/null
}

case "$case_name" in
  outputs)
    run_small
    for f in summary.json jobs.csv report.html; do
      [[ -s "$work/out/$f" ]] || fail "$f missing or empty"
    done
    for key in gpu_allocation mean_jct_s median_jct_s p99_jct_s mean_queue_s makespan_s \
      jain_index preemptions lost_gpu_hours; do
      n=$(grep -c "^      \"$key\":" "$work/out/summary.json" || true)  # policy level
      [[ "$n" == 4 ]] || fail "summary.json: $key appears $n times, want once per policy (4)"
    done
    for p in fifo slurm tiresias corral; do
      grep -q "\"$p\": {" "$work/out/summary.json" || fail "no $p entry"
    done
    head -1 "$work/out/jobs.csv" | grep -q '^policy,job_id,tenant,gpus,submit_s,start_s,finish_s' ||
      fail "jobs.csv header"
    rows=$(($(wc -l <"$work/out/jobs.csv") - 1))
    [[ "$rows" == 1200 ]] || fail "jobs.csv has $rows rows, want 300 jobs x 4 policies"
    grep -q 'src="http\|href="http' "$work/out/report.html" && fail "report.html loads from the network"
    ;;
  normalized_trace)
    [[ -f /work/shared/traces/philly-pollux/normalized.csv ]] || exit 77  # skipped: no traces
    "$sim" --fleet "$src/examples/fleets/pollux-64.yaml" \
      --workload /work/shared/traces/philly-pollux/normalized.csv --max-jobs 500 \
      --policy fifo --out "$work/out" --quiet
    rows=$(($(wc -l <"$work/out/jobs.csv") - 1))
    [[ "$rows" == 500 ]] || fail "jobs.csv has $rows rows, want 500"
    ;;
  bad_inputs)
    printf 'pools:\n  - {name: p, gpu_type: H100, nodes: 0, gpus_per_node: 8}\n' >"$work/f.yaml"
    if "$sim" --fleet "$work/f.yaml" --workload x --policy fifo --out "$work/o" 2>"$work/err"; then
      fail "bad fleet accepted"
    fi
    grep -q 'pools\[0\].nodes: .*must be between 1' "$work/err" || fail "fleet error: $(cat "$work/err")"
    printf 'job_id,tenant,submit_time_s,gpus,duration_s,gpu_type,status\na,t,0,1,5,,\nb,t,x,1,5,,\n' \
      >"$work/w.csv"
    if "$sim" --fleet "$src/examples/fleets/pollux-64.yaml" --workload "$work/w.csv" \
      --policy fifo --out "$work/o" 2>"$work/err"; then
      fail "bad workload accepted"
    fi
    grep -q "w.csv:3: column submit_time_s" "$work/err" || fail "csv error: $(cat "$work/err")"
    set +e
    "$sim" --fleet "$src/examples/fleets/pollux-64.yaml" --workload "$work/w.csv" \
      --policy lottery --out "$work/o" 2>"$work/err"
    rc=$?
    set -e
    [[ $rc == 2 ]] || fail "unknown policy: exit $rc, want 2"
    grep -q "unknown policy 'lottery'" "$work/err" || fail "policy error: $(cat "$work/err")"
    # Whole nodes of 8 GPUs on a fleet of 4-GPU nodes could never place a job.
    printf 'job_id,tenant,submit_time_s,gpus,duration_s,gpu_type,status\na,t,0,16,5,,\n' \
      >"$work/ok.csv"
    if "$sim" --fleet "$src/examples/fleets/pollux-64.yaml" --workload "$work/ok.csv" \
      --whole-nodes-above 8 --policy fifo --out "$work/o" 2>"$work/err"; then
      fail "--whole-nodes-above above the largest node accepted"
    fi
    grep -q "whole_nodes_above: must be between 0 and the largest node's GPUs (4), got 8" \
      "$work/err" || fail "whole-nodes error: $(cat "$work/err")"
    ;;
  report_renders)
    run_small
    dom=$(render "$work/out/report.html")
    for id in plot-utilization plot-queue plot-jct-cdf plot-tenant-share; do
      grep -q "id=\"$id\"" <<<"$dom" || fail "plot $id missing from the rendered page"
    done
    grep -q 'id="report-status" data-status="ok"' <<<"$dom" ||
      fail "the page's check did not pass: $(grep -o 'id="report-status"[^<]*' <<<"$dom")"
    ;;
  report_missing_plot_fails)
    # The page's own check must notice a plot that is gone, or the test above proves nothing.
    run_small
    sed '/id="plot-jct-cdf"/d' "$work/out/report.html" >"$work/broken.html"
    dom=$(render "$work/broken.html")
    grep -q 'data-status="error"' <<<"$dom" || fail "a missing plot was not reported"
    grep -q 'missing plot plot-jct-cdf' <<<"$dom" || fail "the error does not name the plot"
    ;;
  *)
    fail "unknown case $case_name"
    ;;
esac
echo "ok: $case_name"
