#!/usr/bin/env bash
# Integration tests of `corral validate` against the built binary.
# Usage: validate_test.sh CORRAL_BINARY SOURCE_DIR CASE
set -euo pipefail
corral=$1
src=$2
case_name=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

fail() {
  echo "FAIL ($case_name): $*" >&2
  exit 1
}

# Runs corral with the remaining arguments; sets rc, and the output in out/err files.
run() {
  rc=0
  "$corral" "$@" >"$scratch/out" 2>"$scratch/err" || rc=$?
}

case "$case_name" in
  examples_pass)
    for f in "$src"/examples/jobs/*; do
      run validate "$f"
      [[ $rc -eq 0 ]] || fail "$f exited $rc: $(cat "$scratch/err")"
      grep -q '"name"' "$scratch/out" || fail "$f printed no normalized spec"
    done
    run validate -q "$src"/examples/jobs/*
    [[ $rc -eq 0 ]] || fail "all examples at once exited $rc"
    [[ ! -s "$scratch/out" ]] || fail "--quiet printed output"
    ;;
  bad_spec_fails)
    bad="$src/tests/core/testdata/bad-gpus-zero.yaml"
    run validate "$bad"
    [[ $rc -eq 1 ]] || fail "exit code $rc, want 1"
    grep -qF "$bad: resources.gpus: must be between 1 and 16384, got 0" "$scratch/err" ||
      fail "stderr lacks the error line: $(cat "$scratch/err")"
    # One bad file among good ones still fails the run, and the good one is printed.
    run validate "$src/examples/jobs/elastic.yaml" "$bad"
    [[ $rc -eq 1 ]] || fail "mixed run exited $rc, want 1"
    grep -q '"vit-huge-elastic"' "$scratch/out" || fail "good file not printed in mixed run"
    ;;
  readme_spec_valid)
    # The job spec README.md shows is a valid spec: README and the code agree.
    awk '/^A job spec/{found=1} found && /^```yaml/{inblock=1; next} inblock && /^```/{exit}
         inblock{print}' "$src/README.md" >"$scratch/readme.yaml"
    [[ -s "$scratch/readme.yaml" ]] || fail "README.md has no job spec example"
    run validate "$scratch/readme.yaml"
    [[ $rc -eq 0 ]] || fail "README's spec is invalid: $(cat "$scratch/err")"
    ;;
  secrets_masked)
    run validate "$src/examples/jobs/nvswitch-8gpu.yaml"
    [[ $rc -eq 0 ]] || fail "exit code $rc"
    grep -q 'replace-me' "$scratch/out" && fail "a secret value was echoed"
    grep -qF '"WANDB_API_KEY": "***"' "$scratch/out" || fail "masked secret key missing"
    ;;
  stdin)
    rc=0
    "$corral" validate - <"$src/examples/jobs/reserved.json" >"$scratch/out" 2>&1 || rc=$?
    [[ $rc -eq 0 ]] || fail "stdin exited $rc: $(cat "$scratch/out")"
    rc=0
    echo 'name: x' | "$corral" validate - >"$scratch/out" 2>"$scratch/err" || rc=$?
    [[ $rc -eq 1 ]] || fail "bad stdin exited $rc, want 1"
    grep -qF '<stdin>: command: is required' "$scratch/err" || fail "$(cat "$scratch/err")"
    ;;
  usage_errors)
    run validate
    [[ $rc -eq 2 ]] || fail "no files: exit $rc, want 2"
    run validate "$scratch/does-not-exist.yaml"
    [[ $rc -eq 2 ]] || fail "missing file: exit $rc, want 2"
    grep -q 'cannot read .*does-not-exist.yaml' "$scratch/err" || fail "$(cat "$scratch/err")"
    run validate "$scratch"
    [[ $rc -eq 2 ]] || fail "directory: exit $rc, want 2"
    run frobnicate
    [[ $rc -eq 2 ]] || fail "unknown subcommand: exit $rc, want 2"
    run --help
    [[ $rc -eq 0 ]] || fail "--help: exit $rc, want 0"
    grep -q validate "$scratch/out" || fail "--help does not list validate"
    ;;
  *)
    fail "unknown case"
    ;;
esac
