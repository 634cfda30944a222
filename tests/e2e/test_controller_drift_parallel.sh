#!/usr/bin/env bash
# Drift rolled in parallel under a budget, on the real control plane: six kwok
# nodes of a NodePool whose budget is nodes "50%"; changing its template drifts
# all six (Drifted, reason NodePoolDrifted, on every claim) and the controller
# replaces them with several commands in flight at once, never more than the
# budget allows; every node is replaced, the claims say DisruptionTerminating and
# the replacements DisruptionLaunching. The same roll is then timed with
# DISRUPTION_PARALLELISM=1 (one command at a time, Karpenter's serial loop): it
# takes one command in flight at a time, and longer. Both times are printed, and
# their ratio (the issue asks for under half; timings are not asserted).
#
# The rounds: budgets count only initialized nodes, deleting ones until their
# instance terminates (Karpenter's arithmetic), so 3 commands start, then more
# as their replacements are up, then the last one as soon as the first three
# candidates' instances terminate (the controller plans at once when a budget
# frees). The budget is not a fixed 3: an initialized replacement counts before
# its candidate is deleted, so 7 nodes allow 4 disrupting and a fourth command
# may start then. What must hold in every sample is the budget of that sample. A replacement still booting holds the pods of its own command in the
# next plans, so the last drifted node gets a replacement of its own instead of
# waiting for that one (UninitializedTarget).
#
# A kwok node is up in a second; a real one takes a while to boot and become
# ready, and that wait is what running commands side by side saves. So the
# NodePool has a startup taint that a stand-in for a node agent lifts once the
# node is BOOT seconds old: each replacement stays uninitialized that long.
# BOOT is 15 s (an EC2 node takes 30-60 s): the serial roll overlaps each
# drain with the next boot (about 6 boots + 1 drain), the parallel one cannot
# start its last command before the first candidates finish draining (2 boots
# + 2 drains, a drain being at least Karpenter's 5 s MinDrainTime), so with
# 8 s boots even a roll with no overhead at all would take 0.51 of the serial
# time; with 15 s boots, 0.45.
#
# Sampled every 0.5 s from one NodeClaim list (a consistent snapshot, but for
# the Nodes' initialized label, read just before it): commands in flight
# (claims marked DisruptionReason and not yet deleted), and the nodes
# disrupting against the budget (Karpenter's count: initialized nodes whose
# instance is not terminating; disrupting among them: marked or deleting).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
readonly DATA="$HERE/data"
readonly NS=e2e-drift-parallel
readonly NODES=6
readonly BOOT=15
readonly STARTUP=e2e.example/agent-not-ready
SAMPLER_PID=""
AGENT_PID=""

running() { [ "$(k -n $NS get pods -l app=inflate --field-selector=status.phase=Running -o name | grep -c .)" -eq "$1" ]; }
now_ms() { date +%s%3N; }

