#!/usr/bin/env bash
# CapacityBuffers (autoscaling.x-k8s.io/v1beta1, feature gate CapacityBuffer)
# on the real control plane with kwok nodes:
#
#   - a buffer of 2 chunks of a PodTemplate: status.replicas 2, the template
#     and its generation, ReadyForProvisioning=True (Resolved); a NodeClaim is
#     launched with no pod pending, and Provisioning turns True
#     (FitsExistingCapacity) once its node is there;
#   - the node holding the headroom is empty of real pods and its NodePool
#     consolidates empty nodes at once, yet it stays, with Karpenter's
#     Unconsolidatable event "has buffer pods";
#   - real pods that fit the headroom run on that node without waiting for a
#     launch, and the buffer launches new room for its chunks;
#   - a buffer on 50% of a Deployment follows its scale;
#   - a buffer whose PodTemplate is missing says PodTemplateNotFound and
#     wants nothing;
#   - deleting the buffers lets emptiness take the room back.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

readonly NS=e2e-buffer

jp() { k -n $NS get "$1" "$2" -o jsonpath="$3"; }
cond() { jp capacitybuffer "$1" "{.status.conditions[?(@.type==\"$2\")].$3}"; }
claims() { k get nodeclaims -o name 2>/dev/null | grep -c . || true; }
ready_nodes() {
  k get nodeclaims -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
    grep -c '^True$' || true
}
running() { [ "$(k -n $NS get pods -l app="$1" --field-selector=status.phase=Running -o name | grep -c .)" -eq "$2" ]; }

setup() {
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter_rbac
  k apply -f - >/dev/null <<EOF
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
        - key: node.kubernetes.io/instance-type
          operator: In
          values: ["m5.large"]
      nodeClassRef:
        group: karpenter.kwok.sh
        kind: KWOKNodeClass
        name: default
      expireAfter: Never
  limits:
    cpu: 64
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 0s
EOF
  e2e_start_controller controller --disable-leader-election --batch-idle-duration 500ms \
    --kwok-finish-pods-immediately --disruption-poll-interval 2s --feature-gates CapacityBuffer=true
}

buffer_gets_room() {
  k -n $NS apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PodTemplate
metadata:
  name: slot
template:
  spec:
    containers:
      - name: slot
        image: registry.k8s.io/pause:3.7
        resources:
          requests:
            cpu: 600m
---
apiVersion: autoscaling.x-k8s.io/v1beta1
kind: CapacityBuffer
metadata:
  name: warm
spec:
  podTemplateRef:
    name: slot
  replicas: 2
EOF
  wait_for '[ "$(cond warm ReadyForProvisioning reason)" = Resolved ]' 30 ||
    fail "buffer not ReadyForProvisioning: $(k -n $NS get capacitybuffer warm -o yaml)"
  check "status.replicas is 2" test "$(jp capacitybuffer warm '{.status.replicas}')" = 2
  check "status.podTemplateRef names the template" test "$(jp capacitybuffer warm '{.status.podTemplateRef.name}')" = slot
  check "status.podTemplateGeneration is set" test -n "$(jp capacitybuffer warm '{.status.podTemplateGeneration}')"
  check "status.provisioningStrategy is the default" \
    test "$(jp capacitybuffer warm '{.status.provisioningStrategy}')" = buffer.x-k8s.io/active-capacity
  wait_for '[ "$(claims)" -ge 1 ] && [ "$(ready_nodes)" -eq "$(claims)" ]' 60 ||
    fail "no NodeClaim for the buffer: $(k get nodeclaims -o wide)"
  check "no pod exists, yet $(claims) NodeClaim launched for the headroom" \
    test "$(k -n $NS get pods -o name | grep -c . || true)" -eq 0
  wait_for '[ "$(cond warm Provisioning reason)" = FitsExistingCapacity ]' 60 ||
    fail "Provisioning never FitsExistingCapacity: $(k -n $NS get capacitybuffer warm -o jsonpath='{.status.conditions}')"
  pass "Provisioning=$(cond warm Provisioning status): $(cond warm Provisioning message)"
  check "kubectl shows the buffer's columns" grep -q "warm .*buffer.x-k8s.io/active-capacity .*slot .*2" \
    <<<"$(k -n $NS get cb)"
}

