#!/usr/bin/env bash
# karpenter-webhook end to end on loopback, over real TLS with certificates
# made by certs/make-certs.sh, driven with curl:
#   valid, invalid (policy), malformed, oversized, missing uid, wrong kind,
#   Pod mutation, metrics, a policy reload (an emptied file and a FIFO
#   refused), request framing (CL+TE), TLS 1.2 suites, a slow client, slowloris
#   against the request deadline, idle keep-alive memory, --self-signed,
#   and a certificate rotation under a running request loop (none may fail;
#   the new certificate is served afterwards, checked with openssl s_client).
#
#   tests/integration/test_webhook.sh BUILD_DIR SOURCE_DIR
#
# Everything lives in a temporary directory and every server started here is
# stopped on exit, failure included.
set -euo pipefail

build=${1:?usage: test_webhook.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: test_webhook.sh BUILD_DIR SOURCE_DIR}
bin="$build/karpenter-webhook"
[ -x "$bin" ] || { echo "test_webhook: $bin not built"; exit 1; }
for tool in curl openssl base64 python3 mkfifo; do
  command -v "$tool" >/dev/null || { echo "test_webhook: $tool is not installed"; exit 1; }
done

tmp=$(mktemp -d)
pids=()
passed=0
failed=0

cleanup() {
  local pid
  for pid in "${pids[@]+"${pids[@]}"}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]+"${pids[@]}"}"; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

ok() { passed=$((passed + 1)); echo "ok - $*"; }
fail() { failed=$((failed + 1)); echo "FAIL - $*"; }
check() { # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then ok "$what"; else fail "$what"; fi
}

# start_server LOG ARGS... : starts the webhook on a free port; sets $port and $server_pid.
start_server() {
  local log=$1
  shift
  : >"$log" # before the server opens it: under pipefail, sed on a missing log fails the script
  "$bin" --address 127.0.0.1 --port 0 --threads 2 --reload-interval 200 "$@" >"$log" 2>&1 &
  server_pid=$!
  pids+=("$server_pid")
  port=""
  for _ in $(seq 1 100); do
    port=$(sed -n 's/.*"message":"listening".*"port":"\([0-9]*\)".*/\1/p' "$log" | head -1)
    [ -n "$port" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "test_webhook: server did not start:"
  cat "$log"
  exit 1
}

wait_for_log() { # wait_for_log TEXT LOG : up to 10 s
  for _ in $(seq 1 100); do
    grep -q "$1" "$2" && return 0
    sleep 0.1
  done
  return 0
}

stop_server() { # stop_server PID LOG : SIGTERM, clean exit, no sanitizer report
  local pid=$1 log=$2 rc=0
  kill -TERM "$pid"
  wait "$pid" || rc=$?
  check "server exits cleanly on SIGTERM (rc=$rc)" [ "$rc" -eq 0 ]
  if grep -qE "AddressSanitizer|LeakSanitizer|runtime error:" "$log"; then
    fail "sanitizer report in $log"
    cat "$log"
  fi
}

certs="$tmp/certs"
"$src/certs/make-certs.sh" -o "$certs" --ip 127.0.0.1 --dns localhost >"$tmp/cabundle.txt"
check "make-certs prints the caBundle" \
  bash -c "base64 -d <'$tmp/cabundle.txt' | cmp -s - '$certs/ca.crt'"

cat >"$tmp/policy.yaml" <<'EOF'
nodePools:
  requireLimits: [cpu, memory]
pods:
  defaultRequests: {cpu: 100m, memory: 128Mi}
  doNotDisrupt:
    - resources: [nvidia.com/gpu]
EOF

log="$tmp/webhook.log"
start_server "$log" --tls-cert-file "$certs/tls.crt" --tls-key-file "$certs/tls.key" \
  --policy "$tmp/policy.yaml" --connection-timeout 3 --request-timeout 3
main_pid=$server_pid
base="https://127.0.0.1:$port"
curl_tls=(curl -sS --max-time 10 --cacert "$certs/ca.crt")

# post ENDPOINT FILE -> prints "HTTPCODE BODY"
post() {
  "${curl_tls[@]}" -o "$tmp/out.json" -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary "@$2" "$base/$1"
}
body_has() { grep -q -- "$1" "$tmp/out.json"; }

review() { # review FILE UID KIND_JSON OPERATION OBJECT_JSON
  printf '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"%s","kind":%s,"operation":"%s","namespace":"default","object":%s}}' \
    "$2" "$3" "$4" "$5" >"$1"
}

nodepool_kind='{"group":"karpenter.sh","version":"v1","kind":"NodePool"}'
np_spec='"template":{"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"default"},"expireAfter":"720h","requirements":[{"key":"karpenter.sh/capacity-type","operator":"In","values":["on-demand"]}]}},"disruption":{"consolidationPolicy":"WhenEmptyOrUnderutilized","consolidateAfter":"0s","budgets":[{"nodes":"10%"}]}'
review "$tmp/np_ok.json" uid-ok "$nodepool_kind" CREATE \
  "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":\"ok\"},\"spec\":{$np_spec,\"limits\":{\"cpu\":\"100\",\"memory\":\"100Gi\"}}}"
review "$tmp/np_nolimits.json" uid-bad "$nodepool_kind" CREATE \
  "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":\"nolimits\"},\"spec\":{$np_spec}}"

code=$(post validate "$tmp/np_ok.json")
check "valid NodePool is allowed" [ "$code" = 200 ]
check "  ... allowed:true and the uid echoed" \
  bash -c "grep -q '\"uid\":\"uid-ok\",\"allowed\":true' '$tmp/out.json'"

code=$(post validate "$tmp/np_nolimits.json")
check "NodePool without limits is denied by policy" \
  bash -c "[ $code = 200 ] && grep -q '\"allowed\":false' '$tmp/out.json'"
check "  ... the denial names the rule and how to comply" \
  bash -c "grep -q 'nodePools.requireLimits' '$tmp/out.json' && grep -q 'to comply' '$tmp/out.json'"

printf '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":' >"$tmp/malformed.json"
code=$(post validate "$tmp/malformed.json")
check "malformed JSON is a 400" [ "$code" = 400 ]

printf '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"operation":"CREATE"}}' >"$tmp/nouid.json"
code=$(post validate "$tmp/nouid.json")
check "missing request.uid is a 400" bash -c "[ $code = 400 ] && grep -q uid '$tmp/out.json'"

printf '{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"x"}}' >"$tmp/v1beta1.json"
code=$(post validate "$tmp/v1beta1.json")
check "wrong AdmissionReview apiVersion is a 400" [ "$code" = 400 ]

review "$tmp/wrongkind.json" uid-kind '{"group":"apps","version":"v1","kind":"Deployment"}' CREATE '{}'
code=$(post validate "$tmp/wrongkind.json")
check "an unsupported kind is denied, not allowed" \
  bash -c "[ $code = 200 ] && grep -q '\"allowed\":false' '$tmp/out.json'"

head -c $((3 * 1024 * 1024 + 1)) /dev/zero | tr '\0' ' ' >"$tmp/big.json"
code=$(post validate "$tmp/big.json" || true)
check "a body over 3 MiB is a 413" [ "$code" = 413 ]
code=$("${curl_tls[@]}" -o "$tmp/out.json" -w '%{http_code}' -H 'Content-Type: application/json' \
  -H 'Transfer-Encoding: chunked' --data-binary "@$tmp/big.json" "$base/validate" || true)
check "a chunked body over 3 MiB is a 413" [ "$code" = 413 ]

review "$tmp/pod.json" uid-pod '{"group":"","version":"v1","kind":"Pod"}' CREATE \
  '{"metadata":{"name":"p"},"spec":{"containers":[{"name":"app","image":"x"},{"name":"gpu","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}'
code=$(post mutate "$tmp/pod.json")
patch=$(sed -n 's/.*"patch":"\([^"]*\)".*/\1/p' "$tmp/out.json" | base64 -d 2>/dev/null || true)
check "Pod mutation answers with a JSONPatch" \
  bash -c "[ $code = 200 ] && grep -q '\"patchType\":\"JSONPatch\"' '$tmp/out.json'"
check "  ... that defaults requests and records them" \
  bash -c "grep -q 'defaulted-requests' <<<'$patch' && grep -q '100m' <<<'$patch'"
check "  ... and marks the GPU Pod do-not-disrupt" \
  bash -c "grep -q 'do-not-disrupt' <<<'$patch'"
check "  ... with a warning for the container with no requests" \
  bash -c "grep -q '\"warnings\":\\[\"container app has no resource requests' '$tmp/out.json'"

code=$("${curl_tls[@]}" -o /dev/null -w '%{http_code}' "$base/nowhere")
check "an unknown path is a 404" [ "$code" = 404 ]
code=$("${curl_tls[@]}" -o /dev/null -w '%{http_code}' "$base/validate")
check "GET /validate is a 405" [ "$code" = 405 ]
check "/healthz and /readyz answer ok" \
  bash -c "[ \"\$(${curl_tls[*]} $base/healthz)\" = ok ] && [ \"\$(${curl_tls[*]} $base/readyz)\" = ok ]"
"${curl_tls[@]}" "$base/metrics" >"$tmp/metrics.txt"
check "/metrics counts requests by kind, operation and result" \
  grep -q 'karpenter_webhook_requests_total{endpoint="validate",kind="NodePool",operation="CREATE",result="denied"} 1' "$tmp/metrics.txt"
check "/metrics has latency histograms" \
  grep -q 'karpenter_webhook_request_duration_seconds_bucket{endpoint="mutate",kind="Pod",operation="CREATE",result="patched",le="+Inf"} 1' "$tmp/metrics.txt"
check "plain HTTP is not served" bash -c "! curl -s --max-time 5 http://127.0.0.1:$port/healthz >/dev/null 2>&1 || false"

# A slow client: connects and sends nothing; it is closed after the timeout.
exec 3<>"/dev/tcp/127.0.0.1/$port"
if timeout 15 cat <&3 >/dev/null 2>&1; then ok "an idle connection is closed by the server"; else fail "an idle connection was kept open"; fi
exec 3<&- 3>&-
code=$("${curl_tls[@]}" -o /dev/null -w '%{http_code}' "$base/healthz")
check "the server still answers after the slow client" [ "$code" = 200 ]

# Policy reload: drop requireLimits; the same NodePool is then allowed.
printf 'pods: {defaultRequests: {cpu: 100m}}\n' >"$tmp/policy.yaml.new"
mv "$tmp/policy.yaml.new" "$tmp/policy.yaml"
allowed_after=no
for _ in $(seq 1 50); do
  post validate "$tmp/np_nolimits.json" >/dev/null
  if grep -q '"allowed":true' "$tmp/out.json"; then allowed_after=yes; break; fi
  sleep 0.1
done
check "a changed policy file is reloaded" [ "$allowed_after" = yes ]
printf 'nodePools: {requireLimitz: []}\n' >"$tmp/policy.yaml"
wait_for_log 'policy not reloaded' "$log"
post validate "$tmp/np_nolimits.json" >/dev/null
check "a broken policy file keeps the previous policy in force" grep -q '"allowed":true' "$tmp/out.json"
check "  ... and says why in the log" grep -q 'policy not reloaded' "$log"

# Truncate-then-write: the moment the file is empty must not switch the
# rules off; nor may a FIFO at the path block the reload loop.
printf 'nodePools: {requireLimits: [cpu]}\n' >"$tmp/policy.yaml"
denied_again=no
for _ in $(seq 1 50); do
  post validate "$tmp/np_nolimits.json" >/dev/null
  if grep -q '"allowed":false' "$tmp/out.json"; then denied_again=yes; break; fi
  sleep 0.1
done
check "a policy with a rule again is reloaded" [ "$denied_again" = yes ]
: >"$tmp/policy.yaml"
wait_for_log 'sets no rule' "$log"
post validate "$tmp/np_nolimits.json" >/dev/null
check "an emptied policy file is refused: its rules stay in force" grep -q '"allowed":false' "$tmp/out.json"
check "  ... and the log says why" grep -q 'sets no rule' "$log"
printf '{}\n' >"$tmp/policy.yaml.new"
mv "$tmp/policy.yaml.new" "$tmp/policy.yaml"
sleep 0.6
post validate "$tmp/np_nolimits.json" >/dev/null
check "a {} policy file is refused too" grep -q '"allowed":false' "$tmp/out.json"
rm -f "$tmp/policy.yaml"
mkfifo "$tmp/policy.yaml"
wait_for_log 'not a regular file' "$log"
check "a FIFO at the policy path is refused" grep -q 'not a regular file' "$log"
rm -f "$tmp/policy.yaml"
printf 'pods: {defaultRequests: {cpu: 100m}}\n' >"$tmp/policy.yaml"
allowed_after=no
for _ in $(seq 1 50); do
  post validate "$tmp/np_nolimits.json" >/dev/null
  if grep -q '"allowed":true' "$tmp/out.json"; then allowed_after=yes; break; fi
  sleep 0.1
done
check "  ... without blocking: the next good policy is loaded" [ "$allowed_after" = yes ]

# Framing a proxy could read differently is refused (request smuggling).
peers=(python3 "$src/tests/integration/webhook_peers.py")
status=$("${peers[@]}" raw "$port" "$certs/ca.crt" 'POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n')
check "Content-Length with Transfer-Encoding is a 400 ($status)" [ "$(awk '{print $2}' <<<"$status")" = 400 ]
status=$("${peers[@]}" raw "$port" "$certs/ca.crt" 'POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x')
check "two different Content-Length headers are a 400 ($status)" [ "$(awk '{print $2}' <<<"$status")" = 400 ]

# TLS 1.2 offers ECDHE key exchange with AEAD ciphers only.
tls12() { # tls12 CIPHER -> 0 when the handshake succeeds
  openssl s_client -connect "127.0.0.1:$port" -servername localhost -tls1_2 -cipher "$1" \
    </dev/null >/dev/null 2>&1
}
check "TLS 1.2 with ECDHE and AES-GCM is served" tls12 ECDHE-ECDSA-AES128-GCM-SHA256
check "TLS 1.2 with a CBC cipher is refused" bash -c "! openssl s_client -connect 127.0.0.1:$port -servername localhost -tls1_2 -cipher ECDHE-ECDSA-AES128-SHA </dev/null >/dev/null 2>&1"
check "TLS 1.2 with a CBC-SHA256 cipher is refused" bash -c "! openssl s_client -connect 127.0.0.1:$port -servername localhost -tls1_2 -cipher ECDHE-ECDSA-AES256-SHA384 </dev/null >/dev/null 2>&1"

# Certificate rotation under load: a keep-alive request stream and a loop of
# fresh connections run while the files are replaced; none may fail.
fingerprint() {
  openssl s_client -connect "127.0.0.1:$port" -servername localhost </dev/null 2>/dev/null |
    openssl x509 -noout -fingerprint -sha256
}
old_fp=$(fingerprint)
urls="$tmp/urls.cfg"
: >"$urls"
for i in $(seq 1 1500); do
  printf 'url = "%s/validate"\noutput = "/dev/null"\n' "$base" >>"$urls"
done
"${curl_tls[@]}" -K "$urls" -H 'Content-Type: application/json' --data-binary "@$tmp/np_ok.json" \
  -w '%{http_code}\n' >"$tmp/stream.codes" 2>"$tmp/stream.err" &
stream_pid=$!
(
  end=$((SECONDS + 6))
  while [ $SECONDS -lt $end ]; do
    "${curl_tls[@]}" -o /dev/null -w '%{http_code}\n' -H 'Content-Type: application/json' \
      --data-binary "@$tmp/np_ok.json" "$base/validate" || echo "curl-failed"
  done
) >"$tmp/loop.codes" 2>&1 &
loop_pid=$!
sleep 1.5
"$src/certs/make-certs.sh" -o "$certs" --ip 127.0.0.1 --dns localhost --reuse-ca >/dev/null
new_file_fp=$(openssl x509 -in "$certs/tls.crt" -noout -fingerprint -sha256)
served_fp=""
for _ in $(seq 1 50); do
  served_fp=$(fingerprint)
  [ "$served_fp" = "$new_file_fp" ] && break
  sleep 0.1
done
wait "$loop_pid" || true
wait "$stream_pid" || true
loop_total=$(wc -l <"$tmp/loop.codes")
loop_bad=$(grep -vc '^200$' "$tmp/loop.codes" || true)
stream_total=$(wc -l <"$tmp/stream.codes")
stream_bad=$(grep -vc '^200$' "$tmp/stream.codes" || true)
echo "# rotation: $loop_total new-connection requests ($loop_bad failed), $stream_total keep-alive requests ($stream_bad failed)"
check "the certificate actually changed" [ "$old_fp" != "$new_file_fp" ]
check "the new certificate is served after rotation" [ "$served_fp" = "$new_file_fp" ]
check "no new-connection request failed during rotation" bash -c "[ $loop_bad -eq 0 ] && [ $loop_total -gt 0 ]"
check "no keep-alive request failed during rotation" bash -c "[ $stream_bad -eq 0 ] && [ $stream_total -eq 1500 ]"
check "the rotation was logged" grep -q 'serving a new certificate' "$log"
"${curl_tls[@]}" "$base/metrics" >"$tmp/metrics.txt"
check "the rotation was counted" grep -q 'karpenter_webhook_certificate_reloads_total{result="success"}' "$tmp/metrics.txt"

# A half-written rotation (a key that does not match) keeps the old certificate.
cp "$certs/tls.key" "$tmp/good.key"
openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out "$tmp/other.key"
cp "$tmp/other.key" "$certs/tls.key"
wait_for_log 'certificate not reloaded' "$log"
check "a mismatched key is not loaded" grep -q 'certificate not reloaded' "$log"
code=$("${curl_tls[@]}" -o /dev/null -w '%{http_code}' "$base/healthz")
still_fp=$(fingerprint)
check "  ... and the old certificate keeps serving" bash -c "[ $code = 200 ] && [ '$still_fp' = '$new_file_fp' ]"

stop_server "$main_pid" "$log"

# Slowloris: connections that never finish their TLS handshake or headers,
# each trickling a byte every 0.3 s (never idle), fill all 8 slots; each is
# cut at the 2 s request deadline, so a well-behaved client gets served.
cp "$tmp/good.key" "$certs/tls.key" # undo the mismatched key of the test above
sl_log="$tmp/slowloris.log"
start_server "$sl_log" --tls-cert-file "$certs/tls.crt" --tls-key-file "$certs/tls.key" \
  --max-connections 8 --request-timeout 2 --connection-timeout 3
sl_pid=$server_pid
result=$("${peers[@]}" slowloris "$port" "$certs/ca.crt" 8 9)
echo "# slowloris: $result"
check "a client is served while trickling peers hold every slot ($result)" [ "${result%% *}" = served=1 ]
check "  ... every trickling peer was cut at the deadline" [ "${result#* }" = "cut=8 of=8" ]
stop_server "$sl_pid" "$sl_log"

# Keep-alive connections that sent a big review keep no buffers while idle.
# (Allocator caches are turned off so that RSS follows what the server holds.)
ka_log="$tmp/keepalive.log"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0" \
  MALLOC_MMAP_THRESHOLD_=65536 start_server "$ka_log" --tls-cert-file "$certs/tls.crt" \
  --tls-key-file "$certs/tls.key" --connection-timeout 60 --request-timeout 60
ka_pid=$server_pid
rss() { awk '/^VmRSS/ {print $2}' "/proc/$ka_pid/status"; }
"${curl_tls[@]}" -o /dev/null "https://127.0.0.1:$port/healthz"
rss_before=$(rss)
coproc KA { "${peers[@]}" keepalive "$port" "$certs/ca.crt" 16 2500000; }
read -r ready <&"${KA[0]}" || ready=""
rss_after=$(rss)
exec {KA[1]}>&-
wait "$KA_PID" 2>/dev/null || true
grown=$(( (rss_after - rss_before) / 1024 ))
echo "# keep-alive: 16 idle connections after a 2.5 MB review each: RSS grew by $grown MiB"
check "16 keep-alive connections were served ($ready)" [ "$ready" = ready ]
check "  ... and hold no request buffers while idle (RSS +$grown MiB)" [ "$grown" -lt 16 ]
stop_server "$ka_pid" "$ka_log"

# --self-signed: the server makes its own CA for the Service names and
# writes it where --ca-bundle-file says; curl trusts exactly that CA.
ss_log="$tmp/self-signed.log"
start_server "$ss_log" --self-signed --service-name karpenter --namespace kube-system \
  --ca-bundle-file "$tmp/self-ca.crt" --cert-dir "$tmp"
ss_pid=$server_pid
code=$(curl -sS --max-time 10 --cacert "$tmp/self-ca.crt" -o /dev/null -w '%{http_code}' \
  --resolve "karpenter.kube-system.svc:$port:127.0.0.1" "https://karpenter.kube-system.svc:$port/healthz")
check "--self-signed serves a certificate for the Service name, trusted via the CA written" [ "$code" = 200 ]
check "--self-signed logs the caBundle" grep -q '"caBundle":"' "$ss_log"
stop_server "$ss_pid" "$ss_log"
pids=()

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
