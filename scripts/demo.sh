#!/usr/bin/env bash
# The autoscaler end to end on this machine, in a few minutes: a real Kubernetes
# control plane on loopback (tests/e2e/cluster.sh, the e2e tier's release), karpenter-webhook
# registered for our CRDs, and `karpenter-controller run` with the kwok provider
# (nodes are Node objects, no cloud account). It applies examples/kwok (a NodePool and
# its KWOKNodeClass) and examples/nginx's Deployment of 10 pods of 500m, shows the NodeClaims, Nodes and pods every
# 2 s until the pods run, then scales the Deployment to 2 and shows consolidation
# taking nodes away. Ctrl-C stops everything and removes the cluster.
#
#   scripts/demo.sh                       (or: make demo)
#
# Environment:
#   BUILD=DIR              where karpenter-controller and karpenter-webhook are (build)
#   DEMO_NONINTERACTIVE=1  no screen refresh; exit 0 once consolidation is over
#   DEMO_TIMEOUT=SECONDS   give up on a phase after this long (300)
#   DEMO_KEEP=1            leave the cluster running at the end (its directory is printed)
#
# The first run builds the control plane and kubectl from Go modules
# (tests/e2e/build-control-plane.sh, 40 minutes or more on two cores, cached under
# ~/.cache); later runs start in about 15 s.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
readonly ROOT
BUILD=$(cd "$ROOT" && realpath -m "${BUILD:-build}")
readonly BUILD
readonly NONINTERACTIVE="${DEMO_NONINTERACTIVE:-0}"
readonly TIMEOUT="${DEMO_TIMEOUT:-300}"
readonly EXAMPLE="$ROOT/examples/nginx"

DIR=""
WEBHOOK_PID=""
CONTROLLER_PID=""
METRICS_PORT=""
WEBHOOK_PORT=""
STDOUT_FD=1
STDERR_FD=2

say() { printf 'demo: %s\n' "$*"; }
die() {
  say "error: $*" >&2
  exit 1
}
k() { kubectl --request-timeout=30s "$@"; }

# ---------------------------------------------------------------- stopping

