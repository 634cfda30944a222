#!/usr/bin/env bash
# A throwaway Kubernetes control plane on loopback: etcd, kube-apiserver,
# kube-scheduler and kube-controller-manager of the release tests/e2e/k8s/go.mod pins
# (built by build-control-plane.sh), with no kubelet. Tests play the kubelet
# (they create Node objects and set their status) and run our programs against it.
#
#   cluster.sh up DIR                      start in the background; returns when ready
#   cluster.sh run DIR                     the same in the foreground; stops on SIGTERM
#                                          or Ctrl-C (the test library uses this)
#   cluster.sh down DIR [--clean]          stop everything; --clean also removes DIR
#   cluster.sh status DIR                  what runs; exit 0 only if all is up and ready
#   cluster.sh sa-kubeconfig DIR NAMESPACE SA OUT
#                                          a kubeconfig that authenticates as that
#                                          service account (least-privilege tests)
# With KP_E2E_AUDIT=1 the API server writes an audit log (DIR/logs/audit.log).
#
# Ready means: /readyz is ok, the scheduler and controller-manager answer /healthz,
# and the default service account exists (ServiceAccount admission refuses Pods in a
# namespace before it does). Then DIR/kubeconfig (admin) and
# DIR/env (source it: KUBECONFIG, KP_E2E_API_URL, ports, token file, PIDs, and PATH
# with the control plane's kubectl first) exist.
#
# Everything lives in DIR: pki/ (CA, serving cert, service-account keys, token file),
# etcd/ (data), logs/ (one log per component), pids (written as each process starts, so
# `down` also cleans up after a start that failed half way). Ports are picked free at
# start-up, so several clusters can run side by side.
#
# A supervisor process (`run`) is the parent of the four components and reaps them
# when they stop. Without it they would be orphans, and where PID 1 does not reap
# orphans (many containers) every stopped cluster would leave four zombies behind.
#
# Binaries (etcd included): KP_E2E_BIN_DIR, default the cache
# tests/e2e/build-control-plane.sh fills.
# KP_E2E_START_TIMEOUT (seconds, default 120) bounds each wait during start-up.
# KP_E2E_SERVICE_CIDR (default 10.96.0.0/16) is the Services' ClusterIP range: a test
# that needs the API server to reach a Service (a webhook by its Service, as installed)
# gives a loopback range, 127.X.Y.0/24, and listens on the ClusterIP itself, since
# nothing here (no kube-proxy) routes a ClusterIP anywhere.
set -euo pipefail

BIN_DIR="${KP_E2E_BIN_DIR:-$("$(dirname "$0")/build-control-plane.sh" --bin-dir)}"
readonly BIN_DIR
readonly START_TIMEOUT="${KP_E2E_START_TIMEOUT:-120}"
readonly SERVICE_CIDR="${KP_E2E_SERVICE_CIDR:-10.96.0.0/16}"
# Marks a directory as ours, so `down --clean` never removes a directory it did not make.
readonly MARKER=.kp-e2e-cluster
# Stop order: clients of the API server first, etcd last.
readonly STOP_ORDER=(kube-controller-manager kube-scheduler kube-apiserver etcd)
readonly COMPONENTS=(etcd kube-apiserver kube-scheduler kube-controller-manager)

SELF=$(realpath "$0")
readonly SELF
DIR=""
API_URL=""
ADMIN_TOKEN=""

