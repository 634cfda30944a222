#!/usr/bin/env bash
# A disruption whose replacement never comes up is abandoned, not forced: the
# NodePool has a startup taint that a stand-in for a node agent lifts from the first
# nodes only; drifting the NodePool makes the controller taint a node
# karpenter.sh/disrupted and launch a replacement, which stays uninitialized under
# the startup taint. Deleting that replacement (as its launch failing would) makes
# the controller take the taint off the candidate and keep it, its claim and its pods.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
readonly DATA="$HERE/data"
readonly NS=e2e-replace-abort
readonly STARTUP=e2e.example/agent-not-ready
AGENT_PID=""

running() { [ "$(k -n $NS get pods -l app=inflate --field-selector=status.phase=Running -o name | grep -c .)" -eq "$1" ]; }
node_exists() { k get node "$1" >/dev/null 2>&1; }
claims() { k get nodeclaims -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort; }
# Nodes carrying taint KEY, one per line.
tainted() {
  k get nodes -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec.taints[*].key}{"\n"}{end}' |
    awk -v key="$1" '{ for (i = 2; i <= NF; i++) if ($i == key) print $1 }'
}

# The node agent: lifts the startup taint every second until $KP_E2E_DIR/agent.off exists.
start_agent() {
  (
    while [ ! -e "$KP_E2E_DIR/agent.off" ]; do
      for n in $(tainted "$STARTUP"); do
        k taint node "$n" "$STARTUP:NoSchedule-" >/dev/null 2>&1 || true
      done
      sleep 1
    done
  ) &
  AGENT_PID=$!
  e2e_cleanup e2e_stop_pid "$AGENT_PID"
}

setup() {
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter_rbac
  k apply -f - >/dev/null <<EOF2
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      startupTaints: [{key: $STARTUP, effect: NoSchedule}]
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
      expireAfter: Never
  disruption:
    consolidateAfter: Never
    budgets: [{nodes: "100%"}]
EOF2
  e2e_start_controller controller --disable-leader-election --batch-idle-duration 500ms \
    --kwok-finish-pods-immediately --disruption-poll-interval 2s
  start_agent
  # One pod, so one node and one command: applied at 10 and scaled down, the
  # first batch could hold more pods and make more nodes than the test follows.
  sed -e "s/replicas: 10/replicas: 1/" "$DATA/inflate.yaml" | k -n $NS apply -f - >/dev/null
  wait_for "running 1" 120 || fail "the inflate pod is not Running after 120s"
  assert "1 pod Running on 1 node, the startup taint lifted by the agent ($(count nodes) nodes)" \
    test "$(count nodes)" -eq 1
}

REPLACEMENT=""
CANDIDATE=""
BEFORE=""
drift_without_replacement() {
  BEFORE=$(claims)
  touch "$KP_E2E_DIR/agent.off"
  e2e_stop_pid "$AGENT_PID"
  k patch nodepool default --type merge -p '{"spec":{"template":{"metadata":{"labels":{"team":"drifted"}}}}}' >/dev/null
  wait_for '[ -n "$(comm -13 <(echo "$BEFORE") <(claims))" ]' 60 || fail "no replacement NodeClaim after the drift"
  REPLACEMENT=$(comm -13 <(echo "$BEFORE") <(claims) | head -n 1)
  wait_for '[ -n "$(tainted karpenter.sh/disrupted)" ]' 30 || fail "no node was tainted karpenter.sh/disrupted"
  CANDIDATE=$(tainted karpenter.sh/disrupted | head -n 1)
  pass "drift: candidate $CANDIDATE tainted, replacement $REPLACEMENT launched"
  wait_for "[ -n \"\$(k get nodeclaim $REPLACEMENT -o jsonpath='{.status.nodeName}')\" ]" 30 ||
    fail "the replacement did not register"
  sleep 5
  check "the replacement stays uninitialized under the startup taint" test \
    "$(k get nodeclaim "$REPLACEMENT" -o jsonpath='{.status.conditions[?(@.type=="Initialized")].status}')" != True
  check "the candidate's claim is not deleted while it waits" test -z \
    "$(k get nodeclaims -o jsonpath='{.items[*].metadata.deletionTimestamp}')"
  check "its pod still runs" running 1
}

abandon() {
  # No new disruption may start afterwards: the check below is about this one.
  k patch nodepool default --type merge -p '{"spec":{"disruption":{"budgets":[{"nodes":"0"}]}}}' >/dev/null
  k delete nodeclaim "$REPLACEMENT" --wait=false >/dev/null
  wait_for '[ -z "$(tainted karpenter.sh/disrupted)" ]' 30 ||
    fail "still tainted karpenter.sh/disrupted: $(tainted karpenter.sh/disrupted)"
  pass "the replacement was deleted and the candidate's disrupted taint removed"
  check "the controller said it abandoned the disruption" \
    grep -q 'abandoning disruption; keeping its nodes' "$KP_E2E_DIR/controller.log"
  wait_for "! k get nodeclaim $REPLACEMENT" 60 || fail "the replacement claim is still there"
  check "the original claims are all kept" test "$(claims)" = "$BEFORE"
  check "none of them is being deleted" test -z \
    "$(k get nodeclaims -o jsonpath='{.items[*].metadata.deletionTimestamp}')"
  check "the candidate node $CANDIDATE is kept" node_exists "$CANDIDATE"
  check "the pod still runs" running 1
}

setup
drift_without_replacement
abandon
