#!/usr/bin/env bash
# The controller's metrics as a Karpenter user reads them: Debian's Prometheus,
# started here on loopback, scrapes the controller every second while it
# provisions nodes for a Deployment and then consolidates them when it shrinks.
# Afterwards every PromQL query of the dashboards in deploy/dashboards/ (and
# every variable query) returns data from that Prometheus, the dashboards query
# every family Karpenter's published dashboards do, and the controller's real
# output passes Prometheus' own parser (promtool check metrics) with whole
# numbers printed whole. The ServiceMonitor overlay selects the metrics Service
# by Karpenter's labels.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
readonly DATA="$HERE/data"
readonly REPO="$HERE/../.."
readonly NS=e2e-prometheus
METRICS=""
PROM=""

command -v prometheus >/dev/null || fail "prometheus is needed (Debian package prometheus: scripts/install-deps.sh e2e)"
command -v promtool >/dev/null || fail "promtool is needed (Debian package prometheus)"

running() { [ "$(k -n $NS get pods -l app=inflate --field-selector=status.phase=Running -o name | grep -c .)" -eq "$1" ]; }
scrape() { curl -fsS --max-time 10 "http://127.0.0.1:$METRICS/metrics"; }
# promql EXPR: the number of series the instant query returns.
promql() {
  curl -fsS --max-time 10 "http://127.0.0.1:$PROM/api/v1/query" --data-urlencode "query=$1" |
    python3 -c 'import json,sys; print(len(json.load(sys.stdin)["data"]["result"]))'
}
# promql_value EXPR: the first value of the instant query (0 when none).
promql_value() {
  curl -fsS --max-time 10 "http://127.0.0.1:$PROM/api/v1/query" --data-urlencode "query=$1" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)'
}

start_prometheus() {
  PROM=$(e2e_free_port)
  mkdir -p "$KP_E2E_DIR/prometheus"
  cat >"$KP_E2E_DIR/prometheus.yml" <<EOF
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
scrape_configs:
- job_name: karpenter
  static_configs: [{targets: ["127.0.0.1:$METRICS"]}]
EOF
  prometheus --config.file="$KP_E2E_DIR/prometheus.yml" --storage.tsdb.path="$KP_E2E_DIR/prometheus" \
    --web.listen-address="127.0.0.1:$PROM" --storage.tsdb.retention.time=1h --log.level=warn \
    >>"$KP_E2E_DIR/prometheus.log" 2>&1 &
  local pid=$!
  e2e_cleanup e2e_stop_pid "$pid"
  wait_for "curl -fsS --max-time 2 http://127.0.0.1:$PROM/-/ready" 60 || fail "Prometheus is not ready after 60s"
  wait_for '[ "$(promql '\''up{job="karpenter"} == 1'\'')" -eq 1 ]' 60 || fail "Prometheus does not scrape the controller"
  pass "Prometheus $(prometheus --version 2>&1 | head -n 1 | awk '{print $3}') scrapes the controller every second"
}

setup() {
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter_rbac
  cat <<EOF | k apply -f - >/dev/null
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}
        - {key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: ["3"]} # 2 vCPUs: several nodes
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
      expireAfter: Never
  limits: {cpu: 1000, memory: 4000Gi}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
    budgets: [{nodes: "100%"}]
EOF
  # A DaemonSet, so the nodes carry DaemonSet requests as real ones do.
  cat <<EOF | k -n $NS apply -f - >/dev/null
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      terminationGracePeriodSeconds: 0
      tolerations: [{operator: Exists}]
      containers:
        - name: pause
          image: registry.k8s.io/pause:3.7
          resources: {requests: {cpu: 10m, memory: 16Mi}}
EOF
  METRICS=$(e2e_free_port)
  e2e_start_controller controller --disable-leader-election --batch-idle-duration 500ms \
    --kwok-finish-pods-immediately --disruption-poll-interval 2s --consolidation-validation-period 2s \
    --metrics-port "$METRICS"
  wait_for "scrape >/dev/null" 60 || fail "the controller does not serve /metrics"
  start_prometheus
}

provision_and_consolidate() {
  local nodes start_s
  k -n $NS apply -f "$DATA/inflate.yaml" >/dev/null
  k -n $NS scale deployment inflate --replicas 12 >/dev/null
  wait_for "running 12" 180 || fail "12 inflate pods not Running after 180s"
  nodes=$(count nodes)
  pass "12 pods Running on $nodes nodes"
  [ "$nodes" -ge 3 ] || fail "only $nodes nodes: nothing to consolidate"
  start_s=$SECONDS
  k -n $NS scale deployment inflate --replicas 2 >/dev/null
  wait_for '[ "$(count nodes)" -lt '"$nodes"' ]' 240 || fail "still $(count nodes) nodes 240s after the Deployment shrank"
  wait_for "running 2" 60 || fail "the 2 pods are not Running after consolidation"
  pass "consolidation went from $nodes to $(count nodes) nodes in $((SECONDS - start_s))s"
  wait_for '[ "$(promql "karpenter_nodes_terminated_total > 0")" -gt 0 ]' 60 ||
    fail "Prometheus never saw karpenter_nodes_terminated_total move"
  sleep 5 # the state pass and a few scrapes after the last change
}

