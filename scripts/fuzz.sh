#!/usr/bin/env bash
# Fuzzes a parser for SECONDS (default 60): installs clang and libFuzzer
# (scripts/setup.sh --fuzz), builds the fuzz preset and runs one target of tests/fuzz:
# job_spec (the default: the job spec parser, seeded with examples/jobs),
# captured_cycle (the captured-cycle file, seeded with tests/cycle/testdata) or
# http_request (raw HTTP requests through corrald's routes against a SQLite store, seeded
# with tests/fuzz/seeds/http_request; run in a network namespace of its own when
# `unshare -rn` works, so a fuzzed agent URL reaches nothing). The corpus grows in
# build/fuzz/corpus (never in examples/ or tests/); a crash leaves its input in
# build/fuzz/artifacts. Not part of CI.
# Usage: scripts/fuzz.sh [SECONDS] [job_spec|captured_cycle|http_request]
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
target=${2:-job_spec}
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || ! [[ "$target" =~ ^(job_spec|captured_cycle|http_request)$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS] [job_spec|captured_cycle|http_request]" >&2
  exit 2
fi

scripts/setup.sh --fuzz
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j2 --target "${target}_fuzz"

corpus=build/fuzz/corpus/$target
artifacts=build/fuzz/artifacts
mkdir -p "$corpus" "$artifacts"
flags=()
sandbox=()
case "$target" in
  job_spec)
    cp examples/jobs/* "$corpus"/
    flags=(-max_len=4096 -dict=tests/fuzz/job_spec.dict)
    ;;
  captured_cycle)
    cp tests/cycle/testdata/*.json "$corpus"/
    flags=(-max_len=16384)
    ;;
  http_request)
    cp tests/fuzz/seeds/http_request/* "$corpus"/
    # -entropic=0: with entropic scheduling libFuzzer spent 70% of the time updating
    # feature frequencies over this target's ~70k features (5 exec/s instead of 44).
    flags=(-max_len=8192 -dict=tests/fuzz/http_request.dict -entropic=0)
    # GET /v1/jobs/{id}/logs calls the agent URL a fuzzed heartbeat may have set.
    if unshare -rn true 2>/dev/null; then
      sandbox=(unshare -rn)
    else
      echo "fuzz.sh: unshare -rn unavailable: fuzzing with the network reachable" >&2
    fi
    ;;
esac

"${sandbox[@]}" build/fuzz/tests/fuzz/"${target}_fuzz" \
  -max_total_time="$seconds" \
  -timeout=10 \
  -print_final_stats=1 \
  "${flags[@]}" \
  -artifact_prefix="$artifacts/" \
  "$corpus"
