#!/usr/bin/env bash
# Ownership: a controller acts only on what its provider owns (Karpenter's rule since
# v1.1). The incident it prevents: a kwok controller started on a cluster with AWS
# NodeClaims asked kwok about their aws:/// provider IDs, heard "not found", and
# garbage-collected every claim and, through them, every Node.
#
# 1. kwok next to AWS: Karpenter-shaped AWS objects (a NodePool of an EC2NodeClass
#    that consolidates empty nodes at once, two launched NodeClaims, their Nodes, a
#    Running pod on one of them) and `run --cloud-provider kwok` with 2 s garbage
#    collection and disruption passes. After 20 s of passes the AWS objects have the
#    same resourceVersions (nothing deleted, tainted, drained or written), nothing of
#    ours wrote them (managedFields), no event names them, and the log says once per
#    object why it is left alone; meanwhile kwok does its own job: a kwok claim whose
#    node vanished is collected and pending pods of a KWOKNodeClass pool get nodes.
# 2. AWS next to another provider: `run --cloud-provider aws` against moto, with a
#    NodePool, NodeClaim, Node and pod of a foreign node class (example.com
#    WidgetNodeClass) whose aws:/// instance moto does not have, and kwok's claims and
#    nodes left from part 1. In the same 2 s passes that collect our own claims whose
#    instances are gone, the foreign ones stay untouched, and deleting the foreign
#    Node leaves its drain and its finalizer to its own provider.
# Without the ownership checks, the foreign claims are deleted within seconds of
# start-up (part 1 by kwok's GC, part 2 by AWS's).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
readonly ROOT="$HERE/../.."
readonly DATA="$HERE/data"
# shellcheck source=data/karpenter-objects.sh
. "$DATA/karpenter-objects.sh"
readonly NS=e2e-ownership
readonly IGNORING="ignoring an object another provider owns"
# Part 1: AWS objects the kwok controller must leave alone.
readonly AWS_POOL=general
readonly AWS_BUSY_CLAIM=general-x7k2p AWS_BUSY_NODE=ip-10-0-1-23.ec2.internal
readonly AWS_BUSY_PID=aws:///us-east-1a/i-0123456789abcdef0
readonly AWS_EMPTY_CLAIM=general-q4m8z AWS_EMPTY_NODE=ip-10-0-2-41.ec2.internal
readonly AWS_EMPTY_PID=aws:///us-east-1b/i-0fedcba9876543210
# Part 2: another provider's objects the AWS controller must leave alone.
readonly W_POOL=widgets W_CLAIM=widgets-h2k9d W_NODE=ip-10-0-1-99.ec2.internal
readonly W_PID=aws:///us-east-1a/i-0aaaabbbbccccdddd
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=us-east-1

# The controller's log lines saying OBJECT (KIND/NAME) is ignored, one reason a line.
ignored() {
  jq -r --arg m "$IGNORING" --arg kind "${2%%/*}" --arg name "${2#*/}" \
    'select(.message == $m and .[$kind] == $name) | .reason' "$1" 2>/dev/null
}

# check_ignored LOG KIND/NAME WORD: exactly one line for the object, its reason naming WORD.
check_ignored() {
  local lines
  lines=$(ignored "$1" "$2")
  check "the log says once why $2 is left alone ($lines)" \
    test "$(grep -c . <<<"$lines" || true)" = 1 -a -n "$(grep -F -- "$3" <<<"$lines" || true)"
}

# Entries of managedFields written by our client (user agent karpenter-c), per object.
# (Commands here must not fail: lib.sh's ERR trap would print into the caller's $(...).)
ours_wrote() {
  local kind name ns
  while read -r kind name ns _; do
    [ "$ns" != - ] || ns=""
    { k get "$kind" "$name" ${ns:+-n "$ns"} -o json 2>/dev/null || echo '{}'; } |
      jq -r --arg o "$kind/$name" '.metadata.managedFields[]? | select(.manager | startswith("karpenter-c")) | $o'
  done <"$1"
}

