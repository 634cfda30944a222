#!/usr/bin/env bash
# Beyond Karpenter, on the real control plane: the live what-if and the caps.
#
#   - `simulate --kubeconfig` as the service account of deploy/simulate-reader plans
#     from the cluster's own objects: the NodePool, the NodeClaims and Nodes the
#     controller made, the pods (running, and pending with no controller running);
#   - -f replaces a live object (a NodePool with a taint: every pending pod is held
#     back, naming the taint) or adds objects (50 more pods); --without removes the
#     NodePool with its NodeClaims and Nodes, whose pods are pending again; --disrupt
#     says what consolidation would do now; the cluster is unchanged by all of it;
#   - the API server's audit log shows that account made only LIST requests (one
#     paged list per kind and run), and no write; without the role, simulate stops
#     with a message naming the ClusterRole to bind;
#   - `run --max-nodes-total` holds pods back at the cap with a FailedScheduling
#     event naming it, exports karpenter_caps_headroom, and launches what
#     `simulate --max-nodes-total` said it would.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
readonly HERE ROOT DATA="$HERE/data" NS=e2e-whatif
readonly READER=system:serviceaccount:kube-system:karpenter-c-simulate
WORK=""
BIN=""
READER_KC=""

running() { [ "$(k -n $NS get pods -l "app=$1" --field-selector=status.phase=Running -o name | grep -c .)" -eq "$2" ]; }
unschedulable() {
  k -n $NS get pods -l "app=$1" -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="PodScheduled")].reason}{"\n"}{end}' |
    grep -c Unschedulable || true
}
# jq-like reads of a plan: py FILE EXPR (EXPR sees the plan as d).
py() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

setup() {
  export KP_E2E_AUDIT=1 # the API server logs every request's metadata
  e2e_setup
  WORK="$KP_E2E_DIR/whatif"
  mkdir -p "$WORK"
  BIN=$(e2e_controller)
  e2e_namespace $NS
  # The e2e NodePool, with room: its usual cpu limit (64) would stop a plan
  # that charges each new claim its largest option long before the caps do.
  sed 's/^    cpu: 64$/    cpu: 10000/' "$DATA/nodepool.yaml" >"$WORK/nodepool.yaml"
  assert "the NodePool's limit is raised" grep -q 'cpu: 10000' "$WORK/nodepool.yaml"
  e2e_karpenter "$WORK/nodepool.yaml"
  k apply -k "$ROOT/deploy/simulate-reader" >/dev/null
  e2e_cleanup k delete -k "$ROOT/deploy/simulate-reader" --ignore-not-found --wait=false
  READER_KC="$WORK/reader.kubeconfig"
  wait_for "e2e_sa_kubeconfig kube-system karpenter-c-simulate '$READER_KC'" 60 ||
    fail "no token for kube-system/karpenter-c-simulate"
  pass "deploy/simulate-reader applied; its service account has a kubeconfig"
}

# The controller makes nodes for 10 pods, 8 of them go, and it stops. Then 12 pods
# that each want a node of their own (anti-affinity by hostname) arrive: the
# scheduler puts one on each node there is, the rest stay pending, since no
# controller runs.
grow_cluster() {
  e2e_start_controller controller --disable-leader-election --kwok-finish-pods-immediately \
    --batch-idle-duration 500ms
  k -n $NS apply -f "$DATA/inflate.yaml" >/dev/null
  wait_for "running inflate 10" 120 || fail "10 inflate pods not Running"
  k -n $NS scale deployment inflate --replicas 2 >/dev/null
  wait_for '[ "$(k -n '$NS' get pods -l app=inflate -o name | grep -c .)" = 2 ]' 60 || fail "inflate did not scale down"
  wait_for '[ "$(count nodes)" -ge 1 ] && [ "$(count nodes)" = "$(count nodeclaims)" ]' 30 ||
    fail "nodes and claims differ"
  e2e_stop_pid "$E2E_CONTROLLER_PID"
  k -n $NS apply -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: burst}
spec:
  replicas: 12
  selector: {matchLabels: {app: burst}}
  template:
    metadata: {labels: {app: burst}}
    spec:
      terminationGracePeriodSeconds: 0
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: burst}}}
      containers:
      - {name: pause, image: registry.k8s.io/pause:3.7, resources: {requests: {cpu: 500m}}}
EOF
  wait_for '[ "$(unschedulable burst)" -ge $((12 - $(count nodes))) ]' 60 || fail "burst pods not marked Unschedulable"
  pass "the cluster: $(count nodes) nodes, $(count nodeclaims) NodeClaims, $(count pods -A) pods, $(unbound) not bound"
}

# Pods with no node (what the plan is for).
unbound() { k get pods -A -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c '^$' || true; }

# simulate OUT [FLAGS...]: as the reader, with the kwok provider; the plan into WORK/OUT.json.
simulate() {
  local out="$WORK/$1.json"
  shift
  "$BIN" simulate --kubeconfig "$READER_KC" --cloud-provider kwok -o json "$@" >"$out" 2>"$WORK/err"
}

