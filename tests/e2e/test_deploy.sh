#!/usr/bin/env bash
# deploy/ against a real Kubernetes API server, and what can be checked of the base
# and the overlays without one (kubectl kustomize).
#
#   - the CRD copies under deploy/ are the generated files in crds/;
#   - the base is the AWS deployment with what docs/deploy.md promises (the service
#     account karpenter in kube-system, two replicas of one Pod with both containers,
#     Karpenter's rolling update for a 2-node system group, leader election left on,
#     priority, hardening, requests and memory limits, probes, spread, PDB, Services),
#     no webhook configuration (those are deploy/webhooks, applied after the rollout),
#     no kwok rights, and no object named like one of Karpenter's Helm chart but the
#     service account; the overlays (kwok, karpenter-namespace, no-pod-webhook,
#     cert-manager) do what they say;
#   - `kubectl apply --dry-run=server -k deploy/overlays/e2e` succeeds, the overlay
#     applies, and applies again as a dry run;
#   - the Deployment's Pod template is admitted as a Pod in kube-system (priority
#     class, security context, the service account's projected token for both);
#   - the service account may do what docs/deploy.md grants and not more
#     (kubectl auth can-i, as the account);
#   - both programs run as deployed, with the account's token: the webhook publishes
#     its caBundle and admits a NodePool, the controller elects itself in kube-system,
#     provisions kwok nodes for pending pods (node Leases in kube-node-lease) and drains
#     a deleted node through evictions, and neither log has a Forbidden answer in it:
#     the grants are enough, not only not too many.
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
  local f copy
  for f in "$ROOT"/crds/*.yaml "$ROOT"/crds/compat-1.20/*.yaml; do
    case "$f" in
    */compat-1.20/karpenter.kwok.sh_*) continue ;; # the kwok class has no CEL: one variant
    */karpenter.kwok.sh_*) copy="$DEPLOY/components/kwok/${f##*/}" ;;
    *) copy="$DEPLOY/crds/${f#"$ROOT/crds/"}" ;;
    esac
    check "${copy#"$ROOT/"} is ${f#"$ROOT/"} (copy it after scripts/gen-crds.py)" cmp -s "$f" "$copy"
  done
}

# Names a Helm release of Karpenter makes in its namespace and cluster-wide.
readonly HELM_NAMES="Deployment/karpenter Service/karpenter PodDisruptionBudget/karpenter ClusterRole/karpenter
ClusterRole/karpenter-core ClusterRole/karpenter-admin ClusterRoleBinding/karpenter ClusterRoleBinding/karpenter-core
Role/karpenter Role/karpenter-dns Role/karpenter-lease RoleBinding/karpenter RoleBinding/karpenter-dns
RoleBinding/karpenter-lease ConfigMap/karpenter-global-settings Secret/karpenter-cert"