# Events about one of RECORD's objects since SINCE (RFC 3339, as in the record's file).
events_about() {
  local names
  names=$(awk '{print $2}' "$1" | paste -sd, -)
  k get events -A -o json | jq -r --arg n "$names" --arg since "$2" \
    '($n | split(",")) as $names | .items[]
     | select((.involvedObject.name as $x | $names | index($x)) and ((.lastTimestamp // .eventTime // "") >= $since))
     | "\(.involvedObject.kind)/\(.involvedObject.name): \(.reason) (\(.source.component // .reportingComponent))"'
}

tainted_disrupted() { grep -q karpenter.sh/disrupted <<<"$(k get node "$1" -o jsonpath='{.spec.taints}')"; }

# untouched RECORD WHAT: the objects of RECORD are as they were, and nothing of ours wrote them.
untouched() {
  local changed writes events
  changed=$(ko_gone_or_changed "$1")
  check "$2: none deleted or changed (same resourceVersions) ${changed:+- changed: $changed}" test -z "$changed"
  writes=$(ours_wrote "$1" | sort -u | paste -sd' ' -)
  check "$2: none has a managedFields entry of karpenter-c ${writes:+- $writes}" test -z "$writes"
  events=$(events_about "$1" "$(cat "$1.since")" | paste -sd';' -)
  check "$2: no event about any of them ${events:+- $events}" test -z "$events"
}

# ----------------------------------------------------------------- set-up

setup() {
  local image
  e2e_setup
  ko_moto_start
  image=$(sed -E 's/.*image=([^ ]+).*/\1/' <<<"$KO_ACCOUNT")
  e2e_namespace $NS
  e2e_karpenter_rbac
  # The EC2NodeClass the AWS objects name, resolvable in moto for part 2.
  k apply -f - >/dev/null <<EOF
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole-e2e
  amiFamily: AL2023
  amiSelectorTerms: [{id: $image}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: e2e}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: e2e}}]
EOF
}

# ----------------------------------------------------------------- part 1: kwok

KWOK_PID=""
KWOK_LOG=""
KWOK_START=0

aws_objects() {
  local g=karpenter.k8s.aws k=EC2NodeClass
  ko_nodepool $AWS_POOL $g $k default 0s
  ko_nodeclaim $AWS_BUSY_CLAIM $AWS_POOL $g $k default $AWS_BUSY_PID $AWS_BUSY_NODE m5.large us-east-1a
  ko_node $AWS_BUSY_NODE $AWS_BUSY_PID $AWS_POOL $AWS_BUSY_CLAIM m5.large us-east-1a $g $k default
  ko_pod $NS web $AWS_BUSY_NODE
  ko_nodeclaim $AWS_EMPTY_CLAIM $AWS_POOL $g $k default $AWS_EMPTY_PID $AWS_EMPTY_NODE c5.large us-east-1b
  ko_node $AWS_EMPTY_NODE $AWS_EMPTY_PID $AWS_POOL $AWS_EMPTY_CLAIM c5.large us-east-1b $g $k default
  # kube-controller-manager's TTL controller annotates new Nodes once: the baseline
  # comes after that.
  wait_for "[ -n \"\$(k get node $AWS_EMPTY_NODE -o jsonpath='{.metadata.annotations.node\.alpha\.kubernetes\.io/ttl}')\" ]" 30 || true
  sleep 2
  ko_time now >"$KP_E2E_DIR/aws-objects.since"
  {
    ko_record nodepool $AWS_POOL
    ko_record ec2nodeclass default
    ko_record nodeclaim $AWS_BUSY_CLAIM
    ko_record nodeclaim $AWS_EMPTY_CLAIM
    ko_record node $AWS_BUSY_NODE
    ko_record node $AWS_EMPTY_NODE
    ko_record pod web $NS
  } >"$KP_E2E_DIR/aws-objects"
  check "the AWS objects exist: $(paste -sd' ' "$KP_E2E_DIR/aws-objects" | cut -c1-300)" \
    eval "! grep -q ' gone\$' '$KP_E2E_DIR/aws-objects'"
  check "the pod runs on $AWS_BUSY_NODE" \
    test "$(k -n $NS get pod web -o jsonpath='{.status.phase} {.spec.nodeName}')" = "Running $AWS_BUSY_NODE"
}

