#!/usr/bin/env bash
# CSI attach limits with karpenter-controller run, kwok provider, on the real control
# plane: a node whose CSINode lets ebs.csi.aws.com attach one volume, and which has the
# CPU for more pods, runs a pod with one bound claim; a second pod with another claim
# is refused by kube-scheduler there (max volume count), and the controller, counting
# the attachment as Karpenter's VolumeUsage does, launches a node for it instead of
# waiting on the full one. A pod sharing the first claim needs no new node.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

readonly NS=e2e-csi

jp() { k get "$1" "$2" -o jsonpath="$3"; }
node_of() { k get pods -n $NS "$1" -o jsonpath='{.spec.nodeName}'; }
running() { [ "$(k get pods -n $NS "$1" -o jsonpath='{.status.phase}')" = Running ]; }

pool() {
  k apply -f - >/dev/null <<'EOF'
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: csi
spec:
  template:
    spec:
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.xlarge]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
      expireAfter: Never
  limits: {cpu: 64}
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: Never}
EOF
}

# claim NAME: a PersistentVolume of the EBS CSI driver, pre-bound to claim NAME.
claim() {
  k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-$1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-$1}
  claimRef: {namespace: $NS, name: $1}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $1, namespace: $NS}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  volumeName: pv-$1
  resources: {requests: {storage: 1Gi}}
EOF
  wait_for "[ \"\$(k get pvc -n $NS $1 -o jsonpath='{.status.phase}')\" = Bound ]" 60 ||
    fail "claim $1 did not bind: $(k get pvc,pv -A)"
}

# pod NAME CLAIM: half a CPU and the claim.
pod() {
  k apply -n $NS -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  terminationGracePeriodSeconds: 0
  containers:
    - {name: pause, image: registry.k8s.io/pause:3.7, resources: {requests: {cpu: 500m}}}
  volumes:
    - {name: data, persistentVolumeClaim: {claimName: $2}}
EOF
}

# The node's CSI plugin registering, with room for `count` EBS volumes.
csinode() {
  k apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: $1}
spec:
  drivers:
    - {name: ebs.csi.aws.com, nodeID: $1, allocatable: {count: $2}}
EOF
}

setup() {
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter_rbac
  pool
  e2e_start_controller controller --disable-leader-election --kwok-finish-pods-immediately \
    --batch-idle-duration 500ms
}

first_node() {
  claim data-0
  pod first data-0
  wait_for "running first" 90 || fail "pod first not Running: $(k get pods -n $NS -o wide)"
  FIRST=$(node_of first)
  csinode "$FIRST" 1
  pass "pod first runs on $FIRST, whose CSINode allows one EBS volume"
}

full_node_gets_no_second_volume() {
  claim data-1
  pod second data-1
  # A real node's CSI plugin registers its CSINode once the node is up; kwok has
  # no plugin, so the test plays it. kube-scheduler (1.3x) re-queues a pod its
  # volume limits refused on that CSINode event, not on the Node's.
  wait_for '[ "$(count nodes)" -ge 2 ]' 90 || fail "no second node: $(k get nodeclaims,nodes)"
  local n
  for n in $(k get nodes -o jsonpath='{.items[*].metadata.name}'); do
    [ "$n" = "$FIRST" ] || csinode "$n" 25
  done
  wait_for "running second" 120 ||
    fail "pod second not Running: $(k get pods -n $NS -o wide; k get nodeclaims; k get events -n $NS)"
  check "pod second runs on another node ($(node_of second)), not on the full $FIRST" \
    test "$(node_of second)" != "$FIRST"
  check "a NodeClaim was launched for it" test "$(count nodeclaims)" -eq 2
}

# data-0 is attached on FIRST already: a third pod mounting it needs no node of its own.
shared_claim_fits() {
  pod reader data-0
  wait_for "running reader" 60 || fail "pod reader not Running: $(k get pods -n $NS -o wide)"
  sleep 3
  check "a pod sharing data-0 runs ($(node_of reader)) without a NodeClaim of its own" \
    test "$(count nodeclaims)" -eq 2
}

setup
first_node
full_node_gets_no_second_volume
shared_claim_fits