check_base() {
  local b="$WORK/base.json" dep='.[] | select(.kind == "Deployment")' role
  render "$DEPLOY" "$b" || fail "kubectl kustomize deploy/"
  pass "deploy/ renders"
  check "Karpenter v1.14's five CRDs, with CEL rules (1.25+)" \
    is "$b" '[.[] | select(.kind == "CustomResourceDefinition") | .metadata.name] | sort | join(" ")' \
    "capacitybuffers.autoscaling.x-k8s.io ec2nodeclasses.karpenter.k8s.aws nodeclaims.karpenter.sh nodeoverlays.karpenter.sh nodepools.karpenter.sh"
  check "the CRDs are the full variant" grep -q x-kubernetes-validations "$b.yaml"
  check "one service account: karpenter in kube-system, as Karpenter's" \
    is "$b" '[.[] | select(.kind == "ServiceAccount") | "\(.metadata.namespace)/\(.metadata.name)"] | join(" ")' \
    "kube-system/karpenter"
  check "no object but the service account is named like one of Karpenter's Helm chart" \
    is "$b" "[.[] | \"\\(.kind)/\\(.metadata.name)\" | select(. as \$n | \"$(tr '\n' ' ' <<<"$HELM_NAMES")\" | split(\" \") | index(\$n))] | length" 0
  check "every namespaced object is in kube-system" \
    is "$b" '[.[] | .metadata.namespace // empty] | unique | join(" ")' kube-system
  check "the base is the AWS deployment" \
    is "$b" '.[] | select(.kind == "ConfigMap") | .data.CLOUD_PROVIDER' aws
  check "one Deployment, 2 replicas, containers controller and webhook" \
    is "$b" "$dep | \"\\(.spec.replicas) \\([.spec.template.spec.containers[].name] | join(\",\"))\"" "2 controller,webhook"
  check "rolling update one Pod at a time on a 2-node group (maxUnavailable 1, required anti-affinity)" \
    is "$b" "$dep | \"\\(.spec.strategy.type) \\(.spec.strategy.rollingUpdate.maxUnavailable) \\(.spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey)\"" \
    "RollingUpdate 1 kubernetes.io/hostname"
  check "it runs as karpenter with priority system-cluster-critical" \
    is "$b" "$dep | .spec.template.spec | \"\\(.serviceAccountName) \\(.priorityClassName)\"" "karpenter system-cluster-critical"
  check "Karpenter's labels on the Pods (name, instance)" \
    is "$b" "$dep | .spec.template.metadata.labels | \"\\(.[\"app.kubernetes.io/name\"]) \\(.[\"app.kubernetes.io/instance\"])\"" "karpenter karpenter"
  check "non-root, seccomp RuntimeDefault" \
    is "$b" "$dep | .spec.template.spec.securityContext | \"\\(.runAsNonRoot) \\(.runAsUser) \\(.seccompProfile.type)\"" \
    "true 65532 RuntimeDefault"
  check "each container: read-only root, no escalation, every capability dropped" \
    is "$b" "[$dep | .spec.template.spec.containers[] | (.securityContext | .readOnlyRootFilesystem and (.allowPrivilegeEscalation == false) and .capabilities.drop == [\"ALL\"])] | all" true
  check "requests from measured RSS: controller 128Mi/200m, webhook 64Mi/100m" \
    is "$b" "[$dep | .spec.template.spec.containers[] | .resources.requests] == [{cpu: \"200m\", memory: \"128Mi\"}, {cpu: \"100m\", memory: \"64Mi\"}]" true
  check "a memory limit on both containers" \
    is "$b" "[$dep | .spec.template.spec.containers[] | .resources.limits.memory] | join(\" \")" "1Gi 256Mi"
  check "no token Secret" is "$b" "[.[] | select(.kind == \"Secret\")] | length" 0
  check "an explicit projected token expiring in an hour, mounted in both containers at the service-account path" \
    is "$b" "$dep | .spec.template.spec | \"\\(.automountServiceAccountToken) \\(.volumes[] | select(.name == \"kube-api-access\") | .projected.sources[0].serviceAccountToken.expirationSeconds) \\([.containers[].volumeMounts[] | select(.name == \"kube-api-access\") | .mountPath] | unique | join(\",\")) \\([.containers[].volumeMounts[]] | length)\"" \
    "false 3600 /var/run/secrets/kubernetes.io/serviceaccount 2"
  check "probes on /healthz and /readyz for both" \
    is "$b" "[$dep | .spec.template.spec.containers[] | .livenessProbe.httpGet.path, .readinessProbe.httpGet.path] | join(\" \")" \
    "/healthz /readyz /healthz /readyz"
  check "leader election is not turned off" \
    bash -c "! grep -q -- 'disable-leader-election\|DISABLE_LEADER_ELECTION' '$b.yaml'"
  check "the webhook starts with --self-signed" is "$b" "$dep | .spec.template.spec.containers[1].args | index(\"--self-signed\") != null" true
  check "spread across zones" \
    is "$b" "$dep | .spec.template.spec.topologySpreadConstraints[0].topologyKey" topology.kubernetes.io/zone
  check "a PodDisruptionBudget keeps one" is "$b" '.[] | select(.kind == "PodDisruptionBudget") | .spec.maxUnavailable' 1
  check "the webhook Service maps 443 to the webhook's port" \
    is "$b" '.[] | select(.kind == "Service" and .metadata.name == "karpenter-c-webhook") | .spec.ports[0] | "\(.port) \(.targetPort)"' "443 https-webhook"
  check "no webhook configuration in the base (deploy/webhooks comes after the rollout)" \
    is "$b" '[.[] | select(.kind | test("WebhookConfiguration"))] | length' 0
  role='.[] | select(.kind == "ClusterRole" and .metadata.name == "karpenter-c") | .rules'
  check "no kwok rights in the base (creating Nodes, writing their or pods' status)" \
    is "$b" "[$role[] | select(((.resources | index(\"nodes\")) and (.verbs | index(\"create\"))) or (.resources | index(\"nodes/status\")) or (.resources | index(\"pods/status\")))] | length" 0
  check "the settings ConfigMap holds Karpenter's variable names" \
    is "$b" '.[] | select(.kind == "ConfigMap") | .data | keys | join(" ")' \
    "AWS_REGION BATCH_IDLE_DURATION BATCH_MAX_DURATION CLOUD_PROVIDER CLUSTER_CA_BUNDLE CLUSTER_ENDPOINT CLUSTER_NAME FEATURE_GATES INTERRUPTION_QUEUE LOG_LEVEL"
}

