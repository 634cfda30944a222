# shellcheck shell=bash
# Helpers for tests/e2e/test_*.sh. A test sources this file, calls e2e_setup, then
# asserts. Whatever happens (assertion failure, unexpected error, SIGTERM from the
# runner's timeout), the EXIT trap runs the test's registered clean-ups, stops the
# cluster it started and prints one summary line:
#     <test name>: N passed, M failed
# The exit status is 0 only if nothing failed.
#
# Assertions:  pass MSG · fail MSG (fatal) · check MSG CMD... (goes on after a failure)
#              · assert MSG CMD... (fatal) · wait_for CMD TIMEOUT [INTERVAL]
# Cluster:     k ARGS (kubectl) · api METHOD PATH [BODY] (curl, admin token)
#              · e2e_namespace NAME · e2e_cleanup CMD... · e2e_sa_kubeconfig NS SA OUT
#              · e2e_nodepool NAME [LIMITS] [REQUIREMENT] (an EC2NodeClass NodePool manifest)
# Programs:    e2e_program NAME · e2e_controller · e2e_start_controller NAME FLAGS...
#              · e2e_stop_pid PID [SIG] · count KIND [ARGS...] · e2e_karpenter NODEPOOL
#              · e2e_free_port
#
# Under pipefail, `kubectl ... | grep -q X` fails at random: grep exits at the first
# match and kubectl dies of SIGPIPE on its next write. Capture first:
#     grep -q X <<<"$(k get ...)"
#
# KP_E2E_ENV=path/to/env runs the test against a cluster someone already started with
# `cluster.sh up` (quick iteration); the cluster is then left running.
# KP_E2E_WORK_DIR is where per-test cluster directories go (run.sh sets it).
# kubectl is the one built with the control plane (the cluster's env file puts its
# bin directory first on PATH), so client and server are the same release.

E2E_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_TEST_NAME=$(basename "$0" .sh)
E2E_PASSED=0
E2E_FAILED=0
# The test's own stdout and stderr, for e2e_finish.
exec {E2E_STDOUT}>&1 {E2E_STDERR}>&2
E2E_CLUSTER_DIR=""
E2E_OWN_CLUSTER=0
E2E_SUPERVISOR_PID=""
E2E_CLEANUPS=()
# The kustomization the tests install karpenter-c from (RBAC, CRDs; the webhook
# configurations pointed at loopback). One place, so a restructured deploy/ is one edit.
E2E_KUSTOMIZATION="$E2E_LIB_DIR/../../deploy/overlays/e2e"

# ERR and the traps must reach into functions and subshells.
set -Eeuo pipefail

e2e_say() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# ---------------------------------------------------------------- assertions

pass() {
  E2E_PASSED=$((E2E_PASSED + 1))
  e2e_say "ok    $*"
}

# Fatal: later steps of a test build on earlier ones, so the test stops here.
fail() {
  E2E_FAILED=$((E2E_FAILED + 1))
  e2e_say "FAIL  $*"
  exit 1
}

# check MSG CMD...: records the outcome and goes on.
check() {
  local msg="$1"
  shift
  if "$@"; then
    pass "$msg"
  else
    E2E_FAILED=$((E2E_FAILED + 1))
    e2e_say "FAIL  $msg"
  fi
}

# assert MSG CMD...: like check, but stops the test on failure.
assert() {
  local msg="$1"
  shift
  if "$@"; then pass "$msg"; else fail "$msg"; fi
}

# wait_for CMD TIMEOUT [INTERVAL]: CMD (a shell string, so pipelines and negation
# work) until it succeeds; returns 1 after TIMEOUT seconds. The caller decides whether
# that is a failure: `wait_for "..." 30 || fail "..."`.
wait_for() {
  local cmd="$1" timeout="${2:-60}" interval="${3:-1}" deadline
  deadline=$((SECONDS + timeout))
  until eval "$cmd" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep "$interval"
  done
}

