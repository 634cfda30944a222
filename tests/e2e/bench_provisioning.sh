#!/usr/bin/env bash
# Provisioning latency on the real control plane, kwok provider: for Deployments of
# 10, 100 and 1000 pods (250m CPU each), the time from creating the Deployment to the
# first NodeClaim, to the last NodeClaim, and to the last pod bound by kube-scheduler;
# per pod (from the API's timestamps, so to the second), the time from the pod's
# creation to its node's NodeClaim and to its PodScheduled condition, as median and
# maximum; then the same at scale (KP_BENCH_LARGE NODES:PODS runs, see large_run);
# then the controller's peak RSS. Figures only: nothing is asserted beyond the run
# completing. Run by `make bench-e2e` (or `tests/e2e/bench_provisioning.sh` after
# `make build`); KP_BENCH_SIZES overrides the Deployment sizes, KP_BENCH_LARGE the
# runs at scale ("2000:20000 5000:50000"; "" for none).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
readonly DATA="$HERE/data"
readonly NS=bench
read -r -a SIZES <<<"${KP_BENCH_SIZES:-10 100 1000}"

now_ms() { date +%s%3N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (a - b) / 1000 }'; }
bound() { k -n $NS get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true; }

# Empties the cluster between sizes: the Deployment, then every NodeClaim.
reset() {
  k -n $NS delete deployment inflate --wait=false >/dev/null 2>&1 || true
  wait_for '[ "$(k -n $NS get pods -o name | grep -c .)" -eq 0 ]' 300 || fail "pods not gone"
  k delete nodeclaims --all --wait=false >/dev/null 2>&1 || true
  wait_for '[ "$(count nodeclaims)" -eq 0 ] && [ "$(count nodes)" -eq 0 ]' 300 || fail "nodes not gone"
}

one_size() {
  local n="$1" t0 t_first="" t_last_claim=0 t_bound="" claims=0 c b
  sed -e "s/replicas: 10/replicas: $n/" -e "s/cpu: 500m/cpu: 250m/" "$DATA/inflate.yaml" >"$KP_E2E_DIR/inflate-$n.yaml"
  t0=$(now_ms)
  k -n $NS apply -f "$KP_E2E_DIR/inflate-$n.yaml" >/dev/null
  while [ $(($(now_ms) - t0)) -lt 600000 ]; do
    c=$(count nodeclaims)
    [ -n "$t_first" ] || [ "$c" -eq 0 ] || t_first=$(now_ms)
    if [ "$c" -gt "$claims" ]; then claims=$c t_last_claim=$(now_ms); fi
    b=$(bound)
    if [ "$b" -ge "$n" ]; then t_bound=$(now_ms); break; fi
    sleep 0.2
  done
  [ -n "$t_bound" ] || fail "$n pods not bound within 10 minutes"
  per_pod
  printf '%6d pods  first NodeClaim %6.2f s  last NodeClaim %6.2f s  all bound %6.2f s  (%d NodeClaims)\n' \
    "$n" "$(secs "$t_first" "$t0")" "$(secs "$t_last_claim" "$t0")" "$(secs "$t_bound" "$t0")" "$claims"
}