# One line per NodeClaim: name|deletionTimestamp|Initialized|InstanceTerminating|DisruptionReason|Drifted reason|team|nodeName
claim_rows() {
  k get nodeclaims -o jsonpath='{range .items[*]}{.metadata.name}{"|"}{.metadata.deletionTimestamp}{"|"}{.status.conditions[?(@.type=="Initialized")].status}{"|"}{.status.conditions[?(@.type=="InstanceTerminating")].status}{"|"}{.status.conditions[?(@.type=="DisruptionReason")].status}{"|"}{.status.conditions[?(@.type=="Drifted")].reason}{"|"}{.metadata.labels.team}{"|"}{.status.nodeName}{"\n"}{end}'
}
# The Nodes labelled karpenter.sh/initialized, one name per line.
initialized_nodes() { k get nodes -l karpenter.sh/initialized=true -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'; }

# In the background, every 0.5 s: "in_flight disrupting budget" to $1, and the
# claims seen with Drifted=NodePoolDrifted to $1.drifted.
start_sampler() {
  local out="$1"
  : >"$out"
  : >"$out.drifted"
  (
    while true; do
      # The controller counts a node as initialized from its Node's label,
      # which is written just before the claim's condition: either will do.
      inited=$(initialized_nodes 2>/dev/null) || inited=""
      rows=$(claim_rows 2>/dev/null) || rows=""
      if [ -n "$rows" ]; then
        awk -F'|' -v inited="$inited" '
          BEGIN { n = split(inited, names, "\n"); for (i = 1; i <= n; i++) labelled[names[i]] = 1 }
          { marked = $5 == "True"; deleting = $2 != ""
            initialized = $3 == "True" || ($8 != "" && ($8 in labelled))
            if (marked && !deleting) inflight++
            if (initialized && $4 != "True") { counted++; if (marked || deleting) disrupting++ } }
          END { printf "%d %d %d\n", inflight, disrupting, int((counted + 1) / 2) }' <<<"$rows" >>"$out"
        awk -F'|' '$6 == "NodePoolDrifted" { print $1 }' <<<"$rows" >>"$out.drifted"
      fi
      sleep 0.5
    done
  ) &
  SAMPLER_PID=$!
  e2e_cleanup e2e_stop_pid "$SAMPLER_PID"
}
stop_sampler() { e2e_stop_pid "$SAMPLER_PID"; }
max_col() { awk -v c="$2" 'BEGIN { m = 0 } $c > m { m = $c } END { print m }' "$1"; }
# The largest excess of disrupting nodes over the budget in any sample.
max_over() { awk 'BEGIN { m = -1000 } $2 - $3 > m { m = $2 - $3 } END { print m }' "$1"; }
# The largest excess of commands in flight over the budget in any sample.
max_inflight_over() { awk 'BEGIN { m = -1000 } $1 - $3 > m { m = $1 - $3 } END { print m }' "$1"; }

# The node agent: lifts the startup taint of nodes BOOT seconds old, every 0.5 s.
start_agent() {
  (
    while true; do
      now=$(date +%s)
      k get nodes -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.metadata.creationTimestamp}{" "}{.spec.taints[*].key}{"\n"}{end}' 2>/dev/null |
        while read -r node created taints; do
          [[ " $taints " == *" $STARTUP "* ]] || continue
          [ $((now - $(date -d "$created" +%s))) -ge "$BOOT" ] || continue
          k taint node "$node" "$STARTUP:NoSchedule-" >/dev/null 2>&1 || true
        done
      sleep 0.5
    done
  ) &
  AGENT_PID=$!
  e2e_cleanup e2e_stop_pid "$AGENT_PID"
}

claims_named() { k get nodeclaims -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort; }

# Every claim and node carries team=$1, there are $NODES of each, none is being
# deleted, and the pods run.
rolled() {
  local team="$1"
  [ "$(k get nodeclaims -l "team=$team" -o name | grep -c .)" -eq "$NODES" ] &&
    [ "$(count nodeclaims)" -eq "$NODES" ] &&
    [ "$(k get nodes -l "team=$team" -o name | grep -c .)" -eq "$NODES" ] &&
    [ "$(count nodes)" -eq "$NODES" ] &&
    [ -z "$(k get nodeclaims -o jsonpath='{.items[*].metadata.deletionTimestamp}')" ] &&
    running "$NODES"
}

controller() {
  e2e_start_controller "$1" --disable-leader-election --batch-idle-duration 500ms \
    --kwok-finish-pods-immediately --disruption-poll-interval 2s
}

setup() {
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter_rbac
  k apply -f - >/dev/null <<EOF2
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    metadata: {labels: {team: blue}}
    spec:
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}
        # 4 vCPUs at most: one 2500m pod per node, so six pods make six nodes
        - {key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: ["5"]}
      startupTaints: [{key: $STARTUP, effect: NoSchedule}]
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
      expireAfter: Never
  limits: {cpu: 100}
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: Never
    budgets: [{nodes: "50%"}]
EOF2
  controller controller
  start_agent
  sed -e "s/replicas: 10/replicas: $NODES/" -e "s/cpu: 500m/cpu: 2500m/" "$DATA/inflate.yaml" | k -n $NS apply -f - >/dev/null
  wait_for "running $NODES && [ \"\$(count nodes)\" -eq $NODES ]" 180 ||
    fail "$NODES pods on $NODES nodes not Running after 180s ($(count nodes) nodes)"
  wait_for "rolled blue" 60 || fail "the $NODES claims are not all initialized: $(claim_rows)"
  pass "$NODES pods Running, one per node, on $NODES nodes of team blue"
}