# check_soon MSG TIMEOUT CMD: like check, for an effect that follows the one the
# test waited on by an API write or two (the second of a pair of events): CMD (a
# shell string, as for wait_for) may take up to TIMEOUT seconds to succeed.
check_soon() {
  if wait_for "$3" "$2"; then
    pass "$1"
  else
    E2E_FAILED=$((E2E_FAILED + 1))
    e2e_say "FAIL  $1 (not within $2s)"
  fi
}

# ---------------------------------------------------------------- cluster access

# kubectl with a bound on every request, so a wedged server fails a test instead of
# hanging it until the runner's timeout.
k() { kubectl --request-timeout=30s "$@"; }

# api METHOD PATH [BODY [CONTENT-TYPE]]: raw API call as admin; prints the body,
# fails on HTTP errors. For what kubectl does not express (raw bodies, headers).
api() {
  local method="$1" path="$2" body="${3:-}" type="${4:-application/json}"
  local args=(-fsS --max-time 30 --cacert "$KP_E2E_CA_FILE"
    -H "Authorization: Bearer $KP_E2E_ADMIN_TOKEN" -X "$method")
  [ -z "$body" ] || args+=(-H "Content-Type: $type" --data-binary "$body")
  curl "${args[@]}" "$KP_E2E_API_URL$path"
}

# e2e_cleanup CMD...: run CMD at exit (last registered runs first).
e2e_cleanup() {
  local quoted
  printf -v quoted '%q ' "$@"
  E2E_CLEANUPS+=("$quoted")
}

# e2e_program NAME: the path of BUILD/tests/e2e_NAME, the program built from
# tests/e2e/programs/NAME.c (BUILD is $KP_BUILD_DIR, default the repository's build/).
e2e_program() {
  local build="${KP_BUILD_DIR:-$E2E_LIB_DIR/../../build}" path
  path="$build/tests/e2e_$1"
  [ -x "$path" ] || fail "$path is missing (make build, or set KP_BUILD_DIR)"
  printf '%s\n' "$(cd "$(dirname "$path")" && pwd)/$(basename "$path")"
}

# e2e_controller: the path of the karpenter-controller binary of that build.
e2e_controller() {
  local build="${KP_BUILD_DIR:-$E2E_LIB_DIR/../../build}"
  [ -x "$build/karpenter-controller" ] || fail "$build/karpenter-controller is missing (make build)"
  printf '%s\n' "$(cd "$build" && pwd)/karpenter-controller"
}

# e2e_start_controller NAME [FLAGS...]: karpenter-controller run against this cluster in
# the background, logging to $KP_E2E_DIR/NAME.log, stopped (SIGTERM, then SIGKILL) at
# exit; as the service account kube-system/karpenter after e2e_karpenter_rbac, its Lease
# in kube-system. Sets E2E_CONTROLLER_PID. Without --metrics-port/--health-probe-port in
# FLAGS both are off, so several replicas can run side by side; without --cloud-provider
# it is kwok (the provider must be named: there is no default).
e2e_start_controller() {
  local name="$1" bin log
  shift
  bin=$(e2e_controller)
  log="$KP_E2E_DIR/$name.log"
  local flags=("$@")
  [[ " ${flags[*]} " == *" --metrics-port "* ]] || flags+=(--metrics-port 0)
  [[ " ${flags[*]} " == *" --health-probe-port "* ]] || flags+=(--health-probe-port 0)
  [[ " ${flags[*]} " == *" --leader-election-namespace "* ]] || flags+=(--leader-election-namespace kube-system)
  [[ " ${flags[*]} " == *" --cloud-provider "* ]] || flags+=(--cloud-provider kwok)
  "$bin" run --kubeconfig "${E2E_CONTROLLER_KUBECONFIG:-$KUBECONFIG}" "${flags[@]}" >>"$log" 2>&1 &
  E2E_CONTROLLER_PID=$!
  e2e_cleanup e2e_stop_pid "$E2E_CONTROLLER_PID"
  e2e_say "controller $name started (pid $E2E_CONTROLLER_PID, log $log)"
}

