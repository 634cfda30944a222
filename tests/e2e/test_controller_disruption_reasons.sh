#!/usr/bin/env bash
# Why nodes stay, and why they go, as kubectl shows it on the real control plane:
# - NodePool `keep`: a node kept for a karpenter.sh/do-not-disrupt pod gets
#   DisruptionBlocked on its Node and NodeClaim, naming the pod (Karpenter's message);
# - NodePool `frozen` (budget nodes "0"): DisruptionBlocked on the NodePool for a
#   blocking budget; its claim turns Consolidatable only once consolidateAfter (60s)
#   has passed since its last pod event;
# - NodePool `balanced` (consolidationPolicy Balanced): a node left with a 250m pod
#   on 4 CPUs is scored: a ConsolidationApproved event, or a rejection counted in
#   karpenter_consolidation_moves_total (Karpenter writes no event for those);
# - NodePool `mover`: a node left with a 250m pod on 4 CPUs is replaced by a
#   cheaper one, announced first with ConsolidationCandidate on its Node and
#   NodeClaim (Karpenter's message, with the command);
# - /metrics serves karpenter_nodepools_nodes_consuming_budgets and
#   karpenter_voluntary_disruption_eligible_nodes.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

readonly NS=e2e-reasons
METRICS=""

running() { [ "$(k -n $NS get pods -l "app=$1" --field-selector=status.phase=Running -o name | grep -c .)" -eq 1 ]; }
pod_node() { k -n $NS get pods -l "app=$1" --field-selector=status.phase=Running -o jsonpath='{.items[0].spec.nodeName}'; }
claim_of_node() { k get nodeclaims -o jsonpath="{.items[?(@.status.nodeName==\"$1\")].metadata.name}"; }
cond() { k get nodeclaim "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].status}"; }
metric() { curl -fsS --max-time 10 "http://127.0.0.1:$METRICS/metrics" | grep "^$1" || true; }
# events KIND NAME: "reason: message" of every event about that object.
events() {
  k get events -A --field-selector "involvedObject.kind=$1,involvedObject.name=$2" \
    -o jsonpath='{range .items[*]}{.reason}{": "}{.message}{"\n"}{end}'
}

# pool NAME DISRUPTION
pool() {
  k apply -f - >/dev/null <<EOF2
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: $1}
spec:
  template:
    spec:
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}
        - {key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: ["5"]}
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
      expireAfter: Never
  disruption: $2
EOF2
}

# deployment NAME POOL CPU [ANNOTATIONS]
deployment() {
  k -n $NS apply -f - >/dev/null <<EOF2
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1}
spec:
  replicas: 1
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}, annotations: ${4:-{\}}}
    spec:
      terminationGracePeriodSeconds: 0
      nodeSelector: {karpenter.sh/nodepool: $2}
      containers:
        - name: pause
          image: registry.k8s.io/pause:3.7
          resources: {requests: {cpu: $3}}
EOF2
}

setup() {
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter_rbac
  pool keep '{consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, budgets: [{nodes: "100%"}]}'
  pool frozen '{consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 60s, budgets: [{nodes: "0"}]}'
  pool balanced '{consolidationPolicy: Balanced, consolidateAfter: 0s, budgets: [{nodes: "100%"}]}'
  pool mover '{consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, budgets: [{nodes: "100%"}]}'
  METRICS=$(e2e_free_port)
  e2e_start_controller controller --disable-leader-election --batch-idle-duration 500ms \
    --kwok-finish-pods-immediately --disruption-poll-interval 2s --consolidation-validation-period 2s \
    --metrics-port "$METRICS"
  deployment keeper keep 3 '{karpenter.sh/do-not-disrupt: "true"}'
  deployment frozen frozen 3
  deployment steady balanced 3
  deployment mover mover 3
  wait_for "running keeper && running frozen && running steady && running mover" 180 ||
    fail "the four pods are not Running after 180s"
  pass "one 3-CPU pod Running in each NodePool"
}

# The keeper's node gets DisruptionBlocked naming the pod (Karpenter's message;
# deduped per node and kind, as Karpenter dedupes per node). Shrunk to 250m, the
# pod would leave its 4-CPU node for a cheaper one, but for the annotation: the
# node stays.
do_not_disrupt() {
  local node claim
  node=$(pod_node keeper)
  claim=$(claim_of_node "$node")
  local want="DisruptionBlocked: Pod has \"karpenter.sh/do-not-disrupt\" annotation (Pod=$NS/keeper-"
  wait_for "grep -qF '$want' <<<\"\$(events Node $node)\"" 60 ||
    fail "no DisruptionBlocked event naming the pod on node $node: $(events Node "$node")"
  pass "node $node: $(grep -F "$want" <<<"$(events Node "$node")" | head -n 1)"
  check_soon "and the same on its NodeClaim $claim" 15 "grep -qF '$want' <<<\"\$(events NodeClaim $claim)\""
  k -n $NS set resources deployment keeper --requests=cpu=250m >/dev/null
  wait_for "running keeper && [ \"\$(k -n $NS get pods -l app=keeper -o name | grep -c .)\" -eq 1 ]" 90 ||
    fail "the keeper did not shrink"
  local pod
  pod=$(k -n $NS get pods -l app=keeper -o jsonpath='{.items[0].metadata.name}')
  sleep 15
  check "the node stays" k get node "$node"
  check "the shrunk pod $pod still runs on it, not evicted" \
    test "$(k -n $NS get pods -l app=keeper -o jsonpath='{.items[*].metadata.name} {.items[*].spec.nodeName}')" = "$pod $node"
  check "nothing was launched to replace it" test -z "$(k get nodeclaims -l karpenter.sh/nodepool=keep -o name | grep -v "/$claim\$" || true)"
}