check_webhooks_and_overlays() {
  local w="$WORK/webhooks.json" o="$WORK/o.json"
  render "$DEPLOY/webhooks" "$w" || fail "kubectl kustomize deploy/webhooks"
  check "Karpenter's kinds fail closed, Pods fail open, no side effects" \
    is "$w" '[.[] | .webhooks[] | "\(.name)=\(.failurePolicy)/\(.sideEffects)/\(.timeoutSeconds)"] | sort | join(" ")' \
    "defaulting.webhook.karpenter.sh=Fail/None/10 pods.defaulting.webhook.karpenter.sh=Ignore/None/5 validation.webhook.karpenter.sh=Fail/None/10"
  check "the webhooks call karpenter-c-webhook in kube-system" \
    is "$w" '[.[] | .webhooks[] | .clientConfig.service | "\(.namespace)/\(.name)"] | unique | join(" ")' "kube-system/karpenter-c-webhook"
  check "the Pod webhook leaves kube-system and karpenter out" \
    is "$w" '.[] | select(.kind == "MutatingWebhookConfiguration") | .webhooks[] | select(.name | startswith("pods.")) | .namespaceSelector.matchExpressions[0].values | join(",")' \
    "kube-system,karpenter"
  render "$DEPLOY/overlays/no-pod-webhook" "$o" || fail "kubectl kustomize deploy/overlays/no-pod-webhook"
  check "overlays/no-pod-webhook: the two webhooks for Karpenter's kinds, no Pod webhook" \
    is "$o" '[.[] | .webhooks[].name] | sort | join(" ")' "defaulting.webhook.karpenter.sh validation.webhook.karpenter.sh"
  render "$DEPLOY/overlays/kwok" "$o" || fail "kubectl kustomize deploy/overlays/kwok"
  check "overlays/kwok: CLOUD_PROVIDER=kwok and the KWOKNodeClass CRD" \
    is "$o" '"\(.[] | select(.kind == "ConfigMap") | .data.CLOUD_PROVIDER) \([.[] | select(.kind == "CustomResourceDefinition") | .metadata.name] | index("kwoknodeclasses.karpenter.kwok.sh") != null)"' \
    "kwok true"
  check "overlays/kwok: its rights bound to kube-system/karpenter" \
    is "$o" '.[] | select(.kind == "ClusterRoleBinding" and .metadata.name == "karpenter-c-kwok") | .subjects[0] | "\(.namespace)/\(.name)"' "kube-system/karpenter"
  render "$DEPLOY/overlays/karpenter-namespace" "$o" || fail "kubectl kustomize deploy/overlays/karpenter-namespace"
  check "overlays/karpenter-namespace: every namespaced object and binding subject in karpenter" \
    is "$o" '[(.[] | .metadata.namespace // empty), (.[] | .subjects[]?.namespace)] | unique | join(" ")' karpenter
  render "$DEPLOY/overlays/karpenter-namespace/webhooks" "$o" || fail "kubectl kustomize .../karpenter-namespace/webhooks"
  check "... and its webhooks call the Service in karpenter" \
    is "$o" '[.[] | .webhooks[] | .clientConfig.service.namespace] | unique | join(" ")' karpenter
}

