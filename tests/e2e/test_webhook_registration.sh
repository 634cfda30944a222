#!/usr/bin/env bash
# karpenter-webhook registered with a real API server through deploy/overlays/e2e:
# the overlay's webhook configurations call https://127.0.0.1:PORT (clientConfig.url),
# and the webhook runs on that port as a process with --self-signed, authenticated as
# the service account kube-system/karpenter from deploy/ (so publishing its caBundle
# proves that account's grants suffice).
#
#   - kubectl apply of a NodePool the CRD's CEL rules refuse is denied by the API
#     server itself, with Karpenter's message, before any webhook; one the policy
#     refuses is denied by our webhook with the policy's message; a valid one is
#     stored with its defaults, after the webhook was asked;
#   - a Pod created through the API server carries what the policy asks for: default
#     requests (and the karpenter.sh/defaulted-requests annotation) and
#     karpenter.sh/do-not-disrupt; a Pod in kube-system is left alone;
#   - the account's token may get and patch the two configurations named in its
#     ClusterRole's resourceNames, no other, and may not read Secrets;
#   - with the webhook stopped, Pods are still admitted (failurePolicy Ignore) and
#     NodePools are refused (failurePolicy Fail).
#
# The binary comes from KP_BUILD_DIR (default: build/ in the repository).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
readonly ROOT
readonly NS=e2e-webhook
readonly VWC=validation.webhook.karpenter.sh
readonly MWC=defaulting.webhook.karpenter.sh
WORK=""
BIN=""
PORT=""
WEBHOOK_PID=""
SA_KUBECONFIG=""

find_webhook() {
  local build="${KP_BUILD_DIR:-$ROOT/build}"
  BIN="$build/karpenter-webhook"
  [ -x "$BIN" ] || fail "$BIN is missing (make build, or set KP_BUILD_DIR)"
}

# deploy/overlays/e2e with the webhook's port in the URLs.
install_overlay() {
  kubectl kustomize "$E2E_KUSTOMIZATION" | sed "s|https://127.0.0.1:18443/|https://127.0.0.1:$PORT/|" \
    >"$WORK/overlay.yaml"
  assert "the overlay names our port" grep -q "127.0.0.1:$PORT/validate" "$WORK/overlay.yaml"
  e2e_cleanup k delete -f "$WORK/overlay.yaml" --ignore-not-found --wait=false
  k apply -f "$WORK/overlay.yaml" >"$WORK/apply.out" 2>&1 || fail "apply: $(cat "$WORK/apply.out")"
  k wait --for condition=established --timeout=60s crd/nodepools.karpenter.sh >/dev/null
  pass "deploy/overlays/e2e is installed"
}

stop_webhook() {
  [ -z "$WEBHOOK_PID" ] || kill -TERM "$WEBHOOK_PID" 2>/dev/null || true
}

start_webhook() {
  cat >"$WORK/policy.yaml" <<'EOF'
nodePools:
  requireLimits: [cpu]
pods:
  defaultRequests: {cpu: 100m, memory: 128Mi}
  doNotDisrupt:
    - matchLabels: {workload: training}
EOF
  SA_KUBECONFIG="$WORK/webhook.kubeconfig"
  e2e_sa_kubeconfig kube-system karpenter "$SA_KUBECONFIG"
  "$BIN" --self-signed --kubeconfig "$SA_KUBECONFIG" --address 127.0.0.1 --port "$PORT" \
    --service-name karpenter-c-webhook --namespace kube-system --policy "$WORK/policy.yaml" \
    --threads 2 --reload-interval 200 >"$WORK/webhook.log" 2>&1 &
  WEBHOOK_PID=$!
  e2e_cleanup stop_webhook
  wait_for "[ \"\$(curl -sk -o /dev/null -w '%{http_code}' https://127.0.0.1:$PORT/readyz)\" = 200 ]" 60 0.5 ||
    fail "the webhook publishes its caBundle and becomes ready: $(tail -n 5 "$WORK/webhook.log")"
  pass "the webhook, as the service account karpenter, published its caBundle and is ready"
}

# apply_refused NAME MANIFEST: kubectl apply fails; its output goes to WORK/NAME.out.
apply_refused() {
  ! k apply -f - >"$WORK/$1.out" 2>&1 <<<"$2"
}

check_nodepools() {
  e2e_cleanup k delete nodepools --all --wait=false
  assert "a NodePool that requires karpenter.sh/nodepool is refused" \
    apply_refused invalid "$(e2e_nodepool invalid '' '- {key: karpenter.sh/nodepool, operator: In, values: [x]}')"
  # The CRD's CEL rules run before validating webhooks: this one never reaches ours.
  check "... by the CRD's CEL rule in the API server, with Karpenter's reason ($(cat "$WORK/invalid.out"))" \
    grep -q 'The NodePool "invalid" is invalid: spec.template.spec.requirements\[[0-9]*\].key: Invalid value: "karpenter.sh/nodepool": label "karpenter.sh/nodepool" is restricted' \
    "$WORK/invalid.out"
  check "... not by a webhook" bash -c "! grep -q 'admission webhook' '$WORK/invalid.out'"
  assert "a NodePool without cpu limits is refused" apply_refused unlimited "$(e2e_nodepool unlimited 'limits: {memory: 1Ti}')"
  check "... with the policy's reason ($(cat "$WORK/unlimited.out"))" grep -q \
    "NodePool \"unlimited\" is refused by policy: .*nodePools.requireLimits" "$WORK/unlimited.out"
  k apply -f - >/dev/null <<<"$(e2e_nodepool valid)" || fail "a valid NodePool is accepted"
  pass "a valid NodePool is accepted"
  local got
  got=$(k get nodepool valid -o jsonpath='{.spec.disruption.consolidationPolicy} {.spec.disruption.consolidateAfter} {.spec.disruption.budgets[0].nodes} {.spec.template.spec.expireAfter}')
  check "it carries its defaults ($got)" [ "$got" = "WhenEmptyOrUnderutilized 0s 10% 720h" ]
  check "the webhook was asked to default and validate it" seen_nodepool
}

