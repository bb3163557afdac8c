#!/usr/bin/env bash
# 10,000 GPUs end to end on one machine (docs/performance.md#10000-gpus-end-to-end):
# for each fleet size N, a fresh release corrald (SQLite, or PostgreSQL with
# CORRAL_FLEET_STORE=postgres under scripts/with_postgres.sh), N emulated 8-GPU DGX H100
# nodes in one `corral-agent --emulate N` process, and bench/fleet_load.py submitting
# jobs at RATE a second for SECONDS, then a burst of BURST (both for 1,250 nodes, scaled
# to N: the same load per GPU at every size). Beside them, 4 real
# `corral-agent --simulate dgx-h100` processes, so the emulator's cost per node can be
# read against a real agent's in the same run.
#
#   bench/fleet_scale.sh OUT [NODES...]      (default NODES: 250 625 1250 2500)
#   FLEET_RATE=100 FLEET_SECONDS=600 FLEET_BURST=20000 FLEET_RUNTIME=60 bench/fleet_scale.sh out/fleet
#   FLEET_FILE=examples/fleets/fleet-10k.yaml bench/fleet_scale.sh out/fleet 1358
#
# FLEET_FILE: the emulated nodes are the first N nodes of that simulator fleet file
# (`--emulate N --fleet FILE`, docs/agent.md#the-fleet-emulator) instead of DGX H100s;
# N at most its node count. The load still scales with N as if each node had 8 GPUs.
# FLEET_EMULATE_THREADS: the emulator's heartbeat senders (`--emulate-threads`).
#
# Writes OUT/N/{corrald,emulator,load}.* and one line per N to OUT/fleet_scale.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/fleet_scale.sh OUT [NODES...]}
shift
nodes_list=("${@:-250 625 1250 2500}")
read -r -a nodes_list <<<"${nodes_list[*]}"
rate=${FLEET_RATE:-100}
seconds=${FLEET_SECONDS:-120}
burst=${FLEET_BURST:-2000}
runtime=${FLEET_RUNTIME:-60}
http_threads=${FLEET_HTTP_THREADS:-}
build=build/release
cmake --build "$build" -j2 --target corrald corral-agent corral-supervise >/dev/null
mkdir -p "$out"

node_states() {  # STATE: how many nodes are in it (every page of /v1/nodes)
  curl -s -H "Authorization: Bearer $2" "http://$1/v1/nodes?limit=10000" |
    python3 -c 'import json,sys; print(sum(1 for n in json.load(sys.stdin)["nodes"] if n.get("state")==sys.argv[1]))' "$3"
}
cpu_seconds() {  # utime + stime of a pid, in seconds
  awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"
}
cpu_now() {  # CORRALD EMULATOR REAL...: their CPU seconds, the real agents' summed
  local sum=0 p
  for p in "${@:3}"; do sum=$(echo "$sum + $(cpu_seconds "$p")" | bc -l); done
  echo "$(cpu_seconds "$1") $(cpu_seconds "$2") $sum"
}
peak_rss_mib() {
  awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$1/status"
}

