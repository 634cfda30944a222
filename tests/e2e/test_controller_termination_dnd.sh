#!/usr/bin/env bash
# A karpenter.sh/do-not-disrupt duration holds a drain until it has passed, on
# the real control plane: a pod annotated "40s" runs on a node that is then
# deleted; the node is tainted and drained, but the pod is not evicted before 40 s
# after it started (its NodeClaim says Drained Unknown meanwhile); then it is
# evicted (an Evicted event), Drained turns True and the node goes.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
readonly DATA="$HERE/data"
readonly NS=e2e-termination-dnd
readonly HOLD=40
SAMPLER_PID=""

secs() { date -d "$1" +%s; }
drained() { k get nodeclaim "$1" -o jsonpath='{.status.conditions[?(@.type=="Drained")].status}'; }

# In the background, the claim's Drained status at every write of the claim (a
# watch, so a state that lasts milliseconds is seen too), as "epoch status" lines.
watch_drained() {
  local claim="$1" out="$2"
  (
    kubectl --request-timeout=0 get nodeclaim "$claim" --watch \
      -o jsonpath='{.status.conditions[?(@.type=="Drained")].status}{"\n"}' 2>/dev/null |
      while read -r s; do echo "$(date +%s) ${s:-none}"; done >>"$out"
  ) &
  SAMPLER_PID=$!
  e2e_cleanup e2e_stop_pid "$SAMPLER_PID"
}

setup() {
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter "$DATA/nodepool.yaml"
  e2e_start_controller controller --disable-leader-election --batch-idle-duration 500ms \
    --kwok-finish-pods-immediately
  k -n $NS apply -f - >/dev/null <<EOF2
apiVersion: v1
kind: Pod
metadata:
  name: holder
  annotations: {karpenter.sh/do-not-disrupt: "${HOLD}s"}
spec:
  terminationGracePeriodSeconds: 0
  containers: [{name: pause, image: registry.k8s.io/pause:3.7, resources: {requests: {cpu: 250m}}}]
EOF2
  wait_for "[ \"\$(k -n $NS get pod holder -o jsonpath='{.status.phase}')\" = Running ]" 120 ||
    fail "the do-not-disrupt pod is not Running after 120s"
  pass "pod holder (karpenter.sh/do-not-disrupt: ${HOLD}s) Running on $(k -n $NS get pod holder -o jsonpath='{.spec.nodeName}')"
}

hold_then_evict() {
  local node claim start started evicted_at samples
  node=$(k -n $NS get pod holder -o jsonpath='{.spec.nodeName}')
  claim=$(k get nodeclaims -o jsonpath="{.items[?(@.status.nodeName==\"$node\")].metadata.name}")
  start=$(k -n $NS get pod holder -o jsonpath='{.status.startTime}')
  started=$(secs "$start")
  samples="$KP_E2E_DIR/drained"
  watch_drained "$claim" "$samples"
  sleep 1
  k delete node "$node" --wait=false >/dev/null
  wait_for "grep -q karpenter.sh/disrupted <<<\"\$(k get node $node -o jsonpath='{.spec.taints}')\"" 30 ||
    fail "node $node not tainted karpenter.sh/disrupted"
  pass "the deleted node $node is tainted karpenter.sh/disrupted"
  # Well before the hold ends (the pod started at $start).
  wait_for "[ \$(date +%s) -ge $((started + HOLD - 12)) ]" $((HOLD + 60)) || true
  check "$((HOLD - 12))s after the pod started, it still runs" \
    test "$(k -n $NS get pod holder -o jsonpath='{.metadata.deletionTimestamp}|{.spec.nodeName}')" = "|$node"
  check "the node is still there" k get node "$node"
  check "its NodeClaim says Drained Unknown" test "$(drained "$claim")" = Unknown
  wait_for "! k -n $NS get pod holder" $((HOLD + 60)) || fail "the pod was never evicted"
  evicted_at=$(k -n $NS get events --field-selector involvedObject.name=holder,reason=Evicted \
    -o jsonpath='{.items[0].firstTimestamp}')
  [ -n "$evicted_at" ] || fail "no Evicted event for the pod"
  pass "the pod was evicted at $evicted_at, $(($(secs "$evicted_at") - started))s after it started at $start"
  check "not before its ${HOLD}s had passed" test $(($(secs "$evicted_at") - started)) -ge "$HOLD"
  wait_for "! k get node $node" 60 || fail "node $node not gone after the drain"
  pass "node $node is gone"
  wait_for "! k get nodeclaim $claim" 60 || fail "nodeclaim $claim outlived its node"
  e2e_stop_pid "$SAMPLER_PID"
  check "Drained was Unknown while the pod was held" grep -q ' Unknown$' "$samples"
  check "then True" grep -q ' True$' "$samples"
  check "never True before the eviction" test -z \
    "$(awk -v t="$(secs "$evicted_at")" '$2 == "True" && $1 < t' "$samples")"
}

setup
hold_then_evict
