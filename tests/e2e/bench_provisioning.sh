#!/usr/bin/env bash
# Provisioning latency on the real control plane, kwok provider: for Deployments of
# 10, 100 and 1000 pods (250m CPU each), the time from creating the Deployment to the
# first NodeClaim, to the last NodeClaim, and to the last pod bound by kube-scheduler;
# per pod (from the API's timestamps, so to the second), the time from the pod's
# creation to its node's NodeClaim and to its PodScheduled condition, as median and
# maximum; then the same at scale (KP_BENCH_LARGE NODES:PODS runs, see large_run);
# then the controller's peak RSS. Figures only: nothing is asserted beyond the run
# completing. Run by `make bench-e2e` (or `tests/e2e/bench_provisioning.sh` after
# `make build`); KP_BENCH_SIZES overrides the Deployment sizes ("" for none),
# KP_BENCH_LARGE the runs at scale ("2000:20000 5000:50000"; "" for none).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
readonly DATA="$HERE/data"
readonly NS=bench
read -r -a SIZES <<<"${KP_BENCH_SIZES-10 100 1000}"

now_ms() { date +%s%3N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (a - b) / 1000 }'; }
bound() { k -n $NS get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true; }

# Empties the cluster between sizes: the Deployment, then every NodeClaim.
reset() {
  k -n $NS delete deployment inflate --wait=false >/dev/null 2>&1 || true
  wait_for '[ "$(k -n $NS get pods -o name | grep -c .)" -eq 0 ]' 300 || fail "pods not gone"
  k delete nodeclaims --all --wait=false >/dev/null 2>&1 || true
  wait_for '[ "$(count nodeclaims)" -eq 0 ] && [ "$(count nodes)" -eq 0 ]' 300 || fail "nodes not gone"
}

one_size() {
  local n="$1" t0 t_first="" t_last_claim=0 t_bound="" claims=0 c b
  sed -e "s/replicas: 10/replicas: $n/" -e "s/cpu: 500m/cpu: 250m/" "$DATA/inflate.yaml" >"$KP_E2E_DIR/inflate-$n.yaml"
  t0=$(now_ms)
  k -n $NS apply -f "$KP_E2E_DIR/inflate-$n.yaml" >/dev/null
  while [ $(($(now_ms) - t0)) -lt 600000 ]; do
    c=$(count nodeclaims)
    [ -n "$t_first" ] || [ "$c" -eq 0 ] || t_first=$(now_ms)
    if [ "$c" -gt "$claims" ]; then claims=$c t_last_claim=$(now_ms); fi
    b=$(bound)
    if [ "$b" -ge "$n" ]; then t_bound=$(now_ms); break; fi
    sleep 0.2
  done
  [ -n "$t_bound" ] || fail "$n pods not bound within 10 minutes"
  per_pod
  printf '%6d pods  first NodeClaim %6.2f s  last NodeClaim %6.2f s  all bound %6.2f s  (%d NodeClaims)\n' \
    "$n" "$(secs "$t_first" "$t0")" "$(secs "$t_last_claim" "$t0")" "$(secs "$t_bound" "$t0")" "$claims"
}