room_is_kept() {
  local before node
  before=$(claims)
  sleep 8 # four disruption polls with consolidateAfter 0s
  check "the empty node holding the headroom stays ($before claims)" test "$(claims)" -eq "$before"
  node=$(k get nodes -l karpenter.sh/nodepool=default -o jsonpath='{.items[0].metadata.name}')
  wait_for "k get events -A --field-selector reason=Unconsolidatable -o jsonpath='{.items[*].message}' | grep -q 'has buffer pods'" 30 ||
    fail "no Unconsolidatable event saying the node has buffer pods"
  pass "Unconsolidatable: $(k get events -A --field-selector reason=Unconsolidatable -o jsonpath='{.items[0].message}')"
  check "... on node $node" grep -q "$node" \
    <<<"$(k get events -A --field-selector reason=Unconsolidatable -o jsonpath='{.items[*].involvedObject.name}')"
}

real_pods_use_it() {
  local before start
  before=$(claims)
  start=$SECONDS
  k -n $NS apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      terminationGracePeriodSeconds: 0
      containers:
        - name: web
          image: registry.k8s.io/pause:3.7
          resources:
            requests:
              cpu: 600m
EOF
  wait_for "running web 2" 60 || fail "web did not run: $(k -n $NS get pods -o wide)"
  pass "2 web pods Running $((SECONDS - start))s after they were created, on the headroom"
  check "... on nodes that were there before (no claim of theirs)" \
    test -z "$(k -n $NS get pods -l app=web -o jsonpath='{.items[*].spec.nodeName}' | tr ' ' '\n' |
      grep -v -F -x -f <(k get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}') || true)"
  wait_for '[ "$(claims)" -gt '"$before"' ] && [ "$(cond warm Provisioning reason)" = FitsExistingCapacity ]' 90 ||
    fail "the buffer did not launch new room: $(claims) claims, $(cond warm Provisioning message)"
  pass "the buffer launched new room: $(claims) NodeClaims, Provisioning $(cond warm Provisioning reason)"
}

scalable_and_missing() {
  k -n $NS apply -f - >/dev/null <<EOF
apiVersion: autoscaling.x-k8s.io/v1beta1
kind: CapacityBuffer
metadata:
  name: half-web
spec:
  scalableRef:
    apiGroup: apps
    kind: Deployment
    name: web
  percentage: 50
---
apiVersion: autoscaling.x-k8s.io/v1beta1
kind: CapacityBuffer
metadata:
  name: lost
spec:
  podTemplateRef:
    name: nope
  replicas: 3
EOF
  wait_for '[ "$(jp capacitybuffer half-web "{.status.replicas}")" = 1 ]' 30 ||
    fail "50% of 2 replicas is not 1: $(k -n $NS get capacitybuffer half-web -o yaml)"
  pass "half-web: 50% of web's 2 replicas = 1 chunk"
  k -n $NS scale deployment web --replicas 6 >/dev/null
  wait_for '[ "$(jp capacitybuffer half-web "{.status.replicas}")" = 3 ]' 60 ||
    fail "the buffer did not follow the scale to 6: $(jp capacitybuffer half-web '{.status}')"
  pass "half-web follows web scaled to 6: 3 chunks"
  wait_for '[ "$(cond lost ReadyForProvisioning reason)" = PodTemplateNotFound ]' 30 ||
    fail "lost: $(jp capacitybuffer lost '{.status}')"
  pass "lost: ReadyForProvisioning=$(cond lost ReadyForProvisioning status), $(cond lost ReadyForProvisioning message)"
  wait_for '[ "$(cond lost Provisioning reason)" = NotReadyForProvisioning ]' 30 ||
    fail "lost has no Provisioning=NotReadyForProvisioning: $(jp capacitybuffer lost '{.status}')"
  wait_for "running web 6" 90 || fail "web not scaled: $(k -n $NS get pods -o wide)"
}

room_given_back() {
  local before
  k -n $NS scale deployment web --replicas 0 >/dev/null
  wait_for "[ -z \"\$(k -n $NS get pods -l app=web -o name)\" ]" 60 || fail "web pods still there"
  before=$(claims)
  k -n $NS delete capacitybuffer warm half-web lost >/dev/null
  wait_for '[ "$(claims)" -eq 0 ]' 120 ||
    fail "emptiness did not take the room back: $(k get nodeclaims -o wide)"
  pass "buffers deleted: emptiness removed the $before empty NodeClaims"
}

setup
buffer_gets_room
room_is_kept
real_pods_use_it
scalable_and_missing
room_given_back
