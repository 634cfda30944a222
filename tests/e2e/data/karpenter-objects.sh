# shellcheck shell=bash
# Objects as Karpenter v1 (core and AWS provider) leaves them in a cluster, for the
# tests that put karpenter-c next to another provider or in Karpenter's place
# (test_ownership.sh, test_migration.sh): NodePools, NodeClaims and Nodes with
# Karpenter's labels, annotations, finalizers, owner references and a status that
# says launched, registered, initialized and Ready; pods bound to those Nodes and
# reported Running, as their kubelet would. Sourced after lib.sh.
#
#   ko_nodepool NAME GROUP KIND CLASS [CONSOLIDATE_AFTER]
#   ko_nodeclaim NAME POOL GROUP KIND CLASS PROVIDER_ID NODE TYPE ZONE [IMAGE]
#   ko_node NAME PROVIDER_ID POOL CLAIM TYPE ZONE GROUP KIND CLASS
#   ko_pod NS NAME NODE [CPU]
#   ko_moto_start · moto ARGS   moto's server and Karpenter's account in it
#   ko_status PLURAL NAME JSON  write a status (PLURAL pods/NS for a pod in NS)
#   ko_time DATE-STRING         RFC 3339 UTC of `date -d`
#   ko_condition TYPE SINCE     a True condition, as JSON
#   ko_rv KIND NAME [NS]        resourceVersion, or "gone"
#   ko_record KIND NAME [NS]    one line "KIND NAME NS RV" of a record file
#   ko_gone_or_changed RECORD   the objects of RECORD whose resourceVersion is no
#                               longer the recorded one

# Karpenter v1's hash versions (NodePoolHashVersion, EC2NodeClassHashVersion).
readonly KO_NODEPOOL_HASH_VERSION=v3
readonly KO_NODECLASS_HASH_VERSION=v4
# What Karpenter's hashes look like (decimal 64-bit FNV sums).
readonly KO_NODEPOOL_HASH=6821555240594823858
readonly KO_NODECLASS_HASH=9716853279420918476

ko_time() { date -u -d "$1" +%Y-%m-%dT%H:%M:%SZ; }

# Karpenter's label for a node class: <group>/<kind in lower case>.
ko_class_label() { printf '%s/%s' "$1" "${2,,}"; }

# The labels a claim and its Node share (YAML, indented for metadata.labels).
ko_labels() {
  local pool="$1" group="$2" kind="$3" class="$4" type="$5" zone="$6"
  printf '    %s\n' "karpenter.sh/nodepool: $pool" "$(ko_class_label "$group" "$kind"): $class" \
    "node.kubernetes.io/instance-type: $type" "karpenter.sh/capacity-type: on-demand" \
    "topology.kubernetes.io/zone: $zone" "topology.kubernetes.io/region: us-east-1" \
    "kubernetes.io/arch: amd64" "kubernetes.io/os: linux"
}

ko_condition() { printf '{"type":"%s","status":"True","reason":"%s","message":"","lastTransitionTime":"%s"}' "$1" "$1" "$2"; }

# ko_status PLURAL NAME JSON: write the status subresource, as the object's
# controller (or kubelet) does; PLURAL is pods/NS for a pod in namespace NS.
ko_status() {
  local plural="$1" name="$2" json="$3" path
  case "$plural" in
  nodepools | nodeclaims) path="/apis/karpenter.sh/v1/$plural/$name/status" ;;
  ec2nodeclasses) path="/apis/karpenter.k8s.aws/v1/$plural/$name/status" ;;
  nodes) path="/api/v1/nodes/$name/status" ;;
  *) path="/api/v1/namespaces/${plural#pods/}/pods/$name/status" ;;
  esac
  api PATCH "$path" "{\"status\":$json}" application/merge-patch+json >/dev/null
}