# roll TEAM: changes the template label to TEAM and waits until every node carries
# it. Sets ROLL_S (seconds, to the ms) and ROLL_SAMPLES (the sampler's file).
ROLL_S=""
ROLL_SAMPLES=""
roll() {
  local team="$1" t0 before
  ROLL_SAMPLES="$KP_E2E_DIR/samples-$team"
  before=$(claims_named)
  echo "$before" >"$KP_E2E_DIR/claims-before-$team"
  start_sampler "$ROLL_SAMPLES"
  t0=$(now_ms)
  k patch nodepool default --type merge -p "{\"spec\":{\"template\":{\"metadata\":{\"labels\":{\"team\":\"$team\"}}}}}" >/dev/null
  wait_for "rolled $team" 420 0.5 || fail "not every node was replaced with team=$team after 420s: $(claim_rows)"
  ROLL_S=$(awk -v a="$(now_ms)" -v b="$t0" 'BEGIN { printf "%.1f", (a - b) / 1000 }')
  stop_sampler
  check "no claim of before the roll is left" test -z "$(comm -12 <(echo "$before") <(claims_named))"
}

parallel() {
  local inflight over inflight_over seen
  roll green
  PARALLEL_S=$ROLL_S
  pass "parallel: all $NODES drifted nodes replaced in ${PARALLEL_S}s"
  inflight=$(max_col "$ROLL_SAMPLES" 1)
  over=$(max_over "$ROLL_SAMPLES")
  inflight_over=$(max_inflight_over "$ROLL_SAMPLES")
  e2e_say "parallel: at most $inflight commands in flight, $(max_col "$ROLL_SAMPLES" 2) nodes disrupting ($(wc -l <"$ROLL_SAMPLES") samples)"
  check "at least 2 commands were in flight at once (saw $inflight)" test "$inflight" -ge 2
  check "never more commands in flight than the budget of the moment (largest excess $inflight_over)" \
    test "$inflight_over" -le 0
  check "never more nodes disrupting than 50% of the NodePool's nodes (largest excess $over)" test "$over" -le 0
  seen=$(sort -u "$ROLL_SAMPLES.drifted" | comm -12 - "$KP_E2E_DIR/claims-before-green" | grep -c . || true)
  check "the $NODES drifted claims said Drifted, reason NodePoolDrifted ($seen seen)" test "$seen" -eq "$NODES"
  events
}

# reason KIND: the names of the objects of KIND with an event of that reason.
event_objects() {
  k get events -A --field-selector "reason=$1,involvedObject.kind=$2" \
    -o jsonpath='{range .items[*]}{.involvedObject.name}{"\n"}{end}' | sort -u
}

events() {
  local before after terminating launching nodes
  before=$(cat "$KP_E2E_DIR/claims-before-green")
  after=$(claims_named)
  terminating=$(event_objects DisruptionTerminating NodeClaim | comm -12 - <(echo "$before") | grep -c . || true)
  check "DisruptionTerminating on each of the $NODES replaced NodeClaims ($terminating)" test "$terminating" -eq "$NODES"
  nodes=$(event_objects DisruptionTerminating Node | grep -c . || true)
  check "DisruptionTerminating on the replaced Nodes ($nodes)" test "$nodes" -eq "$NODES"
  launching=$(event_objects DisruptionLaunching NodeClaim | comm -12 - <(echo "$after") | grep -c . || true)
  check "DisruptionLaunching on each replacement NodeClaim ($launching)" test "$launching" -eq "$NODES"
  check "the messages name the reason" grep -q 'Disrupting NodeClaim: Drifted' \
    <<<"$(k get events -A --field-selector reason=DisruptionTerminating -o jsonpath='{.items[*].message}')"
}

serial() {
  local inflight
  e2e_stop_pid "$E2E_CONTROLLER_PID"
  DISRUPTION_PARALLELISM=1 controller controller-serial
  roll red
  SERIAL_S=$ROLL_S
  pass "serial (DISRUPTION_PARALLELISM=1): all $NODES drifted nodes replaced in ${SERIAL_S}s"
  inflight=$(max_col "$ROLL_SAMPLES" 1)
  check "serially, one command in flight at a time (saw $inflight)" test "$inflight" -eq 1
  check "the pods run on the replacements" running "$NODES"
}

compare() {
  e2e_say "rolling $NODES drifted nodes (${BOOT}s to boot) under nodes \"50%\": parallel ${PARALLEL_S}s, serial ${SERIAL_S}s" \
    "(parallel/serial $(awk -v p="$PARALLEL_S" -v s="$SERIAL_S" 'BEGIN { printf "%.2f", p / s }'))"
  check "the parallel roll (${PARALLEL_S}s) is faster than the serial one (${SERIAL_S}s)" \
    awk -v p="$PARALLEL_S" -v s="$SERIAL_S" 'BEGIN { exit !(p < s) }'
}

PARALLEL_S=""
SERIAL_S=""
setup
parallel
serial
compare
