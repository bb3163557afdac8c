#!/usr/bin/env bash
# docs/api/openapi.yaml is a valid OpenAPI 3.0 document for a standard validator
# (@apidevtools/swagger-cli, pinned in tools/openapi and installed by scripts/setup.sh),
# so code generators and API browsers take it.
# Usage: openapi_validate.sh SOURCE_DIR
set -euo pipefail
src=$1
validator="$src/tools/openapi/node_modules/.bin/swagger-cli"
if [[ ! -x "$validator" ]]; then
  echo "FAIL: $validator is missing: run scripts/setup.sh" >&2
  exit 1
fi
"$validator" validate "$src/docs/api/openapi.yaml"