# Right after setup, well inside consolidateAfter (60 s from the frozen pod's
# binding), its claim must not say Consolidatable yet; checked before the other
# steps, which take half a minute and more on a loaded machine.
frozen_not_yet_consolidatable() {
  local claim
  claim=$(claim_of_node "$(pod_node frozen)")
  wait_for "[ \"\$(cond $claim Initialized)\" = True ]" 60 || fail "claim $claim not initialized"
  check "claim $claim is not Consolidatable yet (consolidateAfter 60s)" test "$(cond "$claim" Consolidatable)" != True
}

budget_zero_and_consolidatable() {
  local claim
  claim=$(claim_of_node "$(pod_node frozen)")
  wait_for "grep -q 'DisruptionBlocked: No allowed disruptions for disruption reason .* due to blocking budget' <<<\"\$(events NodePool frozen)\"" 60 ||
    fail "no DisruptionBlocked event on NodePool frozen: $(events NodePool frozen)"
  pass "NodePool frozen: $(events NodePool frozen | awk '/^DisruptionBlocked/' | head -n 1)"
  wait_for "[ \"\$(cond $claim Consolidatable)\" = True ]" 120 || fail "claim $claim never turned Consolidatable"
  local since last
  since=$(k get nodeclaim "$claim" -o jsonpath='{.status.conditions[?(@.type=="Consolidatable")].lastTransitionTime}')
  last=$(k get nodeclaim "$claim" -o jsonpath='{.status.lastPodEventTime}')
  [ -n "$last" ] || last=$(k get nodeclaim "$claim" -o jsonpath='{.status.conditions[?(@.type=="Initialized")].lastTransitionTime}')
  pass "claim $claim turned Consolidatable at $since (last pod event $last)"
  check "not before consolidateAfter had passed" \
    test $(($(date -d "$since" +%s) - $(date -d "$last" +%s))) -ge 60
  check "and the budget kept its node" k get nodeclaim "$claim"
}

balanced() {
  local node claim
  node=$(pod_node steady)
  claim=$(claim_of_node "$node")
  k -n $NS set resources deployment steady --requests=cpu=250m >/dev/null
  # An approval is an event (Karpenter's ConsolidationApproved); a rejection
  # is counted in karpenter_consolidation_moves_total only, as in Karpenter.
  scored() {
    grep -Eq '^ConsolidationApproved: score' <<<"$(events NodeClaim "$claim"; events NodePool balanced)" ||
      metric 'karpenter_consolidation_moves_total{' | grep -q 'decision="rejected",nodepool="balanced"'
  }
  wait_for scored 120 || fail "node $node was never scored: $(events NodeClaim "$claim")"
  if grep -Eq '^ConsolidationApproved: score' <<<"$(events NodeClaim "$claim")"; then
    pass "Balanced: $(events NodeClaim "$claim" | awk '/^ConsolidationApproved/' | head -n 1)"
    check_soon "on the Node too" 15 "grep -Eq '^ConsolidationApproved: score' <<<\"\$(events Node $node)\""
  else
    pass "Balanced rejected the move: $(metric 'karpenter_consolidation_moves_total{' | grep balanced | head -n 1)"
    check "and wrote no ConsolidationRejected event" \
      bash -c "! grep -q '^ConsolidationRejected' <<<\"\$1\"" _ "$(events NodeClaim "$claim")"
  fi
}

# Shrunk to 250m, the mover's pod fits a cheaper node: the single-node
# consolidation that replaces its node names it on the Node and the NodeClaim
# as soon as it is computed, before it is validated and carried out.
consolidation_candidate() {
  local node claim want
  node=$(pod_node mover)
  claim=$(claim_of_node "$node")
  k -n $NS set resources deployment mover --requests=cpu=250m >/dev/null
  want="ConsolidationCandidate: Consolidation candidate: replace: [$node] -> [1 replacement] (savings: \$"
  wait_for "grep -qF '$want' <<<\"\$(events Node $node)\"" 120 ||
    fail "no ConsolidationCandidate event on node $node: $(events Node "$node")"
  pass "node $node: $(grep -F "$want" <<<"$(events Node "$node")" | head -n 1)"
  check_soon "and the same on its NodeClaim $claim" 15 "grep -qF '$want' <<<\"\$(events NodeClaim $claim)\""
}

metrics() {
  local consuming eligible
  consuming=$(metric karpenter_nodepools_nodes_consuming_budgets)
  eligible=$(metric karpenter_voluntary_disruption_eligible_nodes)
  e2e_say "metrics: $(tr '\n' ' ' <<<"$consuming$eligible")"
  check "karpenter_nodepools_nodes_consuming_budgets is served per NodePool and reason" \
    grep -q 'nodepool="frozen".*reason="Underutilized"\|reason="Underutilized".*nodepool="frozen"' <<<"$consuming"
  check "karpenter_voluntary_disruption_eligible_nodes is served per reason" \
    grep -q 'reason="underutilized"' <<<"$eligible"
}

setup
frozen_not_yet_consolidatable
do_not_disrupt
budget_zero_and_consolidatable
balanced
consolidation_candidate
metrics
