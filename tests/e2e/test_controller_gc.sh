#!/usr/bin/env bash
# Garbage collection on the real control plane: a NodeClaim whose instance vanished
# (its kwok Node deleted behind the controller's back, finalizer stripped) is deleted
# and its pods find a new node; an instance launched for a NodeClaim that does not
# exist (as after a crash between launch and the claim's status) is terminated once
# older than Karpenter's 30 s grace.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
readonly DATA="$HERE/data"
readonly NS=e2e-gc
readonly ORPHAN=default-orphan1

running() { [ "$(k -n $NS get pods -l app=inflate --field-selector=status.phase=Running -o name | grep -c .)" -eq "$1" ]; }
busy_node() { k -n $NS get pods -l app=inflate -o jsonpath='{.items[0].spec.nodeName}'; }
claim_of() { k get nodeclaims -o jsonpath="{.items[?(@.status.nodeName==\"$1\")].metadata.name}"; }

setup() {
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter "$DATA/nodepool.yaml"
  e2e_start_controller controller --disable-leader-election --batch-idle-duration 500ms \
    --kwok-finish-pods-immediately --garbage-collection-interval 3s
  k -n $NS apply -f "$DATA/inflate.yaml" >/dev/null
  k -n $NS scale deployment inflate --replicas 2 >/dev/null
  wait_for "running 2" 120 || fail "2 inflate pods not Running after 120s"
  pass "2 pods Running on $(count nodes) node(s)"
}

vanished_instance() {
  local node claim
  node=$(busy_node)
  claim=$(claim_of "$node")
  k patch node "$node" --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null
  k delete node "$node" --wait=false >/dev/null
  wait_for "! k get nodeclaim $claim" 60 || fail "nodeclaim $claim outlived its instance by 60s"
  pass "the NodeClaim of a vanished instance was collected"
  wait_for "running 2" 120 || fail "the pods did not come back"
  pass "its pods run on a new node"
}

orphan_instance() {
  local prog start_s
  prog=$(e2e_program kwok)
  cat >"$KP_E2E_DIR/orphan.json" <<EOF2
{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
 "metadata": {"name": "$ORPHAN", "labels": {"karpenter.sh/nodepool": "default"}},
 "spec": {"requirements": [
   {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["c6a.large"]},
   {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}],
  "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"}}}
EOF2
  "$prog" create "$KP_E2E_DIR/orphan.json" >/dev/null || fail "could not launch an orphan kwok instance"
  start_s=$SECONDS
  wait_for "k get node $ORPHAN" 20 || fail "the orphan instance has no Node"
  pass "an instance without a NodeClaim exists (Node $ORPHAN)"
  # 20 s after the launch, not after the Node showed up: well inside the grace.
  sleep $((20 - (SECONDS - start_s) > 0 ? 20 - (SECONDS - start_s) : 0))
  check "it is kept within the 30 s grace ($((SECONDS - start_s))s after launch)" k get node "$ORPHAN"
  wait_for "! k get node $ORPHAN" 60 || fail "orphan instance $ORPHAN still there"
  pass "the orphan instance was terminated $((SECONDS - start_s))s after launch"
}

setup
vanished_instance
orphan_instance
