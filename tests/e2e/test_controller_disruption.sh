#!/usr/bin/env bash
# Disruption executed on the real control plane: after a Deployment shrinks from
# 30 to 3 replicas, a budget of "0" nodes in an open schedule window keeps every
# node; opening the budget lets consolidation remove the surplus within a few loops
# while a PDB (minAvailable 2) is never broken; a node whose pod says
# karpenter.sh/do-not-disrupt stays; changing the NodePool's template drifts every
# node and replaces them one at a time under a budget of 1.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
readonly DATA="$HERE/data"
readonly NS=e2e-disruption
METRICS=""

running() { [ "$(k -n $NS get pods -l app=inflate --field-selector=status.phase=Running -o name | grep -c .)" -eq "$1" ]; }
keeper_node() { k -n $NS get pod keeper -o jsonpath='{.spec.nodeName}'; }
# Prints nothing when the list fails, so a failed request is not a sample of 0.
ready_pods() {
  local rows
  rows=$(k -n $NS get pods -l app=inflate -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{" "}{.metadata.deletionTimestamp}{"\n"}{end}') || return 1
  grep -c '^True $' <<<"$rows" || true
}

# watch_min FILE CMD: in the background, every second, keeps in FILE the smallest
# number CMD printed, and the largest in FILE.max. Stopped by stop_watch.
WATCH_PID=""
watch_min() {
  local file="$1" cmd="$2"
  (
    min=1000000 max=0
    while true; do
      v=$(eval "$cmd" 2>/dev/null) || v=""
      if [ -n "$v" ]; then
        [ "$v" -lt "$min" ] && min=$v
        [ "$v" -gt "$max" ] && max=$v
        echo "$min" >"$file"
        echo "$max" >"$file.max"
      fi
      sleep 1
    done
  ) &
  WATCH_PID=$!
  e2e_cleanup e2e_stop_pid "$WATCH_PID"
}
stop_watch() { e2e_stop_pid "$WATCH_PID"; }

# Claims being deleted that still count against a budget: Karpenter (and we) stop
# counting one once its instance is terminating, so the next command may start
# while that claim waits for its finalizer.
deleting_claims() {
  local rows
  rows=$(k get nodeclaims -o jsonpath='{range .items[*]}{.metadata.deletionTimestamp}{"|"}{.status.conditions[?(@.type=="InstanceTerminating")].status}{"\n"}{end}') || return 1
  awk -F'|' '$1 != "" && $2 != "True" { n++ } END { print n + 0 }' <<<"$rows"
}
metric() { curl -fsS "http://127.0.0.1:$METRICS/metrics" | grep "^$1" || true; }

setup() {
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter "$DATA/nodepool-consolidating.yaml"
  METRICS=$(e2e_free_port)
  e2e_start_controller controller --disable-leader-election --batch-idle-duration 500ms \
    --kwok-finish-pods-immediately --disruption-poll-interval 2s --consolidation-validation-period 2s \
    --metrics-port "$METRICS"
  cat <<EOF2 | k -n $NS apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata:
  name: keeper
  annotations: {karpenter.sh/do-not-disrupt: "true"}
spec:
  terminationGracePeriodSeconds: 0
  containers:
    - name: pause
      image: registry.k8s.io/pause:3.7
      resources: {requests: {cpu: 250m}}
EOF2
  k -n $NS apply -f "$DATA/inflate.yaml" >/dev/null
  k -n $NS scale deployment inflate --replicas 30 >/dev/null
  wait_for "running 30" 180 || fail "30 inflate pods not Running after 180s"
  wait_for '[ -n "$(keeper_node)" ]' 60 || fail "the do-not-disrupt pod was not scheduled"
  pass "30 pods and a do-not-disrupt pod Running on $(count nodes) nodes"
}

budget_zero() {
  local nodes names
  nodes=$(count nodes)
  names=$(k get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort)
  k -n $NS scale deployment inflate --replicas 3 >/dev/null
  wait_for "running 3" 60 || fail "the Deployment did not shrink to 3"
  sleep 20
  # Every node named before is still there (a claim launched late may add one;
  # a budget of 0 forbids removing, not adding).
  check "a budget of 0 nodes keeps all $nodes nodes" test -z \
    "$(comm -23 <(echo "$names") <(k get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort))"
  check "the allowed-disruptions metric says 0 for Underutilized" grep -q 'reason="Underutilized"} 0$' \
    <<<"$(metric karpenter_nodepools_allowed_disruptions)"
}

consolidate() {
  local before keeper start_s
  before=$(count nodes)
  keeper=$(keeper_node)
  cat <<EOF2 | k -n $NS apply -f - >/dev/null
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: inflate}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: inflate}}
EOF2
  watch_min "$KP_E2E_DIR/ready.min" ready_pods
  start_s=$SECONDS
  k patch nodepool default --type merge -p '{"spec":{"disruption":{"budgets":[{"nodes":"100%"}]}}}' >/dev/null
  [ "$before" -ge 4 ] || fail "only $before nodes before consolidation: nothing to show"
  wait_for '[ "$(count nodes)" -le 2 ]' 240 || fail "still $(count nodes) nodes 240s after the budget opened"
  pass "consolidation went from $before nodes to $(count nodes) in $((SECONDS - start_s))s"
  wait_for "running 3" 60 || fail "the 3 pods are not Running after consolidation"
  stop_watch
  check "the PDB (minAvailable 2) held throughout: at least $(cat "$KP_E2E_DIR/ready.min") Ready" \
    test "$(cat "$KP_E2E_DIR/ready.min")" -ge 2
  check "the do-not-disrupt pod's node $keeper stayed" k get node "$keeper"
  check "decisions are counted" grep -q 'karpenter_voluntary_disruption_decisions_total' <<<"$(metric karpenter_voluntary_disruption_decisions_total)"
}

drift() {
  local old start_s
  k -n $NS delete pod keeper --wait=false >/dev/null
  old=$(k get nodes -o jsonpath='{.items[*].metadata.name}')
  start_s=$SECONDS
  watch_min "$KP_E2E_DIR/deleting" deleting_claims
  k patch nodepool default --type merge -p \
    '{"spec":{"disruption":{"budgets":[{"nodes":"1"}]},"template":{"metadata":{"labels":{"team":"drifted"}}}}}' >/dev/null
  wait_for '[ "$(k get nodes -l team!=drifted -o name | grep -c .)" -eq 0 ] && [ "$(count nodes)" -ge 1 ]' 240 ||
    fail "nodes without the new template label remain: $(k get nodes -L team)"
  pass "every drifted node was replaced in $((SECONDS - start_s))s (was: $old)"
  stop_watch
  check "one node at a time under a budget of 1 (at most $(cat "$KP_E2E_DIR/deleting.max") deleting)" \
    test "$(cat "$KP_E2E_DIR/deleting.max")" -le 1
  wait_for "running 3" 120 || fail "pods not Running on the replacements"
  pass "the pods run on the replacements"
}

setup
budget_zero
consolidate
drift
