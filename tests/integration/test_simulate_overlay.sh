#!/usr/bin/env bash
# NodeOverlays in karpenter-controller simulate, as a user drives it: overlays among
# the manifests change which instance types a plan launches and what consolidation
# believes nodes cost; conflicts and invalid overlays are named on stderr and not
# applied; a malformed one is refused with the file and field.
#   test_simulate_overlay.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
bin="$build/karpenter-controller"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

check() { # NAME COMMAND... : run, count
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); echo "ok   $name"; else failed=$((failed + 1)); echo "FAIL $name"; fi
}

sim() { "$bin" simulate --instance-types "$tmp/types.json" "$@"; }

cat >"$tmp/types.json" <<'JSON'
[{"name": "tiny", "capacity": {"cpu": "2", "memory": "4Gi", "pods": "20"},
  "labels": {"kubernetes.io/arch": "amd64"},
  "offerings": [{"zone": "z1", "capacityType": "on-demand", "price": 0.05}]},
 {"name": "small", "capacity": {"cpu": "2", "memory": "4Gi", "pods": "20"},
  "labels": {"kubernetes.io/arch": "amd64"},
  "offerings": [{"zone": "z1", "capacityType": "on-demand", "price": 0.06}]}]
JSON

cat >"$tmp/pool.yaml" <<'YAML'
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements: []
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 0s}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
YAML

overlay() { # NAME WEIGHT SPEC_REST
  cat <<YAML
---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: $1}
spec: {weight: $2, $3}
YAML
}

launched() { jq -r '.nodeClaims[0].launch.instanceType' "$1"; }

examples() {
  "$bin" simulate -f "$src/examples/nodeoverlay" -o json >"$tmp/ex.json" 2>"$tmp/ex.err" &&
    grep -q 'NodeOverlay fuse-devices: applied to 10 instance type' "$tmp/ex.err" &&
    [ "$(jq '.summary.scheduled' "$tmp/ex.json")" = 9 ] &&
    jq -e '[.nodeClaims[] | select(any(.pods[]; startswith("default/builder"))) | .launch.instanceType
            | startswith("c6i")] | all' "$tmp/ex.json" >/dev/null
}

cheapest_without_overlay() { sim -f "$tmp/pool.yaml" >"$tmp/a.json" && [ "$(launched "$tmp/a.json")" = tiny ]; }

price_steers() {
  overlay pricey 10 "priceAdjustment: '+0.1', requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [tiny]}]" \
    >"$tmp/o.yaml"
  sim -f "$tmp/pool.yaml" -f "$tmp/o.yaml" >"$tmp/b.json" 2>"$tmp/b.err" &&
    [ "$(launched "$tmp/b.json")" = small ] &&
    jq -e '.nodeClaims[0].price == 0.06' "$tmp/b.json" >/dev/null &&
    grep -q 'NodeOverlay pricey: applied to 1 instance type' "$tmp/b.err"
}

price_is_the_overlays() {
  overlay fixed 10 "price: '0.01', requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [small]}]" \
    >"$tmp/o.yaml"
  sim -f "$tmp/pool.yaml" -f "$tmp/o.yaml" >"$tmp/c.json" 2>/dev/null &&
    [ "$(launched "$tmp/c.json")" = small ] && jq -e '.nodeClaims[0].price == 0.01' "$tmp/c.json" >/dev/null
}

conflict_and_invalid_are_named() {
  {
    overlay pricey 10 "priceAdjustment: '+0.1', requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [tiny]}]"
    overlay a-cheaper 10 "price: '0.001', requirements: []"
    overlay cpu 1 "capacity: {cpu: '8'}, requirements: []"
  } >"$tmp/o.yaml"
  sim -f "$tmp/pool.yaml" -f "$tmp/o.yaml" >"$tmp/d.json" 2>"$tmp/d.err" &&
    grep -q 'NodeOverlay a-cheaper: not applied (Conflict): conflict with another overlay: pricey' "$tmp/d.err" &&
    grep -q 'NodeOverlay cpu: not applied (RuntimeValidation): .*invalid resource restricted' "$tmp/d.err" &&
    [ "$(launched "$tmp/d.json")" = small ]
}

