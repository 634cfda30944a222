#!/usr/bin/env bash
# Static NodePools (spec.replicas, feature gate StaticCapacity) on the real
# control plane with kwok nodes:
#
#   - with the gate off the controller says it ignores the NodePool and
#     launches nothing;
#   - with it on, 3 replicas become 3 Ready NodeClaims and Nodes with no pod
#     pending, and the NodePool's status.nodes says 3;
#   - `kubectl scale nodepool` (the scale subresource) 3 -> 5: five; the
#     replicas are empty and consolidateAfter is 0s, yet consolidation leaves
#     them; pods that select the NodePool run on its nodes without a NodeClaim
#     of their own;
#   - a replica deleted by hand is replaced;
#   - 5 -> 2: the empty nodes go first, the ones running pods stay;
#   - limits.nodes 3 holds a scale to 4 at 3 ("nodepool node limit reached");
#   - a template change drifts the replicas and they are replaced one at a
#     time (Drifted budget 1): never more than replicas + 1 NodeClaims, and at
#     the end every one carries the new label.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

readonly NS=e2e-static
readonly POOL=fixed
SAMPLER_PID=""

jp() { k get "$1" "$2" -o jsonpath="$3"; }
claims() { k get nodeclaims -l karpenter.sh/nodepool=$POOL -o name 2>/dev/null | grep -c . || true; }
live_claims() {
  k get nodeclaims -l karpenter.sh/nodepool=$POOL -o jsonpath='{range .items[*]}{.metadata.deletionTimestamp}{"|"}{"\n"}{end}' |
    grep -c '^|' || true
}
ready_claims() {
  k get nodeclaims -l karpenter.sh/nodepool=$POOL \
    -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c '^True$' || true
}
pool_nodes() { k get nodes -l karpenter.sh/nodepool=$POOL -o name | grep -c . || true; }
status_nodes() { jp nodepool $POOL '{.status.nodes}'; }
settled() { # N: N live claims, all Ready, N Nodes, status.nodes N
  [ "$(live_claims)" -eq "$1" ] && [ "$(claims)" -eq "$1" ] && [ "$(ready_claims)" -eq "$1" ] &&
    [ "$(pool_nodes)" -eq "$1" ] && [ "$(status_nodes)" = "$1" ]
}

# apply_pool TEAM REPLICAS
apply_pool() {
  k apply -f - >/dev/null <<EOF
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: $POOL
spec:
  replicas: $2
  template:
    metadata:
      labels:
        team: $1
    spec:
      requirements:
        - key: kubernetes.io/arch
          operator: In
          values: ["amd64"]
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
        - key: node.kubernetes.io/instance-type
          operator: In
          values: ["m5.large", "m5.xlarge"]
      nodeClassRef:
        group: karpenter.kwok.sh
        kind: KWOKNodeClass
        name: default
      expireAfter: Never
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
    budgets:
      - nodes: "1"
EOF
}

start() { # NAME [ARGS...]
  local name="$1"
  shift
  e2e_start_controller "$name" --disable-leader-election --batch-idle-duration 500ms \
    --kwok-finish-pods-immediately --disruption-poll-interval 2s "$@"
}

setup() {
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter_rbac
  apply_pool blue 3
}

gate_off() {
  start gate-off
  wait_for "grep -q 'static NodePool ignored' '$KP_E2E_DIR/gate-off.log'" 30 ||
    fail "no warning that the static NodePool is ignored: $(tail -n 5 "$KP_E2E_DIR/gate-off.log")"
  sleep 3
  check "gate off: no NodeClaim launched" test "$(claims)" -eq 0
  e2e_stop_pid "$E2E_CONTROLLER_PID"
  start controller --feature-gates StaticCapacity=true
}

replicas() {
  wait_for "settled 3" 90 || fail "3 replicas not Ready: $(k get nodeclaims -o wide)"
  pass "3 replicas: 3 Ready NodeClaims and Nodes, status.nodes=$(status_nodes), no pod pending"
  check "kubectl shows the Nodes column" grep -q "$POOL .* 3 " <<<"$(k get nodepool $POOL)"
}

scale_up_and_keep() {
  k scale nodepool $POOL --replicas 5 >/dev/null
  check "kubectl scale wrote spec.replicas" test "$(jp nodepool $POOL '{.spec.replicas}')" = 5
  wait_for "settled 5" 90 || fail "scale to 5: $(k get nodeclaims -o wide)"
  pass "kubectl scale nodepool $POOL --replicas 5: five Ready replicas"
  check "the scale subresource reads status.nodes" \
    test "$(k get --raw /apis/karpenter.sh/v1/nodepools/$POOL/scale | jq .status.replicas)" = 5
  sleep 10 # five disruption polls over empty nodes with consolidateAfter 0s
  check "consolidation leaves the empty replicas (still 5)" test "$(live_claims)" -eq 5
  k -n $NS apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: agent
spec:
  replicas: 2
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      nodeSelector:
        karpenter.sh/nodepool: $POOL
      terminationGracePeriodSeconds: 0
      containers:
        - name: agent
          image: registry.k8s.io/pause:3.7
          resources:
            requests:
              cpu: 100m
EOF
  wait_for "[ \$(k -n $NS get pods -l app=agent --field-selector=status.phase=Running -o name | grep -c .) -eq 2 ]" 60 ||
    fail "the agents did not run on the static nodes: $(k -n $NS get pods -o wide)"
  sleep 3
  pass "pods selecting the NodePool run on its nodes"
  check "no NodeClaim was launched for them" test "$(claims)" -eq 5
}