# A NodePool as Karpenter keeps it: its hash annotations and the status it wrote.
# WhenEmpty with CONSOLIDATE_AFTER (default 0s): an empty node of it is a candidate
# at once for whoever thinks the pool is theirs.
ko_nodepool() {
  local name="$1" group="$2" kind="$3" class="$4" after="${5:-0s}" long_ago
  long_ago=$(ko_time '-1 hour')
  k apply -f - >/dev/null <<EOF
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: $name
  annotations:
    karpenter.sh/nodepool-hash: "$KO_NODEPOOL_HASH"
    karpenter.sh/nodepool-hash-version: $KO_NODEPOOL_HASH_VERSION
spec:
  template:
    spec:
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}
      nodeClassRef: {group: $group, kind: $kind, name: $class}
      expireAfter: 720h
  limits: {cpu: "1000"}
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: $after
    budgets: [{nodes: "1"}]
EOF
  ko_status nodepools "$name" "{\"conditions\":[$(ko_condition ValidationSucceeded "$long_ago"),
    $(ko_condition NodeClassReady "$long_ago"),$(ko_condition Ready "$long_ago")],
    \"resources\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":\"58\",\"nodes\":\"2\"},\"nodes\":2}"
}

# ko_moto_start: moto's server for this test (stopped at exit), and an account in it
# as Karpenter's getting-started leaves it (data/moto-account.py `account`): sets
# MOTO_URL and KO_ACCOUNT ("image=AMI subnet-ZONE=ID ... sg=ID").
ko_moto_start() {
  local root="$E2E_LIB_DIR/../.."
  bash "$root/scripts/moto-server.sh" install >/dev/null
  KO_MOTO_DIR="$KP_E2E_DIR/moto"
  mkdir -p "$KO_MOTO_DIR"
  MOTO_URL=$(bash "$root/scripts/moto-server.sh" start "$KO_MOTO_DIR")
  e2e_cleanup bash "$root/scripts/moto-server.sh" stop "$KO_MOTO_DIR"
  KO_ACCOUNT=$(moto account e2e)
  pass "moto at $MOTO_URL: $KO_ACCOUNT"
}

# moto ARGS: data/moto-account.py against this test's moto, on Debian's python.
moto() { /usr/bin/python3 "$E2E_LIB_DIR/data/moto-account.py" "$MOTO_URL" "$@"; }

ko_uid() { k get "$1" "$2" -o jsonpath='{.metadata.uid}'; }

# A launched, registered, initialized NodeClaim of POOL, owned by it; the class-hash
# annotations only for an EC2NodeClass (as the AWS provider stamps them).
ko_nodeclaim() {
  local name="$1" pool="$2" group="$3" kind="$4" class="$5" pid="$6" node="$7" type="$8" zone="$9"
  local image="${10:-ami-0123456789abcdef0}" long_ago class_hash=""
  long_ago=$(ko_time '-1 hour')
  [ "$kind" != EC2NodeClass ] || class_hash="karpenter.k8s.aws/ec2nodeclass-hash: \"$KO_NODECLASS_HASH\"
    karpenter.k8s.aws/ec2nodeclass-hash-version: $KO_NODECLASS_HASH_VERSION
    karpenter.k8s.aws/tagged: \"true\""
  k apply -f - >/dev/null <<EOF
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: $name
  labels:
$(ko_labels "$pool" "$group" "$kind" "$class" "$type" "$zone")
    karpenter.k8s.aws/instance-category: ${type:0:1}
  annotations:
    karpenter.sh/nodepool-hash: "$KO_NODEPOOL_HASH"
    karpenter.sh/nodepool-hash-version: $KO_NODEPOOL_HASH_VERSION
    $class_hash
  finalizers: [karpenter.sh/termination]
  ownerReferences:
    - {apiVersion: karpenter.sh/v1, kind: NodePool, name: $pool, uid: $(ko_uid nodepool "$pool"), blockOwnerDeletion: true}
spec:
  requirements:
    - {key: karpenter.sh/nodepool, operator: In, values: [$pool]}
    - {key: node.kubernetes.io/instance-type, operator: In, values: [$type]}
    - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
    - {key: kubernetes.io/arch, operator: In, values: [amd64]}
  nodeClassRef: {group: $group, kind: $kind, name: $class}
  expireAfter: 720h
  resources: {requests: {cpu: 500m, pods: "1"}}
EOF
  ko_status nodeclaims "$name" "{\"providerID\":\"$pid\",\"imageID\":\"$image\",\"nodeName\":\"$node\",
    \"capacity\":{\"cpu\":\"2\",\"memory\":\"8Gi\",\"pods\":\"29\",\"ephemeral-storage\":\"20Gi\"},
    \"allocatable\":{\"cpu\":\"1930m\",\"memory\":\"7Gi\",\"pods\":\"29\",\"ephemeral-storage\":\"18Gi\"},
    \"conditions\":[$(ko_condition Launched "$long_ago"),$(ko_condition Registered "$long_ago"),
    $(ko_condition Initialized "$long_ago"),$(ko_condition Ready "$long_ago")]}"
}