# Per pod: its node's NodeClaim creation and its PodScheduled time, minus its own
# creation (seconds; claims the pod did not wait for count as 0).
per_pod() {
  k -n $NS get pods -o json >"$KP_E2E_DIR/pods.json"
  k get nodeclaims -o json >"$KP_E2E_DIR/claims.json"
  python3 - "$KP_E2E_DIR/pods.json" "$KP_E2E_DIR/claims.json" <<'PY'
import json, sys
from datetime import datetime
t = lambda s: datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").timestamp()
pods = json.load(open(sys.argv[1]))["items"]
claims = {c["status"].get("nodeName"): t(c["metadata"]["creationTimestamp"])
          for c in json.load(open(sys.argv[2]))["items"]}
to_claim, to_bound = [], []
for p in pods:
    created = t(p["metadata"]["creationTimestamp"])
    node = p["spec"].get("nodeName")
    if node in claims:
        to_claim.append(max(0.0, claims[node] - created))
    for c in p["status"].get("conditions", []):
        if c["type"] == "PodScheduled" and c["status"] == "True":
            to_bound.append(t(c["lastTransitionTime"]) - created)
def stats(v):
    v = sorted(v)
    return "median %4.0f s  max %4.0f s" % (v[len(v) // 2], v[-1]) if v else "n/a"
print("         per pod: to its NodeClaim %s   to bound %s" % (stats(to_claim), stats(to_bound)))
PY
}

# ------------------------------------------------------------ at scale
# NODES:PODS runs (KP_BENCH_LARGE, default 2000:20000; "" skips them): PODS pods
# of 750m CPU, created straight through the API by parallel clients, on a NodePool
# held to c5.2xlarge (8 vCPU: 10 such pods a node), so NODES nodes. The control
# plane's own limits are raised so that it is not what is measured: the pods name
# a second kube-scheduler started here with 5000 requests/s (the cluster's runs
# at 200, so binding 20,000 pods would take 100 s alone), and no Deployment
# controller stands between the request and the pod. A watch records when each
# pod is bound. Reported: time from the first pod created to all bound, per pod
# (creation to bound, ms) p50/p99, the controller's RSS and CPU, its API requests
# per second (the API server's priority-and-fairness count for the
# service-accounts flow schema: the controller runs as its ServiceAccount, the
# bench and kube-* as admin), and its RSS growth per 1000 cached objects.
read -r -a LARGE <<<"${KP_BENCH_LARGE-2000:20000}"
readonly LARGE_NS=bench-large

# bench_scheduler: a kube-scheduler profile "bench-scheduler" with a high QPS that
# only filters (no scoring: the pods are alike and Karpenter sized the nodes for
# them), stopping at 10% of the nodes found feasible. With the defaults, 1.20's
# scheduler spends ~100 ms a pod on this machine with 2000 nodes, and would be
# the only thing measured.
bench_scheduler() {
  local cfg="$KP_E2E_DIR/bench-scheduler.yaml" port
  port=$(e2e_free_port)
  cat >"$cfg" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: "$KUBECONFIG", qps: 5000, burst: 10000}
leaderElection: {leaderElect: false}
percentageOfNodesToScore: 10
profiles:
  - schedulerName: bench-scheduler
    plugins: {preScore: {disabled: [{name: "*"}]}, score: {disabled: [{name: "*"}]}}
YAML
  "$KP_E2E_BIN_DIR/kube-scheduler" --config="$cfg" --port=0 --bind-address=127.0.0.1 --secure-port="$port" \
    --tls-cert-file="$KP_E2E_DIR/pki/apiserver.crt" --tls-private-key-file="$KP_E2E_DIR/pki/apiserver.key" \
    >"$KP_E2E_DIR/bench-scheduler.log" 2>&1 &
  BENCH_SCHEDULER_PID=$!
  e2e_cleanup e2e_stop_pid "$BENCH_SCHEDULER_PID"
  wait_for "curl -fsk https://127.0.0.1:$port/healthz" 60 || fail "bench-scheduler did not start"
}

calc() { awk "BEGIN {printf \"%.1f\", $1}"; }
# RSS (KiB) and CPU seconds (user + system) of a process.
proc_rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
proc_cpu() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($14 + $15) / hz}' "/proc/$1/stat"; }

# The API server's count of requests dispatched for the controller's flow schema.
controller_requests() {
  api GET /metrics | awk '/^apiserver_flowcontrol_dispatched_requests_total\{.*flow_schema="service-accounts"/ {s += $NF} END {printf "%d", s}'
}

# Create PODS pods with parallel clients and watch them bound; prints a summary line.
create_and_watch() {
  python3 - "$1" <<'PY'
import http.client, json, os, ssl, sys, threading, time
n = int(sys.argv[1]); ns = "bench-large"
url = os.environ["KP_E2E_API_URL"].split("//")[1]; host, port = url.split(":")
token = os.environ["KP_E2E_ADMIN_TOKEN"]
ctx = ssl.create_default_context(cafile=os.environ["KP_E2E_CA_FILE"])
hdr = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
conn = lambda timeout=60: http.client.HTTPSConnection(host, int(port), context=ctx, timeout=timeout)
created, bound, lock = {}, {}, threading.Lock()
c = conn(); c.request("GET", "/api/v1/namespaces/%s/pods?limit=1" % ns, headers=hdr)
rv = json.loads(c.getresponse().read())["metadata"]["resourceVersion"]
done = threading.Event()
def watch():
    w = conn(timeout=3600)
    w.request("GET", "/api/v1/namespaces/%s/pods?watch=1&resourceVersion=%s&timeoutSeconds=3600" % (ns, rv), headers=hdr)
    r = w.getresponse()
    while not done.is_set():
        line = r.readline()
        if not line: break
        o = json.loads(line)["object"]
        name = o["metadata"]["name"]
        if o.get("spec", {}).get("nodeName") and name not in bound:
            with lock:
                bound[name] = time.time()
                if len(bound) >= n: done.set()
threading.Thread(target=watch, daemon=True).start()
time.sleep(1)
def body(i):
    return json.dumps({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "large-%06d" % i, "labels": {"app": "large"}},
        "spec": {"schedulerName": "bench-scheduler", "terminationGracePeriodSeconds": 0,
                 "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.7",
                                 "resources": {"requests": {"cpu": "750m", "memory": "64Mi"}}}]}})
