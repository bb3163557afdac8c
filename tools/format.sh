#!/usr/bin/env bash
# clang-format over every C++ file in the tree. --check fails (listing the files)
# instead of rewriting them. Files go to clang-format in batches, one batch per core:
# one process per file spent most of a minute starting clang-format.
set -euo pipefail
cd "$(dirname "$0")/.."
files=()
while IFS= read -r f; do
  [[ -f "$f" ]] && files+=("$f")  # listed but deleted in the work tree: skipped
done < <(git ls-files -co --exclude-standard -- '*.cc' '*.h')
[[ ${#files[@]} -eq 0 ]] && exit 0
batches() { printf '%s\0' "${files[@]}" | xargs -0 -P "$(nproc)" -n 40 clang-format "$@"; }
if [[ "${1:-}" != "--check" ]]; then
  batches -i
  exit 0
fi
# --dry-run -Werror reports each difference as "FILE:LINE:COL: error: ..." and fails.
if report=$(batches --dry-run -Werror 2>&1 >/dev/null); then
  exit 0
fi
bad=$(sed -nE 's/^([^:]+):[0-9]+:[0-9]+: error: .*/\1/p' <<<"$report" | sort -u)
if [[ -z "$bad" ]]; then
  printf 'clang-format failed:\n%s\n' "$report"  # not a formatting difference: say what
else
  printf 'not clang-formatted (run tools/format.sh): %s\n' $bad
fi
exit 1
