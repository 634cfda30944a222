#!/usr/bin/env bash
# karpenter-webhook --self-signed publishes its CA through the real API server.
#
# The webhook starts before its configurations exist (deploy/webhooks is applied
# after the rollout): /readyz says 200, since nothing can call it through them yet,
# and it looks for them every 2 s. Once a ValidatingWebhookConfiguration and a
# MutatingWebhookConfiguration (two webhooks each) are created, every webhook's
# caBundle becomes the CA written to --ca-bundle-file within seconds. While the API
# server cannot be reached at all, /readyz says 503. A caBundle someone removes is put back
# at the next resync. A second replica adds its own CA next to the first one's
# instead of replacing it, and after that neither rewrites the configurations
# (their resourceVersion stays put across resyncs). Both exit 0 on SIGTERM.
#
# The binary comes from KP_BUILD_DIR (default: build/ in the repository).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
readonly ROOT
readonly VWC=validation.webhook.karpenter.sh
readonly MWC=defaulting.webhook.karpenter.sh
WORK=""
BIN=""
PIDS=()
# Set by start_webhook, one pair per replica.
PORT_a="" PORT_b=""

find_webhook() {
  local build="${KP_BUILD_DIR:-$ROOT/build}"
  BIN="$build/karpenter-webhook"
  [ -x "$BIN" ] || fail "$BIN is missing (make build, or set KP_BUILD_DIR)"
}

stop_all() {
  local pid
  for pid in "${PIDS[@]+"${PIDS[@]}"}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]+"${PIDS[@]}"}"; do wait "$pid" 2>/dev/null || true; done
}

# start_webhook NAME: a replica on a free loopback port; sets PORT_<NAME> and PID_<NAME>.
start_webhook() {
  local name="$1" log="$WORK/$1.log" port="" pid
  : >"$log" # before the webhook opens it: under pipefail, sed on a missing log fails the script
  "$BIN" --self-signed --kubeconfig "$KUBECONFIG" --address 127.0.0.1 --port 0 \
    --service-name karpenter --namespace karpenter --ca-bundle-file "$WORK/$name.ca.pem" \
    --ca-bundle-resync 2 --reload-interval 200 --threads 1 >"$log" 2>&1 &
  pid=$!
  PIDS+=("$pid")
  for _ in $(seq 1 100); do
    port=$(sed -n 's/.*"message":"listening".*"port":"\([0-9]*\)".*/\1/p' "$log" | head -1)
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$port" ] || fail "webhook $name did not start: $(cat "$log")"
  printf -v "PORT_$name" '%s' "$port"
  printf -v "PID_$name" '%s' "$pid"
}

readyz() { curl -sk -o /dev/null -w '%{http_code}' --max-time 5 "https://127.0.0.1:$1/readyz"; }

# Two webhooks per configuration, on a kind nobody here creates, failing open: the
# point is the caBundle, not admission.
create_configurations() {
  local kind hooks
  hooks=$(
    for n in first second; do
      cat <<EOF
- name: $n.cabundle.karpenter.sh
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  clientConfig: {service: {name: karpenter, namespace: karpenter, path: /validate}}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [replicationcontrollers]}]
EOF
    done
  )
  for kind in ValidatingWebhookConfiguration MutatingWebhookConfiguration; do
    k apply -f - >/dev/null <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: $kind
metadata: {name: $([ "$kind" = ValidatingWebhookConfiguration ] && echo "$VWC" || echo "$MWC")}
webhooks:
$hooks
EOF
  done
  e2e_cleanup k delete validatingwebhookconfiguration "$VWC" --ignore-not-found
  e2e_cleanup k delete mutatingwebhookconfiguration "$MWC" --ignore-not-found
}

# bundle KIND NAME INDEX: the decoded caBundle of that webhook ("" when unset).
bundle() {
  k get "$1" "$2" -o jsonpath="{.webhooks[$3].clientConfig.caBundle}" | base64 -d
}

all_bundles_are() {
  local want="$1" kind name i
  for kind in "validatingwebhookconfiguration $VWC" "mutatingwebhookconfiguration $MWC"; do
    read -r kind name <<<"$kind"
    for i in 0 1; do
      [ "$(bundle "$kind" "$name" "$i")" = "$want" ] || return 1
    done
  done
}

# fingerprints KIND NAME: SHA-256 fingerprints of the certificates in webhook 0's bundle.
fingerprints() {
  local pem
  pem=$(bundle "$1" "$2" 0)
  awk -v dir="$WORK" '/BEGIN CERT/ { n++ } { print > (dir "/split." n ".pem") }' <<<"$pem"
  for f in "$WORK"/split.*.pem; do
    openssl x509 -noout -fingerprint -sha256 -in "$f" | cut -d= -f2
  done | sort
  rm -f "$WORK"/split.*.pem
}
fingerprint_of() { openssl x509 -noout -fingerprint -sha256 -in "$1" | cut -d= -f2; }
both_trusted() {
  local fps
  fps=$(fingerprints "$1" "$2")
  grep -qx "$(fingerprint_of "$WORK/a.ca.pem")" <<<"$fps" &&
    grep -qx "$(fingerprint_of "$WORK/b.ca.pem")" <<<"$fps"
}

