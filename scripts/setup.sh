#!/usr/bin/env bash
# Installs every package listed in deps/debian.txt that is not installed yet.
# Idempotent, and quiet when nothing is missing. Runs as root (or through sudo).
# Lines tagged [fuzz] are optional and installed only with --fuzz (scripts/fuzz.sh).
# --build installs only what building needs (no [run] lines, no npm): the test command
# starts the build after it and installs the rest beside the build (scripts/test.sh).
# Usage: scripts/setup.sh [--fuzz | --build]
set -euo pipefail
cd "$(dirname "$0")/.."

fuzz=0
build_only=0
case "${1:-}" in
  "") ;;
  --fuzz) fuzz=1 ;;
  --build) build_only=1 ;;
  *)
    echo "usage: scripts/setup.sh [--fuzz | --build]" >&2
    exit 2
    ;;
esac

# One package name per line: comments dropped, [fuzz] lines kept only with --fuzz, [run]
# lines dropped with --build.
mapfile -t wanted < <(awk -v fuzz="$fuzz" -v build_only="$build_only" '
  { for_fuzz = ($0 ~ /\[fuzz\][[:space:]]*$/); for_run = ($0 ~ /\[run\][[:space:]]*$/)
    sub(/#.*/, ""); gsub(/[[:space:]]+/, "") }
  $0 == "" || (for_fuzz && !fuzz) || (for_run && build_only) { next }
  { print }' deps/debian.txt)
missing=()
for pkg in "${wanted[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
# The machine's own Node.js usually brings npm (nodesource's nodejs conflicts with Debian's
# npm package); only a machine without one gets Debian's.
[[ $build_only -eq 1 ]] || command -v npm >/dev/null || missing+=(npm)
if [[ ${#missing[@]} -gt 0 ]]; then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # A fresh machine has no package lists; refresh them before the first install.
  if ! $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

# The OpenAPI validator the tests run (tools/openapi, pinned by its lockfile), from npm.
if [[ $build_only -eq 0 && ! -x tools/openapi/node_modules/.bin/swagger-cli ]]; then
  echo "setup: installing the OpenAPI validator (npm ci in tools/openapi)"
  npm ci --prefix tools/openapi --no-audit --no-fund --loglevel=error >/dev/null
fi
