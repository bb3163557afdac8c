#!/usr/bin/env bash
# The corral commands that talk to corrald, against a real corrald on loopback (SQLite).
# Usage: remote_test.sh CORRAL_BINARY CORRALD_BINARY SOURCE_DIR
set -euo pipefail
corral=$1
corrald=$2
src=$3
source "$(dirname "$0")/corrald_harness.sh"

start_corrald
[[ $(stat -c %a "$dir/data/admin.token") == 600 ]] || fail "admin.token is not mode 0600"
# Server and token from the environment (start_corrald); flags and the config file are
# tried below.

cat >"$dir/job.yaml" <<'YAML'
name: cli-job
resources:
  gpus: 2
command: [python, train.py]
secretEnv:
  API_KEY: do-not-print
YAML

run submit -f "$dir/job.yaml"
[[ $rc -eq 0 ]] || fail "submit exited $rc"
grep -q "job 1 submitted" "$dir/out" || fail "submit printed $(cat "$dir/out")"
run submit -f "$dir/job.yaml" --idempotency-key same -o json
run submit -f "$dir/job.yaml" --idempotency-key same -o json
grep -q '"id": 2' "$dir/out" || fail "a retried key made a new job: $(cat "$dir/out")"

# A spec with two mistakes: corrald answers both (error.details), one line each.
cat >"$dir/bad.yaml" <<'YAML'
name: bad-job
resources:
  gpus: 0
command: []
YAML
run submit -f "$dir/bad.yaml"
[[ $rc -eq 1 ]] || fail "a bad spec exited $rc"
[[ $(wc -l <"$dir/err") -eq 2 ]] || fail "expected one line per error"
grep -q '^corral submit: 400 invalid_argument: resources.gpus: [^;]*$' "$dir/err" ||
  fail "no line for resources.gpus"
grep -q '^corral submit: 400 invalid_argument: command: must not be empty$' "$dir/err" ||
  fail "no line for command"

run jobs -o json
[[ $rc -eq 0 ]] || fail "jobs exited $rc"
[[ $(grep -c '"id"' "$dir/out") -eq 2 ]] || fail "expected two jobs: $(cat "$dir/out")"
grep -q do-not-print "$dir/out" && fail "a secret was printed"
# Lists come in pages (nextCursor); the CLI fetches every one.
run jobs -o json --chunk-size 1
[[ $(grep -c '"id"' "$dir/out") -eq 2 ]] || fail "one job a page: expected both: $(cat "$dir/out")"
run job 1
grep -q "^state: " "$dir/out" || fail "job printed $(cat "$dir/out")"
run job 1 -o json
grep -q '"events"' "$dir/out" || fail "job -o json has no events"
run queue
grep -q cli-job "$dir/out" || fail "queue printed $(cat "$dir/out")"
run nodes -o json
[[ $rc -eq 0 ]] || fail "nodes exited $rc"
run tenants
grep -q default "$dir/out" || fail "tenants printed $(cat "$dir/out")"
run reservations -o json
[[ $rc -eq 0 ]] || fail "reservations exited $rc"
run cordon no-such-node --reason "cli test"
[[ $rc -eq 1 ]] || fail "cordon of a missing node exited $rc"
grep -q not_found "$dir/err" || fail "cordon error: $(cat "$dir/err")"
run cancel 1 --reason "cli test"
grep -q "job 1 cancelled" "$dir/out" || fail "cancel printed $(cat "$dir/out")"
run cancel 1
[[ $rc -eq 1 ]] || fail "cancelling twice exited $rc"
run audit
grep -q job.cancel "$dir/out" || fail "audit printed $(cat "$dir/out")"
run audit verify
[[ $rc -eq 0 ]] || fail "audit verify exited $rc on an intact log"
grep -q intact "$dir/out" || fail "audit verify printed $(cat "$dir/out")"

# A bad token is refused (exit 1); no server at all is exit 2.
CORRAL_TOKEN=wrong run jobs
[[ $rc -eq 1 ]] || fail "a bad token exited $rc"
run jobs --server http://127.0.0.1:1
[[ $rc -eq 2 ]] || fail "an unreachable server exited $rc"

# The config file is the last place looked.
mkdir -p "$dir/xdg/corral"
printf 'server: %s\ntoken: %s\n' "$CORRAL_SERVER" "$CORRAL_TOKEN" >"$dir/xdg/corral/config.yaml"
rc=0
env -u CORRAL_SERVER -u CORRAL_TOKEN XDG_CONFIG_HOME="$dir/xdg" "$corral" jobs >"$dir/out" 2>"$dir/err" || rc=$?
[[ $rc -eq 0 ]] || fail "config file: jobs exited $rc"

# Tampering with the audit log shows.
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=""
python3 - "$dir/data/corral.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE audit_log SET actor = 'mallory' WHERE seq = 2")
db.commit()
PY
rm -f "$dir/data/corrald.addr"
"$corrald" --data-dir "$dir/data" --listen 127.0.0.1:0 >>"$dir/corrald.log" 2>&1 &
pid=$!
for _ in $(seq 300); do [[ -s "$dir/data/corrald.addr" ]] && break; sleep 0.05; done
export CORRAL_SERVER="http://$(cat "$dir/data/corrald.addr")"
run audit verify
[[ $rc -eq 1 ]] || fail "audit verify exited $rc on a tampered log"
grep -q "TAMPERED at entry 2" "$dir/out" || fail "audit verify printed $(cat "$dir/out")"
echo "ok"
