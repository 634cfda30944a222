#!/usr/bin/env bash
# Node auto-repair (FEATURE_GATES=NodeRepair=true) on the real control plane, kwok
# provider, five nodes of one NodePool. The kwok provider's repair policy is
# Karpenter's: Ready False or Unknown for 10 minutes. A test does not wait 10
# minutes: it plays a kubelet that reports its node NotReady since 11 minutes ago
# (a status patch, after annotating the node karpenter.kwok.sh/hold-node-status so
# the kwok kubelet stand-in stops reporting Ready for it).
# - one unhealthy node of five is repaired: its NodeClaim is deleted, the
#   provisioner launches a new one and the pods run again;
#   karpenter_nodeclaims_unhealthy_disrupted_total counts it;
# - three unhealthy nodes of five exceed the default threshold (20%): none is
#   repaired, and NodeRepairBlocked events say why on the Nodes, NodeClaims and
#   the NodePool.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
readonly DATA="$HERE/data"
readonly NS=e2e-repair
readonly NODES=5
METRICS=""

running() { [ "$(k -n $NS get pods -l app=inflate --field-selector=status.phase=Running -o name | grep -c .)" -eq "$1" ]; }
claim_of_node() { k get nodeclaims -o jsonpath="{.items[?(@.status.nodeName==\"$1\")].metadata.name}"; }
ready() { k get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}'; }
metric() { curl -fsS --max-time 10 "http://127.0.0.1:$METRICS/metrics" | grep "^$1" || true; }
# The Ready False transitions counted as repairs (summed over label sets).
repairs() { metric 'karpenter_nodeclaims_unhealthy_disrupted_total{' | awk '/condition="ready"/ { s += $2 } END { print s + 0 }'; }
events() {
  k get events -A --field-selector "involvedObject.kind=$1,involvedObject.name=$2,reason=$3" \
    -o jsonpath='{range .items[*]}{.message}{"\n"}{end}'
}
# kept CLAIM: it exists and is not being deleted.
kept() { [ "$(k get nodeclaim "$1" -o jsonpath='{.metadata.name}|{.metadata.deletionTimestamp}')" = "$1|" ]; }
iso() { date -u -d "$1" +%Y-%m-%dT%H:%M:%SZ; }

# not_ready NODE AGO: the node's kubelet reports Ready False since AGO ("11 minutes
# ago", "now"); the kwok kubelet stand-in holds off (annotation), as it would
# otherwise set Ready back to True.
not_ready() {
  local node="$1" ago="$2" i
  k annotate node "$node" karpenter.kwok.sh/hold-node-status=true --overwrite >/dev/null
  for i in 1 2 3; do
    api PATCH "/api/v1/nodes/$node/status" "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\",
      \"reason\":\"KubeletNotReady\",\"message\":\"e2e: container runtime network not ready\",
      \"lastHeartbeatTime\":\"$(iso now)\",\"lastTransitionTime\":\"$(iso "$ago")\"}]}}" \
      application/strategic-merge-patch+json >/dev/null 2>&1 || true
    sleep 1
    [ "$(ready "$node" 2>/dev/null)" != True ] && return 0
  done
  return 1
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
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}
        # 4 vCPUs at most: one 2500m pod per node
        - {key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: ["5"]}
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
      expireAfter: Never
  limits: {cpu: 100}
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: Never}
EOF2
  METRICS=$(e2e_free_port)
  FEATURE_GATES=NodeRepair=true e2e_start_controller controller --disable-leader-election \
    --batch-idle-duration 500ms --kwok-finish-pods-immediately --metrics-port "$METRICS"
  sed -e "s/replicas: 10/replicas: $NODES/" -e "s/cpu: 500m/cpu: 2500m/" "$DATA/inflate.yaml" | k -n $NS apply -f - >/dev/null
  wait_for "running $NODES && [ \"\$(count nodes)\" -eq $NODES ]" 180 ||
    fail "$NODES pods on $NODES nodes not Running after 180s ($(count nodes) nodes)"
  pass "$NODES pods Running, one per node"
}

repair_one() {
  local node claim before
  node=$(k get nodes -o jsonpath='{.items[0].metadata.name}')
  claim=$(claim_of_node "$node")
  before=$(k get nodeclaims -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort)
  check "no repair counted yet" test "$(repairs)" -eq 0
  not_ready "$node" "11 minutes ago" || fail "node $node could not be made NotReady"
  pass "node $node reports Ready False since 11 minutes ago"
  wait_for "! k get nodeclaim $claim" 90 || fail "the unhealthy node's claim $claim was not deleted"
  pass "the unhealthy node's NodeClaim $claim was deleted"
  wait_for "! k get node $node" 60 || fail "the unhealthy node $node is still there"
  # The repaired node is deleted without a drain; its pod goes only when
  # kube-controller-manager's pod GC finds it orphaned: checked every 20 s, deleted
  # 40 s after first seen, so up to 80 s before the ReplicaSet's new pod is pending.
  wait_for '[ -n "$(comm -13 <(echo "$before") <(k get nodeclaims -o jsonpath="{range .items[*]}{.metadata.name}{\"\\n\"}{end}" | sort))" ]' 150 ||
    fail "no new NodeClaim after the repair"
  wait_for "running $NODES && [ \"\$(count nodes)\" -eq $NODES ]" 120 || fail "the pods are not all Running again"
  pass "a new node was launched and the $NODES pods run again"
  check "karpenter_nodeclaims_unhealthy_disrupted_total counts 1 (condition ready)" test "$(repairs)" -eq 1
  check "karpenter_nodeclaims_disrupted_total says unhealthy" grep -q 'reason="unhealthy"' \
    <<<"$(metric karpenter_nodeclaims_disrupted_total)"
}

# Three NotReady at once (recently, so none is due yet), then all three back-dated:
# 3 unhealthy of 5 is more than 20% (1 node), so none is repaired.
threshold() {
  local sick=() n claims=() i
  mapfile -t sick < <(k get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | head -n 3)
  for n in "${sick[@]}"; do
    not_ready "$n" now || fail "node $n could not be made NotReady"
    claims+=("$(claim_of_node "$n")")
  done
  for n in "${sick[@]}"; do not_ready "$n" "11 minutes ago" || fail "node $n could not be back-dated"; done
  pass "nodes ${sick[*]} report Ready False since 11 minutes ago"
  wait_for "[ -n \"\$(events Node ${sick[0]} NodeRepairBlocked)\" ]" 60 ||
    fail "no NodeRepairBlocked event on ${sick[0]}"
  pass "NodeRepairBlocked on ${sick[0]}: $(events Node "${sick[0]}" NodeRepairBlocked | head -n 1)"
  wait_for "[ -n \"\$(events NodePool default NodeRepairBlocked)\" ]" 30 || true
  check "NodeRepairBlocked on the NodePool" test -n "$(events NodePool default NodeRepairBlocked)"
  check "NodeRepairBlocked on the NodeClaim ${claims[0]}" test -n "$(events NodeClaim "${claims[0]}" NodeRepairBlocked)"
  sleep 15
  for i in 0 1 2; do
    check "node ${sick[i]} is kept" kept "${claims[i]}"
  done
  check "no further repair counted" test "$(repairs)" -eq 1
}

setup
repair_one
threshold