run_one() {
  local n=$1 dir="$out/$1"
  rm -rf "$dir" && mkdir -p "$dir"
  local data="$dir/data"
  mkdir -p "$data"
  printf 'tenants:\n  default: {submitRatePerSecond: 100000, submitBurst: 100000, maxPendingJobs: 1000000}\n' >"$dir/config.yaml"
  local args=(--data-dir "$data" --listen 127.0.0.1:0 --config "$dir/config.yaml")
  [[ -n "$http_threads" ]] && args+=(--http-threads "$http_threads")
  [[ "${CORRAL_FLEET_STORE:-sqlite}" == postgres ]] && args+=(--store "$CORRAL_TEST_POSTGRES_URL")
  "$build/src/server/corrald" "${args[@]}" >"$dir/corrald.log" 2>&1 &
  local corrald=$!
  for _ in $(seq 300); do [[ -s "$data/corrald.addr" ]] && break; sleep 0.1; done
  local addr token
  addr=$(cat "$data/corrald.addr")
  token=$(cat "$data/admin.token")
  local shape=(--simulate dgx-h100)
  [[ -n "${FLEET_FILE:-}" ]] && shape=(--fleet "$FLEET_FILE")
  [[ -n "${FLEET_EMULATE_THREADS:-}" ]] && shape+=(--emulate-threads "$FLEET_EMULATE_THREADS")
  "$build/src/agent/corral-agent" --server "http://$addr" --join-token-file "$data/join.token" \
    --node e --emulate "$n" "${shape[@]}" --state-dir "$dir/emulator" \
    >"$dir/emulator.log" 2>&1 &
  local emulator=$!
  local real=()
  for i in 1 2 3 4; do
    "$build/src/agent/corral-agent" --server "http://$addr" --join-token-file "$data/join.token" \
      --node "real$i" --simulate dgx-h100 --state-dir "$dir/real$i" >"$dir/real$i.log" 2>&1 &
    real+=($!)
  done
  # Every node active before the load starts.
  local joined=0 t0=$SECONDS
  while ((SECONDS - t0 < 300)); do
    joined=$(node_states "$addr" "$token" active)
    ((joined >= n + 4)) && break
    sleep 2
  done
  local join_s=$((SECONDS - t0))
  local c0 e0 r0
  read -r c0 e0 r0 < <(cpu_now "$corrald" "$emulator" "${real[@]}")
  local w0=$SECONDS
  # The same load per GPU at every size: RATE and BURST are for 1,250 nodes.
  python3 bench/fleet_load.py --server "$addr" --token "$token" \
    --rate "$(echo "$rate * $n / 1250" | bc -l)" --seconds "$seconds" \
    --burst $((burst * n / 1250)) --runtime-mean "$runtime" >"$dir/load.json"
  local wall=$((SECONDS - w0))
  local c1 e1 r1
  read -r c1 e1 r1 < <(cpu_now "$corrald" "$emulator" "${real[@]}")
  local lost
  lost=$(node_states "$addr" "$token" lost)
  local rss ersn rrss store_kib
  rss=$(peak_rss_mib "$corrald")
  ersn=$(peak_rss_mib "$emulator")
  rrss=0
  for p in "${real[@]}"; do rrss=$((rrss + $(peak_rss_mib "$p"))); done
  kill "${real[@]}" "$emulator" 2>/dev/null || true
  wait "${real[@]}" "$emulator" 2>/dev/null || true
  kill "$corrald"
  wait "$corrald" || true
  # The database once corrald checkpointed its WAL on the way out (PostgreSQL: not known).
  store_kib=$(( $(stat -c %s "$data/corral.db" 2>/dev/null || echo 0) / 1024 ))
  python3 - "$n" "$dir" "$wall" "$join_s" "$c0" "$c1" "$e0" "$e1" "$r0" "$r1" "$rss" "$ersn" "$rrss" "$store_kib" "$lost" >>"$out/fleet_scale.md" <<'PY'
import json, re, sys
n, d, wall, join_s = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4]
c0, c1, e0, e1, r0, r1 = map(float, sys.argv[5:11])
rss, ersn, rrss, store_kib, lost = map(int, sys.argv[11:16])
load = json.load(open(d + "/load.json"))
gaps, rtt99 = [0], [0]
for line in open(d + "/emulator.log"):
    m = re.search(r"round trip p50 (\d+) ms, p99 (\d+) ms, longest gap between answers (\d+) ms", line)
    if m:
        rtt99.append(int(m.group(2))); gaps.append(int(m.group(3)))
lat = load["latency_ms"]
ph = load["cycle_phases"]
cyc = lambda p, k: ph[p][k]
print("| %d | %s s | %s/s | %s / %s ms | %s / %s ms | %s/s | read %s/%s, build %s/%s, decide %s/%s, apply %s/%s ms | %d ms / %d ms | %d | %.0f%% | %d MiB | %.2f%% CPU, %.0f KiB | %.2f%% CPU, %.0f KiB | %.0f MiB/h |" % (
    n, join_s, load["arrivals_per_second"],
    lat["steady 1"]["p50"], lat["steady 1"]["p99"], lat["steady 64+"]["p50"], lat["steady 64+"]["p99"],
    load["placements_per_second"],
    cyc("read", "p50_ms"), cyc("read", "p99_ms"), cyc("build", "p50_ms"), cyc("build", "p99_ms"),
    cyc("decide", "p50_ms"), cyc("decide", "p99_ms"), cyc("apply", "p50_ms"), cyc("apply", "p99_ms"),
    max(rtt99), max(gaps), lost, 100 * (c1 - c0) / wall, rss,
    100 * (e1 - e0) / wall / n, 1024 * ersn / n, 100 * (r1 - r0) / wall / 4, 1024 * rrss / 4,
    store_kib / 1024 * 3600 / max(1.0, wall)))
PY
  echo "N=$n done: $(tail -1 "$out/fleet_scale.md")"
}

if [[ ! -s "$out/fleet_scale.md" ]]; then
  cat >"$out/fleet_scale.md" <<EOF2
| nodes (×8 GPUs) | all joined in | arrivals | steady: 1-GPU submit→running p50 / p99 | steady: 64-512-GPU gangs p50 / p99 | placements | cycle phases p50/p99 | heartbeat round trip p99 / longest silence | healthy nodes lost | corrald CPU | corrald peak RSS | emulator per node | real agent per node | store growth |
| ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
EOF2
fi
for n in "${nodes_list[@]}"; do run_one "$n"; done