# Prometheus' parser on the controller's real output. Its linter may only
# object to the suffix of a name Karpenter itself serves (gauges such as
# karpenter_nodepools_cost_total, or karpenter_scheduler_unschedulable_pods_count
# and the other gauges ending in _count): those names are the contract.
promtool_check() {
  local out rc=0 problems
  scrape >"$KP_E2E_DIR/metrics.txt"
  out=$(promtool check metrics <"$KP_E2E_DIR/metrics.txt" 2>&1) || rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || { printf '%s\n' "$out" | head -n 5; fail "promtool cannot parse /metrics (exit $rc)"; }
  printf '%s\n' "$out" >"$KP_E2E_DIR/promtool.txt"
  problems=$(python3 - "$REPO/docs/reference/karpenter-v1.14-metrics.tsv" "$KP_E2E_DIR/promtool.txt" <<'EOF2'
import re, sys
karpenter = {l.split("\t")[0] for l in open(sys.argv[1]) if not l.startswith("#") and "\tserved\t" in l}
# The per-kind status families carry the provider's node class (kwok here).
karpenter |= {n.replace("ec2nodeclass", "kwoknodeclass") for n in karpenter}
suffix = re.compile(r'^(\S+) non-(counter|histogram and non-summary) metrics should not have "_(total|count)" suffix$')
for line in open(sys.argv[2]).read().splitlines():
    m = suffix.match(line)
    if not (m and m.group(1) in karpenter):
        print(line)
EOF2
)
  [ -z "$problems" ] || { printf '%s\n' "$problems" | head -n 10; fail "promtool finds problems in /metrics"; }
  pass "promtool parses the controller's output; it notes only the suffixes of Karpenter's own names ($(grep -c '^# TYPE' "$KP_E2E_DIR/metrics.txt") families, $(grep -vc '^#' "$KP_E2E_DIR/metrics.txt") samples)"
  check "no sample is printed with an exponent where it is a whole number" \
    test "$(awk '!/^#/ && $NF ~ /^[0-9]+(\.0+)?e\+?[0-9]+$/' "$KP_E2E_DIR/metrics.txt" | grep -c . || true)" -eq 0
  check "counters print as integers (karpenter_nodes_created_total)" \
    grep -qE '^karpenter_nodes_created_total\{[^}]*\} [0-9]+$' "$KP_E2E_DIR/metrics.txt"
}

