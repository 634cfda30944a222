#!/usr/bin/env bash
# "No NodePool can launch a node for this pod", told by the webhook when a Pod is
# created (beyond Karpenter): karpenter-webhook registered through
# deploy/overlays/e2e, as the service account kube-system/karpenter (whose rights
# cover the NodePools' watch), with a NodePool of the kwok provider.
#
#   - kubectl apply of a Pod no NodePool can run (an architecture none offers)
#     prints the webhook's warning, with the solver's reason, and the Pod is created
#     all the same: a warning, never a refusal;
#   - a Pod the NodePool can run gets no warning;
#   - the NodePool's limits set to 0 (a change the webhook sees through its watch)
#     make the same ordinary Pod warned, naming the limit;
#   - the webhook counts what it said (karpenter_webhook_pod_warnings_total).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
readonly ROOT NS=e2e-pod-warning
readonly WARNING="no NodePool can launch a node for this pod"
WORK=""
PORT=""
WEBHOOK_PID=""

install_overlay() {
  kubectl kustomize "$ROOT/deploy/overlays/e2e" | sed "s|https://127.0.0.1:18443/|https://127.0.0.1:$PORT/|" \
    >"$WORK/overlay.yaml"
  e2e_cleanup k delete -f "$WORK/overlay.yaml" --ignore-not-found --wait=false
  k apply -f "$WORK/overlay.yaml" >"$WORK/apply.out" 2>&1 || fail "apply: $(cat "$WORK/apply.out")"
  k wait --for condition=established --timeout=60s crd/nodepools.karpenter.sh >/dev/null
  pass "deploy/overlays/e2e is installed"
}

stop_webhook() { [ -z "$WEBHOOK_PID" ] || e2e_stop_pid "$WEBHOOK_PID"; }

start_webhook() {
  local bin="${KP_BUILD_DIR:-$ROOT/build}/karpenter-webhook"
  [ -x "$bin" ] || fail "$bin is missing (make build, or set KP_BUILD_DIR)"
  e2e_sa_kubeconfig kube-system karpenter "$WORK/webhook.kubeconfig"
  # A generous budget: this test is about what is said, not how fast (make bench is);
  # a busy machine must not turn a warning into a late answer.
  "$bin" --self-signed --kubeconfig "$WORK/webhook.kubeconfig" --address 127.0.0.1 --port "$PORT" \
    --service-name karpenter-c-webhook --namespace kube-system --threads 2 --pod-warning-budget 3000 \
    >"$WORK/webhook.log" 2>&1 &
  WEBHOOK_PID=$!
  e2e_cleanup stop_webhook
  wait_for "[ \"\$(curl -sk -o /dev/null -w '%{http_code}' https://127.0.0.1:$PORT/readyz)\" = 200 ]" 60 0.5 ||
    fail "the webhook is not ready: $(tail -n 5 "$WORK/webhook.log")"
  pass "the webhook is ready; it watches NodePools: $(grep -o '"message":"warning Pods[^"]*"' "$WORK/webhook.log")"
}

nodepool() {
  k apply -f - >/dev/null <<EOF
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  limits: {cpu: "$1"}
  template:
    spec:
      requirements:
      - {key: kubernetes.io/arch, operator: In, values: [amd64, arm64]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
EOF
}

pod() { # pod NAME [NODE_SELECTOR_ARCH]
  local selector="{}"
  [ -z "${2:-}" ] || selector="{kubernetes.io/arch: $2}"
  cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS}
spec:
  nodeSelector: $selector
  containers: [{name: app, image: busybox, resources: {requests: {cpu: 250m}}}]
EOF
}

# apply_pod NAME [ARCH] [--dry-run=server]: kubectl's output (warnings included) in WORK/NAME.out.
apply_pod() {
  local name="$1" arch="${2:-}"
  shift 2 || shift
  k apply "$@" -f - >"$WORK/$name.out" 2>&1 <<<"$(pod "$name" "$arch")"
}

warned() { grep -q "Warning: $WARNING" "$WORK/$1.out"; }

impossible_pod() {
  nodepool 1000 || fail "the NodePool"
  e2e_cleanup k delete nodepool default --ignore-not-found --wait=false
  # The webhook learns of the NodePool through its watch: until then it says nothing.
  wait_for "apply_pod probe s390x --dry-run=server && warned probe" 30 ||
    fail "no warning on a dry run: $(cat "$WORK/probe.out")"
  apply_pod mainframe s390x || fail "kubectl apply of the impossible pod: $(cat "$WORK/mainframe.out")"
  check "kubectl apply prints the webhook's warning ($(grep Warning "$WORK/mainframe.out" | head -c 400))" warned mainframe
  check "... with the solver's reason" grep -q "kubernetes.io/arch" "$WORK/mainframe.out"
  check "... and the Pod is created all the same" k -n $NS get pod mainframe
  apply_pod ordinary "" || fail "kubectl apply of an ordinary pod"
  check "a Pod the NodePool can run gets no warning ($(cat "$WORK/ordinary.out"))" bash -c "! grep -q Warning '$WORK/ordinary.out'"
}

frozen_pool() {
  nodepool 0
  wait_for "apply_pod probe2 '' --dry-run=server && warned probe2" 30 ||
    fail "no warning once the limits are 0: $(cat "$WORK/probe2.out")"
  apply_pod frozen "" || fail "kubectl apply after the limit change"
  check "with limits of 0 the same Pod is warned, naming them ($(grep Warning "$WORK/frozen.out" | head -c 300))" \
    grep -q "Warning: $WARNING: .*nodepool \"default\" limits: cpu 0" "$WORK/frozen.out"
  local m
  m=$(curl -sk "https://127.0.0.1:$PORT/metrics" | grep '^karpenter_webhook_pod_warnings_total' || true)
  pass "the webhook's count: $(tr '\n' ' ' <<<"$m")"
  check "... warned at least twice" grep -q 'result="warned"} [2-9]' <<<"$m"
  check "... and found a NodePool for the ordinary pod" grep -q 'result="fits"} [1-9]' <<<"$m"
  check "the webhook logged no sanitizer report" \
    bash -c "! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' '$WORK/webhook.log'"
}

main() {
  e2e_setup
  WORK="$KP_E2E_DIR/pod-warning"
  mkdir -p "$WORK"
  PORT=$(e2e_free_port)
  e2e_namespace "$NS"
  install_overlay
  k apply -f "$ROOT/examples/kwok/kwoknodeclass.yaml" >/dev/null
  start_webhook
  impossible_pod
  frozen_pool
}

main "$@"
