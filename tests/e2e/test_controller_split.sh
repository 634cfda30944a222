#!/usr/bin/env bash
# Split consolidation executed on the real control plane (beyond Karpenter). A big
# node is left running three replicas that must each have a node of their own
# (topology spread by hostname, maxSkew 1): no single cheaper node can take them, so
# Karpenter keeps the node ("Can't remove without creating 3 candidates"). With
# CONSOLIDATION_SPLIT_MAX=1 the controller behaves so, and says it on the NodeClaim;
# with the default it replaces the node with three small, cheaper ones, waits for
# them, and only then drains the big one.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

readonly NS=e2e-split
METRICS=""

spread_running() { k -n $NS get pods -l app=spread --field-selector=status.phase=Running -o name | grep -c . || true; }
spread_nodes() { k -n $NS get pods -l app=spread -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u | grep -c . || true; }
claims() { k get nodeclaims -o name | grep -c . || true; }
metric() { curl -fsS "http://127.0.0.1:$METRICS/metrics" | grep "^$1" || true; }

setup() {
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter_rbac
  cat <<'EOF2' | k apply -f - >/dev/null
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
      expireAfter: Never
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
    budgets:
      - nodes: "0"
EOF2
}

start() {
  METRICS=$(e2e_free_port)
  e2e_start_controller "$1" --disable-leader-election --batch-idle-duration 500ms \
    --kwok-finish-pods-immediately --disruption-poll-interval 2s --consolidation-validation-period 2s \
    --metrics-port "$METRICS" "${@:2}"
}

# One big node, then three spread replicas that the scheduler puts on it (the only
# node, so no skew), then the big pod goes: the node is mostly idle.
big_node() {
  cat <<'EOF2' | k -n $NS apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  terminationGracePeriodSeconds: 0
  containers:
    - {name: pause, image: registry.k8s.io/pause:3.7, resources: {requests: {cpu: "12"}}}
EOF2
  wait_for '[ "$(k -n $NS get pod big -o jsonpath={.status.phase})" = Running ]' 120 ||
    fail "the big pod is not Running: $(k -n $NS get pod big -o wide)"
  BIG=$(k -n $NS get pod big -o jsonpath='{.spec.nodeName}')
  BIG_TYPE=$(k get node "$BIG" -o jsonpath='{.metadata.labels.node\.kubernetes\.io/instance-type}')
  pass "the big pod runs on $BIG ($BIG_TYPE)"
  cat <<'EOF2' | k -n $NS apply -f - >/dev/null
apiVersion: apps/v1
kind: Deployment
metadata: {name: spread}
spec:
  replicas: 3
  selector: {matchLabels: {app: spread}}
  template:
    metadata: {labels: {app: spread}}
    spec:
      terminationGracePeriodSeconds: 0
      topologySpreadConstraints:
        - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule,
           labelSelector: {matchLabels: {app: spread}}}
      containers:
        - {name: pause, image: registry.k8s.io/pause:3.7, resources: {requests: {cpu: "1"}}}
EOF2
  wait_for '[ "$(spread_running)" -eq 3 ]' 120 || fail "the spread replicas are not Running"
  check "the three replicas share the big node" test "$(spread_nodes)" -eq 1
  k -n $NS delete pod big --grace-period=0 --force >/dev/null 2>&1
  wait_for '! k -n $NS get pod big >/dev/null 2>&1' 60 || fail "the big pod did not go"
  k patch nodepool default --type merge -p '{"spec":{"disruption":{"budgets":[{"nodes":"100%"}]}}}' >/dev/null
}

# CONSOLIDATION_SPLIT_MAX=1: Karpenter's answer, and its event on the NodeClaim.
no_split() {
  local claim decisions
  start controller-nosplit --consolidation-split-max 1
  claim=$(k get node "$BIG" -o jsonpath='{.metadata.labels.karpenter\.sh/nodeclaim}')
  [ -n "$claim" ] || claim=$(k get nodeclaims -o jsonpath="{.items[?(@.status.nodeName==\"$BIG\")].metadata.name}")
  wait_for "k get events -A --field-selector involvedObject.name=$claim -o jsonpath='{.items[*].message}' | grep -q \"Can't remove without creating 3 candidates\"" 60 ||
    fail "no Unconsolidatable event naming 3 candidates on nodeclaim/$claim: $(k get events -A --field-selector involvedObject.name="$claim" -o jsonpath='{.items[*].message}')"
  pass "split max 1: nodeclaim/$claim says Can't remove without creating 3 candidates"
  check "its reason is Unconsolidatable" grep -q Unconsolidatable \
    <<<"$(k get events -A --field-selector involvedObject.name="$claim" -o jsonpath='{.items[*].reason}')"
  sleep 6
  check "the big node stays, with no other node launched" test "$(claims)" -eq 1
  decisions=$(metric 'karpenter_voluntary_disruption_decisions_total{' | grep -v ' 0$' || true)
  check "no disruption decision was counted ($decisions)" test -z "$decisions"
  e2e_stop_pid "$E2E_CONTROLLER_PID"
}

# The default (3): three small nodes replace the big one.
split() {
  local start_s types
  start_s=$SECONDS
  start controller-split
  wait_for '! k get node "$BIG" >/dev/null 2>&1' 180 || fail "the big node $BIG is still there: $(k get nodes -L node.kubernetes.io/instance-type)"
  pass "the big node $BIG went $((SECONDS - start_s))s after the controller started"
  wait_for '[ "$(spread_running)" -eq 3 ] && [ "$(spread_nodes)" -eq 3 ]' 120 ||
    fail "the replicas are not Running on three nodes: $(k -n $NS get pods -o wide)"
  pass "the three replicas run on three nodes"
  check "three NodeClaims remain" test "$(claims)" -eq 3
  types=$(k get nodes -o jsonpath='{range .items[*]}{.metadata.labels.node\.kubernetes\.io/instance-type}{" "}{end}')
  check "the replacements ($types) are smaller than $BIG_TYPE" \
    test "$(k get nodes -o jsonpath='{range .items[*]}{.status.capacity.cpu}{"\n"}{end}' | sort -n | tail -1)" -lt 12
  check "the decision is counted as a replace by single-node consolidation" grep -q \
    'decision="replace".*consolidation_type="single".*\|consolidation_type="single".*decision="replace"' \
    <<<"$(metric karpenter_voluntary_disruption_decisions_total)"
  k get nodeclaims -o yaml >"$KP_E2E_DIR/nodeclaims.yaml"
  check "no replacement is marked Drifted" test -z \
    "$(k get nodeclaims -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Drifted")].status}{end}' | grep True || true)"
  check "the log names the split" grep -q '"replacements":"3"' "$KP_E2E_DIR/controller-split.log"
}

setup
start controller-provision
big_node
e2e_stop_pid "$E2E_CONTROLLER_PID"
no_split
split
