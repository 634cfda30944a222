#!/usr/bin/env bash
# Refuse calls that have no bound on their output or no error report, as curl's
# checksrc does. The safe spellings: snprintf, memcpy with a checked length,
# kp_buf_append, strtol/strtoll with an end pointer.
set -euo pipefail
cd "$(dirname "$0")/.."
banned='\b(sprintf|vsprintf|strcpy|strcat|strtok|atoi|atol|atoll|gets)[[:space:]]*\('
hits=$(git ls-files '*.c' '*.h' 2>/dev/null | xargs -r grep -nE "$banned" || true)
if [ -n "$hits" ]; then
  echo "check-source: banned calls found:" >&2
  echo "$hits" >&2
  exit 1
fi
echo "check-source: no banned calls"
