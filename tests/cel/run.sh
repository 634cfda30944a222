#!/usr/bin/env bash
# The CEL equivalence check (cel_equivalence.mjs) as a ctest test:
#
#   tests/cel/run.sh BUILD_DIR SOURCE_DIR
#
# Its npm packages are installed once into a cache keyed by the lock file
# (~/.cache/karpenter-c/cel-<hash>), so later runs need no network.
set -euo pipefail
build=${1:?usage: run.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: run.sh BUILD_DIR SOURCE_DIR}
here="$src/tests/cel"
for tool in node npm sha256sum; do
  command -v "$tool" >/dev/null || { echo "cel: $tool is not installed (scripts/install-deps.sh cel)"; exit 1; }
done
key=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-16)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-c/cel-$key"
if [ ! -f "$cache/.installed" ]; then
  mkdir -p "$cache"
  cp "$here/package.json" "$here/package-lock.json" "$cache/"
  (cd "$cache" && npm ci --no-audit --no-fund --loglevel=error)
  touch "$cache/.installed"
fi
# Node resolves packages from the script's own directory: run a copy there.
cp "$here/cel_equivalence.mjs" "$cache/"
exec node "$cache/cel_equivalence.mjs" "$src" "$build/tests/admission_check"
