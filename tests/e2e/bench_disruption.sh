#!/usr/bin/env bash
# Drift roll time on the real control plane, kwok provider: N nodes (one 2500m pod
# on each 4-vCPU node) of a NodePool whose budget is nodes "10%" (Karpenter's
# default); its template changes, drifting every node, and the time until every
# node has been replaced (all N claims carry the new label, none is deleting, the
# pods run) is measured with one disruption command at a time
# (DISRUPTION_PARALLELISM=1, Karpenter's serial loop) and with commands in
# parallel under the budget (the default), for N = 10 and 50. A kwok node is up
# at once; a real one boots for a while, which is the wait parallel commands
# overlap: a startup taint that a stand-in node agent lifts once the node is 10 s
# old plays that part. Figures only: nothing is asserted beyond the rolls
# completing. Run by `make bench-e2e` (or `tests/e2e/bench_disruption.sh` after
# `make build`); KP_BENCH_DRIFT_SIZES, KP_BENCH_DRIFT_BUDGET and
# KP_BENCH_DRIFT_BOOT (seconds) override the sizes, the budget and the boot time.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
readonly DATA="$HERE/data"
readonly NS=bench-drift
readonly BUDGET="${KP_BENCH_DRIFT_BUDGET:-10%}"
readonly BOOT="${KP_BENCH_DRIFT_BOOT:-10}"
readonly STARTUP=bench.example/booting
read -r -a SIZES <<<"${KP_BENCH_DRIFT_SIZES:-10 50}"
ROLL=0

# The node agent: lifts the startup taint of nodes BOOT seconds old, every 0.5 s.
start_agent() {
  (
    while true; do
      now=$(date +%s)
      k get nodes -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.metadata.creationTimestamp}{" "}{.spec.taints[*].key}{"\n"}{end}' 2>/dev/null |
        while read -r node created taints; do
          [[ " $taints " == *" $STARTUP "* ]] || continue
          [ $((now - $(date -d "$created" +%s))) -ge "$BOOT" ] || continue
          k taint node "$node" "$STARTUP:NoSchedule-" >/dev/null 2>&1 || true
        done
      sleep 0.5
    done
  ) &
  e2e_cleanup e2e_stop_pid "$!"
}

now_ms() { date +%s%3N; }
running() { [ "$(k -n $NS get pods --field-selector=status.phase=Running -o name | grep -c .)" -eq "$1" ]; }

initialized() {
  k get nodeclaims -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Initialized")].status}{"\n"}{end}' | grep -c '^True$' || true
}

# rolled N TEAM: N claims and N nodes, all labelled team=TEAM, none deleting, N pods Running.
rolled() {
  [ "$(count nodeclaims -l "team=$2")" -eq "$1" ] && [ "$(count nodeclaims)" -eq "$1" ] &&
    [ "$(count nodes -l "team=$2")" -eq "$1" ] && [ "$(count nodes)" -eq "$1" ] &&
    [ -z "$(k get nodeclaims -o jsonpath='{.items[*].metadata.deletionTimestamp}')" ] && running "$1"
}

# controller PARALLELISM: a fresh controller process in that mode.
controller() {
  [ -z "${E2E_CONTROLLER_PID:-}" ] || e2e_stop_pid "$E2E_CONTROLLER_PID"
  DISRUPTION_PARALLELISM="$1" e2e_start_controller "controller-p$1" --disable-leader-election \
    --batch-idle-duration 500ms --kwok-finish-pods-immediately --disruption-poll-interval 2s >/dev/null
}

# roll N: drifts every node (a new template label) and sets ROLL_S to the
# seconds until all N are replaced.
ROLL_S=""
roll() {
  local n="$1" team t0
  ROLL=$((ROLL + 1))
  team="roll$ROLL"
  t0=$(now_ms)
  k patch nodepool default --type merge -p "{\"spec\":{\"template\":{\"metadata\":{\"labels\":{\"team\":\"$team\"}}}}}" >/dev/null
  wait_for "rolled $n $team" 1800 0.5 || fail "$n nodes not rolled to team=$team within 30 minutes"
  ROLL_S=$(awk -v a="$(now_ms)" -v b="$t0" 'BEGIN { printf "%.1f", (a - b) / 1000 }')
}

one_size() {
  local n="$1" serial parallel
  controller 0
  sed -e "s/replicas: 10/replicas: $n/" -e "s/cpu: 500m/cpu: 2500m/" "$DATA/inflate.yaml" | k -n $NS apply -f - >/dev/null
  wait_for "running $n && [ \"\$(count nodes)\" -eq $n ] && [ \"\$(initialized)\" -eq $n ]" 900 ||
    fail "$n pods on $n nodes not Running within 15 minutes"
  controller 1
  roll "$n"
  serial=$ROLL_S
  controller 0
  roll "$n"
  parallel=$ROLL_S
  printf '%4d drifted nodes, budget nodes "%s": serial %7.1f s  parallel %7.1f s  (%.1fx)\n' \
    "$n" "$BUDGET" "$serial" "$parallel" "$(awk -v s="$serial" -v p="$parallel" 'BEGIN { print s / p }')"
  k -n $NS delete deployment inflate >/dev/null
  wait_for '[ "$(k -n $NS get pods -o name | grep -c .)" -eq 0 ]' 300 || fail "pods not gone"
  k delete nodeclaims --all --wait=false >/dev/null 2>&1 || true
  wait_for '[ "$(count nodeclaims)" -eq 0 ] && [ "$(count nodes)" -eq 0 ]' 300 || fail "nodes not gone"
}

main() {
  local n
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter_rbac
  k apply -f - >/dev/null <<EOF2
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    metadata: {labels: {team: roll0}}
    spec:
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}
        - {key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: ["5"]}
      startupTaints: [{key: $STARTUP, effect: NoSchedule}]
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
      expireAfter: Never
  limits: {cpu: 100000}
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: Never
    budgets: [{nodes: "$BUDGET"}]
EOF2
  start_agent
  echo "drift roll: kwok nodes that take ${BOOT}s to boot, --disruption-poll-interval 2s, $(nproc) cores"
  for n in "${SIZES[@]}"; do
    one_size "$n"
  done
  pass "benchmark completed"
}

main
