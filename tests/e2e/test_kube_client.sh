#!/usr/bin/env bash
# shared/kube against a real Kubernetes 1.20 API server: discovery, in-cluster and
# client-certificate configuration, 403 mapping, create (generateName), paginated
# list, modify/update conflicts, merge/JSON/strategic patches, status subresource,
# delete preconditions, watch resume, informer, eviction (policy/v1beta1, blocked by
# a budget), events, leader election on a Lease. The checks are made by
# tests/e2e/programs/kube_client.c (built as BUILD/tests/e2e_kube_client); kubectl
# then checks what it left behind.
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

# ---------------------------------------------------------------- run and check
e2e_cleanup k delete nodes -l kp-it=1 --ignore-not-found
rc=0
KP_IT_NAMESPACE=$ns KP_IT_CERT_KUBECONFIG="$work/certs/kubeconfig" \
  KP_IT_SA_KUBECONFIG="$work/sa.kubeconfig" timeout 300 "$driver" >"$work/driver.out" 2>&1 ||
  rc=$?
sed 's/^/    /' "$work/driver.out"
assert "the driver's checks pass (exit $rc)" [ "$rc" = 0 ]

lease=$(k -n "$ns" get lease kp-it-leader -o jsonpath='{.spec.holderIdentity} {.spec.leaseTransitions}')
# replica-a held it, replica-b took over (one transition), then released it on stop.
check "the lease changed hands once and was released ($lease)" [ "$lease" = " 1" ]
events=$(k -n "$ns" get events --field-selector reason=KpIt -o jsonpath='{.items[*].count}')
check "one de-duplicated event, count 2 ($events)" [ "$events" = 2 ]
check "the evicted pod is gone" [ -z "$(k -n "$ns" get pod victim --ignore-not-found -o name)" ]