# Per pod: its node's NodeClaim creation and its PodScheduled time, minus its own
# creation (seconds; claims the pod did not wait for count as 0).
per_pod() {
  k -n $NS get pods -o json >"$KP_E2E_DIR/pods.json"
  k get nodeclaims -o json >"$KP_E2E_DIR/claims.json"
  python3 - "$KP_E2E_DIR/pods.json" "$KP_E2E_DIR/claims.json" <<'PY'
import json, sys
from datetime import datetime
t = lambda s: datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").timestamp()
pods = json.load(open(sys.argv[1]))["items"]
claims = {c["status"].get("nodeName"): t(c["metadata"]["creationTimestamp"])
          for c in json.load(open(sys.argv[2]))["items"]}
to_claim, to_bound = [], []
for p in pods:
    created = t(p["metadata"]["creationTimestamp"])
    node = p["spec"].get("nodeName")
    if node in claims:
        to_claim.append(max(0.0, claims[node] - created))
    for c in p["status"].get("conditions", []):
        if c["type"] == "PodScheduled" and c["status"] == "True":
            to_bound.append(t(c["lastTransitionTime"]) - created)
def stats(v):
    v = sorted(v)
    return "median %4.0f s  max %4.0f s" % (v[len(v) // 2], v[-1]) if v else "n/a"
print("         per pod: to its NodeClaim %s   to bound %s" % (stats(to_claim), stats(to_bound)))
PY
}

# ------------------------------------------------------------ at scale
# NODES:PODS runs (KP_BENCH_LARGE, default 2000:20000; "" skips them): PODS pods
# of 750m CPU, created straight through the API by parallel clients (no
# Deployment controller between the request and the pod), on a NodePool held to
# c5.2xlarge (8 vCPU: 10 such pods a node), so NODES nodes. The control plane is
# kept from being what is measured: tests/e2e/bench_large.py plays a scheduler
# that costs nothing (marks a pod Unschedulable while no node has room, binds it
# to the first Ready, untainted node with room; kube-scheduler 1.20 filters every
# node for every pod, ~100 ms a pod at 2000 nodes here, and would be the only
# thing measured; the Deployment sizes above use it). Reported: time from the
# first pod created to all bound, per pod (creation to binding) p50/p99, the
# controller's RSS and CPU, its API requests per second (the API server's
# priority-and-fairness count for its flow schema, see controller_requests), and
# its RSS growth per 1000 objects it caches (pods, nodes, NodeClaims).
read -r -a LARGE <<<"${KP_BENCH_LARGE-2000:20000}"
readonly LARGE_NS=bench-large

calc() { awk "BEGIN {printf \"%.1f\", $1}"; }
# RSS (KiB) and CPU seconds (user + system) of a process.
proc_rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
proc_cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($14 + $15) / hz}' "/proc/$1/stat"; }

# The API server's count of requests dispatched for the controller's flow schema:
# it runs as the ServiceAccount kube-system/karpenter (kube-system-service-accounts;
# service-accounts when installed elsewhere); kube-* and the bench are admins (exempt).
controller_requests() {
  api GET /metrics | awk '/^apiserver_flowcontrol_dispatched_requests_total\{.*flow_schema="(kube-system-)?service-accounts"/ {s += $NF} END {printf "%d", s}'
}

large_run() {
  local nodes="${1%%:*}" pods="${1##*:}" rss0 cpu0 req0 t0 t1 rss1 cpu1 req1 claims
  k patch nodepool default --type merge -p \
    '{"spec":{"limits":{"cpu":"1000000"},"template":{"spec":{"requirements":[{"key":"node.kubernetes.io/instance-type","operator":"In","values":["c5.2xlarge"]},{"key":"karpenter.sh/capacity-type","operator":"In","values":["on-demand"]}]}}}}' >/dev/null
  rss0=$(proc_rss "$E2E_CONTROLLER_PID") cpu0=$(proc_cpu "$E2E_CONTROLLER_PID") req0=$(controller_requests)
  t0=$(now_ms)
  python3 "$HERE/bench_large.py" "$pods" "$LARGE_NS" || fail "$pods pods not all bound"
  t1=$(now_ms)
  sleep 5 # let the last registrations settle before reading the figures
  rss1=$(proc_rss "$E2E_CONTROLLER_PID") cpu1=$(proc_cpu "$E2E_CONTROLLER_PID") req1=$(controller_requests)
  claims=$(count nodeclaims)
  printf '%6d pods on %d nodes (%d wanted): controller RSS %s -> %s MiB (%s MiB per 1000 pods+nodes+claims),' \
    "$pods" "$claims" "$nodes" "$(calc "$rss0/1024")" "$(calc "$rss1/1024")" \
    "$(calc "($rss1-$rss0)/1024/($pods+2*$claims)*1000")"
  printf ' CPU %s s (%s%% of one core), API %s requests/s\n' "$(calc "$cpu1-$cpu0")" \
    "$(calc "($cpu1-$cpu0)*100000/($t1-$t0)")" "$(calc "($req1-$req0)*1000/($t1-$t0)")"
}

# Empties the cluster before the next run at scale.
large_reset() {
  k -n $LARGE_NS delete pods --all --wait=false >/dev/null 2>&1 || true
  wait_for '[ "$(k -n $LARGE_NS get pods -o name | grep -c .)" -eq 0 ]' 900 5 || fail "pods not gone"
  k delete nodeclaims --all --wait=false >/dev/null 2>&1 || true
  wait_for '[ "$(count nodeclaims)" -eq 0 ] && [ "$(count nodes)" -eq 0 ]' 900 5 || fail "nodes not gone"
}

main() {
  local n i
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter "$DATA/nodepool.yaml"
  k patch nodepool default --type merge -p '{"spec":{"limits":{"cpu":"100000"}}}' >/dev/null
  e2e_start_controller controller --disable-leader-election --kwok-finish-pods-immediately
  sleep 2
  echo "batch windows: Karpenter's defaults (1 s idle, 10 s max); $(nproc) cores"
  for n in "${SIZES[@]}"; do
    one_size "$n"
    reset
  done
  if [ ${#LARGE[@]} -gt 0 ]; then
    e2e_namespace $LARGE_NS
    echo "at scale: pods created through the API and bound by tests/e2e/bench_large.py; controller at its defaults"
    for i in "${!LARGE[@]}"; do
      [ "$i" -eq 0 ] || large_reset
      large_run "${LARGE[i]}"
    done
  fi
  printf 'controller peak RSS: %s\n' "$(awk '/VmHWM/ {printf "%.1f MiB", $2/1024}' "/proc/$E2E_CONTROLLER_PID/status")"
  pass "benchmark completed"
}

main
