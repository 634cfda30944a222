#!/usr/bin/env bash
# deploy/ against a real Kubernetes 1.20 API server, and what can be checked of the
# base and the cert-manager overlay without one (kubectl kustomize).
#
#   - the CRD copies under deploy/crds are the generated files in crds/;
#   - the base renders with what docs/deploy.md promises (two replicas of one Pod with
#     both containers, leader election left on, priority, hardening, probes, spread,
#     PDB, Services, webhook failure policies); the cert-manager overlay swaps
#     --self-signed for cert-manager's Secret and CA injection;
#   - `kubectl apply --dry-run=server -k deploy/overlays/e2e` succeeds (once the
#     namespace exists: a server dry run creates nothing, so objects in a namespace
#     made by the same dry run are refused), the overlay applies, and applies again
#     as a dry run; the webhook's token Secret is filled in;
#   - the Deployment's Pod template is admitted as a Pod in `karpenter` (priority
#     class, security context, service accounts: the webhook container keeps its
#     own token);
#   - each service account may do what docs/deploy.md grants and not more
#     (kubectl auth can-i, as the account);
#   - both programs run as deployed, each with its own service account's token: the
#     webhook publishes its caBundle and admits a NodePool, the controller elects
#     itself in `karpenter`, provisions kwok nodes for pending pods (node Leases in
#     kube-node-lease) and drains a deleted node through evictions, and neither
#     log has a Forbidden answer in it: the grants are enough, not only not too many.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
readonly ROOT
readonly DEPLOY="$ROOT/deploy"
readonly DATA="$ROOT/tests/e2e/data"
readonly NS=e2e-deploy
WORK=""
PORT=""

# render DIR OUT: kubectl kustomize DIR as a JSON array of objects.
render() {
  kubectl kustomize "$1" >"$2.yaml" || return 1
  python3 -c 'import json, sys, yaml
print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d]))' "$2.yaml" >"$2"
}

# q FILE FILTER: jq -r over a rendering; `is FILE FILTER WANT` compares.
q() { jq -r "$2" "$1"; }
is() { [ "$(q "$1" "$2")" = "$3" ]; }

