#!/usr/bin/env bash
# Provisioning latency on the real control plane, kwok provider: for Deployments of
# 10, 100 and 1000 pods (250m CPU each), the time from creating the Deployment to the
# first NodeClaim, to the last NodeClaim, and to the last pod bound by kube-scheduler;
# per pod (from the API's timestamps, so to the second), the time from the pod's
# creation to its node's NodeClaim and to its PodScheduled condition, as median and
# maximum; then the controller's peak RSS. Figures only: nothing is asserted beyond the run
# completing. Run by `make bench-e2e` (or `tests/e2e/bench_provisioning.sh` after
# `make build`); KP_BENCH_SIZES overrides the sizes.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
readonly DATA="$HERE/data"
readonly NS=bench
read -r -a SIZES <<<"${KP_BENCH_SIZES:-10 100 1000}"

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

main() {
  local n
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
  printf 'controller peak RSS: %s\n' "$(awk '/VmHWM/ {printf "%.1f MiB", $2/1024}' "/proc/$E2E_CONTROLLER_PID/status")"
  pass "benchmark completed"
}

main
