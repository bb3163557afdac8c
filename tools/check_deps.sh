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

# Inside server: the two API surfaces (the user API: api*.cc/h; the agent protocol:
# agent_api) do not include each other (server.cc wires them, both through
# request_pipeline), and the controllers (lifecycle, node admin, node health, agent
# reports, assignments) reach the scheduler loop only through SchedulerSignals, never
# sched_loop.h or scheduler.h, and know nothing of HTTP.
controllers="lifecycle node_admin node_health agent_reports assignments"
declare -A server_forbidden=([agent_api]="api api_routes api_views")
for f in src/server/api.cc src/server/api.h src/server/api_*.cc src/server/api_*.h; do
  [[ -f $f ]] || continue
  unit=$(basename "${f%.*}")
  server_forbidden[$unit]="agent_api"
done
for unit in $controllers; do
  server_forbidden[$unit]="sched_loop scheduler api api_routes api_views agent_api request_pipeline"
done
# The config and its settings are plain values: they name no thread owner, so a test or
# a tool reads a config without the loop, the lease holder or the sinks. The request
# pipeline applies Effects (effects.h) and knows no controller.
owners="sched_loop scheduler lifecycle metrics_refresher telemetry_sink usage_history"
server_forbidden[config]="$owners"
server_forbidden[settings]="$owners config"
server_forbidden[effects]="$owners"
server_forbidden[request_pipeline]="lifecycle node_admin node_health agent_reports assignments"
for unit in "${!server_forbidden[@]}"; do
  for dep in ${server_forbidden[$unit]}; do
    for file in src/server/$unit.h src/server/$unit.cc; do
      [[ -f $file ]] || continue
      if grep -n "^#include \"server/$dep.h\"" "$file"; then
        echo "$file: server/$unit may not include server/$dep.h"
        fail=1
      fi
    done
  done
  for file in src/server/$unit.h src/server/$unit.cc; do
    [[ -f $file ]] || continue
    if [[ " $controllers " == *" $unit "* ]] && grep -n "^#include <httplib.h>" "$file"; then
      echo "$file: the controller server/$unit may not include httplib"
      fail=1
    fi
  done
done

# No file in src/server or src/store over about 600 lines: split it by responsibility.
for file in src/server/*.cc src/server/*.h src/store/*.cc src/store/*.h; do
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
