#!/usr/bin/env bash
# Make a CA and a serving certificate for the webhook's Service with the
# openssl command, and print the caBundle (the CA certificate, base64) that
# the ValidatingWebhookConfiguration and MutatingWebhookConfiguration need.
#
#   certs/make-certs.sh [flags]
#     -s, --service NAME     Service name (default karpenter)
#     -n, --namespace NS     its namespace (default kube-system)
#     -o, --out DIR          where to write ca.crt, ca.key, tls.crt, tls.key (default .)
#     --dns NAME             one more DNS name (repeatable)
#     --ip ADDR              an IP address SAN (repeatable), e.g. 127.0.0.1
#     --days N               validity (default 365)
#     --reuse-ca             sign with ca.crt/ca.key already in DIR (rotation:
#                            clients that trust the CA keep trusting the new cert)
#
# The certificate names NAME, NAME.NS, NAME.NS.svc and NAME.NS.svc.cluster.local.
# Keys are ECDSA P-256. Files appear by rename, so a watcher never reads half of one;
# tls.crt is replaced before tls.key (a server that reads a mismatched pair must retry).
set -euo pipefail

service=karpenter
namespace=kube-system
out=.
days=365
reuse_ca=0
extra_dns=()
ips=()

die() { echo "make-certs: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case "$1" in
    -s|--service) service=${2:?}; shift 2 ;;
    -n|--namespace) namespace=${2:?}; shift 2 ;;
    -o|--out) out=${2:?}; shift 2 ;;
    --dns) extra_dns+=("${2:?}"); shift 2 ;;
    --ip) ips+=("${2:?}"); shift 2 ;;
    --days) days=${2:?}; shift 2 ;;
    --reuse-ca) reuse_ca=1; shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown flag $1 (see --help)" ;;
  esac
done

label='^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$'
[[ $service =~ $label ]] || die "service name '$service' is not a DNS-1123 label"
[[ $namespace =~ $label ]] || die "namespace '$namespace' is not a DNS-1123 label"
[[ $days =~ ^[0-9]+$ ]] && [ "$days" -ge 1 ] || die "--days must be a positive number"
command -v openssl >/dev/null || die "openssl is not installed"
mkdir -p "$out"

work=$(mktemp -d "$out/.make-certs.XXXXXX")
trap 'rm -rf "$work"' EXIT

sans="DNS:$service,DNS:$service.$namespace,DNS:$service.$namespace.svc"
sans="$sans,DNS:$service.$namespace.svc.cluster.local"
for name in "${extra_dns[@]+"${extra_dns[@]}"}"; do sans="$sans,DNS:$name"; done
for ip in "${ips[@]+"${ips[@]}"}"; do sans="$sans,IP:$ip"; done

if [ "$reuse_ca" = 1 ]; then
  [ -s "$out/ca.crt" ] && [ -s "$out/ca.key" ] || die "--reuse-ca: no ca.crt/ca.key in $out"
  cp "$out/ca.crt" "$work/ca.crt"
  cp "$out/ca.key" "$work/ca.key"
else
  openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null |
    openssl pkcs8 -topk8 -nocrypt -out "$work/ca.key"
  openssl req -x509 -new -key "$work/ca.key" -sha256 -days "$days" \
    -subj "/CN=karpenter-webhook-ca" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$work/ca.crt" 2>/dev/null
fi

openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null |
  openssl pkcs8 -topk8 -nocrypt -out "$work/tls.key"
openssl req -new -key "$work/tls.key" -subj "/CN=$service.$namespace.svc" \
  -out "$work/tls.csr" 2>/dev/null
cat >"$work/ext.cnf" <<CNF
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = $sans
CNF
openssl x509 -req -in "$work/tls.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" \
  -CAcreateserial -sha256 -days "$days" -extfile "$work/ext.cnf" \
  -out "$work/tls.crt" 2>/dev/null

chmod 600 "$work/ca.key" "$work/tls.key"
chmod 644 "$work/ca.crt" "$work/tls.crt"
mv -f "$work/ca.key" "$out/ca.key"
mv -f "$work/ca.crt" "$out/ca.crt"
mv -f "$work/tls.crt" "$out/tls.crt"
mv -f "$work/tls.key" "$out/tls.key"

# caBundle: base64 of the PEM, on one line.
base64 -w0 <"$out/ca.crt"
echo