check_first_replica() {
  start_webhook a
  # Ready once its first look finds no configuration; they are created after this.
  wait_for "[ \"\$(readyz $PORT_a)\" = 200 ]" 30 || true
  local code
  code=$(readyz "$PORT_a")
  check "ready while the configurations do not exist yet, so a rollout can finish first ($code)" [ "$code" = 200 ]
  check "it says it waits for them" grep -q '"webhook configurations not created yet' "$WORK/a.log"
  create_configurations
  wait_for "all_bundles_are \"\$(cat '$WORK/a.ca.pem')\"" 10 ||
    fail "every webhook's caBundle is the CA in --ca-bundle-file ($(tail -n 3 "$WORK/a.log"))"
  pass "every webhook of both configurations holds the CA written to --ca-bundle-file"
  wait_for "[ \"\$(readyz $PORT_a)\" = 200 ]" 30 || fail "ready once published"
  pass "ready once the caBundle is published"
  check "the CA is the issuer of the serving certificate" \
    openssl s_client -connect "127.0.0.1:$PORT_a" -servername localhost -CAfile "$WORK/a.ca.pem" \
    -verify_return_error -brief </dev/null
}

# A webhook whose API server cannot be reached cannot know whether it is trusted:
# not ready, and retrying.
check_unreachable() {
  local code
  sed -E 's#server: https://[^ ]+#server: https://127.0.0.1:1#' "$KUBECONFIG" >"$WORK/dead.kubeconfig"
  KUBECONFIG="$WORK/dead.kubeconfig" start_webhook dead
  sleep 2
  code=$(readyz "$PORT_dead")
  check "not ready while the API server cannot be reached ($code)" [ "$code" = 503 ]
  check "it says why and retries" grep -q '"caBundle not published; will retry"' "$WORK/dead.log"
  e2e_stop_pid "$PID_dead"
}

check_resync() {
  local patched
  # The object as the patch left it: a later read may already show the webhook's
  # repair, which is what comes next.
  patched=$(k patch validatingwebhookconfiguration "$VWC" --type=json \
    -p '[{"op":"remove","path":"/webhooks/1/clientConfig/caBundle"}]' -o jsonpath='{.webhooks[1].clientConfig.caBundle}')
  check "the caBundle was removed" [ -z "$patched" ]
  wait_for "all_bundles_are \"\$(cat '$WORK/a.ca.pem')\"" 30 || fail "a removed caBundle is put back"
  pass "a removed caBundle is put back at the next resync"
}

check_second_replica() {
  local rv_v rv_m
  start_webhook b
  wait_for "both_trusted validatingwebhookconfiguration $VWC && both_trusted mutatingwebhookconfiguration $MWC" 30 ||
    fail "a second replica's CA joins the first's ($(fingerprints validatingwebhookconfiguration "$VWC" | tr '\n' ' '))"
  pass "a second replica adds its CA next to the first's"
  check "the bundle holds exactly the two CAs" \
    [ "$(fingerprints mutatingwebhookconfiguration "$MWC" | wc -l)" = 2 ]
  wait_for "[ \"\$(readyz $PORT_b)\" = 200 ]" 30 || fail "the second replica is ready"
  rv_v=$(k get validatingwebhookconfiguration "$VWC" -o jsonpath='{.metadata.resourceVersion}')
  rv_m=$(k get mutatingwebhookconfiguration "$MWC" -o jsonpath='{.metadata.resourceVersion}')
  sleep 7 # three resyncs of each replica
  check "the replicas do not undo each other (no writes across resyncs)" [ \
    "$(k get validatingwebhookconfiguration "$VWC" -o jsonpath='{.metadata.resourceVersion}') $(k get mutatingwebhookconfiguration "$MWC" -o jsonpath='{.metadata.resourceVersion}')" \
    = "$rv_v $rv_m" ]
  check "both replicas still trusted" both_trusted validatingwebhookconfiguration "$VWC"
}

check_exit() {
  local name pid rc
  for name in a b; do
    pid="PID_$name"
    rc=0
    kill -TERM "${!pid}"
    wait "${!pid}" || rc=$?
    check "replica $name exits 0 on SIGTERM" [ "$rc" = 0 ]
    check "replica $name logged no sanitizer report" \
      bash -c "! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' '$WORK/$name.log'"
  done
  PIDS=()
}

main() {
  find_webhook
  e2e_setup
  WORK=$(mktemp -d)
  e2e_cleanup rm -rf "$WORK"
  e2e_cleanup stop_all
  check_first_replica
  check_unreachable
  check_resync
  check_second_replica
  check_exit
}

main "$@"
