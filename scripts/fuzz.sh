#!/usr/bin/env bash
# Fuzzes a parser for SECONDS (default 60): installs clang and libFuzzer
# (scripts/setup.sh --fuzz), builds the fuzz preset and runs one target of tests/fuzz:
# job_spec (the default: the job spec parser, seeded with examples/jobs) or
# captured_cycle (the captured-cycle file, seeded with tests/cycle/testdata). The corpus
# grows in build/fuzz/corpus (never in examples/); a crash leaves its input in
# build/fuzz/artifacts. Not part of CI.
# Usage: scripts/fuzz.sh [SECONDS] [job_spec|captured_cycle]
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
target=${2:-job_spec}
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || ! [[ "$target" =~ ^(job_spec|captured_cycle)$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS] [job_spec|captured_cycle]" >&2
  exit 2
fi

scripts/setup.sh --fuzz
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j2 --target "${target}_fuzz"

corpus=build/fuzz/corpus/$target
artifacts=build/fuzz/artifacts
mkdir -p "$corpus" "$artifacts"
flags=()
if [[ "$target" == job_spec ]]; then
  cp examples/jobs/* "$corpus"/
  flags=(-max_len=4096 -dict=tests/fuzz/job_spec.dict)
else
  cp tests/cycle/testdata/*.json "$corpus"/
  flags=(-max_len=16384)
fi

build/fuzz/tests/fuzz/"${target}_fuzz" \
  -max_total_time="$seconds" \
  -timeout=10 \
  -print_final_stats=1 \
  "${flags[@]}" \
  -artifact_prefix="$artifacts/" \
  "$corpus"
