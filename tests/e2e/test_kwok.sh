#!/usr/bin/env bash
# The kwok cloud provider and its kubelet stand-in on a real control plane.
# A NodeClaim-shaped request goes to the provider (tests/e2e/programs/kwok.c
# drives it); the Node it creates becomes Ready, loses the not-ready taint that
# admission added, keeps a Lease, and once the unregistered taint is gone (what
# Karpenter's registration does) kube-scheduler binds a waiting pod to it, which
# the kubelet reports Running. Deleting the pod finishes it after its grace
# period; deleting through the provider removes the Node and its Lease.
#
# The program (tests/e2e/programs/kwok.c) comes from KP_BUILD_DIR (default:
# build/ in the repository).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
readonly ROOT
readonly NS=e2e-kwok
readonly NODE=default-kwok1
readonly POD=web
PROG=""
WORK=""
KUBELET_PID=""


# Two instance types; the claim allows on-demand only, so the cheapest launch
# is kwok.small in zone-b (its spot offering in zone-a is cheaper but not allowed).
write_inputs() {
  cat >"$WORK/catalog.json" <<'EOF'
[
 {"name": "kwok.small", "capacity": {"cpu": "2", "memory": "4Gi", "pods": "20"},
  "overhead": {"cpu": "100m", "memory": "256Mi"}, "labels": {"kubernetes.io/arch": "amd64"},
  "offerings": [{"zone": "zone-a", "capacityType": "spot", "price": 0.02},
                {"zone": "zone-b", "capacityType": "on-demand", "price": 0.05}]},
 {"name": "kwok.large", "capacity": {"cpu": "8", "memory": "16Gi", "pods": "110"},
  "overhead": {"cpu": "100m", "memory": "256Mi"}, "labels": {"kubernetes.io/arch": "amd64"},
  "offerings": [{"zone": "zone-a", "capacityType": "on-demand", "price": 0.2}]}
]
EOF
  cat >"$WORK/claim.json" <<EOF
{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
 "metadata": {"name": "$NODE", "labels": {"karpenter.sh/nodepool": "default", "team": "web"}},
 "spec": {"requirements": [
   {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["kwok.large", "kwok.small"]},
   {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
   {"key": "karpenter.sh/nodepool", "operator": "In", "values": ["default"]}],
  "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"}}}
EOF
}

stop_kubelet() {
  [ -z "$KUBELET_PID" ] || kill -TERM "$KUBELET_PID" 2>/dev/null || true
}

provider() { "$PROG" --instance-types "$WORK/catalog.json" "$@"; }

start_kubelet() {
  "$PROG" kubelet --lease-ms 1000 --status-ms 5000 >"$WORK/kubelet.log" 2>&1 &
  KUBELET_PID=$!
  e2e_cleanup stop_kubelet
  wait_for "grep -qx ready '$WORK/kubelet.log'" 60 0.2 || fail "the kubelet did not start: $(cat "$WORK/kubelet.log")"
  pass "the kubelet stand-in is running"
}

create_pod() {
  k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $POD, namespace: $NS}
spec:
  terminationGracePeriodSeconds: 2
  nodeSelector: {team: web}
  initContainers: [{name: setup, image: busybox}]
  containers: [{name: nginx, image: nginx, resources: {requests: {cpu: 500m, memory: 256Mi}}}]
EOF
}

