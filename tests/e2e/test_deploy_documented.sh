#!/usr/bin/env bash
# The documented install, as docs/deploy.md writes it, on a real API server: the
# commands of its install block (`kubectl apply -k deploy/`, the rollout status, then
# `kubectl apply -k deploy/webhooks/`) run verbatim from the repository's root, and
# the webhook is then called by the API server through its Service, as installed:
#
#   - the base applies (full CRDs with their CEL rules, RBAC, Deployment, Services,
#     PDB) and the rollout completes once the Pods run (the test plays the kubelet:
#     two system Nodes, the Pods marked Running and Ready once the webhook answers
#     /readyz);
#   - karpenter-webhook runs with the Deployment's own arguments, as the Pod's
#     service account (a TokenRequest token), listening on the Service's ClusterIP
#     and port: the cluster's Service range is a loopback /24 (cluster.sh,
#     KP_E2E_SERVICE_CIDR) because nothing here routes ClusterIPs, and the API server
#     resolves a webhook Service to its ClusterIP;
#   - after deploy/webhooks/ is applied the webhook publishes its CA into both
#     configurations through the API server; a valid NodePool is then defaulted and
#     validated by it (its own counters say so), a NodePool the CRD's CEL rules
#     refuse is refused by the API server before any webhook, and a NodePool only
#     our webhook refuses (a requirement on karpenter.k8s.aws/ec2nodeclass, which
#     Karpenter refuses at run time and no CEL rule covers) is refused by
#     validation.webhook.karpenter.sh with its message.
#
# Listening on port 443 needs root (or a lowered net.ipv4.ip_unprivileged_port_start).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
readonly ROOT
# Where the install commands come from: the first console block of this page that
# runs this command. One place, so a restructured deploy/ or page is one edit.
readonly INSTALL_DOC="$ROOT/docs/deploy.md"
readonly INSTALL_FIRST_COMMAND="kubectl apply -k deploy/"
readonly NAMESPACE=kube-system
readonly DEPLOYMENT=karpenter-c
readonly SERVICE=karpenter-c-webhook
readonly VWC=validation.webhook.karpenter.sh
readonly MWC=defaulting.webhook.karpenter.sh
WORK=""
WEBHOOK_URL=""

