#!/usr/bin/env bash
# Termination on the real control plane: deleting a Node (or its NodeClaim) taints
# it karpenter.sh/disrupted:NoSchedule, evicts its pods through the Eviction API so
# they come back elsewhere, deletes the kwok instance and lets the objects go; a
# PodDisruptionBudget that allows no disruption holds the drain (the API server
# answers 429) until it is relaxed.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
readonly DATA="$HERE/data"
readonly NS=e2e-termination

running() { [ "$(k -n $NS get pods -l app=inflate --field-selector=status.phase=Running -o name | grep -c .)" -eq "$1" ]; }
jp() { k get "$1" "$2" -o jsonpath="$3"; }
pods_on() { k -n $NS get pods --field-selector "spec.nodeName=$1" -o name | grep -c . || true; }
claim_of() { k get nodeclaims -o jsonpath="{.items[?(@.status.nodeName==\"$1\")].metadata.name}"; }
# A node that runs at least one inflate pod.
busy_node() { k -n $NS get pods -l app=inflate -o jsonpath='{.items[0].spec.nodeName}'; }

setup() {
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter "$DATA/nodepool.yaml"
  e2e_start_controller controller --disable-leader-election --batch-idle-duration 500ms
  k -n $NS apply -f "$DATA/inflate.yaml" >/dev/null
  k -n $NS scale deployment inflate --replicas 4 >/dev/null
  wait_for "running 4" 120 || fail "4 inflate pods not Running after 120s"
  pass "4 pods Running on $(count nodes) node(s)"
}

delete_node() {
  local node claim
  node=$(busy_node)
  claim=$(claim_of "$node")
  check "node $node carries the termination finalizer" \
    grep -q karpenter.sh/termination <<<"$(jp node "$node" '{.metadata.finalizers}')"
  k delete node "$node" --wait=false >/dev/null
  wait_for "! k get node $node" 90 || fail "node $node still there 90s after its deletion"
  pass "deleted node $node drained and gone"
  wait_for "! k get nodeclaim $claim" 30 || fail "nodeclaim $claim outlived its node"
  pass "its NodeClaim $claim went with it"
  wait_for "running 4" 120 || fail "evicted pods did not come back Running"
  wait_for "[ \"\$(pods_on $node)\" -eq 0 ]" 30 || fail "pods still bound to the deleted node $node"
  pass "the evicted pods run elsewhere"
}

pdb_holds_drain() {
  local node claim
  cat <<EOF2 | k -n $NS apply -f - >/dev/null
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: inflate}
spec:
  maxUnavailable: 0
  selector: {matchLabels: {app: inflate}}
EOF2
  node=$(busy_node)
  claim=$(claim_of "$node")
  k delete nodeclaim "$claim" --wait=false >/dev/null
  wait_for "grep -q karpenter.sh/disrupted <<<\"\$(jp node $node '{.spec.taints}')\"" 30 ||
    fail "node $node not tainted karpenter.sh/disrupted"
  pass "the NodeClaim's node is tainted karpenter.sh/disrupted:NoSchedule"
  sleep 15
  check "with maxUnavailable 0 the node stays" k get node "$node"
  check "and keeps its pods" test "$(pods_on "$node")" -ge 1
  k -n $NS patch pdb inflate --type merge -p '{"spec":{"maxUnavailable":1}}' >/dev/null
  wait_for "! k get node $node" 120 || fail "node $node not drained after the PDB was relaxed"
  pass "relaxing the PDB lets the drain finish"
  wait_for "running 4" 120 || fail "pods not Running again after the drain"
  pass "all 4 pods Running again"
}

setup
delete_node
pdb_holds_drain
