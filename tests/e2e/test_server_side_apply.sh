#!/usr/bin/env bash
# Our controller's writes next to a user's server-side apply, and field validation of
# our CRDs, on the current API server (both are on by default since 1.22 and 1.27; the
# 1.20 tier had neither):
#
#   - a NodePool applied with `kubectl apply --server-side` by a field manager of its
#     own: the controller's writes (hash annotations, status) are recorded under the
#     controller's manager and take nothing the user applied;
#   - the user re-applies: no conflict, and the controller's fields stay; the user
#     drops a label from the manifest: the server removes it (the controller did not
#     become a co-owner by writing the object);
#   - the user applies a value for a field the controller owns: a conflict naming the
#     controller's manager and the field; forced, the user's value lands, and the
#     controller puts its hash back;
#   - strict field validation (kubectl's default): a NodePool or EC2NodeClass with a
#     misspelt field is refused, naming it; with --validate=warn it is created without
#     the field and the server says so in a warning.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

readonly USER_MANAGER=platform-team
WORK=""

jp() { k get nodepool default -o jsonpath="$1"; }
hash_annotation() { jp '{.metadata.annotations.karpenter\.sh/nodepool-hash}'; }
ready() { [ "$(jp '{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }

# The NodePool as the platform team keeps it; $1: extra metadata lines, $2: the CPU limit.
nodepool() {
  cat <<EOF
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
  $1
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
      expireAfter: Never
  limits: {cpu: "$2"}
  disruption: {consolidationPolicy: WhenEmpty, consolidateAfter: Never}
EOF
}

user_apply() { k apply --server-side --field-manager "$USER_MANAGER" -f - "$@"; }

# managed MANAGER [SUBRESOURCE]: the fields MANAGER owns (its fieldsV1), as one line
# of JSON; "null" when it owns none.
managed() {
  k get nodepool default --show-managed-fields -o json |
    jq -c --arg m "$1" --arg s "${2:-}" \
      '[.metadata.managedFields[] | select(.manager == $m and (.subresource // "") == $s) | .fieldsV1] | add'
}

setup() {
  e2e_setup
  WORK=$(mktemp -d)
  e2e_cleanup rm -rf "$WORK"
  e2e_karpenter_rbac
  nodepool 'labels: {team: web}' 64 | user_apply >/dev/null
  pass "the NodePool is applied server-side by field manager $USER_MANAGER"
  e2e_start_controller controller --disable-leader-election
  wait_for 'ready && [ -n "$(hash_annotation)" ]' 30 ||
    fail "the controller did not mark the NodePool: $(k get nodepool default -o yaml)"
  pass "the controller wrote the NodePool's hash $(hash_annotation) and Ready status"
}

# The managers' names and what each owns.
ownership() {
  local m
  CONTROLLER_MANAGER=$(k get nodepool default --show-managed-fields -o json | jq -r '
    [.metadata.managedFields[]
     | select(.fieldsV1."f:metadata"."f:annotations"."f:karpenter.sh/nodepool-hash") | .manager] | first // ""')
  assert "the hash annotation has an owner" test -n "$CONTROLLER_MANAGER"
  check "... the controller's manager ($CONTROLLER_MANAGER), not $USER_MANAGER" \
    test "$CONTROLLER_MANAGER" != "$USER_MANAGER"
  check "the controller's manager names it (karpenter...)" grep -q '^karpenter' <<<"$CONTROLLER_MANAGER"
  m=$(managed "$CONTROLLER_MANAGER")
  check "the controller owns no spec field ($m)" jq -e 'has("f:spec") | not' <<<"$m"
  check "the controller owns the status it wrote (subresource status)" \
    jq -e '."f:status"."f:conditions" != null' <<<"$(managed "$CONTROLLER_MANAGER" status)"
  m=$(managed "$USER_MANAGER")
  check "$USER_MANAGER still owns its spec and label" \
    jq -e '."f:spec"."f:limits"."f:cpu" != null and ."f:metadata"."f:labels"."f:team" != null' <<<"$m"
  check "... and not the controller's annotation" \
    jq -e '."f:metadata"."f:annotations" == null' <<<"$m"
}

reapply() {
  local hash out
  hash=$(hash_annotation)
  out=$(nodepool 'labels: {team: web}' 64 | user_apply 2>&1) || fail "re-applying the same manifest: $out"
  pass "re-applying the same manifest: no conflict ($out)"
  check "the controller's hash stays" test "$(hash_annotation)" = "$hash"
  out=$(nodepool '' 32 | user_apply 2>&1) || fail "applying without the label: $out"
  check "a label dropped from the manifest is removed by the server" test -z "$(jp '{.metadata.labels.team}')"
  check "the new limit lands" test "$(jp '{.spec.limits.cpu}')" = 32
  check "the controller's hash stays (limits are not hashed)" test "$(hash_annotation)" = "$hash"
}

# The user claims the hash annotation: refused, then forced; the controller restores it.
conflict() {
  local hash rc=0 out
  hash=$(hash_annotation)
  out=$(nodepool 'annotations: {karpenter.sh/nodepool-hash: "0"}' 32 | user_apply 2>&1) || rc=$?
  check "applying a value for the controller's field fails ($rc)" test "$rc" != 0
  check "... with a conflict naming $CONTROLLER_MANAGER and the field ($out)" \
    grep -q "conflict with \"$CONTROLLER_MANAGER\".*nodepool-hash" <<<"$out"
  check "... and the hash is untouched" test "$(hash_annotation)" = "$hash"
  out=$(nodepool 'annotations: {karpenter.sh/nodepool-hash: "0"}' 32 | user_apply --force-conflicts 2>&1) ||
    fail "a forced apply: $out"
  pass "forced (--force-conflicts), the user's value is applied"
  wait_for '[ "$(hash_annotation)" = "$hash" ]' 30 ||
    fail "the controller did not restore its hash (now $(hash_annotation))"
  pass "the controller wrote its hash back"
  nodepool '' 32 | user_apply --force-conflicts >/dev/null
}

# kind_with_typo KIND: a manifest of KIND with one misspelt field (spec.disruption.
# consolidateAftr, spec.amiFamli).
with_typo() {
  case "$1" in
    NodePool) nodepool '' 8 | sed -e 's/name: default$/name: typo/' -e 's/consolidateAfter:/consolidateAftr:/' ;;
    EC2NodeClass)
      cat <<EOF
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: typo}
spec:
  role: KarpenterNodeRole-e2e
  amiFamli: AL2023
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: e2e}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: e2e}}]
EOF
      ;;
  esac
}

field_validation() {
  local kind field res out rc
  for kind in NodePool EC2NodeClass; do
    field=consolidateAftr res=nodepool
    [ "$kind" = NodePool ] || field=amiFamli res=ec2nodeclass
    rc=0
    out=$(with_typo $kind | k apply -f - 2>&1) || rc=$?
    check "$kind with a misspelt field: refused by strict validation ($rc)" test "$rc" != 0
    check "... naming it ($out)" grep -q "unknown field \"spec[.a-z]*\.$field\"" <<<"$out"
    check "... and nothing is created" test -z "$(k get "$res" typo --ignore-not-found -o name)"
    out=$(with_typo $kind | k apply --validate=warn -f - 2>&1) || fail "--validate=warn: $out"
    e2e_cleanup k delete "$res" typo --ignore-not-found --wait=false
    check "with --validate=warn it is created and the server warns ($out)" \
      grep -q "Warning: unknown field \"spec[.a-z]*\.$field\"" <<<"$out"
    check "... without the field" test -z "$(k get "$res" typo -o json | jq -r ".. | objects | .$field // empty")"
  done
}

setup
ownership
reapply
conflict
field_validation
