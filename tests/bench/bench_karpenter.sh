#!/usr/bin/env bash
# Karpenter's own scheduling benchmark next to ours, on this machine, on the same
# workload: Karpenter's BenchmarkScheduling<N> (scheduling_benchmark_test.go, build tag
# test_performance, from the sigs.k8s.io/karpenter module tests/bench/karpenter/go.mod
# pins) and our tests/bench/bench_scheduling.c, both on N diverse pods (generic,
# zonal and hostname spread, zonal self-affinity, hostname anti-affinity) against a
# 400-type synthetic catalog and one NodePool. Prints both times per solve, both
# NodeClaim counts and the ratio. Figures only: nothing is asserted.
#
#   tests/bench/bench_karpenter.sh BUILD_DIR [SOURCE_DIR]
#   env: KP_BENCH_SIZES  pod counts (default "1000 5000 20000")
#        KP_BENCH_RUNS   timed solves per size and side (default 3; Karpenter's go test
#                        runs one more, untimed, to size b.N)
#
# Karpenter's test binary is built once (go test -c, 5-15 minutes on two cores) and
# cached under ${XDG_CACHE_HOME:-~/.cache}/karpenter-c/karpenter-bench/ with a hash of
# the go.mod/go.sum; modules come from the Go module proxy only (scripts/go-modules.sh).
# The module's `go` line may name a newer Go patch release than the machine has: Go
# then fetches that toolchain from the proxy (golang.org/toolchain), once.
set -euo pipefail

build=${1:?usage: bench_karpenter.sh BUILD_DIR [SOURCE_DIR]}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
readonly MOD_DIR="$src/tests/bench/karpenter"
readonly PKG=sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling
read -r -a SIZES <<<"${KP_BENCH_SIZES:-1000 5000 20000}"
readonly RUNS="${KP_BENCH_RUNS:-3}"
# shellcheck source-path=SCRIPTDIR source=../../scripts/go-modules.sh
. "$src/scripts/go-modules.sh"

say() { printf 'bench_karpenter: %s\n' "$*" >&2; }

# Prints the path of Karpenter's scheduling test binary, building it if needed.
karpenter_binary() {
  local version hash dir log start
  version=$(kp_go_mod_version "$MOD_DIR" sigs.k8s.io/karpenter)
  hash=$(cat "$MOD_DIR/go.mod" "$MOD_DIR/go.sum" | sha256sum | cut -c1-16)
  dir="${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-c/karpenter-bench/$version-$hash"
  if [ -x "$dir/scheduling.test" ]; then
    printf '%s\n' "$dir/scheduling.test"
    return 0
  fi
  kp_go_setup "$MOD_DIR" auto || return 1
  mkdir -p "$dir"
  log="$dir/build.log"
  say "building Karpenter $version's scheduling benchmark (once; log: $log)"
  start=$SECONDS
  # The toolchain the module asks for, fetched from the proxy if it is not this one.
  say "with $(cd "$MOD_DIR" && "$KP_GO" env GOVERSION 2>>"$log") (the module's go line: $(kp_go_wanted "$MOD_DIR"))"
  if ! (cd "$MOD_DIR" && "$KP_GO" test -c -p 2 -tags test_performance -o "$dir/scheduling.test.new" "$PKG") \
    >>"$log" 2>&1; then
    say "go test -c failed; last lines of $log:"
    tail -n 20 "$log" | sed 's/^/  | /' >&2
    return 1
  fi
  mv "$dir/scheduling.test.new" "$dir/scheduling.test"
  say "built in $((SECONDS - start))s"
  printf '%s\n' "$dir/scheduling.test"
}

# karpenter_row BINARY N: "ms nodes" of BenchmarkScheduling<N> (ns/op, the nodes metric).
karpenter_row() {
  local out
  out=$("$1" -test.run '^$' -test.bench "^BenchmarkScheduling$2\$" -test.benchtime "${RUNS}x" 2>&1) || {
    say "BenchmarkScheduling$2 failed:"
    printf '%s\n' "$out" | tail -n 5 | sed 's/^/  | /' >&2
    return 1
  }
  awk -v name="BenchmarkScheduling$2" '
    $1 ~ "^" name "(-[0-9]+)?$" {
      for (i = 2; i < NF; i++) { if ($(i + 1) == "ns/op") ns = $i; if ($(i + 1) == "nodes") nodes = $i }
    }
    END { if (ns == "") exit 1; printf "%.1f %d\n", ns / 1e6, nodes }' <<<"$out"
}

# ours_row N: "ms nodes" of bench_scheduling N, the median time of RUNS runs.
ours_row() {
  local i
  for ((i = 0; i < RUNS; i++)); do
    "$build/tests/bench_scheduling" "$1" | awk -v n="$1" '$1 == n && NF >= 4 { print $4, $3 }'
  done | sort -n | awk '{ t[NR] = $1; c[NR] = $2 } END { m = int((NR + 1) / 2); printf "%.1f %d\n", t[m], c[m] }'
}

main() {
  local kbin="" n k o kms knodes oms onodes
  [ -x "$build/tests/bench_scheduling" ] || { say "$build/tests/bench_scheduling is not built"; exit 1; }
  # Without Karpenter's side the table still shows ours, and says why the other is
  # missing; the benchmarks after this one still run.
  kbin=$(karpenter_binary) || say "Karpenter's benchmark could not be built (see above): its columns are '-'"
  echo "Karpenter $(kp_go_mod_version "$MOD_DIR" sigs.k8s.io/karpenter) vs karpenter-c on $(nproc) cores:" \
    "diverse pods, synthetic 400 instance types, time per solve (ours: median of $RUNS; Karpenter: mean of $RUNS)"
  printf '%8s %14s %10s %14s %10s %8s\n' pods karpenter_ms nodes karpenter-c_ms nodes ratio
  for n in "${SIZES[@]}"; do
    k="- -"
    [ -z "$kbin" ] || k=$(karpenter_row "$kbin" "$n") || k="- -"
    o=$(ours_row "$n")
    read -r kms knodes <<<"$k"
    read -r oms onodes <<<"$o"
    printf '%8s %14s %10s %14s %10s %8s\n' "$n" "$kms" "$knodes" "$oms" "$onodes" \
      "$(awk -v a="$kms" -v b="$oms" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.1fx", a / b; else print "-" }')"
  done
  echo "ratio: Karpenter's time per solve / ours (above 1: ours is faster)"
}

main
