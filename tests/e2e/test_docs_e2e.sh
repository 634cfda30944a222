#!/usr/bin/env bash
# The documentation's ```sh e2e blocks (docs/*.md, docs/reference/*.md), run in file
# order against a real cluster with karpenter-controller (kwok provider) running, as
# the docs say it should be. Each block is one bash script (-e -o pipefail) run from
# the repository's top directory with the build first on PATH; a non-zero exit fails.
# The offline blocks (```sh) are tests/integration/test_docs.sh's.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
readonly HERE ROOT

# extract OUT_DIR: each ```sh e2e block as OUT_DIR/NNN.sh, its first line naming the
# file and line.
extract() {
  local out="$1" f n=0
  mkdir -p "$out"
  for f in "$ROOT"/docs/*.md "$ROOT"/docs/reference/*.md; do
    [ -f "$f" ] || continue
    n=$(awk -v out="$out" -v n="$n" -v name="${f#"$ROOT"/}" '
      !inblock && /^```/ {
        info = substr($0, 4); sub(/[ \t]+$/, "", info); gsub(/[ \t]+/, " ", info)
        inblock = 1; take = (info == "sh e2e")
        if (take) { n++; file = sprintf("%s/%03d.sh", out, n); print "# " name ":" NR > file }
        next
      }
      inblock && /^```[ \t]*$/ { inblock = 0; if (take) close(file); take = 0; next }
      take { print > file }
      END { print n }' "$f")
  done
  echo "$n"
}

e2e_setup
blocks="$KP_E2E_DIR/doc-blocks"
n=$(extract "$blocks")
assert "the docs have sh e2e blocks ($n)" test "$n" -ge 5

# What getting-started.md has the reader do before its blocks: the CRDs, then the
# controller with the kwok provider.
k apply -f "$ROOT/crds/" >/dev/null
wait_for "k get nodepools && k get kwoknodeclasses" 30 || fail "the CRDs are not served"
e2e_start_controller controller --disable-leader-election --kwok-finish-pods-immediately \
  --disruption-poll-interval 2s --consolidation-validation-period 2s

build=$(dirname "$(e2e_controller)")
for b in "$blocks"/*.sh; do
  where=$(head -n 1 "$b" | cut -c3-)
  if (cd "$ROOT" && PATH="$build:$PATH" timeout 240 bash -e -o pipefail "$b") >"$b.out" 2>&1; then
    pass "$where"
  else
    E2E_FAILED=$((E2E_FAILED + 1))
    e2e_say "FAIL  $where"
    sed 's/^/    | /' "$b" "$b.out" | tail -n 40
  fi
done
