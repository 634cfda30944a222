#!/usr/bin/env bash
# Two replicas of the controller with leader election on a coordination.k8s.io/v1
# Lease: one holds it and alone launches capacity; when it is killed (no chance
# to release the Lease) the other takes over within the lease duration (15 s)
# and provisions; a replica stopped cleanly hands the Lease over at once.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
readonly DATA="$HERE/data"
readonly NS=e2e-leader
readonly LEASE=karpenter-leader-election
declare -A PID

running() { [ "$(k -n $NS get pods -l app=inflate --field-selector=status.phase=Running -o name | grep -c .)" -eq "$1" ]; }
holder() { k -n kube-system get lease $LEASE -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
launches() { grep -c '"launched nodeclaim"' "$KP_E2E_DIR/controller-$1.log" 2>/dev/null || true; }

start() {
  e2e_start_controller "controller-$1" --identity "$1" --batch-idle-duration 500ms --kwok-finish-pods-immediately
  PID[$1]=$E2E_CONTROLLER_PID
}

setup() {
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter "$DATA/nodepool.yaml"
  start a
  start b
  wait_for '[ -n "$(holder)" ]' 30 || fail "nobody took the Lease $LEASE"
  pass "replica $(holder) holds the Lease"
}

only_leader_acts() {
  local leader other
  leader=$(holder)
  other=$([ "$leader" = a ] && echo b || echo a)
  k -n $NS apply -f "$DATA/inflate.yaml" >/dev/null
  k -n $NS scale deployment inflate --replicas 4 >/dev/null
  wait_for "running 4" 120 || fail "4 pods not Running with two replicas"
  check "the leader ($leader) launched the capacity" test "$(launches "$leader")" -ge 1
  check "the follower ($other) launched nothing" test "$(launches "$other")" -eq 0
}

takeover() {
  local leader other claims start_s
  leader=$(holder)
  other=$([ "$leader" = a ] && echo b || echo a)
  start_s=$SECONDS
  e2e_stop_pid "${PID[$leader]}" KILL
  wait_for '[ "$(holder)" = "'"$other"'" ]' 40 || fail "replica $other did not take the Lease (holder: $(holder))"
  pass "replica $other took over $((SECONDS - start_s))s after the leader was killed"
  claims=$(count nodeclaims)
  k -n $NS scale deployment inflate --replicas 24 >/dev/null
  wait_for "running 24" 120 || fail "the new leader did not provision for 24 pods"
  pass "the new leader provisioned: $(count nodeclaims) NodeClaims (had $claims)"
  check "and it did the launching" test "$(launches "$other")" -ge 1
}

clean_handover() {
  local leader start_s
  start "${1}"
  leader=$(holder)
  start_s=$SECONDS
  e2e_stop_pid "${PID[$leader]}" TERM
  wait_for '[ "$(holder)" = "'"$1"'" ]' 10 || fail "replica $1 did not get the released Lease within 10s"
  pass "a leader stopped with SIGTERM releases the Lease: $1 leads after $((SECONDS - start_s))s"
}

setup
only_leader_acts
takeover
clean_handover c
