#!/usr/bin/env bash
# clang-format over every C++ file in the tree. --check fails (listing the files)
# instead of rewriting them.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.cc' '*.h')
[[ ${#files[@]} -eq 0 ]] && exit 0
if [[ "${1:-}" == "--check" ]]; then
  bad=()
  for f in "${files[@]}"; do
    [[ -f "$f" ]] || continue
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [[ ${#bad[@]} -gt 0 ]]; then
    printf 'not clang-formatted (run tools/format.sh): %s\n' "${bad[@]}"
    exit 1
  fi
else
  clang-format -i "${files[@]}"
fi