live_plan() {
  local t0 ms pending
  t0=$(date +%s%N)
  simulate live || fail "simulate --kubeconfig: $(cat "$WORK/err")"
  ms=$((($(date +%s%N) - t0) / 1000000))
  pass "a live what-if of the whole cluster took $ms ms (read and plan)"
  check "it read every Node ($(py "$WORK/live.json" 'd["cluster"]["objects"]["nodes"]'))" \
    [ "$(py "$WORK/live.json" 'd["cluster"]["objects"]["nodes"]')" = "$(count nodes)" ]
  check "... every NodeClaim" [ "$(py "$WORK/live.json" 'd["cluster"]["objects"]["nodeclaims"]')" = "$(count nodeclaims)" ]
  check "... every Pod" [ "$(py "$WORK/live.json" 'd["cluster"]["objects"]["pods"]')" = "$(count pods -A)" ]
  check "... the NodePool" [ "$(py "$WORK/live.json" 'd["cluster"]["objects"]["nodepools"]')" = 1 ]
  pending=$(unbound)
  check "it plans for the $pending pending pods" [ "$(py "$WORK/live.json" 'd["summary"]["pods"]')" = "$pending" ]
  check "... and places them all, each on a new node ($(py "$WORK/live.json" 'd["summary"]'))" \
    [ "$(py "$WORK/live.json" 'd["summary"]["scheduled"]'):$(py "$WORK/live.json" 'd["summary"]["newNodeClaims"]')" = "$pending:$pending" ]
}

overrides() {
  cat >"$WORK/tainted.yaml" <<'EOF'
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
EOF
  simulate tainted -f "$WORK/tainted.yaml" || fail "simulate -f tainted.yaml: $(cat "$WORK/err")"
  check "-f replaces the live NodePool of the same name" [ "$(py "$WORK/tainted.json" 'd["cluster"]["replaced"]')" = 1 ]
  check "... and no pending pod can have a new node: each says it does not tolerate the taint" \
    [ "$(py "$WORK/tainted.json" 'sum("did not tolerate taint dedicated=gpu:NoSchedule" in u["reason"] for u in d["unschedulable"])')" -gt 0 ]
  check "... while the NodePool's existing nodes still take what fits" \
    [ "$(py "$WORK/tainted.json" 'd["summary"]["newNodeClaims"]')" = 0 ]

  python3 - "$WORK/more.yaml" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(50):
        f.write(f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: extra-{i}, namespace: e2e-whatif}}\n"
                "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '2'}}}]}\n")
EOF
  simulate more -f "$WORK/more.yaml" || fail "simulate -f more.yaml: $(cat "$WORK/err")"
  check "-f adds 50 pods" [ "$(py "$WORK/more.json" 'd["cluster"]["added"]')" = 50 ]
  check "... that the plan places too ($(py "$WORK/more.json" 'd["summary"]'))" \
    [ "$(py "$WORK/more.json" 'd["summary"]["scheduled"]')" = "$(($(py "$WORK/live.json" 'd["summary"]["pods"]') + 50))" ]
  check "... on more capacity: \$$(py "$WORK/more.json" 'round(d["summary"]["hourlyCost"],4)')/hour against \$$(py "$WORK/live.json" 'round(d["summary"]["hourlyCost"],4)')" \
    python3 -c 'import json,sys; a,b=(json.load(open(f))["summary"]["hourlyCost"] for f in sys.argv[1:]); sys.exit(0 if a > b else 1)' "$WORK/more.json" "$WORK/live.json"

  simulate without --without nodepool/default || fail "simulate --without: $(cat "$WORK/err")"
  check "--without nodepool/default takes its NodeClaims and Nodes ($(py "$WORK/without.json" 'd["cluster"]'))" \
    [ "$(py "$WORK/without.json" 'd["cluster"]["removed"]')" -gt "$(count nodes)" ]
  check "... their pods are pending again and nothing can run anything" \
    [ "$(py "$WORK/without.json" 'len(d["unschedulable"])')" = "$(py "$WORK/without.json" 'd["summary"]["pods"]')" ]

  simulate disrupt --disrupt --now "$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)" ||
    fail "simulate --disrupt: $(cat "$WORK/err")"
  check "--disrupt answers for every node: a command or a reason it stays" \
    [ "$(py "$WORK/disrupt.json" 'len(d["disruption"]) + len(d["blocked"])')" -ge 1 ]

  check "the cluster is as it was: the NodePool has no taint" [ -z "$(k get nodepool default -o jsonpath='{.spec.template.spec.taints}')" ]
  check "... and no NodeClaim was made" [ "$(count nodeclaims)" = "$(py "$WORK/live.json" 'd["cluster"]["objects"]["nodeclaims"]')" ]
}

