#!/usr/bin/env bash
# Expiration does not wait behind a disruption command in flight, on the real
# control plane. NodePool `steady` has a startup taint that a stand-in for a node
# agent lifts from its first node only; its one pod shrinks from 3 CPUs to 250m,
# so consolidation replaces the 4-CPU node with a cheaper one, and that
# replacement stays uninitialized under the startup taint: the command waits.
# Meanwhile NodePool `short` (expireAfter 30s) gets a node; when it expires the
# controller deletes its claim at once (forceful: no budget, no replacement to
# wait for) and the provisioner launches a new one for the evicted pod, all while
# the consolidation command is still waiting on its replacement.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

readonly NS=e2e-expiration
readonly STARTUP=e2e.example/agent-not-ready
AGENT_PID=""

running() { [ "$(k -n $NS get pods -l "app=$1" --field-selector=status.phase=Running -o name | grep -c .)" -eq 1 ]; }
pod_node() { k -n $NS get pods -l "app=$1" --field-selector=status.phase=Running -o jsonpath='{.items[0].spec.nodeName}'; }
claims_of() { k get nodeclaims -l "karpenter.sh/nodepool=$1" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort; }
claim_of_node() { k get nodeclaims -o jsonpath="{.items[?(@.status.nodeName==\"$1\")].metadata.name}"; }
cond() { k get nodeclaim "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].status}"; }
tainted() {
  k get nodes "${@:2}" -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec.taints[*].key}{"\n"}{end}' |
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

# pool NAME EXPIRE_AFTER DISRUPTION [STARTUP_TAINTS]
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
      startupTaints: ${4:-[]}
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
      expireAfter: $2
  disruption: $3
EOF2
}

# deployment NAME POOL CPU
deployment() {
  k -n $NS apply -f - >/dev/null <<EOF2
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1}
spec:
  replicas: 1
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
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
  pool steady Never '{consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s, budgets: [{nodes: "100%"}]}' \
    "[{key: $STARTUP, effect: NoSchedule}]"
  pool short 30s '{consolidationPolicy: WhenEmpty, consolidateAfter: Never, budgets: [{nodes: "0"}]}'
  e2e_start_controller controller --disable-leader-election --batch-idle-duration 500ms \
    --kwok-finish-pods-immediately --disruption-poll-interval 2s --consolidation-validation-period 2s
  start_agent
  deployment work steady 3
  wait_for "running work" 120 || fail "the 3-CPU pod is not Running after 120s"
  CANDIDATE=$(pod_node work)
  wait_for "[ \"\$(cond \"\$(claim_of_node $CANDIDATE)\" Initialized)\" = True ]" 60 || fail "node $CANDIDATE not initialized"
  pass "the 3-CPU pod runs on $CANDIDATE, its startup taint lifted by the agent"
}

CANDIDATE=""
REPLACEMENT=""
consolidation_waits() {
  local before
  before=$(claims_of steady)
  touch "$KP_E2E_DIR/agent.off"
  e2e_stop_pid "$AGENT_PID"
  k -n $NS set resources deployment work --requests=cpu=250m >/dev/null
  wait_for "running work && [ \"\$(pod_node work)\" = $CANDIDATE ] && [ \"\$(k -n $NS get pods -l app=work -o name | grep -c .)\" -eq 1 ]" 90 ||
    fail "the 250m pod does not run alone on $CANDIDATE"
  pass "the pod shrank to 250m on its 4-CPU node"
  wait_for '[ -n "$(comm -13 <(echo "$before") <(claims_of steady))" ]' 120 || fail "no replacement NodeClaim for $CANDIDATE"
  REPLACEMENT=$(comm -13 <(echo "$before") <(claims_of steady) | head -n 1)
  wait_for "[ \"\$(tainted karpenter.sh/disrupted)\" = $CANDIDATE ]" 30 || fail "$CANDIDATE is not tainted karpenter.sh/disrupted"
  pass "consolidation: $CANDIDATE tainted, replacement $REPLACEMENT launched"
  wait_for "[ -n \"\$(k get nodeclaim $REPLACEMENT -o jsonpath='{.status.nodeName}')\" ]" 30 || fail "the replacement did not register"
  check "the candidate's claim says DisruptionReason" test "$(cond "$(claim_of_node "$CANDIDATE")" DisruptionReason)" = True
}

# The consolidation command is still waiting: its candidate tainted (the only
# node of NodePool steady to be; one of NodePool short may be, while it expires),
# its claim not deleted, its replacement there and uninitialized.
still_waiting() {
  local claim
  claim=$(claim_of_node "$CANDIDATE")
  [ -n "$claim" ] && [ -z "$(k get nodeclaim "$claim" -o jsonpath='{.metadata.deletionTimestamp}')" ] &&
    [ "$(tainted karpenter.sh/disrupted -l karpenter.sh/nodepool=steady)" = "$CANDIDATE" ] &&
    k get nodeclaim "$REPLACEMENT" >/dev/null 2>&1 && [ "$(cond "$REPLACEMENT" Initialized)" != True ]
}

expire() {
  local first next
  deployment victim short 250m
  wait_for "running victim" 120 || fail "the pod of NodePool short is not Running after 120s"
  first=$(claims_of short)
  [ "$(echo "$first" | grep -c . || true)" -eq 1 ] || fail "expected one claim of NodePool short: $first"
  check "the consolidation command is still waiting when the short-lived node runs" still_waiting
  wait_for "! k get nodeclaim $first" 120 || fail "the claim $first of NodePool short did not go (expireAfter 30s)"
  pass "the expired claim $first was deleted while the consolidation command waited"
  check "the consolidation command is still waiting after the expiration" still_waiting
  wait_for '[ -n "$(comm -13 <(echo "$first") <(claims_of short))" ]' 60 || fail "no new claim for the expired node's pod"
  next=$(comm -13 <(echo "$first") <(claims_of short) | head -n 1)
  pass "the provisioner launched $next for the evicted pod"
  wait_for "running victim && [ \"\$(claim_of_node \"\$(pod_node victim)\")\" = $next ]" 90 ||
    fail "the pod does not run on the new node of $next"
  pass "the pod runs again, on $next"
  check "the controller logged the forceful expiration" \
    grep -q '"reason":"Expired".*"forceful":"true"\|"forceful":"true".*"reason":"Expired"' "$KP_E2E_DIR/controller.log"
  check "the consolidation command is still waiting at the end" still_waiting
}

setup
consolidation_waits
expire