say() { printf 'cluster: %s\n' "$*" >&2; }
die() {
  say "error: $*"
  exit 1
}
usage() {
  sed -n '6,14p' "$SELF" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# ---------------------------------------------------------------- processes

# The PID recorded for NAME in DIR/pids, or nothing.
pid_of() {
  [ -f "$DIR/pids" ] || return 0
  awk -v n="$1" '$1 == n { p = $2 } END { if (p) print p }' "$DIR/pids"
}

# Alive and still the program we started: a recycled PID must never be signalled.
# A zombie counts as gone: it has stopped, only its parent has not reaped it yet.
is_ours() {
  local name="$1" pid="$2" state cmdline args
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
  state=$(sed -E 's/^.*\) (.).*$/\1/' "/proc/$pid/stat" 2>/dev/null) || return 1
  [ "$state" != Z ] || return 1
  # No process substitution here or below: the supervisor's `wait -n` must only ever
  # see the components as children.
  cmdline=$(tr '\0' '\n' 2>/dev/null <"/proc/$pid/cmdline") || return 1
  mapfile -t args <<<"$cmdline"
  if [ "$name" = supervisor ]; then
    # bash .../cluster.sh run DIR
    [ "$(basename "${args[1]:-}")" = cluster.sh ] && [ "${args[2]:-}" = run ]
  else
    # Right after `setsid PROG &` the child is still this shell's fork, then
    # setsid, and only then PROG: all three are the component starting.
    case "$(basename "${args[0]}")" in
      "$name") return 0 ;;
      setsid) [ "$(basename "${args[1]:-}")" = "$name" ] ;;
      *) [ "$cmdline" = "$(tr '\0' '\n' 2>/dev/null <"/proc/$$/cmdline")" ] ;;
    esac
  fi
}

# Each component gets its own session and process group (setsid), so it can be
# signalled, with anything it spawns, apart from the caller's terminal. In a script,
# background jobs are not group leaders, so setsid execs in place: $! is the
# component's own PID, and it stays this shell's child.
start_component() {
  local name="$1"
  shift
  say "starting $name"
  setsid "$@" >"$DIR/logs/$name.log" 2>&1 </dev/null &
  printf '%s %s\n' "$name" "$!" >>"$DIR/pids"
}

# wait_gone NAME PID TENTHS_OF_SECONDS
wait_gone() {
  local name="$1" pid="$2" tries="$3"
  while [ "$tries" -gt 0 ] && is_ours "$name" "$pid"; do
    sleep 0.1
    tries=$((tries - 1))
  done
  ! is_ours "$name" "$pid"
}

stop_component() {
  local name="$1" pid
  pid=$(pid_of "$name")
  is_ours "$name" "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  if ! wait_gone "$name" "$pid" 100; then
    say "$name ($pid) ignored SIGTERM for 10s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
    wait_gone "$name" "$pid" 50 || say "warning: $name ($pid) still there"
  fi
  # Anything the component left in its own process group goes too. Only done when the
  # leader was verified ours just now: the id of a group whose leader died earlier may
  # have been recycled.
  if pgrep -g "$pid" >/dev/null 2>&1; then
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
}

stop_components() {
  local name
  for name in "${STOP_ORDER[@]}"; do stop_component "$name"; done
}

# ---------------------------------------------------------------- set-up pieces

# Ports in use by anything on this machine (any state), from /proc: no ss/netstat needed.
used_ports() {
  local f
  for f in /proc/net/tcp /proc/net/tcp6; do
    [ -r "$f" ] || continue
    awk 'NR > 1 { split($2, a, ":"); print a[2] }' "$f"
  done | while read -r hex; do printf '%d\n' "0x$hex"; done | sort -un
}

# N distinct free ports below the usual ephemeral range (32768+), so outgoing
# connections do not grab them between choosing and binding.
pick_ports() {
  local n="$1" used chosen=" " p
  used=" $(used_ports | tr '\n' ' ') "
  while [ "$n" -gt 0 ]; do
    p=$((20000 + RANDOM % 12000))
    case "$used$chosen" in *" $p "*) continue ;; esac
    chosen+="$p "
    n=$((n - 1))
  done
  printf '%s\n' "$chosen"
}