# e2e_deploy_kinds KIND...: the objects of those kinds that E2E_KUSTOMIZATION renders.
e2e_deploy_kinds() {
  kubectl kustomize "$E2E_KUSTOMIZATION" | python3 -c '
import sys, yaml
keep = set(sys.argv[1:])
docs = [d for d in yaml.safe_load_all(sys.stdin) if d and d.get("kind") in keep]
yaml.safe_dump_all(docs, sys.stdout)' "$@"
}

# e2e_karpenter_rbac: the CRDs and the RBAC of deploy/ with the kwok component, and the
# KWOKNodeClass `default` of examples/kwok (the service account kube-system/karpenter, its roles and
# bindings; not the webhook configurations or the Deployment), and
# E2E_CONTROLLER_KUBECONFIG authenticating as that account, so every controller
# scenario proves the role is enough. KP_E2E_CONTROLLER_ADMIN=1 runs the controller as
# admin instead.
E2E_CONTROLLER_KUBECONFIG=""
e2e_karpenter_rbac() {
  e2e_deploy_kinds CustomResourceDefinition | k apply -f - >/dev/null
  wait_for "k get nodepools && k get kwoknodeclasses" 30 || fail "the CRDs are not served"
  e2e_deploy_kinds ServiceAccount ClusterRole ClusterRoleBinding Role RoleBinding | k apply -f - >/dev/null
  k apply -f "$E2E_LIB_DIR/../../examples/kwok/kwoknodeclass.yaml" >/dev/null
  [ "${KP_E2E_CONTROLLER_ADMIN:-0}" = 1 ] && return 0
  E2E_CONTROLLER_KUBECONFIG="$KP_E2E_DIR/controller-sa.kubeconfig"
  wait_for "e2e_sa_kubeconfig kube-system karpenter '$E2E_CONTROLLER_KUBECONFIG'" 60 ||
    fail "no token for kube-system/karpenter"
}

# e2e_karpenter NODEPOOL_FILE: e2e_karpenter_rbac and a NodePool, ready for a controller.
e2e_karpenter() {
  e2e_karpenter_rbac
  k apply -f "$1" >/dev/null
}

# e2e_nodepool NAME [LIMITS_YAML] [EXTRA_REQUIREMENT_YAML]: a NodePool manifest for an
# EC2NodeClass, on-demand, limited to 100 CPUs unless LIMITS_YAML says otherwise.
e2e_nodepool() {
  local limits='limits: {cpu: "100"}'
  [ -z "${2:-}" ] || limits=$2
  cat <<EOF
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: $1}
spec:
  $limits
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      ${3:-}
EOF
}

