#!/usr/bin/env bash
# README's first command: installs what is missing, builds the release preset, and runs
# Corral's main job on its embedded default: a local cluster of corrald on a SQLite file
# in out/corral-data plus four corral-agents with simulated 8-GPU DGX H100 nodes (two
# leaf switches), all on loopback. It submits the jobs in examples/local/ (they run the
# sample trainer, examples/trainer, as real processes), shows them placed, running,
# preempted through a checkpoint and finished, and keeps the cluster running (Ctrl-C
# stops it); CORRAL_RUN_ONCE=1 stops it after the demo.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release

port=${CORRAL_PORT:-8470}
data=${CORRAL_DATA_DIR:-$PWD/out/corral-data}
# The demo starts from an empty store each time, so its story (job ids, who preempts
# whom) is the same on every run; a store left by an older run (older examples, jobs on
# nodes registered without agents) would tell another. CORRAL_DATA_DIR keeps one.
[[ -z "${CORRAL_DATA_DIR:-}" ]] && rm -rf "$data"
mkdir -p "$data"
bin=build/release/src
pids=()
# Stopping the local cluster stops its workers too (an agent alone leaves them running
# on purpose, so that a restarted agent adopts them).
stop_cluster() {
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
  for f in "$data"/agent-dgx*/clusters/*/run/*.pid; do
    [[ -f "$f" ]] || continue
    worker=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("workerPid", 0))' "$f")
    [[ "$worker" -gt 0 ]] && kill -KILL -- "-$worker" 2>/dev/null || true
  done
}
trap stop_cluster EXIT
# Every scheduling cycle of the demo is captured (data/cycles, at most 64 MiB), so that
# corral-sim can replay them at the end.
"$bin/server/corrald" --data-dir "$data" --listen "127.0.0.1:$port" \
  --config examples/config/local.yaml --capture-every 1 --capture-max-mb 64 &
pids+=($!)

export CORRAL_SERVER="http://127.0.0.1:$port"
for _ in $(seq 100); do
  curl -sf "$CORRAL_SERVER/healthz" >/dev/null && break
  sleep 0.1
done
export CORRAL_TOKEN=$(cat "$data/admin.token")
corral=("$bin/cli/corral")

echo "== starting 4 agents with simulated DGX H100 nodes (8 GPUs each, 2 leaf switches)"
# Workers find corral-trainer on PATH; each agent keeps its logs in its state dir.
export PATH="$PWD/build/release/examples/trainer:$PATH"
for n in 1 2 3 4; do
  leaf=leaf$(((n + 1) / 2))
  "$bin/agent/corral-agent" --server "$CORRAL_SERVER" --join-token-file "$data/join.token" \
    --node "dgx$n" --simulate dgx-h100 --labels "leaf=$leaf,spine=spine1,rack=rack$n" \
    --state-dir "$data/agent-dgx$n" --telemetry-interval 1 --telemetry-flush 2 \
    >>"$data/agent-dgx$n.log" 2>&1 &
  pids+=($!)
done
for _ in $(seq 100); do
  [[ $("${corral[@]}" nodes -o json | python3 -c 'import json,sys; print(sum(1 for n in json.load(sys.stdin)["nodes"] if "heartbeatAtMs" in n))') == 4 ]] && break
  sleep 0.1
done
"${corral[@]}" nodes

echo
echo "== submitting examples/local/*.yaml (the sample trainer as real processes)"
submit() {  # prints the new job's id
  "${corral[@]}" submit -f "$1" -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'
}
gang=$(submit examples/local/gang-16-pretrain.yaml)
submit examples/local/finetune-1gpu.yaml >/dev/null
# A dataset version that passed its checks, and a fine-tune on it (docs/runs.md).
"${corral[@]}" dataset register webtext -f examples/local/dataset-webtext.yaml >/dev/null
finetune=$(submit examples/local/finetune-webtext.yaml)
submit examples/local/eval-8gpu.yaml >/dev/null
sleep 3
"${corral[@]}" jobs

echo
echo "== a production job that needs 16 GPUs now: running jobs checkpoint and yield (preemption),"
echo "   the yielding ones resume later from their checkpoints"
urgent=$(submit examples/local/urgent-production.yaml)
sleep 8
"${corral[@]}" jobs
echo
echo "== a tenant's priority classes (docs/config.md): interns may run standard and preemptible"
echo "   work only, so their production submission is refused with the reason"
"${corral[@]}" tenant set interns -f - <<<'{"priorityClasses": {"standard": {}, "preemptible": {}}}'
printf 'name: sneaky\ntenant: interns\npriorityClass: production\nresources: {gpus: 1}\ncommand: [corral-trainer]\n' |
  "${corral[@]}" submit -f - || true
echo
echo "== a job array and a dependency (docs/jobspec.md): six evaluation shards, at most two at"
echo "   once, and a report that waits for every shard to succeed"
shards=$(submit examples/local/eval-array.yaml)
report=$(submit examples/local/report-after-evals.yaml)
sleep 1
"${corral[@]}" job "$report" | sed -n '1,5p'
for _ in $(seq 120); do
  [[ $("${corral[@]}" job "$report" -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["phase"])') == succeeded ]] && break
  sleep 0.5
done
"${corral[@]}" jobs --tenant research -A
"${corral[@]}" job "$shards" | sed -n '/^array /,$p'
"${corral[@]}" job "$report" | sed -n '/^events:/,$p'
echo
echo "== a sweep (docs/jobspec.md#sweep): nine trials over the trainer's learning rate, three at"
echo "   once; ASHA stops the trials below the cut at steps 40 and 120, the best runs to the end"
sweep=$(submit examples/local/sweep-lr.yaml)
for _ in $(seq 240); do
  "${corral[@]}" sweep "$sweep" -o json | python3 -c '
import json, sys
s = json.load(sys.stdin)
ended = sum(n for p, n in s["phases"].items() if p in ("succeeded", "failed", "cancelled"))
sys.exit(0 if ended == s["trials"] else 1)' && break
  sleep 0.5
done
"${corral[@]}" sweep "$sweep"
echo
echo "== shares of a GPU (docs/jobspec.md): a quarter of an H100 for vision and a half for nlp,"
echo "   placed against fragmentation beside other shares, each worker held to its part by MPS"
quarter=$(submit examples/local/probe-quarter.yaml)
half=$(submit examples/local/eval-half.yaml)
for job in "$quarter" "$half"; do
  for _ in $(seq 60); do
    "${corral[@]}" logs "$job" --rank 0 2>/dev/null | grep -q '^share=' && break
    sleep 0.5
  done
  "${corral[@]}" job "$job" | grep -E '^(job |placed:)'
  "${corral[@]}" logs "$job" --rank 0 | grep '^share='
done
echo
echo "== queue (pending jobs, their position and reason)"
"${corral[@]}" queue
echo
echo "== the preemptible gang (job $gang): its events"
"${corral[@]}" job "$gang" | tail -n 12
echo
echo "== rank 0's log of the production job"
"${corral[@]}" logs "$urgent" --rank 0 | tail -n 5
echo
echo "== training runs (docs/runs.md): the fine-tune on webtext@v1 with its manifest, its loss"
echo "   at every step and the model it wrote"
for _ in $(seq 100); do
  "${corral[@]}" run get "$finetune" -o json | grep -q '"kind": "artifact"' && break
  sleep 0.2
done
"${corral[@]}" runs --dataset webtext@v1
echo
"${corral[@]}" run get "$finetune"
echo
echo "== the model registry (docs/models.md): the fine-tune's model as version v1 of webtext-ft,"
echo "   promoted to staging; production is gated on its eval/weight_error"
model=$("${corral[@]}" run get "$finetune" -o json | python3 -c '
import json, sys
run = json.load(sys.stdin)
a = next(a for a in run["artifacts"] if a["kind"] == "artifact")
print(json.dumps({"version": "v1", "run": run["id"], "artifactUri": a["uri"], "digest": a["digest"],
                  "gates": {"metrics": [{"metric": "eval/weight_error", "max": 0.01}]}}))')
curl -sf -H "Authorization: Bearer $CORRAL_TOKEN" -H 'Content-Type: application/json' \
  -d "$model" "$CORRAL_SERVER/v1/models/webtext-ft/versions" >/dev/null
"${corral[@]}" model promote webtext-ft staging v1 --reason "demo fine-tune"
"${corral[@]}" model promote webtext-ft production v1 --reason "its gate decides"
"${corral[@]}" model get webtext-ft
echo
echo "== drift (docs/drift.md): served traffic drifts from the reference of webtext-ft and of a"
echo "   second model from the same artifact; each submits its retraining template, and tenant"
echo "   nlp's retraining budget (1 GPU at once) holds the second back"
curl -sf -H "Authorization: Bearer $CORRAL_TOKEN" -H 'Content-Type: application/json' \
  -d "$(python3 -c 'import json,sys; m = json.loads(sys.argv[1]); m.pop("gates"); print(json.dumps(m))' "$model")" \
  "$CORRAL_SERVER/v1/models/webtext-ranker/versions" >/dev/null
"${corral[@]}" drift retraining webtext-ft -f examples/local/retrain-webtext.yaml
"${corral[@]}" drift retraining webtext-ranker -f examples/local/retrain-ranker.yaml
python3 -c 'import json; print(json.dumps({"features": {"prompt_tokens": [(i * 7919) % 1000 / 100 for i in range(200)]}}))' >"$data/drift-reference.json"
shifted=$(python3 -c 'import json; print(json.dumps({"segment": "eu", "features": {"prompt_tokens": [(i * 104729) % 997 / 90 + 1.5 for i in range(150)]}}))')
for m in webtext-ft webtext-ranker; do
  "${corral[@]}" drift reference "$m" v1 -f "$data/drift-reference.json"
  curl -sf -H "Authorization: Bearer $CORRAL_TOKEN" -H 'Content-Type: application/json' \
    -d "$shifted" "$CORRAL_SERVER/v1/models/$m/versions/v1/drift" >/dev/null
done
sleep 2
"${corral[@]}" drift reports webtext-ft v1
echo
"${corral[@]}" drift retraining webtext-ranker
"${corral[@]}" jobs | grep -E '^ID|retrain-'
echo
echo "== audit log verification"
"${corral[@]}" audit verify
echo
echo "== every captured scheduling cycle, replayed by corral-sim: the same decisions, byte for byte"
captures=("$data"/cycles/cycle-*.json)
"$bin/sim/corral-sim" replay --check "${captures[@]}" >/dev/null
echo "corral-sim replayed ${#captures[@]} cycles of corrald's to identical decisions ($data/cycles)"

echo
echo "== /metrics, as Prometheus scrapes it with a token of role metrics (docs/metrics.md)"
metrics_token=$(curl -sf -H "Authorization: Bearer $CORRAL_TOKEN" -H 'Content-Type: application/json' \
  -d '{"role":"metrics"}' "$CORRAL_SERVER/v1/tokens" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
curl -sf -H "Authorization: Bearer $metrics_token" "$CORRAL_SERVER/metrics" |
  grep -E '^(corral_tenant_gpus_allocated|corral_tenant_pending_jobs|corral_telemetry_samples_total|DCGM_FI_DEV_GPU_UTIL\{gpu="0",[^}]*Hostname="dgx1")' |
  sed 's/^/  /'

echo
echo "== chargeback: every GPU-second of the cluster so far, by tenant and bucket (the ledger)"
sleep 6  # the last five-second accrual period closes, then its one-second grace
"${corral[@]}" cost

echo
echo "== the dashboard (docs/dashboard.md): what the views read, checked here as the page reads it"
curl -sf "$CORRAL_SERVER/" | grep -q '/ui/app.js' && echo "  $CORRAL_SERVER/ serves the page"
curl -sf -H "Authorization: Bearer $CORRAL_TOKEN" "$CORRAL_SERVER/v1/fleet" | python3 -c '
import json, sys
nodes = json.load(sys.stdin)["nodes"]
gpus = [g for n in nodes for g in n["gpus"]]
held = sum(1 for g in gpus if g["held"])
print(f"  fleet view: {len(nodes)} nodes, {len(gpus)} GPUs, {held} held")'
curl -sf -H "Authorization: Bearer $CORRAL_TOKEN" "$CORRAL_SERVER/v1/history" | python3 -c '
import json, sys
rows = [r for r in json.load(sys.stdin)["samples"] if r["tenant"] == "*"]
print(f"  over-time view: {len(rows)} usage samples of the cluster so far, one every 5 s")'

cat <<MSG

The dashboard, signed in as the admin (the token stays in the URL fragment, which the
browser never sends):
  $CORRAL_SERVER/#token=$CORRAL_TOKEN

corrald is serving $CORRAL_SERVER with its SQLite store in $data;
four agents run there too (state and worker logs in $data/agent-dgx*).
In another shell:
  export CORRAL_SERVER=$CORRAL_SERVER CORRAL_TOKEN=\$(cat $data/admin.token)
  $bin/cli/corral jobs | queue | nodes | job ID | logs ID --rank N | cancel ID | audit | cost
  $bin/cli/corral datasets | runs | run get ID | runs reproduce ID | models | model get ID | features
  $bin/cli/corral drift reports MODEL VERSION | drift retraining MODEL
MSG
if [[ "${CORRAL_RUN_ONCE:-0}" == "1" ]]; then exit 0; fi
echo "Ctrl-C stops it."
wait "${pids[0]}"