# The webhook's own count of NodePool CREATE reviews on each endpoint.
seen_nodepool() {
  local m
  m=$(curl -sk "https://127.0.0.1:$PORT/metrics")
  grep -q 'karpenter_webhook_requests_total{endpoint="mutate",kind="NodePool",operation="CREATE",result="[a-z]*"} [1-9]' <<<"$m" &&
    grep -q 'karpenter_webhook_requests_total{endpoint="validate",kind="NodePool",operation="CREATE",result="allowed"} [1-9]' <<<"$m"
}

pod() { # pod NAMESPACE NAME
  cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1, labels: {workload: training}}
spec:
  containers: [{name: app, image: busybox}]
EOF
}
annotation() { k -n "$1" get pod "$2" -o jsonpath="{.metadata.annotations.${3//./\\.}}"; }

check_pods() {
  k apply -f - >/dev/null <<<"$(pod "$NS" trainer)" || fail "create a Pod"
  check "the Pod gets karpenter.sh/do-not-disrupt" [ "$(annotation "$NS" trainer karpenter.sh/do-not-disrupt)" = true ]
  check "the Pod gets karpenter.sh/defaulted-requests ($(annotation "$NS" trainer karpenter.sh/defaulted-requests))" \
    [ "$(annotation "$NS" trainer karpenter.sh/defaulted-requests | jq -c .)" = '{"app":{"cpu":"100m","memory":"128Mi"}}' ]
  check "the container has the default requests" [ \
    "$(k -n "$NS" get pod trainer -o jsonpath='{.spec.containers[0].resources.requests.cpu} {.spec.containers[0].resources.requests.memory}')" \
    = "100m 128Mi" ]
  # The API server labels every namespace with its name (1.21+): the selector relies on it.
  check "kube-system carries kubernetes.io/metadata.name" \
    [ "$(k get namespace kube-system -o jsonpath='{.metadata.labels.kubernetes\.io/metadata\.name}')" = kube-system ]
  k apply -f - >/dev/null <<<"$(pod kube-system trainer)" || fail "create a Pod in kube-system"
  e2e_cleanup k -n kube-system delete pod trainer --wait=false --ignore-not-found
  check "a Pod in the install namespace, kube-system, is left alone (namespaceSelector)" \
    [ -z "$(annotation kube-system trainer karpenter.sh/do-not-disrupt)" ]
}

as_webhook() { k --kubeconfig "$SA_KUBECONFIG" "$@"; }
forbidden() { # forbidden CMD...: fails with Forbidden
  local out
  if out=$("$@" 2>&1); then return 1; fi
  grep -q Forbidden <<<"$out"
}

check_service_account() {
  check "karpenter may patch $VWC" as_webhook patch validatingwebhookconfiguration "$VWC" \
    --type=merge -p '{"metadata":{"labels":{"e2e-patched":"yes"}}}'
  check "karpenter may patch $MWC" as_webhook patch mutatingwebhookconfiguration "$MWC" \
    --type=merge -p '{"metadata":{"labels":{"e2e-patched":"yes"}}}'
  k apply -f - >/dev/null <<'EOF'
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: other.webhook.example.com}
webhooks: []
EOF
  e2e_cleanup k delete validatingwebhookconfiguration other.webhook.example.com --ignore-not-found
  check "karpenter may not patch a configuration it is not named for" forbidden \
    as_webhook patch validatingwebhookconfiguration other.webhook.example.com --type=merge \
    -p '{"metadata":{"labels":{"e2e-patched":"yes"}}}'
  check "karpenter may not list webhook configurations" forbidden \
    as_webhook get validatingwebhookconfigurations
  check "karpenter may not read Secrets in its namespace" forbidden \
    as_webhook -n kube-system get secrets
  check "karpenter may not list Secrets anywhere" forbidden as_webhook get secrets -A
}

check_webhook_down() {
  local rc=0
  kill -TERM "$WEBHOOK_PID"
  wait "$WEBHOOK_PID" || rc=$?
  WEBHOOK_PID=""
  check "the webhook exits 0 on SIGTERM" [ "$rc" = 0 ]
  check "the webhook logged no sanitizer report" \
    bash -c "! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' '$WORK/webhook.log'"
  k apply -f - >/dev/null <<<"$(pod "$NS" after)" || fail "a Pod is admitted with the webhook down"
  pass "a Pod is admitted with the webhook down (failurePolicy Ignore)"
  check "... without the policy's annotation" [ -z "$(annotation "$NS" after karpenter.sh/do-not-disrupt)" ]
  assert "a NodePool is refused with the webhook down (failurePolicy Fail)" \
    apply_refused down "$(e2e_nodepool down)"
  check "... because the webhook could not be called ($(cat "$WORK/down.out"))" \
    grep -q "failed calling webhook" "$WORK/down.out"
}

main() {
  find_webhook
  e2e_setup
  WORK=$(mktemp -d)
  e2e_cleanup rm -rf "$WORK"
  PORT=$(e2e_free_port)
  e2e_namespace "$NS"
  install_overlay
  start_webhook
  check_nodepools
  check_pods
  check_service_account
  check_webhook_down
}

main "$@"