start_kwok() {
  # The kwok pool, and a claim of it whose node is gone: kwok's own garbage.
  k apply -f "$ROOT/examples/kwok/" >/dev/null
  ko_nodeclaim default-gone1 default karpenter.kwok.sh KWOKNodeClass default kwok://default-gone1 \
    default-gone1 c5.large us-east-1a
  e2e_start_controller controller-kwok --disable-leader-election --batch-idle-duration 500ms \
    --kwok-finish-pods-immediately --garbage-collection-interval 2s --disruption-poll-interval 2s \
    --consolidation-validation-period 2s
  KWOK_PID=$E2E_CONTROLLER_PID
  KWOK_LOG="$KP_E2E_DIR/controller-kwok.log"
}

kwok_does_its_job() {
  wait_for "! k get nodeclaim default-gone1" 60 || fail "kwok's GC did not collect its claim whose node is gone"
  pass "kwok's GC collected its own claim whose node is gone (its passes run)"
  KWOK_START=$SECONDS
  k -n $NS apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: inflate}
spec:
  replicas: 3
  selector: {matchLabels: {app: inflate}}
  template:
    metadata: {labels: {app: inflate}}
    spec:
      terminationGracePeriodSeconds: 0
      nodeSelector: {karpenter.sh/nodepool: default}
      containers: [{name: inflate, image: registry.k8s.io/pause:3.7, resources: {requests: {cpu: 500m}}}]
EOF
  wait_for "[ \"\$(k -n $NS get pods -l app=inflate --field-selector=status.phase=Running -o name | grep -c .)\" = 3 ]" 120 ||
    fail "3 pending pods of the kwok pool are not Running after 120s"
  local ids
  ids=$(k get nodes -l karpenter.sh/nodepool=default -o jsonpath='{.items[*].spec.providerID}')
  pass "3 pending pods run on kwok nodes ($ids)"
  check "the kwok nodes have kwok:// provider IDs" grep -Eq '^(kwok://[^ ]+ ?)+$' <<<"$ids"
  wait_for '[ "$(k get nodepool default -o jsonpath="{.status.conditions[?(@.type==\"Ready\")].status}")" = True ]' 30 || true
  check "kwok's own NodePool has the status kwok wrote (Ready)" \
    test "$(k get nodepool default -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True
}

kwok_leaves_aws_alone() {
  local wait=$((KWOK_START + 20 - SECONDS))
  [ "$wait" -le 0 ] || sleep "$wait"
  pass "$((SECONDS - KWOK_START))s of kwok's 2 s garbage-collection and disruption passes since its first collection"
  check "kwok's controller is still running" kill -0 "$KWOK_PID"
  untouched "$KP_E2E_DIR/aws-objects" "the AWS objects"
  local n
  for n in $AWS_BUSY_CLAIM $AWS_EMPTY_CLAIM; do
    check "claim $n has no deletionTimestamp" test -z "$(k get nodeclaim $n -o jsonpath='{.metadata.deletionTimestamp}')"
  done
  for n in $AWS_BUSY_NODE $AWS_EMPTY_NODE; do
    check "node $n has no deletionTimestamp" test -z "$(k get node $n -o jsonpath='{.metadata.deletionTimestamp}')"
    check "node $n has no karpenter.sh/disrupted taint" eval "! tainted_disrupted $n"
  done
  check "the pod still runs on $AWS_BUSY_NODE" \
    test "$(k -n $NS get pod web -o jsonpath='{.status.phase} {.spec.nodeName} {.metadata.deletionTimestamp}')" = \
    "Running $AWS_BUSY_NODE "
  check "the AWS NodePool's status is still Karpenter's (Ready since an hour ago)" \
    test "$(k get nodepool $AWS_POOL -o jsonpath='{.status.conditions[?(@.type=="Ready")].lastTransitionTime}')" \
    \< "$(ko_time '-30 minutes')"
  check_ignored "$KWOK_LOG" NodePool/$AWS_POOL "karpenter.k8s.aws/EC2NodeClass"
  check_ignored "$KWOK_LOG" NodeClaim/$AWS_BUSY_CLAIM "karpenter.k8s.aws/EC2NodeClass"
  check_ignored "$KWOK_LOG" NodeClaim/$AWS_EMPTY_CLAIM "karpenter.k8s.aws/EC2NodeClass"
  check_ignored "$KWOK_LOG" Node/$AWS_BUSY_NODE "$AWS_BUSY_PID"
  check_ignored "$KWOK_LOG" Node/$AWS_EMPTY_NODE "$AWS_EMPTY_PID"
  check "nothing of kwok's own is logged as ignored" \
    test -z "$(jq -r --arg m "$IGNORING" 'select(.message == $m) | .NodePool // .NodeClaim // .Node' "$KWOK_LOG" |
      grep -Ev "^($AWS_POOL|$AWS_BUSY_CLAIM|$AWS_EMPTY_CLAIM|$AWS_BUSY_NODE|$AWS_EMPTY_NODE)\$" || true)"
  e2e_stop_pid "$KWOK_PID"
  check "kwok's controller logged no ERROR" test -z "$(jq -r 'select(.level == "ERROR") | .message' "$KWOK_LOG")"
}

