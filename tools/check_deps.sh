#!/usr/bin/env bash
# Enforces the dependency rule of ARCHITECTURE.md at the include level (CMake's link
# lists enforce it at link time): a module may include only the modules it may use, no
# other module's internal/ headers, and src/sched nothing that does I/O, reads a clock,
# starts a thread or draws unseeded randomness.
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A allowed=(
  [core]="core"
  [sched]="core sched"
  [ledger]="core ledger"
  [registry]="core registry"
  [store]="core store"
  [cycle]="core sched cycle"
  [server]="core sched ledger registry store server cycle"
  [agent]="core agent"
  [cli]="core cli"
  [sim]="core sched ledger sim cycle"
)
modules="core sched ledger registry cycle store server agent cli sim"
fail=0

for mod in $modules; do
  [[ -d src/$mod ]] || continue
  while IFS=: read -r file line text; do
    [[ "$text" =~ \#include\ \"([a-z]+)/ ]] || continue
    dep=${BASH_REMATCH[1]}  # a bash match, not a sed per line: thousands of lines
    [[ " $modules " == *" $dep "* ]] || continue
    if [[ " ${allowed[$mod]} " != *" $dep "* ]]; then
      echo "$file:$line: module $mod may not include $dep ($text)"
      fail=1
    elif [[ "$dep" != "$mod" && "$text" == *"/internal/"* ]]; then
      echo "$file:$line: $mod includes another module's internal header ($text)"
      fail=1
    fi
  done < <(grep -rnE '^#include "[a-z]+/' "src/$mod" || true)
done

# Inside server: each folder's README.md names, on its "May include:" line, the server
# folders its files may include (src/server/README.md for the files at the top); any
# other `#include "server/..."` is refused. Tests mirror the folders.
server_rule() {  # the folders $1/README.md allows, space-separated
  grep -h '^May include:' -A3 "$1/README.md" | tr ' ,.' '\n\n\n' | sed -n 's|^server/||p' | tr '\n' ' '
}
for dir in src/server src/server/*/; do
  dir=${dir%/}
  if [[ ! -f $dir/README.md ]] || ! grep -q '^May include:' "$dir/README.md"; then
    echo "$dir: no README.md with a \"May include:\" line"
    fail=1
    continue
  fi
  folder=${dir#src/server}
  folder=${folder#/}
  may=" $(server_rule "$dir") "
  while IFS=: read -r file line text; do
    [[ "$text" =~ \#include\ \"server/(([a-z_]+)/)?[a-z_]+\.h\" ]] || continue
    dep=${BASH_REMATCH[2]}
    [[ -z "$dep" || "$dep" == "$folder" ]] && continue
    if [[ -z "$dep" || "$may" != *" $dep "* ]]; then
      echo "$file:$line: server/${folder:-.} may not include ${text#\#include } ($dir/README.md)"
      fail=1
    fi
  done < <(grep -nE '^#include "server/' "$dir"/*.h "$dir"/*.cc /dev/null 2>/dev/null || true)
done
for dir in tests/server/*/; do
  [[ -d src/server/$(basename "$dir") ]] || {
    echo "$dir: tests mirror src/server's folders; there is no src/server/$(basename "$dir")"
    fail=1
  }
done

# Within the rooms: the request pipeline applies Effects and knows no controller; the
# config and its settings are plain values that name no thread owner, so a test or a
# tool reads a config without the loop, the lease holder or the sinks; HTTP is spoken
# only by http/, api/, agent_api/ and server.cc.
refuse() {  # file, then the headers it may not include
  local file=$1
  shift
  for header in "$@"; do
    if grep -n "^#include \"server/$header\"" "$file"; then
      echo "$file: may not include server/$header"
      fail=1
    fi
  done
}
for file in src/server/http/request_pipeline.*; do
  refuse "$file" controllers/lifecycle.h controllers/node_admin.h controllers/node_health.h \
    controllers/assignments.h
done
for file in src/server/config.* src/server/base/settings.*; do
  refuse "$file" cycle/sched_loop.h cycle/scheduler.h controllers/lifecycle.h \
    controllers/metrics_refresher.h controllers/telemetry_sink.h reports/usage_history.h
done
if grep -rln '^#include <httplib.h>' src/server | grep -vE '^src/server/(http|api|agent_api)/|^src/server/server.cc$'; then
  echo "only src/server/http, api, agent_api and server.cc may include httplib"
  fail=1
fi

# No source file over about 600 lines: split it by responsibility.
for file in $(find src -name '*.cc' -o -name '*.h'); do
  lines=$(wc -l <"$file")
  if ((lines > 650)); then
    echo "$file: $lines lines; split it by responsibility (at most about 600)"
    fail=1
  fi
done

# sched is a pure function: no I/O, clocks, threads or ambient randomness.
forbidden='#include <(thread|fstream|iostream|random|chrono|mutex|future|cstdio|filesystem|ctime)>|std::chrono::(system|steady|high_resolution)_clock|\btime\(|\brand\(|getenv'
# ... and depends on nothing outside the standard library: no third-party headers.
if grep -rnE '^#include <(nlohmann|fmt|yaml-cpp|httplib|CLI|sqlite3|libpq|openssl)' src/sched; then
  echo "src/sched may include only the standard library and core/sched headers"
  fail=1
fi
if grep -rnE "$forbidden" src/sched; then
  echo "src/sched must stay pure: no I/O, clock reads, threads or unseeded randomness"
  fail=1
fi

# ledger and registry are pure the same way (they may format text with fmt, as core
# does); the registry reads no JSON either: the API hands it typed values.
for mod in ledger registry; do
  if grep -rnE "$forbidden" "src/$mod"; then
    echo "src/$mod must stay pure: no I/O, clock reads, threads or unseeded randomness"
    fail=1
  fi
done
if grep -rnE '^#include <(nlohmann|yaml-cpp|httplib|sqlite3|libpq|openssl)' src/registry; then
  echo "src/registry may include only the standard library, fmt and core/registry headers"
  fail=1
fi

exit $fail