# e2e_free_port: a TCP port nothing listens on now.
e2e_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# e2e_stop_pid PID [SIGNAL]: stop a background process and reap it.
e2e_stop_pid() {
  local pid="$1" sig="${2:-TERM}" i
  kill -0 "$pid" 2>/dev/null || return 0
  kill -"$sig" "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# count KIND [ARGS...]: how many objects kubectl lists.
count() { k get "$@" -o name 2>/dev/null | grep -c . || true; }

# A namespace removed at exit. Returns once its default service account exists:
# before that, ServiceAccount admission refuses pods in it.
e2e_namespace() {
  local ns="$1"
  k create namespace "$ns" >/dev/null
  e2e_cleanup k delete namespace "$ns" --wait=false --ignore-not-found
  wait_for "k -n '$ns' get serviceaccount default" 60 ||
    fail "namespace $ns: no default service account after 60s"
}

# A kubeconfig that authenticates as service account NS/SA (least-privilege runs).
e2e_sa_kubeconfig() {
  "$E2E_LIB_DIR/cluster.sh" sa-kubeconfig "$KP_E2E_DIR" "$@"
}

# ---------------------------------------------------------------- life cycle

e2e_on_error() {
  e2e_say "error: ${BASH_SOURCE[1]:-?}:$1: '$2' exited with status $3"
}

# What a failed test's reader needs first: where the pods went and why.
e2e_dump_state() {
  e2e_say "cluster state at failure:"
  k get nodes,pods -A -o wide 2>&1 | sed 's/^/    /' || true
  k get events -A --sort-by=.lastTimestamp 2>&1 | tail -n 30 | sed 's/^/    /' || true
  k get nodepools,nodeclaims 2>/dev/null | sed 's/^/    /' || true
  local log
  for log in "${KP_E2E_DIR:-/nonexistent}"/controller*.log; do
    [ -f "$log" ] || continue
    e2e_say "last lines of $log:"
    tail -n 25 "$log" | sed 's/^/    /'
  done
}

e2e_run_cleanups() {
  local i
  for ((i = ${#E2E_CLEANUPS[@]} - 1; i >= 0; i--)); do
    eval "${E2E_CLEANUPS[i]}" >/dev/null 2>&1 || e2e_say "warning: clean-up failed: ${E2E_CLEANUPS[i]}"
  done
}

# Logs stay when something failed, so the reason can be read afterwards. The
# supervisor is this shell's child: waiting for it reaps it.
e2e_stop_cluster() {
  [ "$E2E_OWN_CLUSTER" = 1 ] || return 0
  if [ "$E2E_FAILED" -eq 0 ]; then
    "$E2E_LIB_DIR/cluster.sh" down "$E2E_CLUSTER_DIR" --clean 2>/dev/null
  else
    "$E2E_LIB_DIR/cluster.sh" down "$E2E_CLUSTER_DIR" 2>/dev/null
    e2e_say "component logs kept in $E2E_CLUSTER_DIR/logs"
  fi
  [ -z "$E2E_SUPERVISOR_PID" ] || wait "$E2E_SUPERVISOR_PID" 2>/dev/null
}

e2e_finish() {
  local rc=$?
  trap - ERR
  set +e
  # Exiting from inside a function called with a redirection (`k ... >/dev/null`)
  # leaves that redirection on this shell: the summary must still reach the log.
  exec 1>&"$E2E_STDOUT" 2>&"$E2E_STDERR"
  if [ "$rc" -ne 0 ] && [ "$E2E_FAILED" -eq 0 ]; then
    E2E_FAILED=1
    e2e_say "FAIL  test exited with status $rc"
  fi
  [ "$E2E_FAILED" -eq 0 ] || [ -z "${KUBECONFIG:-}" ] || e2e_dump_state
  e2e_run_cleanups
  e2e_stop_cluster
  echo "$E2E_TEST_NAME: $E2E_PASSED passed, $E2E_FAILED failed"
  [ "$E2E_FAILED" -eq 0 ] || exit 1
  exit 0
}

# Starts a fresh cluster for this test (or joins KP_E2E_ENV's) and arms the teardown.
e2e_setup() {
  trap e2e_finish EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  trap 'e2e_on_error "$LINENO" "$BASH_COMMAND" "$?"' ERR
  if [ -n "${KP_E2E_ENV:-}" ]; then
    # shellcheck source=/dev/null
    . "$KP_E2E_ENV"
      return 0
  fi
  local work="${KP_E2E_WORK_DIR:-${TMPDIR:-/tmp}}" env
  E2E_CLUSTER_DIR=$(mktemp -d "$work/$E2E_TEST_NAME.XXXXXX")
  E2E_OWN_CLUSTER=1
  env="$E2E_CLUSTER_DIR/env"
  # `run`, not `up`: the cluster's supervisor stays this shell's child, so it is
  # reaped here and shares the test's process group (a runner's timeout or Ctrl-C
  # reaches it too). Its own steps time out; 900 s only guards against a hang.
  "$E2E_LIB_DIR/cluster.sh" run "$E2E_CLUSTER_DIR" &
  E2E_SUPERVISOR_PID=$!
  wait_for "[ -f '$env' ] || ! kill -0 $E2E_SUPERVISOR_PID" 900 0.2 || true
  [ -f "$env" ] || fail "the cluster did not start"
  # shellcheck source=/dev/null
  . "$env"
}