# The audit log: what the reader's account asked of the API server.
audit_report() {
  python3 - "$KP_E2E_DIR/logs/audit.log" "$READER" <<'EOF'
import collections, json, sys
path, user = sys.argv[1], sys.argv[2]
verbs, lists, codes = collections.Counter(), collections.Counter(), collections.Counter()
for line in open(path):
    e = json.loads(line)
    if e.get("stage") != "ResponseComplete" or e.get("user", {}).get("username") != user:
        continue
    verbs[e["verb"]] += 1
    codes[e.get("responseStatus", {}).get("code")] += 1
    ref = e.get("objectRef") or {}
    if e["verb"] == "list":
        lists[ref.get("resource", "?")] += 1
print(json.dumps({"verbs": verbs, "lists": lists, "codes": {str(k): v for k, v in codes.items()}}))
EOF
}

read_only() {
  local report
  report=$(audit_report)
  pass "the reader's requests: $report"
  check "only list requests, no write (and one discovery get a run, of policy/v1; one of /api by the test)" \
    python3 -c 'import json,sys; v=json.loads(sys.argv[1])["verbs"]; sys.exit(0 if set(v) <= {"list","get"} and v.get("list",0) > 0 and v.get("get",0) <= v.get("list",0) // 10 + 1 else 1)' "$report"
  check "every list answered 200 (a discovery get of policy/v1 may be 404 on 1.20)" \
    python3 -c 'import json,sys; r=json.loads(sys.argv[1]); sys.exit(0 if r["codes"].get("200",0) >= sum(r["lists"].values()) and set(r["codes"]) <= {"200","404"} else 1)' "$report"
  check "one list per kind and run: pods listed as often as nodes and NodePools" \
    python3 -c 'import json,sys; l=json.loads(sys.argv[1])["lists"]; sys.exit(0 if l["pods"] == l["nodes"] == l["nodepools"] else 1)' "$report"

  k create serviceaccount nobody -n kube-system >/dev/null
  e2e_cleanup k delete serviceaccount nobody -n kube-system --ignore-not-found
  wait_for "e2e_sa_kubeconfig kube-system nobody '$WORK/nobody.kubeconfig'" 60 || fail "no token for nobody"
  if "$BIN" simulate --kubeconfig "$WORK/nobody.kubeconfig" --cloud-provider kwok >/dev/null 2>"$WORK/nobody.err"; then
    fail "simulate without the role succeeded"
  fi
  check "without the role, simulate stops naming what to bind ($(head -c 300 "$WORK/nobody.err"))" \
    grep -q "bind the ClusterRole karpenter-c-simulate-reader of deploy/simulate-reader" "$WORK/nobody.err"
}

caps_on_run() {
  local nodes cap planned port got
  nodes=$(count nodes)
  cap=$((nodes + 1))
  simulate capped --max-nodes-total "$cap" || fail "simulate --max-nodes-total: $(cat "$WORK/err")"
  planned=$(py "$WORK/capped.json" 'd["summary"]["newNodeClaims"]')
  check "simulate --max-nodes-total $cap plans $planned new NodeClaim (the cluster has $nodes nodes)" [ "$planned" = 1 ]
  check "... and names the cap for the pods it holds back" \
    [ "$(py "$WORK/capped.json" 'sum("cluster-wide cap --max-nodes-total='"$cap"' is reached" in u["reason"] for u in d["unschedulable"])')" -gt 0 ]
  port=$(e2e_free_port)
  e2e_start_controller capped --disable-leader-election --kwok-finish-pods-immediately \
    --batch-idle-duration 500ms --max-nodes-total "$cap" --metrics-port "$port"
  wait_for "grep -q 'max-nodes-total=$cap is reached' <<<\"\$(k -n $NS get events --field-selector reason=FailedScheduling -o jsonpath='{.items[*].message}')\"" 60 ||
    fail "no FailedScheduling event naming the cap: $(k -n $NS get events --field-selector reason=FailedScheduling -o jsonpath='{.items[*].message}' | head -c 600)"
  pass "a pod held back gets: $(k -n $NS get events --field-selector reason=FailedScheduling -o jsonpath='{.items[*].message}' | grep -o 'Failed to schedule pod, [^)]*)' | head -n 1)"
  check "the controller stops at the cap: $(count nodeclaims) NodeClaims for $cap" [ "$(count nodeclaims)" = "$cap" ]
  check "... as simulate said: $planned more" [ "$(count nodeclaims)" = "$((nodes + planned))" ]
  wait_for "curl -fsS http://127.0.0.1:$port/metrics | grep '^karpenter_caps_headroom{cap=\"max-nodes-total\",nodepool=\"\"} 0$' >/dev/null" 30 ||
    fail "no headroom gauge at 0: $(curl -fsS "http://127.0.0.1:$port/metrics" | grep caps_headroom)"
  got=$(curl -fsS "http://127.0.0.1:$port/metrics" | grep '^karpenter_caps_headroom')
  pass "the headroom gauge: $got"
  sleep 3
  check "no NodeClaim past the cap after a few more batches" [ "$(count nodeclaims)" = "$cap" ]
}

setup
grow_cluster
live_plan
overrides
read_only
caps_on_run
