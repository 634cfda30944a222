#!/usr/bin/env bash
# Benchmark karpenter-webhook over TLS with keep-alive, using wrk: NodePool
# validation (/validate) and Pod mutation (/mutate) on loopback, with
# certificates from certs/make-certs.sh. Prints requests/s and p50/p99 latency.
#
#   tests/bench/bench_webhook.sh BUILD_DIR [SOURCE_DIR]
#   env: DURATION (s, default 10), CONNECTIONS (default 16), WRK_THREADS (default 1),
#        WEBHOOK_THREADS (default: CPUs)
#
# Targets on a 2-core machine: >= 20,000 requests/s and p99 < 5 ms per case.
# The figures are printed, not asserted: a busy machine is not a failed build.
set -euo pipefail

build=${1:?usage: bench_webhook.sh BUILD_DIR [SOURCE_DIR]}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
bin="$build/karpenter-webhook"
duration=${DURATION:-10}
connections=${CONNECTIONS:-16}
wrk_threads=${WRK_THREADS:-1}
threads=${WEBHOOK_THREADS:-$(nproc)}
[ -x "$bin" ] || { echo "bench_webhook: $bin not built" >&2; exit 1; }
command -v wrk >/dev/null || { echo "bench_webhook: wrk missing (scripts/install-deps.sh bench)" >&2; exit 1; }

tmp=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

"$src/certs/make-certs.sh" -o "$tmp" --ip 127.0.0.1 >/dev/null
cat >"$tmp/policy.yaml" <<'YAML'
nodePools:
  requireLimits: [cpu, memory]
  maxLimits: {cpu: 1000, memory: 4000Gi}
  allowedCapacityTypes: [on-demand, spot]
  allowedInstanceCategories: [c, m, r]
  requireDisruptionBudget: true
pods:
  defaultRequests: {cpu: 100m, memory: 128Mi}
  doNotDisrupt:
    - resources: [nvidia.com/gpu]
YAML

cat >"$tmp/nodepool.json" <<'JSON'
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"b1c2d3e4-0000-4000-8000-000000000001","kind":{"group":"karpenter.sh","version":"v1","kind":"NodePool"},"resource":{"group":"karpenter.sh","version":"v1","resource":"nodepools"},"name":"default","operation":"CREATE","userInfo":{"username":"kubernetes-admin","groups":["system:masters","system:authenticated"]},"object":{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"default","annotations":{"kubernetes.io/description":"General purpose NodePool"}},"spec":{"template":{"metadata":{"labels":{"team":"platform"}},"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"},"expireAfter":"720h","requirements":[{"key":"kubernetes.io/arch","operator":"In","values":["amd64"]},{"key":"kubernetes.io/os","operator":"In","values":["linux"]},{"key":"karpenter.sh/capacity-type","operator":"In","values":["on-demand","spot"]},{"key":"karpenter.k8s.aws/instance-category","operator":"In","values":["c","m","r"]},{"key":"karpenter.k8s.aws/instance-generation","operator":"Gt","values":["2"]}],"taints":[{"key":"example.com/special","effect":"NoSchedule"}]}},"limits":{"cpu":"1000","memory":"1000Gi"},"disruption":{"consolidationPolicy":"WhenEmptyOrUnderutilized","consolidateAfter":"1m","budgets":[{"nodes":"10%"}]}}},"oldObject":null,"dryRun":false,"options":{"apiVersion":"meta.k8s.io/v1","kind":"CreateOptions"}}}
JSON

cat >"$tmp/pod.json" <<'JSON'
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"b1c2d3e4-0000-4000-8000-000000000002","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"default","operation":"CREATE","userInfo":{"username":"system:serviceaccount:kube-system:replicaset-controller"},"object":{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"web-7d4b9c8f6-","namespace":"default","labels":{"app":"web","pod-template-hash":"7d4b9c8f6"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7d4b9c8f6","uid":"0d1e2f3a-0000-4000-8000-000000000003","controller":true,"blockOwnerDeletion":true}]},"spec":{"containers":[{"name":"web","image":"nginx:1.25","ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{}},{"name":"sidecar","image":"envoy:1.29","resources":{"requests":{"cpu":"50m"}}}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"default","schedulerName":"default-scheduler","tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]}},"oldObject":null,"dryRun":false}}
JSON

: >"$tmp/webhook.log" # before the server opens it: sed on a missing log fails under pipefail
"$bin" --address 127.0.0.1 --port 0 --threads "$threads" --policy "$tmp/policy.yaml" \
  --tls-cert-file "$tmp/tls.crt" --tls-key-file "$tmp/tls.key" \
  >"$tmp/webhook.log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 1 100); do
  port=$(sed -n 's/.*"message":"listening".*"port":"\([0-9]*\)".*/\1/p' "$tmp/webhook.log" | head -1)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "bench_webhook: server did not start" >&2; cat "$tmp/webhook.log" >&2; exit 1; }

expect() { # expect BODY PATH PATTERN: the answer is the one we mean to measure
  curl -sS --cacert "$tmp/ca.crt" -H 'Content-Type: application/json' \
    --data-binary "@$1" "https://127.0.0.1:$port$2" | grep -q "$3" ||
    { echo "bench_webhook: $2 did not answer $3" >&2; exit 1; }
}
expect "$tmp/nodepool.json" /validate '"allowed":true'
expect "$tmp/pod.json" /mutate '"patchType":"JSONPatch"'

echo "karpenter-webhook over TLS, keep-alive: ${duration}s per case, $connections connections," \
  "wrk threads $wrk_threads, webhook threads $threads, $(nproc) CPUs"
printf '%-22s %12s %10s %10s %8s\n' case "requests/s" "p50 ms" "p99 ms" errors
run_case() { # run_case NAME PATH BODY
  local line
  line=$(KP_BENCH_BODY="$3" KP_BENCH_PATH="$2" wrk -t "$wrk_threads" -c "$connections" \
    -d "${duration}s" -s "$src/tests/bench/bench_webhook.lua" "https://127.0.0.1:$port" |
    grep '^RESULT')
  local rps p50 p99 non2xx errors
  rps=$(sed -n 's/.* rps=\([0-9.]*\).*/\1/p' <<<"$line")
  p50=$(sed -n 's/.* p50_ms=\([0-9.]*\).*/\1/p' <<<"$line")
  p99=$(sed -n 's/.* p99_ms=\([0-9.]*\).*/\1/p' <<<"$line")
  non2xx=$(sed -n 's/.* non2xx=\([0-9]*\).*/\1/p' <<<"$line")
  errors=$(sed -n 's/.* errors=\([0-9]*\).*/\1/p' <<<"$line")
  printf '%-22s %12s %10s %10s %8s\n' "$1" "$rps" "$p50" "$p99" $((non2xx + errors))
}
run_case "NodePool /validate" /validate "$tmp/nodepool.json"
run_case "Pod /mutate" /mutate "$tmp/pod.json"
echo "targets: >= 20000 requests/s, p99 < 5 ms"
