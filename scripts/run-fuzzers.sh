#!/usr/bin/env bash
# Run every libFuzzer target of a fuzz build for a bounded time each.
#   scripts/run-fuzzers.sh BUILD_DIR [SECONDS]
# Fails on the first finding (libFuzzer exits non-zero and leaves crash-* files).
set -euo pipefail
build=${1:?usage: run-fuzzers.sh BUILD_DIR [SECONDS]}
seconds=${2:-60}
found=0
for f in "$build"/tests/fuzz_*; do
  [ -x "$f" ] || continue
  name=$(basename "$f")
  corpus="$build/corpus/$name"
  seeds="$(dirname "$0")/../tests/fuzz/seeds/$name" # read-only starting points, if any
  [ -d "$seeds" ] || seeds=""
  mkdir -p "$corpus" "$build/findings/$name"
  echo "fuzz: $name for ${seconds}s"
  if ! "$f" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$build/findings/$name/" \
      "$corpus" ${seeds:+"$seeds"} >"$build/findings/$name.log" 2>&1; then
    echo "fuzz: $name FOUND A PROBLEM (see $build/findings/$name.log)" >&2
    tail -30 "$build/findings/$name.log" >&2
    found=1
  else
    grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$build/findings/$name.log" | tail -1 || true
  fi
done
[ $found -eq 0 ] && echo "fuzz: no findings"
exit $found
