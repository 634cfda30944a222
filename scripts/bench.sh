#!/usr/bin/env bash
# make bench: run every benchmark and print its figures. Nothing is asserted:
# benchmarks measure, tests check.
#   scripts/bench.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: bench.sh BUILD_DIR}
here=$(cd "$(dirname "$0")/.." && pwd)

echo "== machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
for b in "$build"/tests/bench_*; do
  [ -x "$b" ] || continue
  echo
  echo "== $(basename "$b")"
  "$b"
done
# Benchmarks that drive real programs (servers, the control plane) are scripts.
for s in "$here"/tests/bench/bench_*.sh; do
  [ -f "$s" ] || continue
  echo
  echo "== $(basename "$s")"
  bash "$s" "$build" "$here"
done