# ----------------------------------------------------------------- part 2: AWS

AWS_PID=""
AWS_LOG=""
AWS_START=0

widget_objects() {
  local g=example.com k=WidgetNodeClass
  ko_nodepool $W_POOL $g $k w1 0s
  ko_nodeclaim $W_CLAIM $W_POOL $g $k w1 $W_PID $W_NODE m5.large us-east-1a
  ko_node $W_NODE $W_PID $W_POOL $W_CLAIM m5.large us-east-1a $g $k w1
  ko_pod $NS widget-web $W_NODE
  wait_for "[ -n \"\$(k get node $W_NODE -o jsonpath='{.metadata.annotations.node\.alpha\.kubernetes\.io/ttl}')\" ]" 30 || true
  sleep 2
  ko_time now >"$KP_E2E_DIR/foreign-objects.since"
  local n
  {
    ko_record nodepool $W_POOL
    ko_record nodeclaim $W_CLAIM
    ko_record node $W_NODE
    ko_record pod widget-web $NS
    ko_record nodepool default
    for n in $(k get nodeclaims -l karpenter.sh/nodepool=default -o name); do ko_record nodeclaim "${n#*/}"; done
    for n in $(k get nodes -l karpenter.sh/nodepool=default -o name); do ko_record node "${n#*/}"; done
    for n in $(k -n $NS get pods -l app=inflate -o name); do ko_record pod "${n#*/}" $NS; done
  } >"$KP_E2E_DIR/foreign-objects"
  check "another provider's pool, claim, node and pod, and kwok's pool, claims, nodes and pods exist ($(grep -c . "$KP_E2E_DIR/foreign-objects") objects)" \
    eval "! grep -q ' gone\$' '$KP_E2E_DIR/foreign-objects'"
  check "moto has no instance ${W_PID##*/} (\"not found\" would be true)" \
    eval "! moto instances | grep -qF '${W_PID##*/}'"
}

start_aws() {
  # Part 1's AWS claims become this controller's own; the pod on one goes first
  # (no kubelet would finish its eviction).
  k -n $NS delete pod web --grace-period=0 --force >/dev/null 2>&1 || true
  e2e_start_controller controller-aws --disable-leader-election --cloud-provider aws --cluster-name e2e \
    --aws-endpoint-url "$MOTO_URL" --cluster-endpoint "$KP_E2E_API_URL" --cluster-cidr 10.96.0.0/16 \
    --garbage-collection-interval 2s --disruption-poll-interval 2s --consolidation-validation-period 2s \
    --disable-dry-run # moto launches a fleet asked for as a dry run
  AWS_PID=$E2E_CONTROLLER_PID
  AWS_LOG="$KP_E2E_DIR/controller-aws.log"
}

