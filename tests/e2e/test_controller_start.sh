#!/usr/bin/env bash
# How `karpenter-controller run` starts and stops on a real API server:
#
#   - without a cloud provider it refuses to start (exit 2) and says how to name one;
#   - --version prints the version and commit, and the start-up log line carries them;
#   - it discovers the Kubernetes version from /version and kube-dns's ClusterIP
#     (IPv4 here), and refuses an API server older than KUBERNETES_MIN_VERSION;
#   - Karpenter settings with no effect here (MEMORY_LIMIT, an unknown feature gate, an
#     AWS setting given to kwok) are named in WARN lines; one that would change
#     decisions and is not supported (IGNORE_DRA_REQUESTS=false) stops it with
#     exit 2;
#   - LOG_LEVEL takes any case, LOG_OUTPUT_PATHS sends the log to a file;
#   - karpenter_build_info is on /metrics;
#   - a SIGTERM while the caches cannot fill (a CRD missing) ends it at once, with exit
#     0 and no ERROR; a SIGTERM once it leads also exits 0 with no ERROR line.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

WORK=""
BIN=""

# run_for SECONDS LOG [ARGS...]: run the controller (env from the caller) for a while,
# then SIGTERM it; sets RC.
run_for() {
  local secs="$1" log="$2" pid
  shift 2
  "$BIN" run --kubeconfig "$KUBECONFIG" "$@" >"$log" 2>&1 &
  pid=$!
  sleep "$secs"
  SIGNAL_MS=$(date +%s%3N)
  kill -TERM "$pid" 2>/dev/null || true
  RC=0
  wait "$pid" || RC=$?
  EXIT_MS=$(($(date +%s%3N) - SIGNAL_MS))
}

check_refusals() {
  local rc=0 out
  out=$("$BIN" run --kubeconfig "$KUBECONFIG" 2>&1) || rc=$?
  check "no provider: exit 2 ($rc)" [ "$rc" = 2 ]
  check "... and it says how to name one" grep -q "no cloud provider: set --cloud-provider (or CLOUD_PROVIDER)" <<<"$out"
  rc=0
  out=$(IGNORE_DRA_REQUESTS=false "$BIN" run --kubeconfig "$KUBECONFIG" --cloud-provider kwok 2>&1) || rc=$?
  check "IGNORE_DRA_REQUESTS=false is refused, not ignored ($rc)" [ "$rc" = 2 ]
  check "... naming the setting" grep -q "IGNORE_DRA_REQUESTS=false" <<<"$out"
  rc=0
  KUBERNETES_MIN_VERSION=1.99.0 "$BIN" run --kubeconfig "$KUBECONFIG" --cloud-provider kwok --metrics-port 0 \
    --health-probe-port 0 >"$WORK/min.log" 2>&1 || rc=$?
  check "an API server older than KUBERNETES_MIN_VERSION: exit 1 ($rc)" [ "$rc" = 1 ]
  check "... saying both versions" grep -q "older than KUBERNETES_MIN_VERSION 1.99.0" "$WORK/min.log"
  out=$("$BIN" --version)
  check "--version: $out" grep -qE '^karpenter-controller [0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9a-f]+' <<<"$out"
}

check_start_and_stop() {
  local port version
  port=$(e2e_free_port)
  version=$(k version -o json | jq -r .serverVersion.gitVersion)
  k -n kube-system create service clusterip kube-dns --tcp=53:53 >/dev/null
  MEMORY_LIMIT=1073741824 FEATURE_GATES=Drift=true CLUSTER_ENDPOINT=https://example.invalid LOG_LEVEL=INFO \
    LOG_OUTPUT_PATHS="$WORK/file.log" "$BIN" run --kubeconfig "$KUBECONFIG" --cloud-provider kwok \
    --disable-leader-election --metrics-port "$port" --health-probe-port 0 --bind-address 127.0.0.1 \
    >"$WORK/run.log" 2>&1 &
  local pid=$! rc=0
  e2e_cleanup e2e_stop_pid "$pid"
  wait_for "curl -fsS http://127.0.0.1:$port/metrics | grep '^karpenter_build_info{' >/dev/null" 30 ||
    fail "no karpenter_build_info on /metrics"
  pass "karpenter_build_info is on /metrics: $(curl -fsS "http://127.0.0.1:$port/metrics" | grep '^karpenter_build_info{')"
  wait_for "grep -q 'leading: controllers started' '$WORK/file.log'" 30 || fail "it did not lead"
  kill -TERM "$pid"
  wait "$pid" || rc=$?
  check "stopped by SIGTERM: exit 0 ($rc)" [ "$rc" = 0 ]
  check "LOG_OUTPUT_PATHS: the lines went to the file, not stdout" \
    [ -s "$WORK/file.log" ] && [ ! -s "$WORK/run.log" ]
  check "the start-up line has the version and commit" \
    grep -qE '"message":"starting karpenter-controller","version":"[0-9.]+","commit":"[0-9a-f]+' "$WORK/file.log"
  check "the Kubernetes version is discovered ($version)" \
    grep -q "\"kubernetesVersion\":\"$version\"" "$WORK/file.log"
  check "kube-dns's ClusterIP is discovered ($(k -n kube-system get svc kube-dns -o jsonpath='{.spec.clusterIP}'))" \
    grep -q "\"kubeDNS\":\"$(k -n kube-system get svc kube-dns -o jsonpath='{.spec.clusterIP}')\"" "$WORK/file.log"
  check "MEMORY_LIMIT is named in a warning" grep -q '"level":"WARN".*MEMORY_LIMIT is set and has no effect' "$WORK/file.log"
  check "an unknown gate is named" grep -q '"level":"WARN".*unknown feature gate Drift' "$WORK/file.log"
  check "an AWS setting given to kwok is named" \
    grep -q '"level":"WARN".*CLUSTER_ENDPOINT is set and has no effect: it is a setting of the aws provider' "$WORK/file.log"
  check "it led and stopped on the signal" grep -q '"message":"stopping on signal"' "$WORK/file.log"
  check "no ERROR line from a clean stop" bash -c "! grep -q '\"level\":\"ERROR\"' '$WORK/file.log'"
}

# Set by run_for: when it sent SIGTERM, and how long the process took to exit
# after it (sanitizer builds scan for leaks at exit, slower on a busy machine).
SIGNAL_MS=""
EXIT_MS=""

check_signal_during_start() {
  k delete crd kwoknodeclasses.karpenter.kwok.sh >/dev/null
  run_for 3 "$WORK/early.log" --cloud-provider kwok --disable-leader-election --metrics-port 0 --health-probe-port 0
  check "SIGTERM while the caches cannot fill: exit 0 ($RC)" [ "$RC" = 0 ]
  check "... promptly, not after waiting for the caches ($EXIT_MS ms after the signal)" [ "$EXIT_MS" -lt 3000 ]
  check "... saying so" grep -q '"message":"stopping on signal during start-up"' "$WORK/early.log"
  check "... with no ERROR line" bash -c "! grep -q '\"level\":\"ERROR\"' '$WORK/early.log'"
}

main() {
  e2e_setup
  WORK=$(mktemp -d)
  e2e_cleanup rm -rf "$WORK"
  BIN=$(e2e_controller)
  k apply -f "$E2E_LIB_DIR/../../crds/" >/dev/null
  wait_for "k get nodepools && k get kwoknodeclasses" 30 || fail "the CRDs are not served"
  check_refusals
  check_start_and_stop
  check_signal_during_start
}

main "$@"