# The install block's commands, one a line, comments dropped.
install_commands() {
  awk -v first="$INSTALL_FIRST_COMMAND" '
    /^```console/ { inblock = 1; n = 0; found = 0; next }
    /^```/ && inblock { inblock = 0; if (found) { for (i = 1; i <= n; i++) print lines[i]; exit } next }
    inblock {
      line = $0; sub(/[[:space:]]+#.*$/, "", line)
      if (line == "") next
      lines[++n] = line
      if (index(line, first) == 1) found = 1
    }' "$INSTALL_DOC"
}

# run_doc LINE: one documented command, verbatim, from the repository's root.
run_doc() {
  local out
  if out=$(cd "$ROOT" && timeout 180 bash -c "$1" 2>&1); then
    pass "docs/deploy.md: \`$1\` ($(tail -n 1 <<<"$out"))"
  else
    fail "docs/deploy.md: \`$1\` failed: $out"
  fi
}

can_listen_on_443() {
  [ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/net/ipv4/ip_unprivileged_port_start 2>/dev/null || echo 1024)" -le 443 ]
}

# What a kubelet would report for a Node: Ready, capacity, no not-ready taint.
add_system_node() {
  local name="$1" zone="$2" now
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $name
  labels: {kubernetes.io/hostname: $name, kubernetes.io/os: linux, kubernetes.io/arch: amd64,
           topology.kubernetes.io/zone: $zone}
EOF
  e2e_cleanup k delete node "$name" --ignore-not-found --wait=false
  k patch node "$name" --subresource=status --type=merge -p "{\"status\": {
    \"capacity\": {\"cpu\": \"4\", \"memory\": \"16Gi\", \"pods\": \"110\"},
    \"allocatable\": {\"cpu\": \"4\", \"memory\": \"16Gi\", \"pods\": \"110\"},
    \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\", \"reason\": \"KubeletReady\",
      \"message\": \"e2e\", \"lastHeartbeatTime\": \"$now\", \"lastTransitionTime\": \"$now\"}]}}" >/dev/null
  wait_for "grep -q not-ready <<<\"\$(k get node $name -o jsonpath='{.spec.taints}')\"" 10 0.5 || true
  k taint node "$name" node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
}

pods() { k -n "$NAMESPACE" get pods -l app.kubernetes.io/name=karpenter -o json; }
bound_pods() { pods | jq '[.items[] | select(.spec.nodeName != null)] | length'; }

# The kubelet's part for each bound Pod: Running, its containers ready. The readiness
# the probes would report is the webhook process's own /readyz.
mark_pods_ready() {
  local name now i=10
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  for name in $(pods | jq -r '.items[].metadata.name'); do
    i=$((i + 1))
    k -n "$NAMESPACE" patch pod "$name" --subresource=status --type=merge -p "{\"status\": {
      \"phase\": \"Running\", \"podIP\": \"192.0.2.$i\", \"podIPs\": [{\"ip\": \"192.0.2.$i\"}],
      \"startTime\": \"$now\",
      \"conditions\": [
        {\"type\": \"PodScheduled\", \"status\": \"True\", \"lastTransitionTime\": \"$now\"},
        {\"type\": \"Initialized\", \"status\": \"True\", \"lastTransitionTime\": \"$now\"},
        {\"type\": \"ContainersReady\", \"status\": \"True\", \"lastTransitionTime\": \"$now\"},
        {\"type\": \"Ready\", \"status\": \"True\", \"lastTransitionTime\": \"$now\"}],
      \"containerStatuses\": [
        {\"name\": \"controller\", \"ready\": true, \"started\": true, \"restartCount\": 0,
         \"image\": \"karpenter-c\", \"imageID\": \"\", \"state\": {\"running\": {\"startedAt\": \"$now\"}}},
        {\"name\": \"webhook\", \"ready\": true, \"started\": true, \"restartCount\": 0,
         \"image\": \"karpenter-c\", \"imageID\": \"\", \"state\": {\"running\": {\"startedAt\": \"$now\"}}}]}}" \
      >/dev/null || fail "mark pod $name Running and Ready"
  done
}

# The webhook container's args from the installed Deployment, with its environment
# substituted, listening where the Service is.
webhook_args() {
  local ip="$1"
  k -n "$NAMESPACE" get deployment "$DEPLOYMENT" -o json |
    jq -r '.spec.template.spec.containers[] | select(.name == "webhook") | .args[]' |
    sed -e "s|\$(SYSTEM_NAMESPACE)|$NAMESPACE|g" -e 's|$(LOG_LEVEL)|info|g' \
      -e "s|^--address=.*|--address=$ip|" -e 's|^--port=.*|--port=443|'
}

start_webhook() {
  local bin="${KP_BUILD_DIR:-$ROOT/build}/karpenter-webhook" ip args pid
  [ -x "$bin" ] || fail "$bin is missing (make build, or set KP_BUILD_DIR)"
  ip=$(k -n "$NAMESPACE" get service "$SERVICE" -o jsonpath='{.spec.clusterIP}')
  [[ "$ip" == 127.* ]] || fail "the Service's ClusterIP $ip is not on loopback (KP_E2E_SERVICE_CIDR)"
  mapfile -t args < <(webhook_args "$ip")
  [ ${#args[@]} -gt 0 ] || fail "no webhook container args in the Deployment"
  e2e_sa_kubeconfig "$NAMESPACE" karpenter "$WORK/karpenter.kubeconfig"
  "$bin" "${args[@]}" --kubeconfig "$WORK/karpenter.kubeconfig" >"$WORK/webhook.log" 2>&1 &
  pid=$!
  e2e_cleanup e2e_stop_pid "$pid"
  WEBHOOK_URL="https://$ip:443"
  wait_for "[ \"\$(curl -sk -o /dev/null -w '%{http_code}' $WEBHOOK_URL/readyz)\" = 200 ]" 60 0.5 ||
    fail "the webhook answers /readyz at $WEBHOOK_URL: $(tail -n 5 "$WORK/webhook.log")"
  pass "karpenter-webhook ($(printf '%s ' "${args[@]}")) is ready at the Service's address $WEBHOOK_URL"
}

ca_published() {
  local v m
  v=$(k get validatingwebhookconfiguration "$VWC" -o jsonpath='{.webhooks[0].clientConfig.caBundle}')
  m=$(k get mutatingwebhookconfiguration "$MWC" -o jsonpath='{.webhooks[0].clientConfig.caBundle}')
  [ -n "$v" ] && [ -n "$m" ]
}

# The webhook's own count of NodePool CREATE reviews answered on ENDPOINT with RESULT
# (a regular expression: allowed, patched, denied).
reviews() {
  curl -sk "$WEBHOOK_URL/metrics" |
    awk -v ep="$1" -v res="$2" '
      index($0, "karpenter_webhook_requests_total{endpoint=\"" ep "\",kind=\"NodePool\",operation=\"CREATE\",result=\"") == 1 {
        r = $0; sub(/^.*result="/, "", r); sub(/".*$/, "", r)
        if (r ~ "^(" res ")$") n += $2
      }
      END { print n + 0 }'
}

asked_twice() { [ "$(reviews mutate "allowed|patched")" -ge 1 ] && [ "$(reviews validate allowed)" -ge 1 ]; }

refused_by_cel() {
  grep -q 'label "karpenter.sh/nodepool" is restricted' <<<"$1" && ! grep -q 'admission webhook' <<<"$1"
}

check_nodepools() {
  local out before
  e2e_cleanup k delete nodepools --all --wait=false
  k apply -f - >/dev/null <<<"$(e2e_nodepool valid)" || fail "a valid NodePool is admitted"
  pass "a valid NodePool is admitted"
  check "... after our webhook defaulted it ($(reviews mutate "allowed|patched")) and validated it ($(reviews validate allowed)) through the Service" \
    asked_twice
  check "... and it carries the webhook's defaults" \
    [ "$(k get nodepool valid -o jsonpath='{.spec.disruption.consolidationPolicy}')" = WhenEmptyOrUnderutilized ]
  if out=$(k apply -f - 2>&1 <<<"$(e2e_nodepool cel-invalid '' '- {key: karpenter.sh/nodepool, operator: In, values: [x]}')"); then
    fail "a NodePool requiring karpenter.sh/nodepool is admitted"
  fi
  check "a NodePool the CRD's CEL rules refuse is refused by the API server, before any webhook ($out)" \
    refused_by_cel "$out"
  before=$(reviews validate denied)
  if out=$(k apply -f - 2>&1 <<<"$(e2e_nodepool webhook-invalid '' '- {key: karpenter.k8s.aws/ec2nodeclass, operator: In, values: [default]}')"); then
    fail "a NodePool requiring karpenter.k8s.aws/ec2nodeclass is admitted"
  fi
  check "a NodePool only our webhook refuses is refused by $VWC with its message ($out)" \
    grep -q "admission webhook \"$VWC\" denied the request: .*karpenter.k8s.aws/ec2nodeclass" <<<"$out"
  check "... counted as denied by the webhook" [ "$(reviews validate denied)" -gt "$before" ]
  check "the webhook logged no sanitizer report" \
    bash -c "! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' '$WORK/webhook.log'"
}

main() {
  can_listen_on_443 || fail "the webhook must listen on port 443 (the Service's): run as root"
  # A loopback Service range, picked at random so clusters side by side do not share it.
  export KP_E2E_SERVICE_CIDR="127.$((RANDOM % 254 + 1)).$((RANDOM % 256)).0/24"
  e2e_setup
  WORK=$(mktemp -d)
  e2e_cleanup rm -rf "$WORK"
  local commands
  mapfile -t commands < <(install_commands)
  assert "docs/deploy.md has an install block starting with \`$INSTALL_FIRST_COMMAND\` (${#commands[@]} commands)" \
    [ ${#commands[@]} -ge 3 ]
  e2e_cleanup k delete -k "$ROOT/deploy/" --ignore-not-found --wait=false
  e2e_cleanup k delete -k "$ROOT/deploy/webhooks/" --ignore-not-found --wait=false
  run_doc "${commands[0]}"
  add_system_node system-a us-east-1a
  add_system_node system-b us-east-1b
  wait_for '[ "$(bound_pods)" = 2 ]' 60 || fail "kube-scheduler binds the 2 replicas to the 2 system Nodes (bound: $(bound_pods))"
  pass "kube-scheduler binds the 2 replicas, one per system Node"
  start_webhook
  mark_pods_ready
  local c
  for c in "${commands[@]:1}"; do run_doc "$c"; done
  wait_for ca_published 60 || fail "the webhook publishes its CA into $VWC and $MWC: $(tail -n 5 "$WORK/webhook.log")"
  pass "the webhook published its CA into both configurations, as kube-system/karpenter"
  check_nodepools
}

main "$@"