aws_does_its_job() {
  wait_for '[ "$(k get ec2nodeclass default -o jsonpath="{.status.conditions[?(@.type==\"Ready\")].status}")" = True ]' 60 ||
    fail "EC2NodeClass not Ready: $(k get ec2nodeclass default -o jsonpath='{.status.conditions}')"
  pass "the AWS controller resolved its EC2NodeClass in moto (Ready)"
  wait_for "! k get nodeclaim $AWS_BUSY_CLAIM && ! k get nodeclaim $AWS_EMPTY_CLAIM" 90 ||
    fail "its own claims whose instances moto does not have were not collected: $(k get nodeclaims -o name)"
  pass "its GC collected its own claims whose instances are gone (its passes run)"
  AWS_START=$SECONDS
  check "and their Nodes" eval "! k get node $AWS_BUSY_NODE && ! k get node $AWS_EMPTY_NODE"
}

aws_leaves_foreign_alone() {
  local wait=$((AWS_START + 20 - SECONDS)) n
  [ "$wait" -le 0 ] || sleep "$wait"
  pass "$((SECONDS - AWS_START))s of the AWS controller's 2 s garbage-collection and disruption passes since its first collection"
  check "the AWS controller is still running" kill -0 "$AWS_PID"
  untouched "$KP_E2E_DIR/foreign-objects" "the foreign objects"
  check "the foreign claim's provider ID is unchanged" \
    test "$(k get nodeclaim $W_CLAIM -o jsonpath='{.status.providerID}')" = "$W_PID"
  check "no instance was terminated or launched in moto ($(moto instances | paste -sd' ' -))" \
    test -z "$(moto instances)"
  check_ignored "$AWS_LOG" NodePool/$W_POOL "example.com/WidgetNodeClass"
  check_ignored "$AWS_LOG" NodeClaim/$W_CLAIM "example.com/WidgetNodeClass"
  # Its aws:// provider ID is of our scheme: its claim says whose it is, or, when the
  # Node is seen before its claim is in the cache, the NodePool it is labelled with.
  check_ignored "$AWS_LOG" Node/$W_NODE "is another provider's: its nodeClassRef example.com/WidgetNodeClass"
  check_ignored "$AWS_LOG" NodePool/default "karpenter.kwok.sh/KWOKNodeClass"
  for n in $(k get nodeclaims -l karpenter.sh/nodepool=default -o name); do
    check_ignored "$AWS_LOG" "NodeClaim/${n#*/}" "karpenter.kwok.sh/KWOKNodeClass"
  done
  for n in $(k get nodes -l karpenter.sh/nodepool=default -o name); do
    check_ignored "$AWS_LOG" "Node/${n#*/}" "kwok://"
  done
}

# The foreign Node is deleted (by its provider, or kubectl): its drain, instance and
# finalizer are its provider's business, not ours.
foreign_node_deleted() {
  local rv
  rv=$(ko_rv pod widget-web $NS)
  k delete node $W_NODE --wait=false >/dev/null
  sleep 10
  check "the deleted foreign Node keeps its finalizer (ours does not let it go)" \
    test "$(k get node $W_NODE -o jsonpath='{.metadata.finalizers}' 2>/dev/null)" = '["karpenter.sh/termination"]'
  check "its pod was not evicted" test "$(ko_rv pod widget-web $NS)" = "$rv"
  check "its claim is still there" test -z "$(k get nodeclaim $W_CLAIM -o jsonpath='{.metadata.deletionTimestamp}')"
  # (moto's pricing API answers 500: those errors are about moto, not ownership.)
  check "the AWS controller logged no ERROR about a foreign object" \
    test -z "$(jq -c 'select(.level == "ERROR")' "$AWS_LOG" | grep -F -e $W_NODE -e $W_CLAIM -e $W_POOL || true)"
  # Its provider would finish it; here nobody does.
  k patch node $W_NODE --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
}

setup
aws_objects
start_kwok
kwok_does_its_job
kwok_leaves_aws_alone
widget_objects
start_aws
aws_does_its_job
aws_leaves_foreign_alone
foreign_node_deleted