replace_deleted() {
  local victim
  victim=$(k get nodeclaims -l karpenter.sh/nodepool=$POOL -o jsonpath='{.items[0].metadata.name}')
  k get pods -n $NS -o jsonpath='{.items[*].spec.nodeName}' | grep -q "$victim" && victim=$(
    k get nodeclaims -l karpenter.sh/nodepool=$POOL -o name | sed 's|.*/||' |
      grep -v -F -x -f <(k -n $NS get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}') | head -n 1)
  k delete nodeclaim "$victim" --wait=false >/dev/null
  wait_for "! k get nodeclaim $victim" 60 || fail "nodeclaim $victim not deleted"
  wait_for "settled 5" 90 || fail "the deleted replica was not replaced: $(k get nodeclaims -o wide)"
  pass "a replica deleted by hand ($victim) was replaced"
}

scale_down() {
  local busy n
  busy=$(k -n $NS get pods -l app=agent -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | sort -u)
  k scale nodepool $POOL --replicas 2 >/dev/null
  wait_for "settled 2" 90 || fail "scale to 2: $(k get nodeclaims -o wide)"
  pass "kubectl scale nodepool $POOL --replicas 2: two replicas left"
  for n in $busy; do
    check "node $n running an agent stayed" k get node "$n"
  done
  grep -q "deprovisioning nodeclaims to satisfy replica count" "$KP_E2E_DIR/controller.log" ||
    fail "no deprovisioning log line"
}

limit() {
  k patch nodepool $POOL --type merge -p '{"spec":{"limits":{"nodes":"3"}}}' >/dev/null
  k scale nodepool $POOL --replicas 4 >/dev/null
  wait_for "settled 3" 90 || fail "limit 3: $(k get nodeclaims -o wide)"
  wait_for "grep -q 'nodepool node limit reached' '$KP_E2E_DIR/controller.log'" 60 ||
    fail "no 'nodepool node limit reached' in the log"
  sleep 3
  check "limits.nodes 3 holds replicas 4 at 3 NodeClaims" test "$(claims)" -eq 3
  k patch nodepool $POOL --type merge -p '{"spec":{"limits":null}}' >/dev/null
  k scale nodepool $POOL --replicas 2 >/dev/null
  wait_for "settled 2" 90 || fail "back to 2: $(k get nodeclaims -o wide)"
}

# The pool's claims that count against its budget: not those whose instance is
# already terminating (Karpenter's count), which only wait for their finalizer.
budget_claims() {
  local rows
  rows=$(k get nodeclaims -l karpenter.sh/nodepool=$POOL -o jsonpath='{range .items[*]}{.metadata.name}{"|"}{.status.conditions[?(@.type=="InstanceTerminating")].status}{"\n"}{end}') || return 1
  awk -F'|' '$1 != "" && $2 != "True" { n++ } END { print n + 0 }' <<<"$rows"
}

start_sampler() {
  (
    while true; do
      budget_claims >>"$KP_E2E_DIR/drift.samples" 2>/dev/null || true
      sleep 0.5
    done
  ) &
  SAMPLER_PID=$!
  e2e_cleanup e2e_stop_pid "$SAMPLER_PID"
}

drift() {
  local teams most
  apply_pool green 2
  : >"$KP_E2E_DIR/drift.samples"
  start_sampler
  wait_for "[ \"\$(k get nodeclaims -l karpenter.sh/nodepool=$POOL -o jsonpath='{.items[*].metadata.labels.team}')\" = 'green green' ] && settled 2" 240 ||
    fail "the drifted replicas were not replaced: $(k get nodeclaims -L team -o wide)"
  e2e_stop_pid "$SAMPLER_PID"
  most=$(sort -n "$KP_E2E_DIR/drift.samples" | tail -n 1)
  pass "the template change replaced both replicas (team=green), at most $most NodeClaims at once"
  check "one replacement at a time: never more than replicas + 1 NodeClaims whose instance is not terminating ($most)" \
    test "$most" -le 3
  teams=$(k get nodes -l karpenter.sh/nodepool=$POOL -o jsonpath='{.items[*].metadata.labels.team}')
  check "the Nodes carry the new label ($teams)" test "$teams" = "green green"
  wait_for "[ \$(k -n $NS get pods -l app=agent --field-selector=status.phase=Running -o name | grep -c .) -eq 2 ]" 60 ||
    fail "the agents did not come back on the replacements: $(k -n $NS get pods -o wide)"
  pass "the agents run again, on the new replicas"
}

setup
gate_off
replicas
scale_up_and_keep
replace_deleted
scale_down
limit
drift
