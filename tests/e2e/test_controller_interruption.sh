#!/usr/bin/env bash
# Interruption on the real control plane: an EventBridge spot interruption warning
# dropped into the controller's --interruption-dir (what the kwok provider reads in
# place of an SQS queue) deletes the NodeClaim of the instance it names, with
# Karpenter's events; the node is drained, the pods run on a replacement, and the
# notice is consumed. A rebalance recommendation only records an event.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
readonly DATA="$HERE/data"
readonly NS=e2e-interruption
INBOX=""
METRICS=""

running() { [ "$(k -n $NS get pods -l app=inflate --field-selector=status.phase=Running -o name | grep -c .)" -eq "$1" ]; }
busy_node() { k -n $NS get pods -l app=inflate -o jsonpath='{.items[0].spec.nodeName}'; }
claim_of() { k get nodeclaims -o jsonpath="{.items[?(@.status.nodeName==\"$1\")].metadata.name}"; }
events_for() { k get events -A --field-selector "involvedObject.name=$1" -o jsonpath='{.items[*].reason}'; }

# notice FILE DETAIL-TYPE INSTANCE: written under a temporary name, then renamed.
notice() {
  cat >"$INBOX/.$1" <<EOF2
{"version":"0","id":"$1","detail-type":"$2","source":"aws.ec2","account":"123456789012",
 "time":"$(date -u +%Y-%m-%dT%H:%M:%SZ)","region":"us-east-1","resources":[],
 "detail":{"instance-id":"$3","instance-action":"terminate"}}
EOF2
  mv "$INBOX/.$1" "$INBOX/$1.json"
}

setup() {
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter "$DATA/nodepool.yaml"
  INBOX="$KP_E2E_DIR/interruptions"
  mkdir -p "$INBOX"
  METRICS=$(e2e_free_port)
  e2e_start_controller controller --disable-leader-election --batch-idle-duration 500ms \
    --kwok-finish-pods-immediately --interruption-dir "$INBOX" --metrics-port "$METRICS"
  k -n $NS apply -f "$DATA/inflate.yaml" >/dev/null
  k -n $NS scale deployment inflate --replicas 3 >/dev/null
  wait_for "running 3" 120 || fail "3 inflate pods not Running after 120s"
  pass "3 pods Running on $(count nodes) node(s)"
}

rebalance() {
  local node
  node=$(busy_node)
  notice rebalance-1 "EC2 Instance Rebalance Recommendation" "$node"
  wait_for "[ ! -e '$INBOX/rebalance-1.json' ]" 30 || fail "the rebalance notice was not consumed"
  wait_for "grep -q SpotRebalanceRecommendation <<<\"\$(events_for $node)\"" 30 ||
    fail "no SpotRebalanceRecommendation event on $node: $(events_for "$node")"
  pass "a rebalance recommendation is an event on node $node"
  check "and the node stays" test -z "$(k get node "$node" -o jsonpath='{.metadata.deletionTimestamp}')"
}

spot() {
  local node claim
  node=$(busy_node)
  claim=$(claim_of "$node")
  notice spot-1 "EC2 Spot Instance Interruption Warning" "$node"
  wait_for "grep -q SpotInterrupted <<<\"\$(events_for $claim)\"" 30 ||
    fail "no SpotInterrupted event on nodeclaim $claim: $(events_for "$claim")"
  pass "a spot interruption warning is an event on NodeClaim $claim"
  check_soon "and TerminatingOnInterruption" 15 "grep -q TerminatingOnInterruption <<<\"\$(events_for $claim)\""
  wait_for "! k get node $node" 90 || fail "interrupted node $node not drained and removed"
  pass "the interrupted node is drained and removed"
  check "the notice was consumed" test ! -e "$INBOX/spot-1.json"
  wait_for "running 3" 120 || fail "pods of the interrupted node did not come back"
  pass "its pods run on $(count nodeclaims) other NodeClaim(s)"
  check "the metric counts the spot message" grep -q \
    'karpenter_interruption_received_messages_total{message_type="spot_interrupted"} 1' \
    <<<"$(curl -fsS "http://127.0.0.1:$METRICS/metrics")"
}

malformed() {
  printf '{"detail-type": ' >"$INBOX/bad.json"
  wait_for "[ ! -e '$INBOX/bad.json' ]" 30 || fail "a malformed notice stays in the inbox"
  pass "a malformed notice is logged and dropped"
  grep -q "did not parse" "$KP_E2E_DIR/controller.log" || fail "no log line for the malformed notice"
  check "the controller is still serving" curl -fsS -o /dev/null "http://127.0.0.1:$METRICS/metrics"
}

state_metrics() {
  local m
  wait_for "grep -q 'karpenter_pods_state{.*namespace=\"$NS\".*phase=\"Running\"[^}]*} 1' <<<\"\$(curl -fsS http://127.0.0.1:$METRICS/metrics)\"" 30 ||
    fail "no karpenter_pods_state series for the Running pods"
  m=$(curl -fsS "http://127.0.0.1:$METRICS/metrics")
  check "one pods_state series per inflate pod" \
    test "$(grep -c "karpenter_pods_state{name=\"inflate-.*namespace=\"$NS\"" <<<"$m")" -eq 3
  check "nodes_allocatable has the cpu of every node" \
    test "$(grep -c 'karpenter_nodes_allocatable{.*resource_type="cpu"' <<<"$m")" -eq "$(count nodes)"
}

setup
state_metrics
rebalance
spot
malformed
