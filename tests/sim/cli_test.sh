#!/usr/bin/env bash
# corral-sim end to end: the built binary on example fleets and workloads, its three
# output files, its errors, `corral-sim replay` on a captured cycle, and report.html
# rendered in headless Chromium.
# Usage: cli_test.sh CORRAL_SIM SOURCE_DIR CASE
# The traces come from the shared folder: $CORRAL_SHARED, else SOURCE_DIR/../shared.
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
    trace=${CORRAL_SHARED:-$src/../shared}/traces/philly-pollux/normalized.csv
    [[ -f "$trace" ]] || exit 77  # skipped: no traces
    "$sim" --fleet "$src/examples/fleets/pollux-64.yaml" \
      --workload "$trace" --max-jobs 500 \
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
  replay)
    # The sample capture (tests/cycle/testdata) holds no decisions: replay it, put the
    # replay in as the captured decisions, and --check must find it identical; with one
    # byte of the decisions changed it must name that file and the byte.
    sample="$src/tests/cycle/testdata/sample.json"
    "$sim" replay "$sample" >"$work/d1"
    [[ $(wc -l <"$work/d1") == 1 ]] || fail "want one line of decisions, got $(cat "$work/d1")"
    grep -q '"preemptions":\[{"victim":' "$work/d1" || fail "no preemption: $(cat "$work/d1")"
    python3 - "$sample" "$work/d1" "$work" <<'PY'
import json, sys
cycle = json.load(open(sys.argv[1]))
work = sys.argv[3]
decisions = open(sys.argv[2]).read().rstrip("\n")
cycle["decisions"] = decisions
json.dump(cycle, open(work + "/captured.json", "w"))
at = decisions.index('"queue"') + 2
cycle["decisions"] = decisions[:at] + "v" + decisions[at + 1:]
json.dump(cycle, open(work + "/altered.json", "w"))
open(work + "/offset", "w").write(str(at))
cycle["input"]["running"][0]["gpus"][0]["index"] = "x"
json.dump(cycle, open(work + "/bad.json", "w"))
PY
    "$sim" replay --check "$work/captured.json" >/dev/null 2>"$work/err" ||
      fail "identical replay not accepted: $(cat "$work/err")"
    grep -q "1 of 1 files identical" "$work/err" || fail "check summary: $(cat "$work/err")"
    set +e
    "$sim" replay --check "$work/captured.json" "$work/altered.json" >"$work/two" 2>"$work/err"
    rc=$?
    set -e
    [[ $rc == 1 ]] || fail "altered decisions: exit $rc, want 1"
    grep -q "altered.json: differs from the captured decisions at byte $(cat "$work/offset")$" \
      "$work/err" || fail "difference not named: $(cat "$work/err")"
    grep -q "captured.json: differs" "$work/err" && fail "the identical file was named"
    [[ $(wc -l <"$work/two") == 2 ]] || fail "want one line of decisions per file"
    # Without decisions in the file there is nothing to check against.
    if "$sim" replay --check "$sample" >/dev/null 2>"$work/err"; then
      fail "a file without decisions passed --check"
    fi
    grep -q "holds no captured decisions" "$work/err" || fail "no-decisions: $(cat "$work/err")"
    # --config applies its scheduler: section over the captured config.
    printf 'scheduler:\n  preemptionEnabled: false\n' >"$work/nopreempt.yaml"
    "$sim" replay --config "$work/nopreempt.yaml" "$work/captured.json" >"$work/d2"
    grep -q '"preemptions":\[\]' "$work/d2" || fail "--config not applied: $(cat "$work/d2")"
    # Errors: usage 2; a bad file or config 1, naming the field.
    set +e
    "$sim" replay --check --config "$work/nopreempt.yaml" "$work/captured.json" 2>/dev/null
    rc_usage=$?
    "$sim" replay 2>/dev/null
    rc_nofile=$?
    "$sim" replay "$work/bad.json" >/dev/null 2>"$work/err_bad"
    rc_bad=$?
    printf 'scheduler:\n  graceMs: -1\n' >"$work/badknob.yaml"
    "$sim" replay --config "$work/badknob.yaml" "$work/captured.json" >/dev/null 2>"$work/err_knob"
    rc_knob=$?
    "$sim" replay "$work/missing.json" >/dev/null 2>/dev/null
    rc_missing=$?
    set -e
    [[ $rc_usage == 2 ]] || fail "--check with --config: exit $rc_usage, want 2"
    [[ $rc_nofile == 2 ]] || fail "no file: exit $rc_nofile, want 2"
    [[ $rc_bad == 1 ]] || fail "bad file: exit $rc_bad, want 1"
    grep -q 'input.running\[0\].gpus\[0\].index: must be an integer' "$work/err_bad" ||
      fail "bad field not named: $(cat "$work/err_bad")"
    [[ $rc_knob == 1 ]] || fail "bad --config: exit $rc_knob, want 1"
    grep -q 'scheduler.graceMs: must be between 0 and 86400000, got -1' "$work/err_knob" ||
      fail "bad knob not named: $(cat "$work/err_knob")"
    [[ $rc_missing == 1 ]] || fail "missing file: exit $rc_missing, want 1"
    # The simulator's own command line is unchanged beside the subcommand.
    run_small
    ;;
  report_renders)
    run_small
    dom=$(render "$work/out/report.html")
    for id in plot-utilization plot-queue plot-jct-cdf plot-tenant-share plot-frontier; do
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
