#!/usr/bin/env bash
# Fuzzes the job spec parser for SECONDS (default 60): installs clang and libFuzzer
# (scripts/setup.sh --fuzz), builds the fuzz preset and runs tests/fuzz/job_spec_fuzz
# seeded with examples/jobs. The corpus grows in build/fuzz/corpus (never in examples/);
# a crash leaves its input in build/fuzz/artifacts. Not part of CI.
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS]" >&2
  exit 2
fi

scripts/setup.sh --fuzz
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j2 --target job_spec_fuzz

corpus=build/fuzz/corpus/job_spec
artifacts=build/fuzz/artifacts
mkdir -p "$corpus" "$artifacts"
cp examples/jobs/* "$corpus"/

build/fuzz/tests/fuzz/job_spec_fuzz \
  -max_total_time="$seconds" \
  -max_len=4096 \
  -timeout=10 \
  -print_final_stats=1 \
  -dict=tests/fuzz/job_spec.dict \
  -artifact_prefix="$artifacts/" \
  "$corpus"
