#!/usr/bin/env bash
# karpenter-controller run, kwok provider, on the real control plane: pending pods
# get NodeClaims, the claims launch kwok nodes that register and become Ready,
# kube-scheduler binds the pods there; claims and the NodePool carry the status
# users read; a NodePool limit holds pods back with an event until it is raised;
# a NodePool whose requirements match no instance type says so
# (NoCompatibleInstanceTypes);
# a controller killed in the middle of provisioning and restarted counts what
# exists instead of launching it again.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
readonly DATA="$HERE/data"
readonly NS=e2e-provision

running() { [ "$(k -n $NS get pods -l app=inflate --field-selector=status.phase=Running -o name | grep -c .)" -eq "$1" ]; }
jp() { k get "$1" "$2" -o jsonpath="$3"; }
condition() { jp "$1" "$2" "{.status.conditions[?(@.type==\"$3\")].status}"; }

setup() {
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter "$DATA/nodepool.yaml"
  e2e_start_controller controller --disable-leader-election --kwok-finish-pods-immediately \
    --batch-idle-duration 500ms
  wait_for '[ "$(condition nodepool default Ready)" = True ]' 30 ||
    fail "NodePool default never became Ready: $(jp nodepool default '{.status}')"
  pass "NodePool Ready, with ValidationSucceeded=$(condition nodepool default ValidationSucceeded)"
}

# Every claim: launched, registered to a Node of the same name that is Ready and
# has lost karpenter.sh/unregistered, and carries instance type, zone and capacity.
claims_complete() {
  local c node
  for c in $(k get nodeclaims -o jsonpath='{.items[*].metadata.name}'); do
    [ "$(condition nodeclaim "$c" Ready)" = True ] || return 1
    node=$(jp nodeclaim "$c" '{.status.nodeName}')
    [ -n "$node" ] || return 1
    [[ "$(jp nodeclaim "$c" '{.status.providerID}')" == kwok://* ]] || return 1
    [ -n "$(jp nodeclaim "$c" '{.metadata.labels.node\.kubernetes\.io/instance-type}')" ] || return 1
    [ -n "$(jp nodeclaim "$c" '{.status.allocatable.cpu}')" ] || return 1
    ! grep -q unregistered <<<"$(jp node "$node" '{.spec.taints}')" || return 1
  done
}

provision() {
  local start=$SECONDS claims
  k -n $NS apply -f "$DATA/inflate.yaml" >/dev/null
  wait_for "running 10" 120 || fail "10 inflate pods not Running after 120s"
  pass "10 pods of 500m Running $((SECONDS - start))s after the Deployment was created"
  claims=$(count nodeclaims)
  check "between 1 and 5 NodeClaims for 5 CPUs of pods (got $claims)" test "$claims" -ge 1 -a "$claims" -le 5
  # A claim launched for pods the scheduler then placed elsewhere registers a
  # moment later: as many Nodes as NodeClaims once every claim has registered.
  check_soon "as many Nodes as NodeClaims" 30 "[ \"\$(count nodes)\" -eq \"\$(count nodeclaims)\" ]"
  wait_for claims_complete 30 || fail "claims incomplete: $(k get nodeclaims -o wide)"
  pass "every NodeClaim Ready, linked to its registered Node, with type and allocatable"
  check "kubectl shows the TYPE column of nodeclaims" \
    grep -q "$(jp nodeclaim "$(k get nodeclaims -o jsonpath='{.items[0].metadata.name}')" \
      '{.metadata.labels.node\.kubernetes\.io/instance-type}')" <<<"$(k get nodeclaims)"
  wait_for '[ "$(jp nodepool default "{.status.nodes}")" = "$(count nodeclaims)" ]' 30 ||
    fail "NodePool status.nodes $(jp nodepool default '{.status.nodes}') != $(count nodeclaims) claims"
  pass "NodePool status counts $(jp nodepool default '{.status.nodes}') nodes, cpu $(jp nodepool default '{.status.resources.cpu}')"
  wait_for '[ "$(jp nodepool default "{.status.conditions[?(@.type==\"NodeRegistrationHealthy\")].status}")" = True ]' 30 ||
    fail "NodePool NodeRegistrationHealthy is not True after nodes registered: $(jp nodepool default '{.status.conditions}')"
  pass "NodePool NodeRegistrationHealthy=True once its nodes registered"
  wait_for "[ -n \"\$(k -n $NS get events --field-selector reason=Nominated -o name)\" ]" 20 ||
    fail "no Nominated event on the pods"
  pass "pods were told they were nominated: $(k -n $NS get events --field-selector reason=Nominated \
    -o jsonpath='{.items[0].message}')"
}

limits() {
  local claims cpu
  claims=$(count nodeclaims)
  cpu=$(jp nodepool default '{.status.resources.cpu}')
  k patch nodepool default --type merge -p "{\"spec\":{\"limits\":{\"cpu\":\"$cpu\"}}}" >/dev/null
  k apply -f - >/dev/null <<'EOF2'
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: nothing}
spec:
  template:
    spec:
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [no-such-type]}
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
EOF2
  wait_for '[ "$(condition nodepool nothing Ready)" = True ]' 30 || fail "NodePool nothing never became Ready"
  k -n $NS scale deployment inflate --replicas 20 >/dev/null
  wait_for "grep -q 'limits' <<<\"\$(k -n $NS get events --field-selector reason=FailedScheduling -o jsonpath='{.items[*].message}')\"" 60 ||
    fail "no FailedScheduling event naming the limit: $(k -n $NS get events --field-selector reason=FailedScheduling)"
  pass "pods over the NodePool's cpu limit ($cpu) get a FailedScheduling event naming it"
  check "no NodeClaim beyond the limit" test "$(count nodeclaims)" -eq "$claims"
  local want="NodePool requirements filtered out all compatible available instance types"
  wait_for "k get events -A --field-selector reason=NoCompatibleInstanceTypes,involvedObject.kind=NodePool,involvedObject.name=nothing -o jsonpath='{.items[*].message}' | grep -qF '$want'" 30 ||
    fail "no NoCompatibleInstanceTypes event on NodePool nothing: $(k get events -A --field-selector involvedObject.name=nothing)"
  pass "NodePool nothing, whose requirements match no instance type: NoCompatibleInstanceTypes \"$want\""
  k delete nodepool nothing >/dev/null
}

