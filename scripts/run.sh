#!/usr/bin/env bash
# README's first command: installs what is missing, builds the release preset, and runs
# Corral's main job on its embedded default: corrald on a SQLite file in out/corral-data,
# with four simulated 8-GPU H100 nodes on two leaf switches, the example jobs submitted,
# and the scheduler's answer printed. corrald then keeps running (Ctrl-C stops it);
# CORRAL_RUN_ONCE=1 stops it after the demo.
#
# There is no node agent yet: nodes are registered through the API with simulated GPUs,
# and placed jobs stay in phase `launching` (nothing runs them) until agents land.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release

port=${CORRAL_PORT:-8470}
data=${CORRAL_DATA_DIR:-$PWD/out/corral-data}
mkdir -p "$data"
bin=build/release/src
"$bin/server/corrald" --data-dir "$data" --listen "127.0.0.1:$port" \
  --config examples/config/local.yaml &
corrald=$!
trap 'kill $corrald 2>/dev/null || true' EXIT

export CORRAL_SERVER="http://127.0.0.1:$port"
for _ in $(seq 100); do
  curl -sf "$CORRAL_SERVER/healthz" >/dev/null && break
  sleep 0.1
done
export CORRAL_TOKEN=$(cat "$data/admin.token")
corral=("$bin/cli/corral")

echo "== registering 4 simulated nodes (8x H100 each, 2 leaf switches)"
for n in 1 2 3 4; do
  leaf=leaf$(((n + 1) / 2))
  curl -sf -H "Authorization: Bearer $CORRAL_TOKEN" -H "Idempotency-Key: node-dgx$n" \
    -d "{\"id\":\"dgx$n\",\"gpuType\":\"H100\",\"gpuCount\":8,\"cpus\":128,\"memoryMib\":2097152,\"labels\":{\"leaf\":\"$leaf\",\"spine\":\"spine1\",\"rack\":\"rack$n\"}}" \
    "$CORRAL_SERVER/v1/nodes" >/dev/null
done
"${corral[@]}" nodes

echo
echo "== submitting examples/jobs/*.yaml"
for f in examples/jobs/*.yaml; do
  "${corral[@]}" submit -f "$f" || true
done
sleep 1  # one scheduling cycle

echo
echo "== jobs"
"${corral[@]}" jobs
echo
echo "== queue (pending jobs, their position and reason)"
"${corral[@]}" queue
echo
echo "== audit log verification"
"${corral[@]}" audit verify

cat <<MSG

corrald is serving $CORRAL_SERVER with its SQLite store in $data.
In another shell:
  export CORRAL_SERVER=$CORRAL_SERVER CORRAL_TOKEN=\$(cat $data/admin.token)
  $bin/cli/corral jobs | queue | nodes | job ID | cancel ID | audit
MSG
if [[ "${CORRAL_RUN_ONCE:-0}" == "1" ]]; then exit 0; fi
echo "Ctrl-C stops it."
wait $corrald