check_cert_manager() {
  local c="$WORK/cm.json" web='.[] | select(.kind == "Deployment") | .spec.template.spec.containers[] | select(.name == "webhook")'
  render "$DEPLOY/overlays/cert-manager" "$c" || fail "kubectl kustomize deploy/overlays/cert-manager"
  pass "deploy/overlays/cert-manager renders"
  check "a Certificate for the webhook Service" \
    is "$c" '.[] | select(.kind == "Certificate") | .spec.dnsNames[0]' karpenter-c-webhook.kube-system.svc
  check "the webhook serves the Secret's files, not --self-signed" \
    is "$c" "$web | (.args | index(\"--self-signed\") == null and index(\"--tls-cert-file=/etc/karpenter/tls/tls.crt\") != null)" true
  render "$DEPLOY/overlays/cert-manager/webhooks" "$c" || fail "kubectl kustomize deploy/overlays/cert-manager/webhooks"
  check "both webhook configurations ask for cert-manager's CA" \
    is "$c" '[.[] | .metadata.annotations["cert-manager.io/inject-ca-from"]] | join(" ")' \
    "kube-system/karpenter-c-webhook kube-system/karpenter-c-webhook"
}

check_server() {
  local out
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
}

# The Deployment's template as a Pod, through admission (dry run).
check_pod_template() {
  local e="$WORK/e2e.json" pod out
  render "$DEPLOY/overlays/e2e" "$e" || fail "kubectl kustomize deploy/overlays/e2e"
  pod=$(jq '.[] | select(.kind == "Deployment") | {apiVersion: "v1", kind: "Pod",
      metadata: (.spec.template.metadata + {name: "karpenter-template", namespace: "kube-system"}),
      spec: .spec.template.spec}' "$e")
  out=$(k apply --dry-run=server -o json -f - <<<"$pod" 2>&1) || fail "the Pod template is refused: $out"
  pass "the Deployment's Pod template is admitted as a Pod in kube-system"
  check "its priority is system-cluster-critical's" [ "$(jq .spec.priority <<<"$out")" = 2000000000 ]
  check "both containers run as the service account karpenter, with no token mount of their own" \
    [ "$(jq -r '.spec.serviceAccountName' <<<"$out") $(jq '[.spec.containers[] | select(.volumeMounts) | .volumeMounts[] | select(.mountPath | startswith("/var/run/secrets") | not)] | length' <<<"$out")" = "karpenter 0" ]
}

can() { k auth can-i --as="system:serviceaccount:kube-system:karpenter" "$@" >/dev/null 2>&1; }
cannot() { ! can "$@"; }

