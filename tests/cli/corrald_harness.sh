# Sourced by the CLI's shell tests: a scratch dir, a real corrald on loopback (SQLite)
# started by start_corrald and stopped on exit, and run/fail helpers. The sourcing script
# sets $corral and $corrald first, and $case to name itself in failures (optional).
dir=$(mktemp -d)
pid=""
cleanup() {
  [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

fail() {
  echo "FAIL${case:+ ($case)}: $*" >&2
  echo "--- stdout" >&2
  cat "$dir/out" >&2 2>/dev/null || true
  echo "--- stderr" >&2
  cat "$dir/err" >&2 2>/dev/null || true
  exit 1
}
# corral ARGS..., stdout to $dir/out, stderr to $dir/err, exit status in $rc.
run() {
  rc=0
  "$corral" "$@" >"$dir/out" 2>"$dir/err" </dev/null || rc=$?
}

# Starts corrald on a free port; CORRAL_SERVER and CORRAL_TOKEN then point at it.
start_corrald() {
  "$corrald" --data-dir "$dir/data" --listen 127.0.0.1:0 >"$dir/corrald.log" 2>&1 &
  pid=$!
  for _ in $(seq 300); do [[ -s "$dir/data/corrald.addr" ]] && break; sleep 0.05; done
  [[ -s "$dir/data/corrald.addr" ]] || fail "corrald did not start: $(cat "$dir/corrald.log")"
  export CORRAL_SERVER="http://$(cat "$dir/data/corrald.addr")"
  export CORRAL_TOKEN="$(cat "$dir/data/admin.token")"
}
