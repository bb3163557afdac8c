# Shared by the bench/*.sh scripts: build the release corrald and submit_load, start a
# corrald in a fresh data dir, stop it. Source it from the repo root.
build=build/release

build_release() {
  cmake --preset release -DCORRAL_BUILD_BENCH=ON >/dev/null
  cmake --build --preset release -j2 --target corrald submit_load >/dev/null
}

# start_corrald CONFIG_YAML [STORE_URL]: sets corrald_dir, corrald_pid, corrald_addr,
# corrald_token.
start_corrald() {
  corrald_dir=$(mktemp -d /tmp/corral-bench.XXXXXX)
  printf '%s\n' "$1" >"$corrald_dir/config.yaml"
  local args=(--data-dir "$corrald_dir" --listen 127.0.0.1:0 --http-threads 32
    --config "$corrald_dir/config.yaml")
  [[ -n "${2:-}" ]] && args+=(--store "$2")
  "$build/src/server/corrald" "${args[@]}" >"$corrald_dir/log" 2>&1 &
  corrald_pid=$!
  for _ in $(seq 100); do [[ -s "$corrald_dir/corrald.addr" ]] && break; sleep 0.1; done
  [[ -s "$corrald_dir/corrald.addr" ]] || { cat "$corrald_dir/log" >&2; return 1; }
  corrald_addr=$(cat "$corrald_dir/corrald.addr")
  corrald_token=$(cat "$corrald_dir/admin.token")
}

stop_corrald() {
  kill "$corrald_pid"
  wait "$corrald_pid" || true
  rm -rf "$corrald_dir"
}

# A generous admission limit: these benchmarks measure the store, not the rate limiter.
unlimited_config='tenants:
  default: {submitRatePerSecond: 1000000, submitBurst: 1000000, maxPendingJobs: 10000000}'

# json_field JSON_LINE NAME: one numeric field of submit_load's output.
json_field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

# median of the arguments
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