stop_pid() {
  local pid="$1"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# Runs once, whichever of Ctrl-C, SIGTERM or the end of the script comes first.
cleanup() {
  local rc=$?
  trap - INT TERM EXIT
  set +e
  # A signal taken inside `k ... >/dev/null` (a function: its redirection is this
  # shell's while it runs) would send everything below to /dev/null.
  exec 1>&"$STDOUT_FD" 2>&"$STDERR_FD"
  # `make demo | tee log` and Ctrl-C: tee is gone, stdout is a broken pipe (SIGPIPE
  # is ignored, see main); say the rest on stderr, which is still the terminal.
  { echo; } 2>/dev/null || exec 1>&"$STDERR_FD"
  say "stopping"
  stop_pid "$CONTROLLER_PID"
  stop_pid "$WEBHOOK_PID"
  if [ -n "$DIR" ] && [ "${DEMO_KEEP:-0}" = 1 ]; then
    say "cluster left running: . $DIR/env; stop it with: tests/e2e/cluster.sh down $DIR --clean"
  elif [ -n "$DIR" ]; then
    if [ "$rc" -ne 0 ]; then
      # Worth reading before it goes.
      say "last lines of the controller's log:"
      tail -n 20 "$DIR/controller.log" 2>/dev/null | sed 's/^/    /'
    fi
    "$ROOT/tests/e2e/cluster.sh" down "$DIR" --clean >/dev/null 2>&1
    say "cluster removed"
  fi
  exit "$rc"
}

# ---------------------------------------------------------------- starting

preflight() {
  local c
  for c in karpenter-controller karpenter-webhook; do
    [ -x "$BUILD/$c" ] || die "$BUILD/$c is missing: run make build (or set BUILD)"
  done
  for c in curl jq openssl python3; do
    command -v "$c" >/dev/null 2>&1 || die "$c not found (as root: scripts/install-deps.sh e2e)"
  done
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_until DESC CMD: poll the shell string CMD every second, up to TIMEOUT.
wait_until() {
  local desc="$1" cmd="$2" deadline=$((SECONDS + TIMEOUT))
  until eval "$cmd" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || die "timed out after ${TIMEOUT}s waiting for $desc"
    sleep 1
  done
}

start_cluster() {
  local start=$SECONDS
  if ! "$ROOT/tests/e2e/build-control-plane.sh" >/dev/null 2>"$DIR.build.log"; then
    cat "$DIR.build.log" >&2
    rm -f "$DIR.build.log"
    die "building the control plane failed"
  fi
  rm -f "$DIR.build.log"
  "$ROOT/tests/e2e/cluster.sh" up "$DIR" 2>"$DIR.up.log" ||
    { cat "$DIR.up.log" >&2; rm -f "$DIR.up.log"; die "the control plane did not start"; }
  rm -f "$DIR.up.log"
  # shellcheck source=/dev/null
  . "$DIR/env"
  say "control plane up in $((SECONDS - start))s: kube-apiserver at $KP_E2E_API_URL (KUBECONFIG=$KUBECONFIG)"
}

# The webhook makes its own CA and serving certificate for 127.0.0.1 and writes
# the CA out; the API server calls it by URL with that CA.
start_webhook() {
  local port
  port=$(free_port)
  WEBHOOK_PORT=$port
  mkdir -p "$DIR/webhook"
  "$BUILD/karpenter-webhook" --address 127.0.0.1 --port "$port" --self-signed \
    --ca-bundle-file "$DIR/webhook/ca.crt" >"$DIR/webhook.log" 2>&1 &
  WEBHOOK_PID=$!
  wait_until "the webhook's /readyz" \
    "[ -s '$DIR/webhook/ca.crt' ] && curl -fsS --max-time 2 --cacert '$DIR/webhook/ca.crt' https://127.0.0.1:$port/readyz"
  register_webhook "$port" "$(base64 -w0 <"$DIR/webhook/ca.crt")"
  say "karpenter-webhook on https://127.0.0.1:$port, validating and defaulting NodePools, NodeClaims and EC2NodeClasses"
}

register_webhook() {
  local url="https://127.0.0.1:$1" ca="$2" kind
  for kind in Validating Mutating; do
    local name path
    if [ "$kind" = Validating ]; then
      name=validation.webhook.karpenter.sh path=validate
    else
      name=defaulting.webhook.karpenter.sh path=mutate
    fi
    k apply -f - >/dev/null <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ${kind}WebhookConfiguration
metadata:
  name: $name
webhooks:
  - name: $name
    admissionReviewVersions: ["v1"]
    sideEffects: None
    failurePolicy: Fail
    timeoutSeconds: 10
    clientConfig:
      url: $url/$path
      caBundle: $ca
    rules:
      - apiGroups: ["karpenter.sh"]
        apiVersions: ["v1"]
        operations: ["CREATE", "UPDATE"]
        resources: ["nodepools", "nodeclaims"]
      - apiGroups: ["karpenter.k8s.aws"]
        apiVersions: ["v1"]
        operations: ["CREATE", "UPDATE"]
        resources: ["ec2nodeclasses"]
EOF
  done
}

# Consolidation is evaluated every 2 s and validated after 2 s (10 s and 15 s by
# default), so the demo does not wait around.
start_controller() {
  METRICS_PORT=$(free_port)
  "$BUILD/karpenter-controller" run --kubeconfig "$KUBECONFIG" --cloud-provider kwok \
    --kwok-finish-pods-immediately --disable-leader-election \
    --metrics-port "$METRICS_PORT" --health-probe-port 0 --bind-address 127.0.0.1 \
    --batch-idle-duration 500ms --disruption-poll-interval 2s --consolidation-validation-period 2s \
    >"$DIR/controller.log" 2>&1 &
  CONTROLLER_PID=$!
  wait_until "the controller's /metrics" "curl -fsS --max-time 2 http://127.0.0.1:$METRICS_PORT/metrics"
  say "karpenter-controller running (kwok provider), metrics on http://127.0.0.1:$METRICS_PORT/metrics, log $DIR/controller.log"
}

apply_example() {
  k apply -f "$ROOT/crds/" >/dev/null
  wait_until "the NodePool CRD" "k get nodepools"
  wait_until "the KWOKNodeClass CRD" "k get kwoknodeclasses"
  k apply -f "$ROOT/examples/kwok/" >/dev/null
  k apply -f "$EXAMPLE/deployment.yaml" >/dev/null
  say "applied crds/, examples/kwok/ (the NodePool of examples/nginx for the kwok provider) and examples/nginx/deployment.yaml (10 pods x 500m)"
}

# ---------------------------------------------------------------- watching

# One look at the cluster (three kubectl calls; each costs half a second), kept in
# globals: pods of the Deployment (total, bound to a node, Running), NodeClaims
# (names, how many are being deleted), Nodes.
P_TOTAL=0 P_BOUND=0 P_RUNNING=0 C_NAMES="" C_DELETING=0 N_NODES=0
snapshot() {
  local pods claims
  pods=$(k get pods -l app=inflate -o json 2>/dev/null) || pods='{"items":[]}'
  read -r P_TOTAL P_BOUND P_RUNNING <<<"$(jq -r '.items | [length,
      (map(select(.spec.nodeName // "" | length > 0)) | length),
      (map(select(.status.phase == "Running" and .metadata.deletionTimestamp == null)) | length)] | @tsv' <<<"$pods")"
  claims=$(k get nodeclaims -o json 2>/dev/null) || claims='{"items":[]}'
  C_NAMES=$(jq -r '.items[].metadata.name' <<<"$claims" | sort)
  C_DELETING=$(jq '[.items[] | select(.metadata.deletionTimestamp)] | length' <<<"$claims")
  N_NODES=$(k get nodes -o name 2>/dev/null | grep -c . || true)
}
count_lines() { grep -c . <<<"$1" || true; }
decisions() {
  curl -fsS --max-time 2 "http://127.0.0.1:$METRICS_PORT/metrics" 2>/dev/null |
    awk '/^karpenter_voluntary_disruption_decisions_total/ { n += $NF } END { print n + 0 }'
}

webhook_requests() {
  curl -fsS --max-time 2 --cacert "$DIR/webhook/ca.crt" "https://127.0.0.1:$WEBHOOK_PORT/metrics" 2>/dev/null |
    awk '/^karpenter_webhook_requests_total/ { n += $NF } END { print n + 0 }'
}

status_line() {
  printf '%s  pods: %s bound, %s pending, %s running  nodeclaims: %s  nodes: %s  disruption decisions: %s\n' \
    "$(date +%H:%M:%S)" "$P_BOUND" $((P_TOTAL - P_BOUND)) "$P_RUNNING" "$(count_lines "$C_NAMES")" \
    "$N_NODES" "$(decisions)"
}

# The full picture a person watching wants, redrawn every 2 s; without a screen
# (DEMO_NONINTERACTIVE=1) one status line instead.
view() {
  local phase="$1" screen
  snapshot
  if [ "$NONINTERACTIVE" = 1 ]; then
    status_line
    return
  fi
  screen=$(
    printf 'karpenter-c demo  %s  %s\n(Ctrl-C stops everything and removes the cluster)\n' \
      "$(date '+%Y-%m-%d %H:%M:%S')" "$phase"
    printf 'controller metrics http://127.0.0.1:%s/metrics, logs in %s\n\n' "$METRICS_PORT" "$DIR"
    printf 'NodeClaims\n'
    k get nodeclaims -o wide 2>&1 | sed 's/^/  /'
    printf '\nNodes\n'
    k get nodes -L node.kubernetes.io/instance-type -L karpenter.sh/capacity-type 2>&1 | sed 's/^/  /'
    printf '\nPods of deployment/inflate\n  '
    status_line
  )
  printf '\033[H\033[2J'   # clear the screen
  printf '%s\n' "$screen"
}

# watch_until PHASE DESC CMD: the view every 2 s until CMD (run on the snapshot
# the view just took) succeeds.
watch_until() {
  local phase="$1" desc="$2" cmd="$3" deadline=$((SECONDS + TIMEOUT))
  while true; do
    view "$phase"
    eval "$cmd" >/dev/null 2>&1 && break
    [ "$SECONDS" -lt "$deadline" ] || die "timed out after ${TIMEOUT}s waiting for $desc"
    sleep 2
  done
}

# ---------------------------------------------------------------- the story

provision() {
  local start=$SECONDS
  # shellcheck disable=SC2016 # evaluated by watch_until, after each snapshot
  watch_until "provisioning: 10 pods of 500m" "10 pods Running" '[ "$P_RUNNING" -eq 10 ]'
  say "all 10 pods running after $((SECONDS - start))s on $N_NODES node(s): $(tr '\n' ' ' <<<"$C_NAMES")"
}

# Nothing is consolidated while pods are still arriving: the NodePool is opened up
# (consolidateAfter 0s, a budget of 100% of nodes) only now.
consolidate() {
  local before start=$SECONDS
  before=$C_NAMES
  k patch nodepool default --type merge \
    -p '{"spec":{"disruption":{"consolidateAfter":"0s","budgets":[{"nodes":"100%"}]}}}' >/dev/null
  say "patched NodePool default: consolidateAfter 0s, budgets [{nodes: 100%}]"
  k scale deployment inflate --replicas 2 >/dev/null
  say "scaled deployment inflate to 2 replicas; waiting for consolidation"
  echo "$before" >"$DIR/claims.before"
  watch_until "consolidation: 2 pods left" "consolidation" consolidated
  say "consolidated after $((SECONDS - start))s: $(count_lines "$before") node(s) -> $N_NODES node(s): $(tr '\n' ' ' <<<"$C_NAMES")"
}

# Done: at least one of the NodeClaims from before is gone, nothing is being
# deleted, and the 2 pods run on what is left.
consolidated() {
  local gone
  gone=$(comm -23 "$DIR/claims.before" <(echo "$C_NAMES") | grep -c . || true)
  [ "$gone" -gt 0 ] && [ "$C_DELETING" -eq 0 ] && [ "$P_RUNNING" -eq 2 ] && [ "$P_TOTAL" -eq 2 ] &&
    [ "$N_NODES" -eq "$(count_lines "$C_NAMES")" ]
}

main() {
  preflight
  exec {STDOUT_FD}>&1 {STDERR_FD}>&2
  # A reader that goes away (tee on Ctrl-C) must not kill the shell before the
  # clean-up has stopped everything: writes then just fail.
  trap '' PIPE
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  DIR=$(mktemp -d "${TMPDIR:-/tmp}/kp-demo.XXXXXX")
  say "starting a Kubernetes $("$ROOT/tests/e2e/build-control-plane.sh" --version) control plane in $DIR (the first run builds it: 40 minutes or more)"
  start_cluster
  start_webhook
  start_controller
  apply_example
  provision
  consolidate
  say "the webhook answered $(webhook_requests) admission requests"
  say "demo complete"
  [ "$NONINTERACTIVE" = 1 ] && return 0
  say "watching; Ctrl-C stops everything and removes the cluster"
  while true; do
    view "after consolidation (kubectl works: . $DIR/env)"
    sleep 2
  done
}

main "$@"
