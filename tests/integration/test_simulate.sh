#!/usr/bin/env bash
# karpenter-controller simulate, driven as a user would: outputs, exit codes, errors.
#   test_simulate.sh BUILD_DIR SOURCE_DIR
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

sim() { "$bin" simulate "$@"; }

json_nginx() {
  sim -f "$src/examples/nginx" -o json >"$tmp/out.json" &&
    [ "$(jq '.summary.scheduled' "$tmp/out.json")" = 10 ] &&
    [ "$(jq '.unschedulable | length' "$tmp/out.json")" = 0 ] &&
    [ "$(jq '[.nodeClaims[].pods | length] | add' "$tmp/out.json")" = 10 ] &&
    [ "$(jq '[.nodeClaims[].instanceTypes | length] | max' "$tmp/out.json")" -le 60 ] &&
    jq -e '.nodeClaims[0] | has("requirements") and has("labels") and has("taints") and has("requests") and has("price")' \
      "$tmp/out.json" >/dev/null &&
    jq -e '.summary.hourlyCost >= .summary.lowerBoundHourlyCost' "$tmp/out.json" >/dev/null
}

# Output is captured before grep: with pipefail, `cmd | grep -q` fails when
# grep exits first and cmd dies of SIGPIPE.
yaml_nginx() { sim -f "$src/examples/nginx" -o yaml >"$tmp/out.yaml" && grep -q '^nodeClaims:' "$tmp/out.yaml"; }
table_nginx() {
  sim -f "$src/examples/nginx" -o table >"$tmp/out.txt" && grep -q '10 of 10 pending pods scheduled' "$tmp/out.txt"
}
no_improve_one_claim() {
  [ "$(sim -f "$src/examples/nginx" --no-improve | jq '.nodeClaims | length')" = 1 ]
}
synthetic_catalog() {
  sim -f "$src/examples/nginx" --instance-types synthetic:10 | jq -e '.nodeClaims[0].instanceTypes[0] | startswith("fake-it-")' >/dev/null
}

catalog_file() {
  cat >"$tmp/types.json" <<'JSON'
[{"name": "tiny", "capacity": {"cpu": "2", "memory": "4Gi", "pods": "20"},
  "labels": {"kubernetes.io/arch": "amd64"},
  "offerings": [{"zone": "z1", "capacityType": "on-demand", "price": 0.05}]},
 {"name": "big", "capacity": {"cpu": "16", "memory": "32Gi", "pods": "200"},
  "labels": {"kubernetes.io/arch": "amd64"},
  "offerings": [{"zone": "z1", "capacityType": "on-demand", "price": 0.9}]}]
JSON
  sim -f "$src/examples/nginx" --instance-types "$tmp/types.json" --no-improve | jq -e '.nodeClaims[0].instanceTypes == ["big"]' >/dev/null
}

missing_file() {
  local rc=0
  sim -f "$tmp/nope.yaml" 2>"$tmp/err" >/dev/null || rc=$?
  [ $rc = 1 ] && grep -q 'nope.yaml' "$tmp/err"
}

malformed_yaml() {
  printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: [unclosed\n' >"$tmp/bad.yaml"
  local rc=0
  sim -f "$tmp/bad.yaml" 2>"$tmp/err" >/dev/null || rc=$?
  [ $rc = 1 ] && grep -q 'bad.yaml' "$tmp/err" && grep -q 'line' "$tmp/err"
}

bad_field() {
  printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec:\n  containers:\n  - name: c\n    resources: {requests: {cpu: 1x}}\n' >"$tmp/field.yaml"
  local rc=0
  sim -f "$tmp/field.yaml" 2>"$tmp/err" >/dev/null || rc=$?
  [ $rc = 1 ] && grep -q 'field.yaml: document 2' "$tmp/err" &&
    grep -q 'spec.containers\[0\].resources.requests.cpu' "$tmp/err"
}

unknown_kind_is_a_note() {
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n' >"$tmp/cm.yaml"
  sim -f "$tmp/cm.yaml" -f "$src/examples/nginx" 2>"$tmp/err" >/dev/null && grep -q 'skipping ConfigMap' "$tmp/err"
}

bad_output_flag() {
  local rc=0
  sim -f "$src/examples/nginx" -o xml 2>"$tmp/err" >/dev/null || rc=$?
  [ $rc = 2 ] && grep -q 'want json, yaml or table' "$tmp/err"
}

bad_catalog_spec() {
  local rc=0
  sim -f "$src/examples/nginx" --instance-types synthetic:x 2>"$tmp/err" >/dev/null || rc=$?
  [ $rc = 1 ] && grep -q 'synthetic:N' "$tmp/err"
}

pending_reason_in_table() {
  printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: huge}\nspec: {containers: [{name: c, resources: {requests: {cpu: "5000"}}}]}\n' >"$tmp/huge.yaml"
  sim -f "$src/examples/nginx/nodepool.yaml" -f "$tmp/huge.yaml" -o table >"$tmp/out" &&
    grep -q 'default/huge' "$tmp/out" && grep -q 'no instance type has enough resources' "$tmp/out" &&
    ! grep -q 'karpenter.sh/registered' "$tmp/out"
}

check "json output for the nginx example" json_nginx
check "yaml output" yaml_nginx
check "table output" table_nginx
check "--no-improve keeps Karpenter's single NodeClaim" no_improve_one_claim
check "--instance-types synthetic:N" synthetic_catalog
check "--instance-types FILE.json" catalog_file
check "missing input: exit 1 naming the path" missing_file
check "malformed YAML: exit 1 with file and line" malformed_yaml
check "bad field: exit 1 naming file, document and field" bad_field
check "unknown kind: a note, not an error" unknown_kind_is_a_note
check "bad -o: usage error" bad_output_flag
check "bad --instance-types: clear error" bad_catalog_spec
check "a pod that fits nowhere is listed with its reason" pending_reason_in_table
echo "test_simulate: $passed passed, $failed failed"
[ "$failed" = 0 ]