# A CA, a serving certificate valid for 127.0.0.1/localhost (API server, and the
# scheduler's and controller-manager's health ports), the service-account key pair and
# the static admin token.
make_pki() {
  local pki="$DIR/pki"
  mkdir -p "$pki"
  (
    cd "$pki"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
      -subj "/CN=kp-e2e-ca" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr \
      -subj "/CN=kube-apiserver" 2>/dev/null
    printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" \
      "extendedKeyUsage=serverAuth" "keyUsage=critical,digitalSignature,keyEncipherment" \
      >apiserver.ext
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -set_serial "0x$(openssl rand -hex 8)" \
      -days 365 -extfile apiserver.ext -out apiserver.crt 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    printf '%s,admin,admin,system:masters\n' "$(openssl rand -hex 16)" >tokens.csv
    chmod 600 ca.key apiserver.key sa.key tokens.csv
  ) || die "openssl failed making the certificates in $pki"
  ADMIN_TOKEN=$(cut -d, -f1 "$pki/tokens.csv")
}

# kubeconfig OUT USER TOKEN [NAMESPACE]; the CA is embedded so the file stands alone.
write_kubeconfig() {
  local out="$1" user="$2" token="$3" ns="${4:-default}" ca
  ca=$(base64 -w0 <"$DIR/pki/ca.crt")
  (
    umask 077
    cat >"$out" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kp-e2e
  cluster:
    server: $API_URL
    certificate-authority-data: $ca
users:
- name: $user
  user:
    token: $token
contexts:
- name: kp-e2e
  context:
    cluster: kp-e2e
    user: $user
    namespace: $ns
current-context: kp-e2e
EOF
  )
}

# Written last and renamed into place: its existence is what `up` waits for.
write_env() {
  local ports=("$@")
  {
    printf '# Written by cluster.sh once the cluster was ready; source it.\n'
    printf 'export %s=%q\n' \
      KUBECONFIG "$DIR/kubeconfig" \
      KP_E2E_DIR "$DIR" \
      KP_E2E_BIN_DIR "$BIN_DIR" \
      KP_E2E_API_URL "$API_URL" \
      KP_E2E_API_PORT "${ports[2]}" \
      KP_E2E_ETCD_URL "http://127.0.0.1:${ports[0]}" \
      KP_E2E_ETCD_PORT "${ports[0]}" \
      KP_E2E_ETCD_PEER_PORT "${ports[1]}" \
      KP_E2E_SCHEDULER_PORT "${ports[3]}" \
      KP_E2E_CONTROLLER_MANAGER_PORT "${ports[4]}" \
      KP_E2E_CA_FILE "$DIR/pki/ca.crt" \
      KP_E2E_TOKEN_FILE "$DIR/pki/tokens.csv" \
      KP_E2E_ADMIN_TOKEN "$ADMIN_TOKEN" \
      KP_E2E_SUPERVISOR_PID "$$" \
      KP_E2E_ETCD_PID "$(pid_of etcd)" \
      KP_E2E_APISERVER_PID "$(pid_of kube-apiserver)" \
      KP_E2E_SCHEDULER_PID "$(pid_of kube-scheduler)" \
      KP_E2E_CONTROLLER_MANAGER_PID "$(pid_of kube-controller-manager)"
    # kubectl of the same release as the server, first on PATH.
    printf 'export PATH=%q:"$PATH"\n' "$BIN_DIR"
  } >"$DIR/env.tmp"
  mv "$DIR/env.tmp" "$DIR/env"
}

# ---------------------------------------------------------------- waiting

api_get() {
  curl -fsS --max-time 5 --cacert "$DIR/pki/ca.crt" \
    -H "Authorization: Bearer $ADMIN_TOKEN" "$API_URL$1"
}

# api_post PATH JSON
api_post() {
  curl -fsS --max-time 5 --cacert "$DIR/pki/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" \
    -H 'Content-Type: application/json' --data-binary "$2" "$API_URL$1"
}