capacity_lets_pods_fit() {
  cat >"$tmp/fuse.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: fuse, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1", example.com/fuse: "1"}, limits: {example.com/fuse: "1"}}}]
YAML
  sim -f "$tmp/pool.yaml" -f "$tmp/fuse.yaml" >"$tmp/e.json" 2>/dev/null &&
    [ "$(jq '.unschedulable | length' "$tmp/e.json")" = 1 ] &&
    overlay fuse 1 "capacity: {example.com/fuse: '4'}, requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [small]}]" \
      >"$tmp/o.yaml" &&
    sim -f "$tmp/pool.yaml" -f "$tmp/fuse.yaml" -f "$tmp/o.yaml" >"$tmp/f.json" 2>/dev/null &&
    [ "$(jq '.unschedulable | length' "$tmp/f.json")" = 0 ] &&
    jq -e '[.nodeClaims[] | select(any(.pods[]; . == "default/fuse")) | .launch.instanceType] == ["small"]' \
      "$tmp/f.json" >/dev/null
}

# An existing tiny node that an overlay makes dear is replaced by a small one:
# consolidation prices existing nodes as their NodePool's overlaid types.
consolidation_sees_overlaid_prices() {
  cat >"$tmp/node.yaml" <<'YAML'
apiVersion: v1
kind: Node
metadata:
  name: n1
  creationTimestamp: "2026-01-01T00:00:00Z"
  labels:
    karpenter.sh/nodepool: default
    karpenter.sh/initialized: "true"
    karpenter.sh/registered: "true"
    node.kubernetes.io/instance-type: tiny
    topology.kubernetes.io/zone: z1
    karpenter.sh/capacity-type: on-demand
    kubernetes.io/hostname: n1
    kubernetes.io/arch: amd64
spec: {providerID: "aws:///z1/i-n1"}
status:
  capacity: {cpu: "2", memory: 4Gi, pods: "20"}
  allocatable: {cpu: "2", memory: 4Gi, pods: "20"}
  conditions: [{type: Ready, status: "True"}]
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  nodeName: n1
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
status: {phase: Running}
YAML
  sed -n '/^---$/q;p' "$tmp/pool.yaml" >"$tmp/pool-only.yaml"
  sim -f "$tmp/pool-only.yaml" -f "$tmp/node.yaml" --disrupt --now 2026-01-02T00:00:00Z >"$tmp/g.json" 2>/dev/null &&
    [ "$(jq '.disruption | length' "$tmp/g.json")" = 0 ] &&
    overlay pricey 10 "priceAdjustment: '+1', requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [tiny]}]" \
      >"$tmp/o.yaml" &&
    sim -f "$tmp/pool-only.yaml" -f "$tmp/node.yaml" -f "$tmp/o.yaml" --disrupt --now 2026-01-02T00:00:00Z \
      >"$tmp/h.json" 2>/dev/null &&
    [ "$(jq '.disruption | length' "$tmp/h.json")" = 1 ] &&
    jq -e '.disruption[0].savingsHourly > 0.9' "$tmp/h.json" >/dev/null
}

malformed_is_refused() {
  overlay bad 10 "priceAdjustment: '10%', requirements: []" >"$tmp/bad.yaml"
  local rc=0
  sim -f "$tmp/pool.yaml" -f "$tmp/bad.yaml" >/dev/null 2>"$tmp/bad.err" || rc=$?
  [ "$rc" = 1 ] && grep -q 'bad.yaml' "$tmp/bad.err" && grep -q 'spec.priceAdjustment' "$tmp/bad.err"
}

check "examples/nodeoverlay: builders get their FUSE devices on c6i" examples
check "without an overlay the cheaper type launches" cheapest_without_overlay
check "a priceAdjustment on it makes the other type launch" price_steers
check "a price sets what the plan pays" price_is_the_overlays
check "conflicts and invalid overlays are named and not applied" conflict_and_invalid_are_named
check "a capacity overlay lets a pod asking for an extended resource fit" capacity_lets_pods_fit
check "consolidation prices existing nodes with their NodePool's overlays" consolidation_sees_overlaid_prices
check "a malformed overlay is refused with the file and field" malformed_is_refused

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
