#!/usr/bin/env bash
# shared/kube against a real API server: discovery (policy/v1), in-cluster and
# client-certificate configuration, a TokenRequest token, 403 mapping, create
# (generateName), paginated list, modify/update conflicts, merge/JSON/strategic
# patches, status subresource, delete preconditions, watch resume, watch bookmarks
# (sent before a watch's timeout; resuming from one), a watch-list stream
# (sendInitialEvents, fetched with curl, decoded by ours), field validation Warn (an
# unknown field is dropped and the server's Warning header is logged), informer,
# eviction (policy/v1, blocked by a budget), events, leader election on a Lease. The
# checks are made by tests/e2e/programs/kube_client.c (built as
# BUILD/tests/e2e_kube_client); kubectl then checks what it left behind.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

driver=$(e2e_program kube_client)
work=$(mktemp -d)
e2e_setup
e2e_cleanup rm -rf "$work"
ns=kp-kube-client
e2e_namespace "$ns"
k -n "$ns" create serviceaccount reader >/dev/null
e2e_sa_kubeconfig "$ns" reader "$work/sa.kubeconfig"

# A client certificate from the cluster's CA (the API server trusts it for clients),
# in a kubeconfig whose CA path is relative to the kubeconfig's directory.
openssl req -new -newkey rsa:2048 -nodes -keyout "$work/client.key" \
  -subj "/CN=kp-kube-client/O=system:masters" -out "$work/client.csr" 2>/dev/null
openssl x509 -req -in "$work/client.csr" -CA "$KP_E2E_CA_FILE" -CAkey "$KP_E2E_DIR/pki/ca.key" \
  -CAcreateserial -days 1 -out "$work/client.crt" 2>/dev/null
mkdir "$work/certs"
cp "$KP_E2E_CA_FILE" "$work/certs/ca.crt"
cat >"$work/certs/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
current-context: cert
contexts: [{name: cert, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: '$KP_E2E_API_URL', certificate-authority: ca.crt}}]
users:
- name: u
  user:
    client-certificate-data: $(base64 -w0 "$work/client.crt")
    client-key-data: $(base64 -w0 "$work/client.key")
KUBECONFIG

# A watch-list (sendInitialEvents) stream as the server writes it, for the driver to
# decode: three ConfigMaps as ADDED events, then the initial-events-end bookmark.
for i in 1 2 3; do
  k -n "$ns" create configmap "wl-$i" --from-literal=k=v >/dev/null
  k -n "$ns" label configmap "wl-$i" kp-wl=1 >/dev/null
done
curl -sS --max-time 20 --cacert "$KP_E2E_CA_FILE" -H "Authorization: Bearer $KP_E2E_ADMIN_TOKEN" \
  "$KP_E2E_API_URL/api/v1/namespaces/$ns/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=kp-wl%3D1&timeoutSeconds=2" \
  >"$work/watch-list.json" || fail "a watch-list request"
pass "the server answers a watch-list request ($(wc -l <"$work/watch-list.json") events)"

# ---------------------------------------------------------------- run and check
e2e_cleanup k delete nodes -l kp-it=1 --ignore-not-found
rc=0
KP_IT_NAMESPACE=$ns KP_IT_CERT_KUBECONFIG="$work/certs/kubeconfig" \
  KP_IT_SA_KUBECONFIG="$work/sa.kubeconfig" KP_IT_WATCHLIST_FILE="$work/watch-list.json" \
  KP_IT_WATCHLIST_OBJECTS=3 timeout 300 "$driver" >"$work/driver.out" 2>&1 || rc=$?
sed 's/^/    /' "$work/driver.out"
assert "the driver's checks pass (exit $rc)" [ "$rc" = 0 ]
check "the server's warning about the unknown field is logged at WARN" \
  grep -q '"level":"WARN".*"message":"API server warning".*unknown field.*bogusField' "$work/driver.out"

lease=$(k -n "$ns" get lease kp-it-leader -o jsonpath='{.spec.holderIdentity} {.spec.leaseTransitions}')
# replica-a held it, replica-b took over (one transition), then released it on stop.
check "the lease changed hands once and was released ($lease)" [ "$lease" = " 1" ]
events=$(k -n "$ns" get events --field-selector reason=KpIt -o jsonpath='{.items[*].count}')
check "one de-duplicated event, count 2 ($events)" [ "$events" = 2 ]
check "the evicted pod is gone" [ -z "$(k -n "$ns" get pod victim --ignore-not-found -o name)" ]