def create(k, threads):
    c = conn()
    for i in range(k, n, threads):
        while True:
            c.request("POST", "/api/v1/namespaces/%s/pods" % ns, body=body(i), headers=hdr)
            r = c.getresponse(); r.read()
            if r.status == 429: time.sleep(0.2); continue
            if r.status != 201: print("create failed: %d" % r.status, file=sys.stderr); sys.exit(1)
            break
        created["large-%06d" % i] = time.time()
t0 = time.time()
ts = [threading.Thread(target=create, args=(k, 16)) for k in range(16)]
[t.start() for t in ts]; [t.join() for t in ts]
t_created = time.time()
done.wait(timeout=3600)
t_bound = max(bound.values()) if bound else float("nan")
lat = sorted((bound[p] - created[p]) * 1000 for p in created if p in bound)
q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))] if lat else float("nan")
print("%d created in %.1f s; %d bound %.1f s after the first was created (%.1f s after the last);"
      " per pod created->bound p50 %.0f ms p99 %.0f ms" %
      (n, t_created - t0, len(bound), t_bound - t0, t_bound - t_created, q(0.5), q(0.99)))
sys.exit(0 if len(bound) >= n else 1)
PY
}

large_run() {
  local nodes="${1%%:*}" pods="${1##*:}" rss0 cpu0 req0 t0 t1 rss1 cpu1 req1 claims
  k patch nodepool default --type merge -p \
    '{"spec":{"limits":{"cpu":"1000000"},"template":{"spec":{"requirements":[{"key":"node.kubernetes.io/instance-type","operator":"In","values":["c5.2xlarge"]},{"key":"karpenter.sh/capacity-type","operator":"In","values":["on-demand"]}]}}}}' >/dev/null
  rss0=$(proc_rss "$E2E_CONTROLLER_PID") cpu0=$(proc_cpu "$E2E_CONTROLLER_PID") req0=$(controller_requests)
  t0=$(now_ms)
  create_and_watch "$pods" || fail "$pods pods not all bound"
  t1=$(now_ms)
  sleep 5 # let the last registrations settle before reading the figures
  rss1=$(proc_rss "$E2E_CONTROLLER_PID") cpu1=$(proc_cpu "$E2E_CONTROLLER_PID") req1=$(controller_requests)
  claims=$(count nodeclaims)
  printf '%6d pods on %d nodes (%d wanted): controller RSS %s -> %s MiB (%s MiB per 1000 pods+nodes+claims),' \
    "$pods" "$claims" "$nodes" "$(calc "$rss0/1024")" "$(calc "$rss1/1024")" \
    "$(calc "($rss1-$rss0)/1024/($pods+2*$claims)*1000")"
  printf ' CPU %s s (%s%% of one core), API %s requests/s\n' "$(calc "$cpu1-$cpu0")" \
    "$(calc "($cpu1-$cpu0)*100000/($t1-$t0)")" "$(calc "($req1-$req0)*1000/($t1-$t0)")"
  k -n $LARGE_NS delete pods --all --wait=false >/dev/null 2>&1 || true
  wait_for '[ "$(k -n $LARGE_NS get pods -o name | grep -c .)" -eq 0 ]' 900 5 || fail "pods not gone"
  k delete nodeclaims --all --wait=false >/dev/null 2>&1 || true
  wait_for '[ "$(count nodeclaims)" -eq 0 ] && [ "$(count nodes)" -eq 0 ]' 900 5 || fail "nodes not gone"
}

main() {
  local n spec
  e2e_setup
  e2e_namespace $NS
  e2e_karpenter "$DATA/nodepool.yaml"
  k patch nodepool default --type merge -p '{"spec":{"limits":{"cpu":"100000"}}}' >/dev/null
  e2e_start_controller controller --disable-leader-election --kwok-finish-pods-immediately
  sleep 2
  echo "batch windows: Karpenter's defaults (1 s idle, 10 s max); $(nproc) cores"
  for n in "${SIZES[@]}"; do
    one_size "$n"
    reset
  done
  if [ ${#LARGE[@]} -gt 0 ]; then
    e2e_namespace $LARGE_NS
    bench_scheduler
    echo "at scale: pods created through the API, bound by a 5000-requests/s kube-scheduler; controller at its defaults"
    for spec in "${LARGE[@]}"; do
      large_run "$spec"
    done
  fi
  printf 'controller peak RSS: %s\n' "$(awk '/VmHWM/ {printf "%.1f MiB", $2/1024}' "/proc/$E2E_CONTROLLER_PID/status")"
  pass "benchmark completed"
}

main
