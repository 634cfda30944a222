#!/usr/bin/env bash
# NodeOverlay (gate NodeOverlay) with karpenter-controller run, kwok provider, on the
# real control plane: the CRD refuses a malformed overlay; an overlay that makes the
# cheaper of two instance types dearer changes which type the next NodeClaim launches
# (annotated karpenter.sh/price-overlay-applied); a second overlay of the same weight on
# the same offerings is refused with ValidationSucceeded=False, reason Conflict, while
# the first stays Ready; a pod asking for an extended resource no type has stays
# pending until an overlay gives the type that resource, then gets a node and runs.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

readonly NS=e2e-overlay

jp() { k get "$1" "$2" -o jsonpath="$3"; }
condition() { jp "$1" "$2" "{.status.conditions[?(@.type==\"$3\")].$4}"; }
claim_of() { k get pods -n $NS "$1" -o jsonpath='{.spec.nodeName}'; }
type_of_node() { jp node "$1" '{.metadata.labels.node\.kubernetes\.io/instance-type}'; }

pool() {
  k apply -f - >/dev/null <<'EOF'
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: overlay
spec:
  template:
    spec:
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [c5.large, m5.large]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
      expireAfter: Never
  limits: {cpu: 64}
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: Never}
EOF
}

# pod NAME [EXTRA_REQUESTS]: 1500m of CPU, so each pod needs a node of its own.
pod() {
  k apply -n $NS -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  terminationGracePeriodSeconds: 0
  containers:
    - name: pause
      image: registry.k8s.io/pause:3.7
      resources:
        requests: {cpu: 1500m${2:+, $2}}
        limits: {${2:-cpu: 1500m}}
EOF
}

running() { [ "$(k get pods -n $NS "$1" -o jsonpath='{.status.phase}')" = Running ]; }

setup() {
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter_rbac
  pool
  e2e_start_controller controller --disable-leader-election --kwok-finish-pods-immediately \
    --batch-idle-duration 500ms --feature-gates NodeOverlay=true
}

crd_refuses_malformed() {
  local out
  out=$(k apply -f - 2>&1 <<'EOF' || true
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: malformed}
spec:
  requirements: []
  priceAdjustment: "10%"
EOF
)
  check "the API server refuses priceAdjustment \"10%\" (no sign): $out" grep -q 'priceAdjustment' <<<"$out"
  check "nothing was stored" test "$(count nodeoverlays)" -eq 0
}

# Without an overlay c5.large is the cheaper; with c5.large at +100% m5.large is.
price_steers_the_launch() {
  pod first
  wait_for "running first" 90 || fail "pod first not Running: $(k get pods -n $NS -o wide)"
  assert "without an overlay the cheaper c5.large is launched" test "$(type_of_node "$(claim_of first)")" = c5.large
  k apply -f - >/dev/null <<'EOF'
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: pricey-c5}
spec:
  weight: 10
  requirements:
    - {key: node.kubernetes.io/instance-type, operator: In, values: [c5.large]}
  priceAdjustment: "+100%"
EOF
  wait_for '[ "$(condition nodeoverlay pricey-c5 Ready status)" = True ]' 30 ||
    fail "overlay pricey-c5 not Ready: $(jp nodeoverlay pricey-c5 '{.status}')"
  pass "overlay pricey-c5 Ready, ValidationSucceeded=$(condition nodeoverlay pricey-c5 ValidationSucceeded status)"
  pod second
  wait_for "running second" 90 || fail "pod second not Running: $(k get pods -n $NS -o wide)"
  local node
  node=$(claim_of second)
  check "with c5.large priced up m5.large is launched (got $(type_of_node "$node"))" \
    test "$(type_of_node "$node")" = m5.large
  check "its NodeClaim says a price overlay applied" \
    test "$(jp nodeclaim "$node" '{.metadata.annotations.karpenter\.sh/price-overlay-applied}')" = true
}

same_weight_conflicts() {
  k apply -f - >/dev/null <<'EOF'
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: a-cheap-c5}
spec:
  weight: 10
  requirements:
    - {key: kubernetes.io/arch, operator: In, values: [amd64]}
  price: "0.001"
EOF
  wait_for '[ "$(condition nodeoverlay a-cheap-c5 ValidationSucceeded reason)" = Conflict ]' 30 ||
    fail "a-cheap-c5 has no Conflict: $(jp nodeoverlay a-cheap-c5 '{.status}')"
  pass "a-cheap-c5: $(condition nodeoverlay a-cheap-c5 ValidationSucceeded message)"
  check "a-cheap-c5 is not Ready" test "$(condition nodeoverlay a-cheap-c5 Ready status)" = False
  check "pricey-c5 (the later name, evaluated first) stays Ready" \
    test "$(condition nodeoverlay pricey-c5 Ready status)" = True
  check "kubectl shows the READY column" grep -q "a-cheap-c5 *False" <<<"$(k get nodeoverlays)"
  k delete nodeoverlay a-cheap-c5 >/dev/null
}

capacity_lets_a_pod_schedule() {
  pod fuse "example.com/fuse: 1"
  sleep 5
  check "without an overlay the pod asking for example.com/fuse stays pending" \
    test "$(k get pods -n $NS fuse -o jsonpath='{.status.phase}')" = Pending
  local claims
  claims=$(count nodeclaims)
  check "and no NodeClaim is made for it" test "$claims" -eq 2
  k apply -f - >/dev/null <<'EOF'
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: fuse}
spec:
  requirements:
    - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}
  capacity:
    example.com/fuse: "2"
EOF
  wait_for "running fuse" 120 || fail "pod fuse not Running: $(k get pods -n $NS -o wide; k get nodeclaims)"
  local node
  node=$(claim_of fuse)
  pass "with overlay fuse the pod runs on $node ($(type_of_node "$node"))"
  check "its NodeClaim says a capacity overlay applied" \
    test "$(jp nodeclaim "$node" '{.metadata.annotations.karpenter\.sh/capacity-overlay-applied}')" = true
  check "the node offers example.com/fuse" test -n "$(jp node "$node" '{.status.allocatable.example\.com/fuse}')"
}

setup
crd_refuses_malformed
price_steers_the_launch
same_weight_conflicts
capacity_lets_a_pod_schedule
