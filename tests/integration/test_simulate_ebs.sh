#!/usr/bin/env bash
# EBS attach limits in karpenter-controller simulate: a new NodeClaim gets no
# more EBS volumes than its instance type lets the EBS CSI driver attach (the
# built-in catalog's estimate, or an --instance-types file's ebsVolumeLimit),
# so pods with many volumes are spread over more nodes; types without a
# limit pack as before, and a bad ebsVolumeLimit is refused with its field.
#   test_simulate_ebs.sh BUILD_DIR SOURCE_DIR
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

claims() { jq '.nodeClaims | length' "$1"; }
scheduled() { jq '[.nodeClaims[].pods | length] | add' "$1"; }

types() { # EBS_FIELD: one roomy type, with or without ebsVolumeLimit
  cat >"$tmp/types.json" <<JSON
[{"name": "roomy", "capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"},
  "labels": {"kubernetes.io/arch": "amd64", "karpenter.k8s.aws/instance-family": "m5"} $1,
  "offerings": [{"zone": "us-east-1a", "capacityType": "on-demand", "price": 1.0}]}]
JSON
}

example_builtin() {
  "$bin" simulate -f "$src/examples/ebs-volumes" -o json >"$tmp/out.json" &&
    [ "$(claims "$tmp/out.json")" = 2 ] && [ "$(scheduled "$tmp/out.json")" = 3 ] &&
    jq -e '[.nodeClaims[].instanceTypes[] | startswith("m5")] | all' "$tmp/out.json" >/dev/null
}

file_limit() {
  types ', "ebsVolumeLimit": 26'
  "$bin" simulate -f "$src/examples/ebs-volumes" --instance-types "$tmp/types.json" >"$tmp/out.json" &&
    [ "$(claims "$tmp/out.json")" = 2 ] && [ "$(scheduled "$tmp/out.json")" = 3 ]
}

no_limit_packs() {
  types ''
  "$bin" simulate -f "$src/examples/ebs-volumes" --instance-types "$tmp/types.json" >"$tmp/out.json" &&
    [ "$(claims "$tmp/out.json")" = 1 ] && [ "$(scheduled "$tmp/out.json")" = 3 ]
}

bad_field_refused() {
  types ', "ebsVolumeLimit": -3'
  local rc=0
  "$bin" simulate -f "$src/examples/ebs-volumes" --instance-types "$tmp/types.json" >/dev/null 2>"$tmp/err" || rc=$?
  [ "$rc" != 0 ] && grep -q 'ebsVolumeLimit' "$tmp/err"
}

check "examples/ebs-volumes: 36 EBS volumes on m5 take two NodeClaims" example_builtin
check "an --instance-types file's ebsVolumeLimit limits new NodeClaims" file_limit
check "types without ebsVolumeLimit are not limited" no_limit_packs
check "a negative ebsVolumeLimit is refused with the field" bad_field_refused

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
