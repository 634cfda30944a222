#!/usr/bin/env bash
# CEL by the real API server: every admission fixture the webhook's tests use is sent
# to the API server with our webhook NOT registered (so the verdict is the full CRDs'
# own: OpenAPI schema, defaults and x-kubernetes-validations CEL rules), and the same
# object to karpenter-webhook's /validate; the two verdicts (allow / refuse) must agree
# for every fixture. Fixtures: each case of tests/unit/data/admission/*.yaml (the
# table test_validate_admission.c runs) and the full objects of tests/unit/data/decode
# for the three kinds. Messages are not compared, only verdicts.
#
# A case marked `crd_admits: true` is one of Karpenter's checks made after admission
# (its controller's runtime validation), which our webhook makes at admission: there
# the API server must allow and the webhook refuse. A disagreement, either way, is
# printed with the fixture's file, case number and name, and both messages, and fails
# the test: nothing is skipped. cel_agreement.py does the work.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
readonly ROOT
WORK=""

start_webhook() {
  local bin="${KP_BUILD_DIR:-$ROOT/build}/karpenter-webhook" port pid
  [ -x "$bin" ] || fail "$bin is missing (make build, or set KP_BUILD_DIR)"
  port=$(e2e_free_port)
  # --self-signed without --kubeconfig: the CA is only written to the file, no webhook
  # configuration is touched (none exists here).
  "$bin" --self-signed --ca-bundle-file "$WORK/webhook-ca.crt" --address 127.0.0.1 --port "$port" \
    --service-name karpenter-webhook --namespace karpenter --threads 2 >"$WORK/webhook.log" 2>&1 &
  pid=$!
  e2e_cleanup e2e_stop_pid "$pid"
  wait_for "[ -s '$WORK/webhook-ca.crt' ] && curl -fs --cacert '$WORK/webhook-ca.crt' https://127.0.0.1:$port/readyz" 60 0.5 ||
    fail "karpenter-webhook did not become ready: $(tail -n 5 "$WORK/webhook.log")"
  pass "karpenter-webhook serves on 127.0.0.1:$port, not registered with the API server"
  WEBHOOK_URL="https://127.0.0.1:$port"
}

install_crds() {
  k apply --server-side -f "$ROOT/crds/" >/dev/null || fail "the full CRDs (crds/*.yaml) apply"
  k wait --for condition=established --timeout=60s crd --all >/dev/null || fail "the CRDs are established"
  pass "the full CRDs, CEL rules included, are established"
  check "no webhook configuration is registered" \
    test "$(k get validatingwebhookconfigurations,mutatingwebhookconfigurations -o name | grep -c karpenter || true)" = 0
}

main() {
  e2e_setup
  WORK=$(mktemp -d)
  e2e_cleanup rm -rf "$WORK"
  install_crds
  start_webhook
  local rc=0
  python3 "$E2E_LIB_DIR/cel_agreement.py" --api "$KP_E2E_API_URL" --token "$KP_E2E_ADMIN_TOKEN" \
    --ca "$KP_E2E_CA_FILE" --webhook "$WEBHOOK_URL" --webhook-ca "$WORK/webhook-ca.crt" \
    --fixtures "$ROOT/tests/unit/data/admission" \
    --extra "$ROOT"/tests/unit/data/decode/{nodepool,nodeclaim,ec2nodeclass}_full.json \
    >"$WORK/agreement.out" 2>&1 || rc=$?
  grep -v '^agree ' "$WORK/agreement.out" | sed 's/^/    /'
  [ "$rc" -ne 2 ] || fail "cel_agreement.py could not run"
  check "the API server and the webhook agree on every fixture ($(tail -n 1 "$WORK/agreement.out"))" \
    [ "$rc" = 0 ]
  check "the webhook logged no sanitizer report" \
    bash -c "! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' '$WORK/webhook.log'"
}

main "$@"