node_field() { k get node "$NODE" -o jsonpath="$1"; }
pod_field() { k -n "$NS" get pod "$POD" -o jsonpath="$1"; }
taint_keys() { node_field '{.spec.taints[*].key}'; }
has_taint() { grep -qw "$1" <<<"$(taint_keys)"; }
no_taint() { ! has_taint "$1"; }
node_ready() { [ "$(node_field '{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
lease_renew_time() { k -n kube-node-lease get lease "$NODE" -o jsonpath='{.spec.renewTime}'; }
pod_unschedulable() {
  [ "$(pod_field '{.status.conditions[?(@.type=="PodScheduled")].reason}')" = Unschedulable ]
}
pod_running() {
  [ "$(pod_field '{.status.phase}')" = Running ] &&
    [ "$(pod_field '{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}
pod_gone() { ! k -n "$NS" get pod "$POD" >/dev/null 2>&1; }
node_exists() { k get node "$NODE" -o name >/dev/null; }
node_gone() { ! k get node "$NODE" >/dev/null 2>&1; }
lease_gone() { ! k -n kube-node-lease get lease "$NODE" >/dev/null 2>&1; }
json_is() { [ "$(jq -r "$2" <<<"$1")" = "$3" ]; }

check_launch() {
  local out
  out=$(provider create "$WORK/claim.json") || fail "create: $out"
  e2e_cleanup k delete node "$NODE" --ignore-not-found --wait=false
  check "create answers with the cheapest allowed offering" \
    json_is "$out" '[.instanceType, .zone, .capacityType] | join(" ")' "kwok.small zone-b on-demand"
  check "create answers with the provider ID" json_is "$out" .providerID "kwok://$NODE"
  check "create answers with allocatable = capacity - overhead" json_is "$out" .allocatable.memory 3840Mi
  assert "the Node exists" node_exists
  check "the Node carries the provider ID" test "$(node_field '{.spec.providerID}')" = "kwok://$NODE"
  check "the Node carries the claim's and the offering's labels" test \
    "$(node_field '{.metadata.labels.team} {.metadata.labels.topology\.kubernetes\.io/zone} {.metadata.labels.kwok\.x-k8s\.io/node}')" = "web zone-b fake"
  check "the Node's capacity is the type's" test "$(node_field '{.status.capacity.cpu}')" = 2
  wait_for node_ready 30 || fail "the Node becomes Ready"
  pass "the Node is Ready"
  wait_for "no_taint node.kubernetes.io/not-ready" 30 || fail "the not-ready taint goes (taints: $(taint_keys))"
  pass "the not-ready taint admission added is removed"
  check "the unregistered taint stays until registration" has_taint karpenter.sh/unregistered
}

check_lease() {
  local first
  wait_for "[ -n \"\$(lease_renew_time)\" ]" 30 || fail "a Lease in kube-node-lease"
  first=$(lease_renew_time)
  pass "the node has a Lease"
  wait_for "[ \"\$(lease_renew_time)\" != '$first' ]" 30 || fail "the Lease is renewed"
  pass "the Lease is renewed"
}

check_pod() {
  sleep 2 # a binding despite the unregistered taint would show by now
  check "the pod waits while the Node is unregistered" test -z "$(pod_field '{.spec.nodeName}')"
  k taint node "$NODE" karpenter.sh/unregistered:NoExecute- >/dev/null
  wait_for "[ \"\$(pod_field '{.spec.nodeName}')\" = '$NODE' ]" 60 ||
    fail "kube-scheduler binds the pod to $NODE (bound to: '$(pod_field '{.spec.nodeName}')')"
  pass "once registered, kube-scheduler binds the pod to the Node"
  wait_for pod_running 30 || fail "the pod is reported Running and Ready"
  pass "the pod is reported Running and Ready"
  check "the pod has the Node's address as hostIP" \
    test "$(pod_field '{.status.hostIP}')" = "$(node_field '{.status.addresses[?(@.type=="InternalIP")].address}')"
  check "the pod has a pod IP" test -n "$(pod_field '{.status.podIP}')"
  check "the init container completed" \
    test "$(pod_field '{.status.initContainerStatuses[0].state.terminated.reason}')" = Completed
  k -n "$NS" delete pod "$POD" --wait=false >/dev/null
  wait_for pod_gone 60 || fail "the deleted pod is finished"
  pass "the deleted pod is finished once its grace period is over"
}

check_provider_reads() {
  local out
  out=$(provider get "kwok://$NODE") || fail "get: $out"
  check "get reads the instance back" json_is "$out" .instanceType kwok.small
  out=$(provider list) || fail "list: $out"
  check "list reports it" json_is "$out" '[.[].providerID] | index("kwok://'"$NODE"'") != null' true
}

check_delete() {
  local out
  out=$(provider delete "$WORK/claim.json" "kwok://$NODE") || fail "delete: $out"
  check "delete asks for the Node's deletion" test "$out" = deleting
  wait_for node_gone 60 || fail "the Node is deleted"
  pass "the Node is deleted"
  if out=$(provider delete "$WORK/claim.json" "kwok://$NODE" 2>&1); then
    fail "delete again succeeds ($out)"
  fi
  check "delete of a gone instance says not found" grep -q "not found" <<<"$out"
  wait_for lease_gone 60 || fail "the Lease goes with the Node"
  pass "the Lease goes with the Node"
}

# Under the sanitizers a leak would make the exit status non-zero.
check_kubelet_exit() {
  local pid="$KUBELET_PID" rc=0
  KUBELET_PID=""
  kill -TERM "$pid"
  wait "$pid" || rc=$?
  check "the kubelet stand-in exits cleanly on SIGTERM ($(grep 'kubelet stats' "$WORK/kubelet.log" || true))" \
    test "$rc" = 0
}

main() {
  e2e_setup
  PROG=$(e2e_program kwok)
  WORK=$(mktemp -d)
  e2e_cleanup rm -rf "$WORK"
  write_inputs
  # The provider launches only for a claim whose KWOKNodeClass exists.
  k apply -f "$E2E_LIB_DIR/../../crds/karpenter.kwok.sh_kwoknodeclasses.yaml" >/dev/null
  wait_for "k get kwoknodeclasses" 30 || fail "the KWOKNodeClass CRD is not served"
  k apply -f "$E2E_LIB_DIR/../../examples/kwok/kwoknodeclass.yaml" >/dev/null
  e2e_namespace "$NS"
  start_kubelet
  create_pod
  wait_for pod_unschedulable 60 || fail "the pod is Unschedulable without a node"
  pass "the pod is Unschedulable while there is no node"
  check_launch
  check_lease
  check_pod
  check_provider_reads
  check_delete
  check_kubelet_exit
}

main "$@"
