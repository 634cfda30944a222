#!/usr/bin/env bash
# The tier itself: the real control plane does what the autoscaler's tests will lean
# on. Pods of a Deployment are created and found unschedulable while there is no node;
# a Node made by hand (the way tests stand in for a kubelet) becomes schedulable once
# it reports Ready and loses the not-ready taint, and the scheduler binds the pods to
# it. Also: the release is the one tests/e2e/k8s/go.mod pins, kubectl is the same
# release, the API groups our programs use (policy/v1 PDBs and Evictions,
# coordination.k8s.io/v1 Leases) are served and the retired ones are not, and a
# service account's token (from the TokenRequest API) works and is held to its RBAC
# grants (how our programs run here).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

readonly NS=e2e-control-plane
readonly NODE=e2e-control-plane-node
readonly APP=web
READER_KUBECONFIG=""

# jq filters over `kubectl get pods -o json`.
readonly UNSCHEDULABLE='[.items[] | select(any(.status.conditions[]?;
    .type == "PodScheduled" and .status == "False" and .reason == "Unschedulable"))] | length'
# shellcheck disable=SC2016 # $node is a jq variable
readonly BOUND_TO='[.items[] | select(.spec.nodeName == $node and any(.status.conditions[]?;
    .type == "PodScheduled" and .status == "True"))] | length'

pods_json() { k -n "$NS" get pods -l "app=$APP" -o json; }
count_unschedulable() { pods_json | jq "$UNSCHEDULABLE"; }
count_bound() { pods_json | jq --arg node "$NODE" "$BOUND_TO"; }

# Output is captured before grep: `kubectl ... | grep -q` fails at random under
# pipefail when grep exits before kubectl has written everything (SIGPIPE).
served() { grep -qx "$1" <<<"$(k api-versions)"; }
not_served() { ! served "$1"; }

check_versions() {
  local want
  want=$("$E2E_LIB_DIR/build-control-plane.sh" --version)
  check "the API server is $want (/version)" \
    test "$(api GET /version | jq -r .gitVersion)" = "$want"
  check "kubectl on PATH is $want too" \
    test "$(kubectl version --client -o json | jq -r .clientVersion.gitVersion)" = "$want"
}

check_api_groups() {
  local group
  for group in policy/v1 coordination.k8s.io/v1 admissionregistration.k8s.io/v1 \
    apiextensions.k8s.io/v1 authentication.k8s.io/v1; do
    check "$group is served" served "$group"
  done
  check "policy/v1beta1 is not served (removed in 1.25)" not_served policy/v1beta1
  k apply -f - >/dev/null <<EOF
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: $APP, namespace: $NS}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: $APP}}
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: e2e-lease, namespace: $NS}
spec: {holderIdentity: e2e, leaseDurationSeconds: 15}
EOF
  check "a policy/v1 PodDisruptionBudget round-trips" \
    test "$(k -n "$NS" get poddisruptionbudgets.v1.policy "$APP" -o jsonpath='{.spec.minAvailable}')" = 1
  check "a coordination.k8s.io/v1 Lease round-trips" \
    test "$(k -n "$NS" get leases.v1.coordination.k8s.io e2e-lease -o jsonpath='{.spec.holderIdentity}')" = e2e
}

# kubectl as service account NS/e2e-reader, which may only read pods in NS.
as_reader() { k --kubeconfig "$READER_KUBECONFIG" "$@"; }
reader_can_list_pods() { as_reader -n "$NS" get pods -o json | jq -e '.items | type == "array"' >/dev/null; }
reader_cannot() { ! as_reader auth can-i "$@" >/dev/null 2>&1; }

check_service_account() {
  k -n "$NS" create serviceaccount e2e-reader >/dev/null
  k -n "$NS" create role pod-reader --verb=get,list,watch --resource=pods >/dev/null
  k -n "$NS" create rolebinding e2e-reader --role=pod-reader --serviceaccount="$NS:e2e-reader" >/dev/null
  READER_KUBECONFIG=$(mktemp)
  e2e_cleanup rm -f "$READER_KUBECONFIG"
  e2e_sa_kubeconfig "$NS" e2e-reader "$READER_KUBECONFIG"
  check "a service account's token authenticates and its Role applies" reader_can_list_pods
  check "a service account may do nothing beyond its Role" reader_cannot list nodes
}

create_deployment() {
  k apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: $APP, namespace: $NS}
spec:
  replicas: 2
  selector: {matchLabels: {app: $APP}}
  template:
    metadata: {labels: {app: $APP}}
    spec:
      containers:
      - name: nginx
        image: nginx
        resources: {requests: {cpu: 100m}}
EOF
}

create_node() {
  k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $NODE
  labels: {kubernetes.io/hostname: $NODE, kubernetes.io/os: linux, kubernetes.io/arch: amd64}
EOF
  e2e_cleanup k delete node "$NODE" --ignore-not-found --wait=false
}

# What a kubelet reports: capacity and a Ready condition, through the status
# subresource (the main resource ignores status changes on update).
set_node_ready() {
  local now
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  k patch node "$NODE" --subresource=status --type=merge -p "$(
    cat <<EOF
{"status": {
  "capacity":    {"cpu": "4", "memory": "8Gi", "pods": "110"},
  "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
  "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                  "message": "set by the e2e test", "lastHeartbeatTime": "$now",
                  "lastTransitionTime": "$now"}]}}
EOF
  )" >/dev/null
}

node_ready() {
  [ "$(k get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}
node_has_not_ready_taint() {
  grep -qw node.kubernetes.io/not-ready <<<"$(k get node "$NODE" -o jsonpath='{.spec.taints[*].key}')"
}
node_untainted() { ! node_has_not_ready_taint; }

main() {
  e2e_setup
  e2e_namespace "$NS"
  check_versions
  check_api_groups
  check_service_account

  create_deployment
  # shellcheck disable=SC2016 # wait_for evaluates it, each time anew
  wait_for '[ "$(count_unschedulable)" = 2 ]' 60 ||
    fail "2 pods created and marked Unschedulable (got $(count_unschedulable))"
  pass "the Deployment's 2 pods are created and marked Unschedulable"

  create_node
  assert "a Node created through the API is tainted not-ready by admission" node_has_not_ready_taint
  set_node_ready
  assert "the Node's Ready condition is set through the status subresource" node_ready
  assert "the Node's capacity is set" \
    test "$(k get node "$NODE" -o jsonpath='{.status.allocatable.cpu}')" = 4
  # The Ready update is a node event the scheduler retries pending pods on; give it a
  # moment, so a binding despite the taint would show here.
  sleep 2
  check "pods stay pending while the not-ready taint is there" \
    test "$(count_bound)" = 0
  k taint node "$NODE" node.kubernetes.io/not-ready:NoSchedule- >/dev/null
  assert "the not-ready taint is removed" node_untainted

  # shellcheck disable=SC2016 # wait_for evaluates it, each time anew
  wait_for '[ "$(count_bound)" = 2 ]' 60 ||
    fail "the scheduler binds both pods to $NODE (bound: $(count_bound))"
  pass "the scheduler binds both pods to $NODE"
}

main "$@"