# The limit goes up and the controller is killed (SIGKILL) as soon as it has created
# its first new NodeClaim; the restarted one must count what exists, so when all 20
# pods run, no NodeClaim is surplus: every node has one of the pods.
kill_mid_provisioning() {
  local claims empty n
  claims=$(count nodeclaims)
  k patch nodepool default --type merge -p '{"spec":{"limits":{"cpu":"64"}}}' >/dev/null
  wait_for '[ "$(count nodeclaims)" -gt '"$claims"' ]' 60 || fail "no NodeClaim after the limit was raised"
  e2e_stop_pid "$E2E_CONTROLLER_PID" KILL
  pass "controller killed with $(count nodeclaims) NodeClaims created (had $claims)"
  e2e_start_controller controller --disable-leader-election --kwok-finish-pods-immediately \
    --batch-idle-duration 500ms
  wait_for "running 20" 120 || fail "20 pods not Running after the restart"
  pass "after the restart all 20 pods run on $(count nodeclaims) NodeClaims"
  sleep 5
  empty=0
  for n in $(k get nodes -o jsonpath='{.items[*].metadata.name}'); do
    [ "$(k -n $NS get pods --field-selector "spec.nodeName=$n" -o name | grep -c .)" -ge 1 ] || empty=$((empty + 1))
  done
  check "no duplicate NodeClaim: every node runs a pod ($empty empty)" test "$empty" -eq 0
  check "as many Nodes as NodeClaims" test "$(count nodes)" -eq "$(count nodeclaims)"
}

setup
provision
limits
kill_mid_provisioning