# wait_until DESC NAME CHECK...: polls CHECK until it succeeds; gives up at the
# timeout, or at once when process NAME has died (its log tail says why).
wait_until() {
  local desc="$1" name="$2" deadline pid
  shift 2
  deadline=$(($(date +%s) + START_TIMEOUT))
  pid=$(pid_of "$name")
  until "$@" >/dev/null 2>&1; do
    is_ours "$name" "$pid" || die "$name exited while waiting for $desc"
    [ "$(date +%s)" -lt "$deadline" ] || die "timed out after ${START_TIMEOUT}s waiting for $desc"
    sleep 0.5
  done
}

etcd_healthy() { [[ "$(curl -fsS --max-time 2 "$1/health")" == *'"health":"true"'* ]]; }
api_ready() { [ "$(api_get /readyz)" = ok ]; }
component_healthy() {
  [ "$(curl -fsS --max-time 2 --cacert "$DIR/pki/ca.crt" "https://127.0.0.1:$1/healthz")" = ok ]
}
# Pods are refused until their namespace's default service account exists.
default_sa_ready() {
  api_get /api/v1/namespaces/default/serviceaccounts/default >/dev/null
}

# ---------------------------------------------------------------- starting

require_binaries() {
  local c
  for c in etcd kube-apiserver kube-scheduler kube-controller-manager; do
    [ -x "$BIN_DIR/$c" ] || die "$BIN_DIR/$c missing: run tests/e2e/build-control-plane.sh first"
  done
  for c in openssl curl jq setsid pgrep; do
    command -v "$c" >/dev/null 2>&1 || die "$c not found (run as root: scripts/install-deps.sh e2e)"
  done
}

start_etcd() {
  local client="http://127.0.0.1:$1" peer="http://127.0.0.1:$2"
  start_component etcd "$BIN_DIR/etcd" --name kp-e2e --data-dir "$DIR/etcd" \
    --listen-client-urls "$client" --advertise-client-urls "$client" \
    --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" \
    --initial-cluster "kp-e2e=$peer" --initial-cluster-state new
  wait_until "etcd health" etcd etcd_healthy "$client"
}

# KP_E2E_AUDIT=1: every request's metadata (user, verb, resource, response code) goes to
# DIR/logs/audit.log, one JSON line each, so a test can prove what a client did.
audit_flags() {
  [ "${KP_E2E_AUDIT:-0}" = 1 ] || return 0
  printf '%s\n' 'apiVersion: audit.k8s.io/v1' 'kind: Policy' 'rules:' '- level: Metadata' >"$DIR/audit-policy.yaml"
  printf '%s\n' --audit-policy-file="$DIR/audit-policy.yaml" --audit-log-path="$DIR/logs/audit.log"
}

start_apiserver() {
  local pki="$DIR/pki" audit
  mapfile -t audit < <(audit_flags)
  start_component kube-apiserver "$BIN_DIR/kube-apiserver" "${audit[@]}" \
    --etcd-servers="http://127.0.0.1:$1" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$2" \
    --cert-dir="$pki" --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --client-ca-file="$pki/ca.crt" --token-auth-file="$pki/tokens.csv" \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc \
    --authorization-mode=Node,RBAC --service-cluster-ip-range="$SERVICE_CIDR" --allow-privileged \
    --endpoint-reconciler-type=none
  wait_until "kube-apiserver /readyz" kube-apiserver api_ready
}

# Flags both the scheduler and the controller-manager take: admin credentials, no
# leader election (one replica), health on a picked loopback port with our
# certificate.
common_component_flags() {
  local pki="$DIR/pki"
  printf '%s\n' --kubeconfig="$DIR/kubeconfig" --leader-elect=false \
    --bind-address=127.0.0.1 --secure-port="$1" \
    --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key"
}

start_scheduler() {
  local flags
  mapfile -t flags <<<"$(common_component_flags "$1")"
  # The defaults (50 and 20 requests/s) make a 1000-pod Deployment take a minute
  # to exist; clusters people run (EKS among them) allow more.
  start_component kube-scheduler "$BIN_DIR/kube-scheduler" "${flags[@]}" \
    --kube-api-qps=200 --kube-api-burst=400
}

# Without the node-lifecycle controller nothing taints, evicts or marks our
# kubelet-less Nodes unreachable. The token controller needs the SA private key and
# the root CA to fill service-account token Secrets a manifest creates (deploy/ does).
start_controller_manager() {
  local pki="$DIR/pki" flags
  mapfile -t flags <<<"$(common_component_flags "$1")"
  start_component kube-controller-manager "$BIN_DIR/kube-controller-manager" "${flags[@]}" \
    --controllers='*,-node-lifecycle-controller' --kube-api-qps=200 --kube-api-burst=400 \
    --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
    --use-service-account-credentials=false \
    --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key"
}

# Refuses a directory with a live cluster or someone else's files; clears what a
# previous cluster left (logs are overwritten component by component).
prepare_dir() {
  local name
  mkdir -p "$DIR"
  [ -e "$DIR/$MARKER" ] || [ -z "$(ls -A "$DIR")" ] ||
    die "$DIR is not empty and was not made by cluster.sh"
  for name in supervisor "${COMPONENTS[@]}"; do
    ! is_ours "$name" "$(pid_of "$name")" || die "$DIR already has a running $name; run: $SELF down $DIR"
  done
  rm -rf "$DIR/etcd" "$DIR/pki" "$DIR/pids" "$DIR/env" "$DIR/env.tmp" "$DIR/kubeconfig"
  mkdir -p "$DIR/logs"
  : >"$DIR/$MARKER"
}

# On any failure while starting: show why, then stop what did start.
start_failed() {
  local rc=$? name
  [ "$rc" -ne 0 ] || return 0
  for name in "${COMPONENTS[@]}"; do
    [ -s "$DIR/logs/$name.log" ] || continue
    say "last lines of $DIR/logs/$name.log:"
    tail -n 15 "$DIR/logs/$name.log" | sed 's/^/  | /' >&2
  done
  say "start failed; stopping what was started"
  stop_components
  wait
  exit "$rc"
}

start_cluster() {
  local start ports
  start=$(date +%s)
  read -r -a ports <<<"$(pick_ports 5)"
  API_URL="https://127.0.0.1:${ports[2]}"
  make_pki
  write_kubeconfig "$DIR/kubeconfig" admin "$ADMIN_TOKEN"
  start_etcd "${ports[0]}" "${ports[1]}"
  start_apiserver "${ports[0]}" "${ports[2]}"
  start_scheduler "${ports[3]}"
  start_controller_manager "${ports[4]}"
  wait_until "kube-scheduler /healthz" kube-scheduler component_healthy "${ports[3]}"
  wait_until "kube-controller-manager /healthz" kube-controller-manager component_healthy "${ports[4]}"
  wait_until "the default service account" kube-controller-manager default_sa_ready
  write_env "${ports[@]}"
  say "ready in $(($(date +%s) - start))s at $API_URL; source $DIR/env"
}

# Ends (and reaps) the components on SIGTERM/SIGINT, or when one of them exits on its
# own: a half cluster would only make tests fail in confusing ways.
supervise() {
  trap 'stop_components; wait; say "stopped"; exit 0' TERM INT
  wait -n || true
  say "a component exited on its own; stopping the rest (logs: $DIR/logs)"
  stop_components
  wait
  exit 1
}

# ---------------------------------------------------------------- commands

cmd_run() {
  require_binaries
  prepare_dir
  printf 'supervisor %s\n' "$$" >>"$DIR/pids"
  trap start_failed EXIT
  trap 'exit 143' TERM
  trap 'exit 130' INT
  start_cluster
  trap - EXIT
  supervise
}

# The supervisor, detached into its own session so it outlives this command and the
# terminal; its messages go to DIR/logs/cluster.log.
cmd_up() {
  local sup deadline
  require_binaries
  prepare_dir
  setsid "$SELF" run "$DIR" >"$DIR/logs/cluster.log" 2>&1 </dev/null &
  sup=$!
  # Each step inside has its own timeout; this one only guards against a hang.
  deadline=$(($(date +%s) + 6 * START_TIMEOUT))
  until [ -f "$DIR/env" ]; do
    if ! is_ours supervisor "$sup" || [ "$(date +%s)" -ge "$deadline" ]; then
      sed 's/^/  | /' "$DIR/logs/cluster.log" >&2
      cmd_down
      wait "$sup" || true
      die "the cluster did not start"
    fi
    sleep 0.2
  done
  grep '^cluster: ready' "$DIR/logs/cluster.log" >&2 || true
}

# The supervisor stops the components in order and reaps them; the second pass covers
# a supervisor that was killed outright or a start that never got that far.
cmd_down() {
  local clean="${1:-}" sup
  [ -z "$clean" ] || [ "$clean" = --clean ] || usage
  [ -d "$DIR" ] || return 0
  sup=$(pid_of supervisor)
  if is_ours supervisor "$sup"; then
    kill -TERM "$sup" 2>/dev/null || true
    wait_gone supervisor "$sup" 600 || say "warning: supervisor ($sup) did not stop"
  fi
  stop_components
  if [ -n "$clean" ]; then
    [ -e "$DIR/$MARKER" ] || die "$DIR was not made by cluster.sh; not removing it"
    rm -rf "$DIR"
  fi
  say "down: $DIR"
}

cmd_status() {
  local name pid all_up=0
  for name in supervisor "${COMPONENTS[@]}"; do
    pid=$(pid_of "$name")
    if is_ours "$name" "$pid"; then
      printf '%-24s running (pid %s)\n' "$name" "$pid"
    else
      printf '%-24s stopped\n' "$name"
      all_up=1
    fi
  done
  if [ -f "$DIR/env" ] && load_env && api_ready 2>/dev/null; then
    printf '%-24s ready at %s\n' api "$API_URL"
  else
    printf '%-24s not ready\n' api
    all_up=1
  fi
  return "$all_up"
}

load_env() {
  [ -f "$DIR/env" ] || die "$DIR/env missing: is the cluster up? ($SELF up $DIR)"
  API_URL=$(sed -n 's/^export KP_E2E_API_URL=//p' "$DIR/env")
  ADMIN_TOKEN=$(cut -d, -f1 "$DIR/pki/tokens.csv")
}

# A token for service account NS/SA from the TokenRequest API, as the kubelet gets
# one for a Pod: bound to the account, expiring after a day (longer than any test).
sa_token() {
  api_post "/api/v1/namespaces/$1/serviceaccounts/$2/token" \
    '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":86400}}' |
    jq -er '.status.token'
}

cmd_sa_kubeconfig() {
  [ $# -eq 3 ] || usage
  local ns="$1" sa="$2" out="$3" token=""
  load_env
  api_get "/api/v1/namespaces/$ns/serviceaccounts/$sa" >/dev/null 2>&1 ||
    die "service account $ns/$sa does not exist (create it first)"
  token=$(sa_token "$ns" "$sa") || die "no token for service account $ns/$sa"
  write_kubeconfig "$out" "system:serviceaccount:$ns:$sa" "$token" "$ns"
  # Proof the API server accepts it: discovery is open to every authenticated user.
  curl -fsS --max-time 5 --cacert "$DIR/pki/ca.crt" -H "Authorization: Bearer $token" \
    "$API_URL/api" >/dev/null || die "the API server rejects the token of $ns/$sa"
}

main() {
  [ $# -ge 2 ] || usage
  local cmd="$1"
  DIR=$(realpath -m "$2")
  shift 2
  case "$cmd" in
    up) [ $# -eq 0 ] || usage; cmd_up ;;
    run) [ $# -eq 0 ] || usage; cmd_run ;;
    down) [ $# -le 1 ] || usage; cmd_down "$@" ;;
    status) [ $# -eq 0 ] || usage; cmd_status ;;
    sa-kubeconfig) cmd_sa_kubeconfig "$@" ;;
    *) usage ;;
  esac
}

main "$@"
