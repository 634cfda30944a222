#!/usr/bin/env bash
# Karpenter's own scheduling benchmark next to ours, on this machine, on the same
# workload: Karpenter's BenchmarkScheduling<N> (scheduling_benchmark_test.go, build tag
# test_performance, from the sigs.k8s.io/karpenter module tests/bench/karpenter/go.mod
# pins) and our tests/bench/bench_scheduling.c, both on N diverse pods (generic,
# zonal and hostname spread, zonal self-affinity, hostname anti-affinity) against a
# 400-type synthetic catalog and one NodePool. Prints both wall times per solve, both
# processes' CPU time, both NodeClaim counts and the ratios. Figures only: nothing is
# asserted.
#
#   tests/bench/bench_karpenter.sh BUILD_DIR [SOURCE_DIR]
#   env: KP_BENCH_SIZES  pod counts (default "1000 5000 20000")
#        KP_BENCH_RUNS   solves per size and side, each from scratch (default 3)
#
# Karpenter's test binary is built once (go test -c: 42 minutes on two busy cores) and
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
WORK=""
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

# cpu_seconds FILE CMD...: runs CMD (stdout to stdout), writes the user + system CPU
# seconds it used to FILE. CPU time is the steadier figure on a shared machine: other
# work there stretches both sides' wall time, not the CPU time they need.
cpu_seconds() {
  local file="$1" TIMEFORMAT='%U %S'
  shift
  { time "$@" 2>/dev/null; } 2>"$file.t"
  awk '{ printf "%.3f\n", $1 + $2 }' "$file.t" >"$file"
}

# karpenter_run BINARY N: one run of BenchmarkScheduling<N> with -test.benchtime 1x (a
# fresh scheduler, one Solve: with more iterations Karpenter's benchmark solves again on
# the same scheduler, which still holds the NodeClaims of the solves before, so only the
# first is the problem our side solves): "wall_ms cpu_s nodes".
karpenter_run() {
  local out
  out=$(cpu_seconds "$WORK/cpu" "$1" -test.run '^$' -test.bench "^BenchmarkScheduling$2\$" -test.benchtime 1x) &&
    out=$(awk -v name="BenchmarkScheduling$2" -v cpu="$(cat "$WORK/cpu")" '
      $1 ~ "^" name "(-[0-9]+)?$" {
        for (i = 2; i < NF; i++) { if ($(i + 1) == "ns/op") ns = $i; if ($(i + 1) == "nodes") nodes = $i }
      }
      END { if (ns == "") exit 1; printf "%.1f %s %d\n", ns / 1e6, cpu, nodes }' <<<"$out") || {
    say "BenchmarkScheduling$2 failed:"
    printf '%s\n' "$out" | tail -n 5 | sed 's/^/  | /' >&2
    return 1
  }
  printf '%s\n' "$out"
}

# ours_run N: one run of bench_scheduling N: "wall_ms cpu_s nodes".
ours_run() {
  local out
  out=$(cpu_seconds "$WORK/cpu" "$build/tests/bench_scheduling" "$1") || return 1
  awk -v n="$1" -v cpu="$(cat "$WORK/cpu")" '$1 == n && NF >= 4 { printf "%.1f %s %d\n", $4, cpu, $3; found = 1 }
    END { exit !found }' <<<"$out"
}

# median_of FUNCTION ARGS...: RUNS runs; the median wall time with that run's node
# count, and the median CPU time: "wall_ms cpu_s nodes" (nothing when a run failed).
median_of() {
  local i m wall nodes cpu
  : >"$WORK/runs"
  for ((i = 0; i < RUNS; i++)); do "$@" >>"$WORK/runs" || return 0; done
  m=$(((RUNS + 1) / 2))
  read -r wall _ nodes < <(sort -n -k1,1 "$WORK/runs" | sed -n "${m}p")
  cpu=$(cut -d' ' -f2 "$WORK/runs" | sort -n | sed -n "${m}p")
  printf '%s %s %s\n' "$wall" "$cpu" "$nodes"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.0fx", a / b; else print "-" }'; }

main() {
  local kbin="" n k o kms kcpu knodes oms ocpu onodes
  [ -x "$build/tests/bench_scheduling" ] || { say "$build/tests/bench_scheduling is not built"; exit 1; }
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
  # Without Karpenter's side the table still shows ours, and says why the other is
  # missing; the benchmarks after this one still run.
  kbin=$(karpenter_binary) || say "Karpenter's benchmark could not be built (see above): its columns are '-'"
  echo "Karpenter $(kp_go_mod_version "$MOD_DIR" sigs.k8s.io/karpenter) vs karpenter-c on $(nproc) cores" \
    "(load average $(cut -d' ' -f1-3 /proc/loadavg)): diverse pods, synthetic 400 instance types;" \
    "medians of $RUNS runs per side, each run a new process solving once"
  printf '%7s | %12s %9s %6s | %12s %9s %6s | %10s %9s\n' pods "Karpenter ms" "CPU s" nodes \
    "ours ms" "CPU s" nodes "ratio wall" "ratio CPU"
  for n in "${SIZES[@]}"; do
    k="- - -"
    [ -z "$kbin" ] || k=$(median_of karpenter_run "$kbin" "$n")
    o=$(median_of ours_run "$n")
    read -r kms kcpu knodes <<<"${k:-- - -}"
    read -r oms ocpu onodes <<<"${o:-- - -}"
    printf '%7s | %12s %9s %6s | %12s %9s %6s | %10s %9s\n' "$n" "$kms" "$kcpu" "$knodes" \
      "$oms" "$ocpu" "$onodes" "$(ratio "$kms" "$oms")" "$(ratio "$kcpu" "$ocpu")"
  done
  echo "ms: wall time of the solve (each benchmark's own timer); CPU s: the whole process's user +" \
    "system time (setup included: the pods and the 400 types). ratio: Karpenter's / ours" \
    "(above 1: ours is faster). Other load on the machine stretches wall times on both sides."
}

main