# The claim's Node as its kubelet registered it and Karpenter then labelled it:
# Ready, owned by the claim, with the termination finalizer.
ko_node() {
  local name="$1" pid="$2" pool="$3" claim="$4" type="$5" zone="$6" group="$7" kind="$8" class="$9" now
  now=$(ko_time now)
  k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $name
  labels:
    kubernetes.io/hostname: $name
    karpenter.sh/registered: "true"
    karpenter.sh/initialized: "true"
$(ko_labels "$pool" "$group" "$kind" "$class" "$type" "$zone")
  finalizers: [karpenter.sh/termination]
  ownerReferences:
    - {apiVersion: karpenter.sh/v1, kind: NodeClaim, name: $claim, uid: $(ko_uid nodeclaim "$claim"), blockOwnerDeletion: true}
spec:
  providerID: $pid
EOF
  ko_status nodes "$name" "{\"capacity\":{\"cpu\":\"2\",\"memory\":\"8Gi\",\"pods\":\"29\"},
    \"allocatable\":{\"cpu\":\"1930m\",\"memory\":\"7Gi\",\"pods\":\"29\"},
    \"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"message\":\"kubelet is posting ready status\",
    \"lastHeartbeatTime\":\"$now\",\"lastTransitionTime\":\"$now\"}]}"
  # Admission gave it node.kubernetes.io/not-ready; the kubelet's node controller lifts it.
  k patch node "$name" --type json -p '[{"op":"remove","path":"/spec/taints"}]' >/dev/null 2>&1 || true
}

# A pod bound to NODE and Running there, as its kubelet reports it.
ko_pod() {
  local ns="$1" name="$2" node="$3" cpu="${4:-500m}" now
  now=$(ko_time now)
  k -n "$ns" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $name, labels: {app: $name}}
spec:
  nodeName: $node
  terminationGracePeriodSeconds: 30
  containers: [{name: app, image: registry.k8s.io/pause:3.7, resources: {requests: {cpu: $cpu}}}]
EOF
  ko_status "pods/$ns" "$name" "{\"phase\":\"Running\",\"startTime\":\"$now\",\"hostIP\":\"10.0.1.10\",\"podIP\":\"10.0.1.77\",
    \"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"lastTransitionTime\":\"$now\"},
    {\"type\":\"PodScheduled\",\"status\":\"True\",\"lastTransitionTime\":\"$now\"}],
    \"containerStatuses\":[{\"name\":\"app\",\"ready\":true,\"restartCount\":0,\"image\":\"registry.k8s.io/pause:3.7\",
    \"imageID\":\"\",\"started\":true,\"state\":{\"running\":{\"startedAt\":\"$now\"}}}]}"
}

# ko_rv KIND NAME [NS]: the object's resourceVersion, "gone" when it does not exist.
ko_rv() {
  local args=(get "$1" "$2" -o 'jsonpath={.metadata.resourceVersion}')
  [ -z "${3:-}" ] || args+=(-n "$3")
  k "${args[@]}" 2>/dev/null || echo gone
}

# ko_record KIND NAME [NS]: one line for ko_gone_or_changed.
ko_record() { printf '%s %s %s %s\n' "$1" "$2" "${3:--}" "$(ko_rv "$1" "$2" "${3:-}")"; }

ko_gone_or_changed() {
  local kind name ns rv now
  while read -r kind name ns rv; do
    [ "$ns" != - ] || ns=""
    now=$(ko_rv "$kind" "$name" "$ns")
    [ "$now" = "$rv" ] || printf '%s/%s (%s -> %s) ' "$kind" "$name" "$rv" "$now"
  done <"$1"
}