# As deploy/overlays/e2e grants: the base and the kwok component.
check_rbac() {
  local args
  while read -r -a args; do
    [ ${#args[@]} -gt 0 ] || continue
    check "karpenter can ${args[*]}" can "${args[@]}"
  done <<'EOF'
watch pods
delete pods
create pods --subresource=eviction
patch pods --subresource=status
create nodes
delete nodes
patch nodes
patch nodes --subresource=status
watch namespaces
watch persistentvolumeclaims
watch persistentvolumes
watch daemonsets.apps
watch poddisruptionbudgets.policy
watch storageclasses.storage.k8s.io
watch volumeattachments.storage.k8s.io
get services/kube-dns -n kube-system
create events
patch events
create nodeclaims.karpenter.sh
patch nodeclaims.karpenter.sh --subresource=status
watch nodepools.karpenter.sh
patch nodepools.karpenter.sh --subresource=status
watch ec2nodeclasses.karpenter.k8s.aws
watch kwoknodeclasses.karpenter.kwok.sh
create leases.coordination.k8s.io -n kube-system
update leases.coordination.k8s.io -n kube-system
patch leases.coordination.k8s.io -n kube-node-lease
patch validatingwebhookconfigurations.admissionregistration.k8s.io/validation.webhook.karpenter.sh
get mutatingwebhookconfigurations.admissionregistration.k8s.io/defaulting.webhook.karpenter.sh
EOF
  while read -r -a args; do
    [ ${#args[@]} -gt 0 ] || continue
    check "karpenter cannot ${args[*]}" cannot "${args[@]}"
  done <<'EOF'
get secrets -n kube-system
list configmaps
get services/other -n kube-system
create pods
update deployments.apps
update nodepools.karpenter.sh
create leases.coordination.k8s.io -n default
patch validatingwebhookconfigurations.admissionregistration.k8s.io/other
list validatingwebhookconfigurations.admissionregistration.k8s.io
EOF
}

running() { [ "$(k -n $NS get pods -l app=inflate --field-selector=status.phase=Running -o name | grep -c .)" -eq "$1" ]; }

# Both programs on loopback as the service account karpenter, with the settings the
# Deployment gives them (the Pod's namespace as SYSTEM_NAMESPACE, the ConfigMap's
# variables) rather than flags.
start_programs() {
  local build="${KP_BUILD_DIR:-$ROOT/build}" ctrl_pid web_pid
  [ -x "$build/karpenter-webhook" ] || fail "$build/karpenter-webhook is missing (make build)"
  e2e_sa_kubeconfig kube-system karpenter "$WORK/sa.kubeconfig"
  "$build/karpenter-webhook" --self-signed --kubeconfig "$WORK/sa.kubeconfig" \
    --address 127.0.0.1 --port "$PORT" --service-name karpenter-c-webhook --namespace kube-system \
    --threads 2 >"$WORK/webhook.log" 2>&1 &
  web_pid=$!
  e2e_cleanup e2e_stop_pid "$web_pid"
  wait_for "[ \"\$(curl -sk -o /dev/null -w '%{http_code}' https://127.0.0.1:$PORT/readyz)\" = 200 ]" 60 0.5 ||
    fail "the webhook, as karpenter, publishes its caBundle: $(tail -n 3 "$WORK/webhook.log")"
  pass "the webhook, as karpenter, published its caBundle"
  SYSTEM_NAMESPACE=kube-system POD_NAME=karpenter-e2e CLOUD_PROVIDER=kwok CLUSTER_NAME=e2e \
    BATCH_IDLE_DURATION=500ms KWOK_FINISH_PODS_IMMEDIATELY=true METRICS_PORT=0 HEALTH_PROBE_PORT=0 \
    "$(e2e_controller)" run --kubeconfig "$WORK/sa.kubeconfig" >"$WORK/controller.log" 2>&1 &
  ctrl_pid=$!
  e2e_cleanup e2e_stop_pid "$ctrl_pid"
  wait_for "[ \"\$(k -n kube-system get lease karpenter-leader-election -o jsonpath='{.spec.holderIdentity}')\" = karpenter-e2e ]" 60 ||
    fail "the controller, as karpenter, holds the lease in kube-system: $(tail -n 3 "$WORK/controller.log")"
  pass "the controller, as karpenter, leads through Karpenter's Lease in kube-system"
}

check_programs() {
  local node
  k apply -f "$ROOT/examples/kwok/kwoknodeclass.yaml" -f "$DATA/nodepool.yaml" >/dev/null ||
    fail "the KWOKNodeClass and the NodePool are admitted by the webhook"
  e2e_cleanup k delete nodepools,kwoknodeclasses --all --wait=false
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
  check_webhooks_and_overlays
  check_cert_manager
  check_server
  check_pod_template
  check_rbac
  start_programs
  check_programs
}

main "$@"
