#!/usr/bin/env bash
# simulate --cloud-provider aws against moto's server: the instance types and
# offerings come from the account (EC2 DescribeInstanceTypes and
# DescribeInstanceTypeOfferings, reads), each NodePool's through its EC2NodeClass;
# a NodePool of another provider is left out with a note; settings that would be
# ignored are refused. moto has no Price List API, so --isolated-vpc (the
# built-in prices) is used.
#   test_simulate_aws_moto.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "${1:?usage: test_simulate_aws_moto.sh BUILD_DIR SOURCE_DIR}" && pwd)
src=$(cd "${2:?usage: test_simulate_aws_moto.sh BUILD_DIR SOURCE_DIR}" && pwd)
bin="$build/karpenter-controller"
moto="$src/scripts/moto-server.sh"
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
check() { local msg="$1"; shift; if "$@"; then ok "$msg"; else bad "$msg"; fi; }
jqe() { jq -e "$@" >/dev/null; }

bash "$moto" install
dir=$(mktemp -d /tmp/kp-moto-XXXXXX)
trap 'bash "$moto" stop "$dir" || true; rm -rf "$dir"' EXIT
url=$(bash "$moto" start "$dir")
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test

cat >"$dir/cluster.yaml" <<'YAML'
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: sim}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: sim}}]
status:
  subnets: [{id: subnet-1, zone: us-east-1b}]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements: [{key: karpenter.k8s.aws/instance-category, operator: In, values: [m]}]
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: other}
spec:
  weight: 100
  template:
    spec:
      requirements: []
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
---
apiVersion: v1
kind: Pod
metadata: {name: p1, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
YAML

sim() { "$bin" simulate -f "$dir/cluster.yaml" --cloud-provider aws --aws-region us-east-1 --aws-endpoint-url "$url" "$@"; }

if sim --cluster-name sim --isolated-vpc -o json >"$dir/plan.json" 2>"$dir/err"; then
  ok "simulate --cloud-provider aws reads the account and plans"
else
  bad "simulate --cloud-provider aws: $(cat "$dir/err")"
fi
check "the pod is placed on one new NodeClaim ($(jq -c .summary "$dir/plan.json"))" \
  jqe '.summary.scheduled == 1 and .summary.newNodeClaims == 1' "$dir/plan.json"
check "... of the EC2NodeClass's NodePool, not the heavier KWOK one" \
  jqe '.nodeClaims[0].nodePool == "default"' "$dir/plan.json"
check "... in the zone of the class's subnet ($(jq -c .nodeClaims[0].launch "$dir/plan.json"))" \
  jqe '.nodeClaims[0].launch.zone == "us-east-1b"' "$dir/plan.json"
check "... with instance types of the account in the NodePool's category" \
  jqe '(.nodeClaims[0].instanceTypes | length) > 0 and all(.nodeClaims[0].instanceTypes[]; startswith("m"))' \
  "$dir/plan.json"
check "the other provider's NodePool is left out, with a note ($(head -c 200 "$dir/err"))" \
  grep -q "note: NodePool other is left out" "$dir/err"

if sim --isolated-vpc -o json >/dev/null 2>"$dir/err2"; then bad "no cluster name accepted"; else
  check "no cluster name: refused, naming the flag ($(cat "$dir/err2" | head -n 1))" grep -q -- "--cluster-name" "$dir/err2"
fi
if "$bin" simulate -f "$dir/cluster.yaml" --cloud-provider aws --cluster-name sim --instance-types builtin \
  >/dev/null 2>"$dir/err3"; then bad "--instance-types with aws accepted"; else
  check "--instance-types with aws: refused, not ignored" grep -q "instance types are the account's" "$dir/err3"
fi
if "$bin" simulate -f "$dir/cluster.yaml" --aws-region us-east-1 >/dev/null 2>"$dir/err4"; then
  bad "--aws-region without aws accepted"
else
  check "--aws-region without --cloud-provider aws: refused" grep -q "need --cloud-provider aws" "$dir/err4"
fi

echo "test_simulate_aws_moto: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
