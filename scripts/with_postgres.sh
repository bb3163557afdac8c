#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL server: initdb in a temp dir, listening on
# 127.0.0.1 on a free port with its unix socket in that dir, exported to the command as
# CORRAL_TEST_POSTGRES_URL. The server is stopped and the dir removed on every exit path.
#   scripts/with_postgres.sh ctest --preset asan
set -euo pipefail

pgbin=${CORRAL_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[[ -x "$pgbin/initdb" ]] || { echo "with_postgres: no PostgreSQL binaries (postgresql package)" >&2; exit 1; }

# PostgreSQL refuses to run as root: run it as a dedicated unprivileged user.
run_as=()
if [[ $(id -u) -eq 0 ]]; then
  id corraltest >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin corraltest
  run_as=(runuser -u corraltest --)
fi
user=$(if [[ ${#run_as[@]} -gt 0 ]]; then echo corraltest; else id -un; fi)

dir=$(mktemp -d /tmp/corral-pg.XXXXXX)
chmod 755 "$dir"
[[ ${#run_as[@]} -gt 0 ]] && chown corraltest "$dir"
cleanup() {
  "${run_as[@]}" "$pgbin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM

# A free port: ask the kernel for one, then hand it to postgres.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

"${run_as[@]}" "$pgbin/initdb" -D "$dir/data" -U "$user" --auth=trust -E UTF8 --no-sync >/dev/null
# Throwaway data: fsync off keeps the suite fast (the crash test kills corrald, not the
# machine, so it does not need PostgreSQL's fsync); benchmarks set CORRAL_PG_FSYNC=on.
"${run_as[@]}" "$pgbin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
  -o "-h 127.0.0.1 -p $port -k $dir -c fsync=${CORRAL_PG_FSYNC:-off} -c max_connections=200" start >/dev/null

export CORRAL_TEST_POSTGRES_URL="postgresql://$user@127.0.0.1:$port/postgres"
echo "with_postgres: PostgreSQL at $CORRAL_TEST_POSTGRES_URL"
"$@"
