#!/usr/bin/env bash
# The documentation's commands and reference tables, checked against the build.
#   test_docs.sh BUILD_DIR SOURCE_DIR
#
# Fenced blocks in docs/*.md and docs/reference/*.md:
#   ```sh        runs offline (simulate, --help, kubectl kustomize): run here, each
#                block as one bash script (-e -o pipefail) from SOURCE_DIR, with
#                BUILD_DIR first on PATH; a non-zero exit fails the test
#   ```sh e2e    needs a cluster: run by tests/e2e/test_docs_e2e.sh
#   ```console   needs a cloud account or runs forever (make demo): shown only
# A block that names deploy/ is skipped while the repository has no deploy/.
# Files in NOT_YET are skipped: their ```sh blocks are synopses, not commands, until
# their owners mark them ```text.
#
# Also: docs/reference/controller-flags.md lists every flag `karpenter-controller run
# --help` prints, docs/reference/metrics.md every metric family the controller
# and the webhook register, docs/reference/events.md every Event reason the code
# writes (and the event of each kind of shared/disruption/reasons.c), and
# docs/reference/conditions.md every status condition type and reason; each lists
# nothing the code does not write (tests/integration/doc_reasons.py reads the code).
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
NOT_YET=" "

ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }

# extract KIND OUT_DIR: each block of that kind ("sh" or "sh e2e") as OUT_DIR/NNN.sh,
# its first line a comment naming the file and line.
extract() {
  local kind="$1" out="$2" f
  mkdir -p "$out"
  for f in "$src"/docs/*.md "$src"/docs/reference/*.md; do
    [ -f "$f" ] || continue
    case "$NOT_YET" in *" ${f#"$src"/} "*) echo "skip ${f#"$src"/} (not converted yet)"; continue ;; esac
    awk -v kind="$kind" -v out="$out" -v name="${f#"$src"/}" '
      BEGIN { n = 0; while ((getline line < (out "/.count")) > 0) n = line }
      !inblock && /^```/ {
        info = substr($0, 4); sub(/[ \t]+$/, "", info); gsub(/[ \t]+/, " ", info)
        inblock = 1; take = (info == kind)
        if (take) { n++; file = sprintf("%s/%03d.sh", out, n); print "# " name ":" NR > file }
        next
      }
      inblock && /^```[ \t]*$/ { inblock = 0; if (take) close(file); take = 0; next }
      take { print > file }
      END { print n > (out "/.count") }' "$f"
  done
}

run_blocks() {
  local b where
  for b in "$tmp"/sh/*.sh; do
    [ -f "$b" ] || continue
    where=$(head -n 1 "$b" | cut -c3-)
    if grep -q 'deploy/' "$b" && [ ! -d "$src/deploy" ]; then
      echo "skip $where (no deploy/ in this tree)"
      continue
    fi
    if (cd "$src" && PATH="$build:$PATH" timeout 120 bash -e -o pipefail "$b") >"$b.out" 2>&1; then
      ok "$where"
    else
      bad "$where"
      sed 's/^/    | /' "$b" "$b.out" | tail -n 40
    fi
  done
}

# Every flag of `run --help` appears as `--flag` in the flags reference, with its
# environment variable, and the reference names no flag the binary lacks.
flags_documented() {
  local doc="$src/docs/reference/controller-flags.md" flag env line rc=0
  "$build/karpenter-controller" run --help >"$tmp/help" 2>&1
  [ "$(grep -c '^  --' "$tmp/help")" -gt 20 ] || { echo "    run --help printed too few flags"; return 1; }
  while read -r line; do
    flag=$(awk '{print $1}' <<<"$line")
    env=$(sed -n 's/.*\[\([A-Z_]*\)\]$/\1/p' <<<"$line")
    grep -q -- "\`$flag\`" "$doc" || { echo "    $flag missing"; rc=1; }
    [ -z "$env" ] || grep -q -- "$flag\`.*\`$env\`" "$doc" || { echo "    $flag: env $env missing on its row"; rc=1; }
  done < <(grep '^  --' "$tmp/help")
  # shellcheck disable=SC2016 # the backquotes are Markdown's
  for flag in $(grep -o '^| `--[a-z0-9-]*`' "$doc" | tr -d '|` '); do
    grep -q -- "^  $flag " "$tmp/help" || { echo "    $flag documented but not in --help"; rc=1; }
  done
  return $rc
}

# Every "karpenter_..." family registered in controller/ and webhook/ is in the
# metrics reference, and every family there is registered.
metrics_documented() {
  local doc="$src/docs/reference/metrics.md" m rc=0
  grep -ho '"karpenter_[a-z_]*"' "$src"/controller/*.c "$src"/webhook/*.c | tr -d '"' | sort -u >"$tmp/metrics"
  [ "$(wc -l <"$tmp/metrics")" -gt 20 ] || { echo "    too few metric families found in the code"; return 1; }
  while read -r m; do
    grep -q -- "\`$m\`" "$doc" || { echo "    $m missing"; rc=1; }
  done <"$tmp/metrics"
  # shellcheck disable=SC2016 # the backquotes are Markdown's
  for m in $(grep -o '^| `karpenter_[a-z_]*`' "$doc" | tr -d '|` '); do
    grep -qx -- "$m" "$tmp/metrics" || { echo "    $m documented but not registered"; rc=1; }
  done
  return $rc
}

# doc_reasons.py KIND DOC: the reasons the code writes against DOC; its findings
# are printed indented.
reasons_documented() {
  local out rc=0
  out=$(python3 "$src/tests/integration/doc_reasons.py" "$src" "$1" "$src/$2") || rc=$?
  sed 's/^/    /' <<<"$out"
  return $rc
}

extract "sh" "$tmp/sh"
n=$(cat "$tmp/sh/.count")
if [ "$n" -ge 10 ]; then ok "found $n runnable blocks in docs/"; else bad "only $n runnable blocks in docs/"; fi
run_blocks
if flags_documented; then ok "controller-flags.md matches run --help"; else bad "controller-flags.md vs run --help"; fi
if metrics_documented; then ok "metrics.md matches the registered families"; else bad "metrics.md vs the code"; fi
if reasons_documented events docs/reference/events.md; then ok "events.md matches the event reasons the code writes"
else bad "events.md vs the code"; fi
if reasons_documented conditions docs/reference/conditions.md; then ok "conditions.md matches the conditions the code writes"
else bad "conditions.md vs the code"; fi

echo "test_docs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