check_crd_copies() {
  local f
  for f in "$ROOT"/crds/*.yaml "$ROOT"/crds/compat-1.20/*.yaml; do
    check "deploy/${f#"$ROOT/"} is crds/${f#"$ROOT/crds/"} (copy it after scripts/gen-crds.py)" \
      cmp -s "$f" "$DEPLOY/crds/${f#"$ROOT/crds/"}"
  done
}

check_base() {
  local b="$WORK/base.json" dep='.[] | select(.kind == "Deployment")'
  render "$DEPLOY" "$b" || fail "kubectl kustomize deploy/"
  pass "deploy/ renders"
  check "three CRDs, with CEL rules (1.25+)" \
    is "$b" '[.[] | select(.kind == "CustomResourceDefinition")] | length' 3
  check "the CRDs are the full variant" grep -q x-kubernetes-validations "$b.yaml"
  check "service accounts karpenter-controller and karpenter-webhook in karpenter" \
    is "$b" '[.[] | select(.kind == "ServiceAccount") | "\(.metadata.namespace)/\(.metadata.name)"] | sort | join(" ")' \
    "karpenter/karpenter-controller karpenter/karpenter-webhook"
  check "one Deployment, 2 replicas, containers controller and webhook" \
    is "$b" "$dep | \"\\(.spec.replicas) \\([.spec.template.spec.containers[].name] | join(\",\"))\"" "2 controller,webhook"
  check "it runs as karpenter-controller with priority system-cluster-critical" \
    is "$b" "$dep | .spec.template.spec | \"\\(.serviceAccountName) \\(.priorityClassName)\"" \
    "karpenter-controller system-cluster-critical"
  check "non-root, seccomp RuntimeDefault" \
    is "$b" "$dep | .spec.template.spec.securityContext | \"\\(.runAsNonRoot) \\(.runAsUser) \\(.seccompProfile.type)\"" \
    "true 65532 RuntimeDefault"
  check "each container: read-only root, no escalation, every capability dropped" \
    is "$b" "[$dep | .spec.template.spec.containers[] | (.securityContext | .readOnlyRootFilesystem and (.allowPrivilegeEscalation == false) and .capabilities.drop == [\"ALL\"])] | all" true
  check "requests from measured RSS: controller 128Mi/200m, webhook 64Mi/100m" \
    is "$b" "[$dep | .spec.template.spec.containers[] | .resources.requests] == [{cpu: \"200m\", memory: \"128Mi\"}, {cpu: \"100m\", memory: \"64Mi\"}]" true
  check "probes on /healthz and /readyz for both" \
    is "$b" "[$dep | .spec.template.spec.containers[] | .livenessProbe.httpGet.path, .readinessProbe.httpGet.path] | join(\" \")" \
    "/healthz /readyz /healthz /readyz"
  check "leader election is not turned off" \
    bash -c "! grep -q -- 'disable-leader-election\|leader-elect=false' '$b.yaml'"
  check "the webhook starts with --self-signed" is "$b" "$dep | .spec.template.spec.containers[1].args | index(\"--self-signed\") != null" true
  check "spread across zones" \
    is "$b" "$dep | .spec.template.spec.topologySpreadConstraints[0].topologyKey" topology.kubernetes.io/zone
  check "a PodDisruptionBudget keeps one" is "$b" '.[] | select(.kind == "PodDisruptionBudget") | .spec.minAvailable' 1
  check "the webhook Service maps 443 to the webhook's port" \
    is "$b" '.[] | select(.kind == "Service" and .metadata.name == "karpenter-webhook") | .spec.ports[0] | "\(.port) \(.targetPort)"' "443 https-webhook"
  check "Karpenter's kinds fail closed, Pods fail open, no side effects" \
    is "$b" '[.[] | select(.kind | test("WebhookConfiguration")) | .webhooks[] | "\(.name)=\(.failurePolicy)/\(.sideEffects)/\(.timeoutSeconds)"] | sort | join(" ")' \
    "defaulting.webhook.karpenter.sh=Fail/None/10 pods.defaulting.webhook.karpenter.sh=Ignore/None/5 validation.webhook.karpenter.sh=Fail/None/10"
  check "the Pod webhook leaves kube-system and karpenter out" \
    is "$b" '.[] | select(.kind == "MutatingWebhookConfiguration") | .webhooks[] | select(.name | startswith("pods.")) | .namespaceSelector.matchExpressions[0].values | join(",")' \
    "kube-system,karpenter"
  check "the settings ConfigMap holds the six settings" \
    is "$b" '.[] | select(.kind == "ConfigMap") | .data | keys | join(" ")' \
    "BATCH_IDLE_DURATION BATCH_MAX_DURATION CLOUD_PROVIDER CLUSTER_NAME INTERRUPTION_QUEUE LOG_LEVEL"
}

check_cert_manager() {
  local c="$WORK/cm.json" web='.[] | select(.kind == "Deployment") | .spec.template.spec.containers[] | select(.name == "webhook")'
  render "$DEPLOY/overlays/cert-manager" "$c" || fail "kubectl kustomize deploy/overlays/cert-manager"
  pass "deploy/overlays/cert-manager renders"
  check "both webhook configurations ask for cert-manager's CA" \
    is "$c" '[.[] | select(.kind | test("WebhookConfiguration")) | .metadata.annotations["cert-manager.io/inject-ca-from"]] | join(" ")' \
    "karpenter/karpenter-webhook karpenter/karpenter-webhook"
  check "a Certificate for the webhook Service" \
    is "$c" '.[] | select(.kind == "Certificate") | .spec.dnsNames[0]' karpenter-webhook.karpenter.svc
  check "the webhook serves the Secret's files, not --self-signed" \
    is "$c" "$web | (.args | index(\"--self-signed\") == null and index(\"--tls-cert-file=/etc/karpenter/tls/tls.crt\") != null)" true
  check "no API token in the webhook container (an empty directory in its place)" \
    is "$c" "$web | [.volumeMounts[] | select(.mountPath == \"/var/run/secrets/kubernetes.io/serviceaccount\") | .name] | join(\",\")" no-api-token
  check "the long-lived webhook token is gone" \
    is "$c" '[.[] | select(.kind == "Secret")] | length' 0
}

check_server() {
  local out
  k create namespace karpenter >/dev/null
  e2e_cleanup k delete namespace karpenter --wait=false --ignore-not-found
  out=$(k apply --dry-run=server -k "$DEPLOY/overlays/e2e" 2>&1) || fail "server dry run: $out"
  pass "kubectl apply --dry-run=server -k deploy/overlays/e2e succeeds"
  check "... for every object ($(grep -c 'server dry run' <<<"$out") of $(kubectl kustomize "$DEPLOY/overlays/e2e" | grep -c '^kind:'))" \
    [ "$(grep -c 'server dry run' <<<"$out")" = "$(kubectl kustomize "$DEPLOY/overlays/e2e" | grep -c '^kind:')" ]
  # Applied with the URLs on the port the webhook will listen on.
  PORT=$(e2e_free_port)
  kubectl kustomize "$DEPLOY/overlays/e2e" | sed "s|https://127.0.0.1:18443/|https://127.0.0.1:$PORT/|" \
    >"$WORK/overlay.yaml"
  e2e_cleanup k delete -f "$WORK/overlay.yaml" --ignore-not-found --wait=false
  out=$(k apply -f "$WORK/overlay.yaml" 2>&1) || fail "apply: $out"
  pass "deploy/overlays/e2e applies"
  k wait --for condition=established --timeout=60s crd --all >/dev/null || fail "the CRDs are established"
  pass "the CRDs are established"
  if out=$(k apply --dry-run=server -k "$DEPLOY/overlays/e2e" 2>&1); then
    pass "a server dry run over the installed overlay succeeds"
  else
    fail "a server dry run over the installed overlay: $out"
  fi
  wait_for "[ -n \"\$(k -n karpenter get secret karpenter-webhook-token -o jsonpath='{.data.token}')\" ]" 60 ||
    fail "the token controller fills karpenter-webhook-token"
  pass "the token controller fills karpenter-webhook-token"
}

# The Deployment's template as a Pod, through admission (dry run).
check_pod_template() {
  local e="$WORK/e2e.json" pod out
  render "$DEPLOY/overlays/e2e" "$e" || fail "kubectl kustomize deploy/overlays/e2e"
  pod=$(jq '.[] | select(.kind == "Deployment") | {apiVersion: "v1", kind: "Pod",
      metadata: (.spec.template.metadata + {name: "karpenter-template", namespace: "karpenter"}),
      spec: .spec.template.spec}' "$e")
  out=$(k apply --dry-run=server -o json -f - <<<"$pod" 2>&1) || fail "the Pod template is refused: $out"
  pass "the Deployment's Pod template is admitted as a Pod in karpenter"
  check "its priority is system-cluster-critical's" [ "$(jq .spec.priority <<<"$out")" = 2000000000 ]
  check "the controller gets the Pod's (karpenter-controller) token" \
    [ "$(jq -r '.spec.containers[0].volumeMounts[0].name' <<<"$out")" != webhook-token ]
  check "the webhook keeps karpenter-webhook's token and gets no other" \
    [ "$(jq -r '[.spec.containers[1].volumeMounts[].name] | join(",")' <<<"$out")" = webhook-token ]
}

can() { k auth can-i --as="system:serviceaccount:karpenter:$1" "${@:2}" >/dev/null 2>&1; }
cannot() { ! can "$@"; }

check_rbac() {
  local args
  while read -r -a args; do
    [ ${#args[@]} -gt 0 ] || continue
    check "karpenter-controller can ${args[*]}" can karpenter-controller "${args[@]}"
  done <<'EOF'
watch pods
delete pods
create pods --subresource=eviction
patch pods --subresource=status
create nodes
delete nodes
patch nodes --subresource=status
watch namespaces
watch persistentvolumeclaims
watch persistentvolumes
watch daemonsets.apps
watch poddisruptionbudgets.policy
watch storageclasses.storage.k8s.io
watch csinodes.storage.k8s.io
create events
patch events
create nodeclaims.karpenter.sh
patch nodeclaims.karpenter.sh --subresource=status
watch nodepools.karpenter.sh
update nodepools.karpenter.sh --subresource=status
watch ec2nodeclasses.karpenter.k8s.aws
create leases.coordination.k8s.io -n karpenter
update leases.coordination.k8s.io -n karpenter
patch leases.coordination.k8s.io -n kube-node-lease
EOF
  while read -r -a args; do
    [ ${#args[@]} -gt 0 ] || continue
    check "karpenter-controller cannot ${args[*]}" cannot karpenter-controller "${args[@]}"
  done <<'EOF'
get secrets -n karpenter
list configmaps
create pods
update deployments.apps
create leases.coordination.k8s.io -n default
patch validatingwebhookconfigurations.admissionregistration.k8s.io
EOF
  check "karpenter-webhook can patch validatingwebhookconfigurations/validation.webhook.karpenter.sh" \
    can karpenter-webhook patch validatingwebhookconfigurations.admissionregistration.k8s.io/validation.webhook.karpenter.sh
  check "karpenter-webhook can get mutatingwebhookconfigurations/defaulting.webhook.karpenter.sh" \
    can karpenter-webhook get mutatingwebhookconfigurations.admissionregistration.k8s.io/defaulting.webhook.karpenter.sh
  while read -r -a args; do
    [ ${#args[@]} -gt 0 ] || continue
    check "karpenter-webhook cannot ${args[*]}" cannot karpenter-webhook "${args[@]}"
  done <<'EOF'
patch validatingwebhookconfigurations.admissionregistration.k8s.io/other
list validatingwebhookconfigurations.admissionregistration.k8s.io
get secrets -n karpenter
list nodes
create nodepools.karpenter.sh
EOF
}

running() { [ "$(k -n $NS get pods -l app=inflate --field-selector=status.phase=Running -o name | grep -c .)" -eq "$1" ]; }

# Both programs on loopback, each as its own service account, flags as the
# Deployment gives them (the leader-election namespace is the Pod's there).
start_programs() {
  local build="${KP_BUILD_DIR:-$ROOT/build}" ctrl_pid web_pid
  [ -x "$build/karpenter-webhook" ] || fail "$build/karpenter-webhook is missing (make build)"
  e2e_sa_kubeconfig karpenter karpenter-webhook "$WORK/webhook.kubeconfig"
  e2e_sa_kubeconfig karpenter karpenter-controller "$WORK/controller.kubeconfig"
  "$build/karpenter-webhook" --self-signed --kubeconfig "$WORK/webhook.kubeconfig" \
    --address 127.0.0.1 --port "$PORT" --service-name karpenter-webhook --namespace karpenter \
    --threads 2 >"$WORK/webhook.log" 2>&1 &
  web_pid=$!
  e2e_cleanup e2e_stop_pid "$web_pid"
  wait_for "[ \"\$(curl -sk -o /dev/null -w '%{http_code}' https://127.0.0.1:$PORT/readyz)\" = 200 ]" 60 0.5 ||
    fail "the webhook, as karpenter-webhook, publishes its caBundle: $(tail -n 3 "$WORK/webhook.log")"
  pass "the webhook, as karpenter-webhook, published its caBundle"
  SYSTEM_NAMESPACE=karpenter POD_NAME=karpenter-e2e "$(e2e_controller)" run \
    --kubeconfig "$WORK/controller.kubeconfig" --cluster-name e2e --cloud-provider kwok \
    --batch-idle-duration 500ms --kwok-finish-pods-immediately --metrics-port 0 \
    --health-probe-port 0 >"$WORK/controller.log" 2>&1 &
  ctrl_pid=$!
  e2e_cleanup e2e_stop_pid "$ctrl_pid"
  wait_for "[ \"\$(k -n karpenter get lease karpenter-leader-election -o jsonpath='{.spec.holderIdentity}')\" = karpenter-e2e ]" 60 ||
    fail "the controller, as karpenter-controller, holds the lease in karpenter: $(tail -n 3 "$WORK/controller.log")"
  pass "the controller, as karpenter-controller, leads through a Lease in karpenter"
}

check_programs() {
  local node
  k apply -f "$DATA/nodepool.yaml" >/dev/null || fail "the NodePool is admitted by the webhook"
  e2e_cleanup k delete nodepools --all --wait=false
  pass "a NodePool is admitted through the webhook"
  e2e_namespace "$NS"
  k -n "$NS" apply -f "$DATA/inflate.yaml" >/dev/null
  k -n "$NS" scale deployment inflate --replicas 3 >/dev/null
  wait_for "running 3" 120 || fail "3 pending pods run on kwok nodes: $(tail -n 5 "$WORK/controller.log")"
  pass "pending pods run on nodes the controller launched ($(count nodes) node(s))"
  check "each kwok node has its Lease in kube-node-lease" \
    [ "$(count leases -n kube-node-lease)" -ge "$(count nodes)" ]
  node=$(k -n "$NS" get pods -l app=inflate -o jsonpath='{.items[0].spec.nodeName}')
  k delete node "$node" --wait=false >/dev/null
  wait_for "! k get node '$node'" 120 ||
    fail "the deleted node $node is drained and removed: $(grep -iE 'forbidden|: 403' "$WORK/controller.log" | tail -n 2)"
  pass "a deleted node is drained (its pods evicted) and removed"
  wait_for "running 3" 120 || fail "the evicted pods run again"
  pass "the evicted pods run again"
  check "no Forbidden answer in the controller's log" \
    bash -c "! grep -qiE 'forbidden|: 403' '$WORK/controller.log'"
  check "no Forbidden answer in the webhook's log" \
    bash -c "! grep -qiE 'forbidden|: 403' '$WORK/webhook.log'"
}

main() {
  e2e_setup
  WORK=$(mktemp -d)
  e2e_cleanup rm -rf "$WORK"
  check_crd_copies
  check_base
  check_cert_manager
  check_server
  check_pod_template
  check_rbac
  start_programs
  check_programs
}

main "$@"