# Every expr and variable query of the dashboards, as Grafana would send it with
# its variables at "All" (multi-value), the first option (custom) or one
# controller, against this Prometheus.
dashboard_queries() {
  local report rc=0
  report=$(python3 - "http://127.0.0.1:$PROM" "$REPO"/deploy/dashboards/*.json <<'EOF'
import json, math, re, sys, urllib.parse, urllib.request

prom, files = sys.argv[1], sys.argv[2:]

def get(path, **params):
    url = prom + path + "?" + urllib.parse.urlencode(params, doseq=True)
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError(body)
    return body["data"]

def walk(o):
    if isinstance(o, dict):
        yield o
        for v in o.values():
            yield from walk(v)
    elif isinstance(o, list):
        for v in o:
            yield from walk(v)

controllers = get("/api/v1/label/controller/values",
                  **{"match[]": 'controller_runtime_reconcile_time_seconds_count{job="karpenter"}'})
subst = {"__rate_interval": "1m", "distribution_filter": "nodepool", "controller": "nodeclaim.lifecycle"}
failed, n_expr, n_var, families = 0, 0, 0, set()
if "nodeclaim.lifecycle" not in controllers:
    print("FAIL controller variable: nodeclaim.lifecycle not among", controllers)
    failed += 1

def fill(expr):
    expr = re.sub(r'=~"\$\{?(\w+)\}?"', '=~".*"', expr)  # multi-value variables at All
    return re.sub(r"\$\{?(\w+)\}?", lambda m: subst.get(m.group(1), m.group(0)), expr)

for f in files:
    d = json.load(open(f))
    for o in walk(d):
        if "expr" in o:
            n_expr += 1
            expr = fill(o["expr"])
            families.update(re.findall(r"\b((?:karpenter|operator|controller_runtime|workqueue|client_go|process)_\w+)", expr))
            res = get("/api/v1/query", query=expr)["result"]
            finite = [r for r in res if not math.isnan(float(r["value"][1]))]
            if not finite:
                failed += 1
                print(f"FAIL {f.split('/')[-1]}: {expr} -> {len(res)} series, none with a number")
        elif o.get("type") == "query" and isinstance(o.get("query"), dict):
            n_var += 1
            m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", o["query"]["query"])
            values = get(f"/api/v1/label/{m.group(2)}/values", **{"match[]": m.group(1)}) if m else []
            if not values:
                failed += 1
                print(f"FAIL {f.split('/')[-1]}: variable {o['name']} ({o['query']['query']}) has no values")
families = {re.sub(r"_(bucket|count|sum)$", "", x) for x in families}
print(f"SUMMARY {n_expr} queries and {n_var} variables; {failed} without data")
print("FAMILIES " + " ".join(sorted(families)))
sys.exit(1 if failed else 0)
EOF
) || rc=$?
  printf '%s\n' "$report" | grep -v '^FAMILIES' | sed 's/^/    /'
  [ "$rc" -eq 0 ] || fail "dashboard queries without data"
  pass "every dashboard query returns data: $(grep '^SUMMARY' <<<"$report" | cut -d' ' -f2-)"
  # The families Karpenter's own two dashboards query, by name: ours query them all.
  local fam missing=""
  for fam in karpenter_nodes_created_total karpenter_nodes_terminated_total karpenter_voluntary_disruption_eligible_nodes \
    karpenter_nodeclaims_disrupted_total karpenter_voluntary_disruption_decisions_total karpenter_pods_state \
    karpenter_nodepools_usage karpenter_nodepools_limit karpenter_nodes_allocatable karpenter_nodes_total_daemon_requests \
    karpenter_nodes_total_pod_requests karpenter_nodes_termination_duration_seconds karpenter_pods_startup_duration_seconds \
    controller_runtime_reconcile_time_seconds controller_runtime_reconcile_total; do
    grep -qw -- "$fam" <<<"$(grep '^FAMILIES' <<<"$report")" || missing="$missing $fam"
  done
  check "the dashboards query every family of Karpenter's dashboards${missing:+ (missing:$missing)}" test -z "$missing"
}

# Figures that must be right, read back through Prometheus.
figures() {
  local created launched registered
  # A replacement launched but not yet registered makes them differ for a moment.
  wait_for "[ \"\$(promql_value 'sum(karpenter_nodeclaims_launched_total)')\" = \"\$(promql_value 'sum(karpenter_nodes_created_total)')\" ] &&
    [ \"\$(promql_value 'sum(karpenter_nodeclaims_registered_total)')\" = \"\$(promql_value 'sum(karpenter_nodes_created_total)')\" ]" 30 || true
  created=$(promql_value 'sum(karpenter_nodes_created_total)')
  launched=$(promql_value 'sum(karpenter_nodeclaims_launched_total)')
  registered=$(promql_value 'sum(karpenter_nodeclaims_registered_total)')
  check "launched ($launched), registered ($registered) and nodes created ($created) agree" \
    test "$launched" = "$registered" -a "$registered" = "$created"
  check "nodes created ($created) is the number of NodeClaims ever made" \
    test "$created" = "$(promql_value 'sum(karpenter_nodeclaims_created_total)')"
  check "the v1 transition counter agrees with the pre-v1 one" test "$registered" = \
    "$(promql_value 'sum(operator_nodeclaim_status_condition_transitions_total{type="Registered",status="True"})')"
  check "no disrupted NodeClaim has an empty capacity_type" \
    test "$(promql 'karpenter_nodeclaims_disrupted_total{capacity_type=""}')" -eq 0
  check "karpenter_pods_bound_duration_seconds observed every pod that waited" \
    test "$(promql_value 'sum(karpenter_pods_bound_duration_seconds_count)')" -ge 12
  check "leader_election_master_status is served" test "$(promql 'leader_election_master_status')" -ge 1
  check "process_resident_memory_bytes is served" test "$(promql 'process_resident_memory_bytes > 0')" -eq 1
  check "workqueue_adds_total counts the lifecycle queue" \
    test "$(promql 'workqueue_adds_total{name="nodeclaim.lifecycle"} > 0')" -eq 1
}

servicemonitor() {
  local out
  out=$(kubectl kustomize "$REPO/deploy/overlays/servicemonitor" | python3 -c '
import sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
sm = [d for d in docs if d["kind"] == "ServiceMonitor"]
assert len(sm) == 1, "one ServiceMonitor"
sel = sm[0]["spec"]["selector"]["matchLabels"]
assert sel.get("app.kubernetes.io/name") == "karpenter" and sel.get("app.kubernetes.io/instance") == "karpenter", sel
svcs = [d for d in docs if d["kind"] == "Service" and all(d["metadata"].get("labels", {}).get(k) == v for k, v in sel.items())
        and d["metadata"]["namespace"] in sm[0]["spec"]["namespaceSelector"]["matchNames"]]
assert len(svcs) == 1, "selects one Service: %s" % [d["metadata"]["name"] for d in svcs]
ports = [p["name"] for p in svcs[0]["spec"]["ports"]]
for e in sm[0]["spec"]["endpoints"]:
    assert e["port"] in ports, (e["port"], ports)
print(svcs[0]["metadata"]["name"])')
  pass "the ServiceMonitor overlay selects the metrics Service $out by Karpenter's labels, port http-metrics"
}

setup
provision_and_consolidate
promtool_check
dashboard_queries
figures
servicemonitor
