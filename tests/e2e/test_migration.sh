#!/usr/bin/env bash
# docs/migrating.md, step by step, on a cluster Karpenter ran, with moto as the
# AWS account. Karpenter's leftovers: running instances tagged as Karpenter v1 tags
# them and the instance profile it made; an EC2NodeClass with its finalizer, hash
# annotations (hash version v4) and last status (Ready); a NodePool with its hash
# (v3) and status; NodeClaims of those instances and their Ready Nodes, each with a
# Running pod; Karpenter's leader-election Lease, last renewed by a Pod that is gone.
# Since Karpenter's controller left, the class's subnet selector was edited and now
# matches nothing.
#
# karpenter-c is then installed the documented way (a user overlay of deploy/ with
# the settings; `kubectl apply -k`; the controller as the service account
# `karpenter` with the Deployment's environment) and over 2 s garbage-collection
# and disruption passes:
#   - the class turns not Ready, and so does the NodePool (NodeClassReady, Ready),
#     and stays so while the selector matches nothing;
#   - fixing the selector makes the class Ready, then the NodePool;
#   - throughout: no NodeClaim or Node created or deleted, no instance launched or
#     terminated, no node tainted karpenter.sh/disrupted, no node eligible for drift;
#     the claims are adopted (karpenter-c's hash versions stamped on them) and the
#     Lease is taken over.
# Skipped: the webhooks (step 4's last command): the e2e cluster has no kubelet to run
# the Deployment's Pods, which serve them; test_webhook_registration and test_deploy
# cover them. Karpenter's own CRDs are stood in for by ours (same groups, kinds,
# versions and CEL rules).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
readonly ROOT
readonly DATA="$HERE/data"
# shellcheck source=data/karpenter-objects.sh
. "$DATA/karpenter-objects.sh"
readonly NS=e2e-migration
readonly POOL=default CLASS=default
readonly CLAIMS=(default-7xk2p default-m9q4z)
readonly NODES=(ip-10-0-1-17.ec2.internal ip-10-0-2-33.ec2.internal)
readonly TYPES=(m5.large c5.large)
readonly ZONES=(us-east-1a us-east-1b)
IMAGE=""
SG=""
declare -A SUBNET=()
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=us-east-1

jp() { k get "$1" "$2" -o jsonpath="$3" 2>/dev/null || true; }
condition() { jp "$1" "$2" "{.status.conditions[?(@.type==\"$3\")].status}"; }
claim_names() { k get nodeclaims -o jsonpath='{.items[*].metadata.name}'; }
node_names() { k get nodes -o jsonpath='{.items[*].metadata.name}'; }
deleting() { k get nodeclaims,nodes -o jsonpath='{range .items[*]}{.metadata.deletionTimestamp}{end}'; }
disrupted_taints() { k get nodes -o jsonpath='{.items[*].spec.taints[*].key}' | tr ' ' '\n' | grep -c karpenter.sh/disrupted || true; }

# ------------------------------------------------------- what Karpenter left

karpenter_account() {
  local kv
  ko_moto_start
  for kv in $KO_ACCOUNT; do
    case "$kv" in
    image=*) IMAGE=${kv#image=} ;;
    sg=*) SG=${kv#sg=} ;;
    subnet-*) SUBNET[${kv%%=*}]=${kv#*=} ;;
    esac
  done
}

# Karpenter's EC2NodeClass, with the status its controller last wrote (Ready, the
# subnets it found) and the selector edited since to match nothing.
karpenter_nodeclass() {
  local long_ago uid
  long_ago=$(ko_time '-1 hour')
  k apply -f - >/dev/null <<EOF
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: $CLASS
  annotations:
    karpenter.k8s.aws/ec2nodeclass-hash: "$KO_NODECLASS_HASH"
    karpenter.k8s.aws/ec2nodeclass-hash-version: $KO_NODECLASS_HASH_VERSION
  finalizers: [karpenter.k8s.aws/termination]
spec:
  role: KarpenterNodeRole-e2e
  amiFamily: AL2023
  amiSelectorTerms: [{id: $IMAGE}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: e2e-old}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: e2e}}]
EOF
  uid=$(ko_uid ec2nodeclass $CLASS)
  # Karpenter's instance profile for the class: <cluster>_<hash>, under its path.
  moto profile e2e_13377234623427617089 KarpenterNodeRole-e2e "/karpenter/us-east-1/e2e/$uid/"
  ko_status ec2nodeclasses $CLASS "{\"instanceProfile\":\"e2e_13377234623427617089\",
    \"subnets\":[{\"id\":\"${SUBNET[subnet-us-east-1a]}\",\"zone\":\"us-east-1a\"},{\"id\":\"${SUBNET[subnet-us-east-1b]}\",\"zone\":\"us-east-1b\"}],
    \"securityGroups\":[{\"id\":\"$SG\",\"name\":\"nodes\"}],
    \"amis\":[{\"id\":\"$IMAGE\",\"name\":\"al2023\",\"requirements\":[{\"key\":\"kubernetes.io/arch\",\"operator\":\"In\",\"values\":[\"amd64\"]}]}],
    \"conditions\":[$(ko_condition AMIsReady "$long_ago"),$(ko_condition SubnetsReady "$long_ago"),
    $(ko_condition SecurityGroupsReady "$long_ago"),$(ko_condition InstanceProfileReady "$long_ago"),
    $(ko_condition ValidationSucceeded "$long_ago"),$(ko_condition Ready "$long_ago")]}"
}

karpenter_left() {
  local i id pid
  # Karpenter's CRDs: ours stand in (same groups, kinds and versions).
  k apply -k "$ROOT/deploy/crds" >/dev/null
  wait_for "k get nodepools && k get ec2nodeclasses" 30 || fail "the CRDs are not served"
  karpenter_nodeclass
  ko_nodepool $POOL karpenter.k8s.aws EC2NodeClass $CLASS 0s
  for i in 0 1; do
    id=$(moto launch e2e $CLASS $POOL "${CLAIMS[i]}" "${TYPES[i]}" "${SUBNET[subnet-${ZONES[i]}]}" "$SG" "$IMAGE" \
      e2e_13377234623427617089)
    pid="aws:///${ZONES[i]}/$id"
    ko_nodeclaim "${CLAIMS[i]}" $POOL karpenter.k8s.aws EC2NodeClass $CLASS "$pid" "${NODES[i]}" "${TYPES[i]}" \
      "${ZONES[i]}" "$IMAGE"
    ko_node "${NODES[i]}" "$pid" $POOL "${CLAIMS[i]}" "${TYPES[i]}" "${ZONES[i]}" karpenter.k8s.aws EC2NodeClass $CLASS
    ko_pod $NS "app-$i" "${NODES[i]}" 1
  done
  # The Lease of Karpenter's last leader, a Pod long gone.
  k apply -f - >/dev/null <<EOF
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: karpenter-leader-election, namespace: kube-system}
spec:
  holderIdentity: karpenter-6f8b9c7d5-x2x7q_3c1f0e2a-5b7d-4c1e-9a8f-2d6e4b1c0a9f
  leaseDurationSeconds: 15
  acquireTime: "$(ko_time '-2 hours' | sed 's/Z$/.000000Z/')"
  renewTime: "$(ko_time '-2 minutes' | sed 's/Z$/.000000Z/')"
EOF
  moto instances | sort >"$KP_E2E_DIR/instances.before"
  check "moto runs Karpenter's two instances ($(paste -sd' ' "$KP_E2E_DIR/instances.before"))" \
    test "$(grep -c ' running ' "$KP_E2E_DIR/instances.before")" = 2
  check "the cluster holds their NodeClaims and Nodes ($(claim_names); $(node_names))" \
    test "$(claim_names) | $(node_names)" = "${CLAIMS[*]} | ${NODES[*]}"
}

# ------------------------------------------------------- installing ours

# docs/migrating.md step 2: a user overlay of deploy/ with the settings (here also
# the short passes of this test and moto's endpoint); no replicas, as no kubelet runs
# Pods here.
write_overlay() {
  local dir="$KP_E2E_DIR/my-overlay" deploy
  mkdir -p "$dir"
  # kustomize takes bases by relative path only.
  deploy=$(realpath --relative-to="$dir" "$ROOT/deploy")
  cat >"$dir/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $deploy
configMapGenerator:
- name: karpenter-c-settings
  namespace: kube-system
  behavior: merge
  literals:
  - CLUSTER_NAME=e2e
  - AWS_REGION=us-east-1
  - AWS_ENDPOINT_URL=$MOTO_URL
  - GARBAGE_COLLECTION_INTERVAL=2s
  - DISRUPTION_POLL_INTERVAL=2s
  - CONSOLIDATION_VALIDATION_PERIOD=2s
patches:
- target: {kind: Deployment, name: karpenter-c}
  patch: |-
    - {op: replace, path: /spec/replicas, value: 0}
EOF
  printf '%s\n' "$dir"
}

# The environment the Deployment gives the controller container: its ConfigMap
# (envFrom) and its own variables, as KEY=VALUE lines.
deployment_env() {
  kubectl kustomize "$1" | /usr/bin/python3 -c '
import sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
dep = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "karpenter-c"][0]
pod = dep["spec"]["template"]["spec"]
ctr = [c for c in pod["containers"] if c["name"] == "controller"][0]
assert pod["serviceAccountName"] == "karpenter", pod["serviceAccountName"]
assert ctr["args"] == ["run"], ctr["args"]
for src in ctr.get("envFrom", []):
    cm = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == src["configMapRef"]["name"]][0]
    for k, v in cm["data"].items():
        print("%s=%s" % (k, v))
for e in ctr.get("env", []):
    if "value" in e:
        print("%s=%s" % (e["name"], e["value"]))
'
}

CONTROLLER_PID=""
CONTROLLER_LOG=""
CONTROLLER_START=0
METRICS=""

# docs/migrating.md steps 3-4.
install_ours() {
  local overlay env=() kubeconfig line
  # Step 3: Karpenter's controller is gone (nothing of it runs here); its CRDs,
  # objects and finalizers stay. Its Helm release had no webhook configuration left.
  check "no webhook configuration of Karpenter's is left" \
    test -z "$(k get validatingwebhookconfigurations,mutatingwebhookconfigurations -o name | grep karpenter || true)"
  overlay=$(write_overlay)
  k apply -k "$overlay" >/dev/null
  pass "kubectl apply -k my-overlay/ (CRDs in place, RBAC, service account karpenter, settings, Deployment)"
  check "the CRDs replaced Karpenter's in place: every object is still there" \
    test "$(claim_names) | $(node_names) | $(jp ec2nodeclass $CLASS '{.metadata.name}') | $(jp nodepool $POOL '{.metadata.name}')" = \
    "${CLAIMS[*]} | ${NODES[*]} | $CLASS | $POOL"
  kubeconfig="$KP_E2E_DIR/karpenter-sa.kubeconfig"
  wait_for "e2e_sa_kubeconfig kube-system karpenter '$kubeconfig'" 60 || fail "no token for kube-system/karpenter"
  while IFS= read -r line; do env+=("$line"); done < <(deployment_env "$overlay")
  METRICS=$(e2e_free_port)
  # The Pod's downward-API values, and free ports instead of 8080/8081 (this machine
  # runs other tests); AWS credentials from the environment, as IRSA provides them.
  env+=(SYSTEM_NAMESPACE=kube-system POD_NAME=karpenter-c-5d8f7b9c4-abcde METRICS_PORT="$METRICS"
    HEALTH_PROBE_PORT="$(e2e_free_port)" CPU_REQUESTS=200
    # moto performs a CreateFleet dry run as a real launch: the checks are off.
    DISABLE_DRY_RUN=true)
  CONTROLLER_LOG="$KP_E2E_DIR/controller.log"
  touch "$CONTROLLER_LOG"
  watch_state
  env "${env[@]}" "$(e2e_controller)" run --kubeconfig "$kubeconfig" >>"$CONTROLLER_LOG" 2>&1 &
  CONTROLLER_PID=$!
  e2e_cleanup e2e_stop_pid "$CONTROLLER_PID"
  e2e_say "controller started as the Deployment would (pid $CONTROLLER_PID, log $CONTROLLER_LOG): ${env[*]}"
  wait_for '[ "$(k -n kube-system get lease karpenter-leader-election -o jsonpath="{.spec.holderIdentity}")" = karpenter-c-5d8f7b9c4-abcde ]' 60 ||
    fail "Karpenter's Lease was not taken over: $(k -n kube-system get lease karpenter-leader-election -o yaml)"
  pass "it took over Karpenter's Lease (kube-system/karpenter-leader-election) once it expired"
  # Its controllers act from here on.
  CONTROLLER_START=$SECONDS
}

# ------------------------------------------------------- watching it

# In the background, about once a second (one request a sample): class Ready,
# NodePool NodeClassReady and Ready, the claims, the nodes, how many of them are
# being deleted, how many nodes carry the karpenter.sh/disrupted taint.
WATCH_PID=""
watch_state() {
  (
    trap - ERR
    set +e
    while true; do
      k get ec2nodeclasses,nodepools,nodeclaims,nodes -o json | jq -r --arg class $CLASS --arg pool $POOL '
        def cond($o; $t): ([$o.status.conditions[]? | select(.type == $t) | .status][0] // "");
        def named($k): [.items[] | select(.kind == $k) | .metadata.name] | join(",");
        [.items[] | select(.kind == "EC2NodeClass" and .metadata.name == $class)][0] as $c
        | [.items[] | select(.kind == "NodePool" and .metadata.name == $pool)][0] as $p
        | "\(now | floor) class=\(cond($c; "Ready")) nodeclassready=\(cond($p; "NodeClassReady")) pool=\(cond($p; "Ready"))"
          + " claims=\(named("NodeClaim")) nodes=\(named("Node"))"
          + " deleting=\([.items[] | select(.metadata.deletionTimestamp)] | length)"
          + " disrupted=\([.items[] | select(.kind == "Node") | .spec.taints[]? | select(.key == "karpenter.sh/disrupted")] | length)"'
      sleep 0.5
    done
  ) >"$KP_E2E_DIR/watch" 2>/dev/null &
  WATCH_PID=$!
  e2e_cleanup e2e_stop_pid "$WATCH_PID"
}

# The watch lines from the first one matching FROM on.
watched_since() { sed -n "/$1/,\$p" "$KP_E2E_DIR/watch"; }

# The disruption commands the controller ran (drift, emptiness, consolidation).
disruptions() { jq -c 'select(.logger == "disruption" and .message == "disrupting node(s)")' "$CONTROLLER_LOG"; }

# Nothing created, deleted, launched, terminated or tainted (the watch, moto, metrics).
nothing_relaunched() {
  local lines bad
  lines=$(cat "$KP_E2E_DIR/watch")
  bad=$(grep -v " claims=${CLAIMS[0]},${CLAIMS[1]} nodes=${NODES[0]},${NODES[1]} deleting=0 disrupted=0\$" <<<"$lines" || true)
  check "$1: every sample, the same two NodeClaims and Nodes, none deleting, none tainted disrupted ($(grep -c . <<<"$lines" || true) samples) ${bad:+- $(head -n 3 <<<"$bad")}" \
    test -z "$bad"
  moto instances | sort >"$KP_E2E_DIR/instances.now"
  check "$1: no instance launched or terminated in moto ($(paste -sd' ' "$KP_E2E_DIR/instances.now"))" \
    cmp -s "$KP_E2E_DIR/instances.before" "$KP_E2E_DIR/instances.now"
  check "$1: no disruption command was run ($(disruptions | head -n 2))" test -z "$(disruptions)"
  check "$1: the pods still run where they ran" \
    test "$(k -n $NS get pods -o jsonpath='{range .items[*]}{.spec.nodeName} {.status.phase} {.metadata.deletionTimestamp};{end}')" = \
    "${NODES[0]} Running ;${NODES[1]} Running ;"
}

class_unresolved() {
  wait_for '[ "$(condition ec2nodeclass $CLASS Ready)" = False ]' 60 ||
    fail "the EC2NodeClass whose subnets match nothing is still Ready: $(jp ec2nodeclass $CLASS '{.status.conditions}')"
  pass "the EC2NodeClass whose subnet selector matches nothing turned not Ready ($(jp ec2nodeclass $CLASS '{.status.conditions[?(@.type=="Ready")].message}'))"
  wait_for '[ "$(condition nodepool $POOL Ready)" = False ]' 30 ||
    fail "the NodePool stayed Ready: $(jp nodepool $POOL '{.status.conditions}')"
  check "the NodePool follows: NodeClassReady False" test "$(condition nodepool $POOL NodeClassReady)" = False
  check "and Ready False" test "$(condition nodepool $POOL Ready)" = False
  local wait=$((CONTROLLER_START + 20 - SECONDS))
  [ "$wait" -le 0 ] || sleep "$wait"
  pass "$((SECONDS - CONTROLLER_START))s of 2 s garbage-collection and disruption passes (since it leads) with the class unresolved"
  local since
  since=$(watched_since 'class=False nodeclassready=False pool=False' | grep -v 'class=False nodeclassready=False pool=False' || true)
  check "since the class turned not Ready, it and the NodePool stayed not Ready ${since:+- $(head -n 2 <<<"$since")}" \
    test -z "$since"
  nothing_relaunched "unresolved"
}

adopted() {
  local i hash have
  hash=$(jp nodepool $POOL '{.metadata.annotations.karpenter\.sh/nodepool-hash}')
  check "the NodePool carries karpenter-c's hash ($hash, version $(jp nodepool $POOL '{.metadata.annotations.karpenter\.sh/nodepool-hash-version}'))" \
    test "$(jp nodepool $POOL '{.metadata.annotations.karpenter\.sh/nodepool-hash-version}')" = c1 -a "$hash" != "$KO_NODEPOOL_HASH"
  for i in 0 1; do
    check "claim ${CLAIMS[i]} adopted: the NodePool's hash, version c1" \
      test "$(jp nodeclaim "${CLAIMS[i]}" '{.metadata.annotations.karpenter\.sh/nodepool-hash} {.metadata.annotations.karpenter\.sh/nodepool-hash-version}')" = "$hash c1"
    have=$(jp nodeclaim "${CLAIMS[i]}" '{.metadata.annotations.karpenter\.k8s\.aws/ec2nodeclass-hash} {.metadata.annotations.karpenter\.k8s\.aws/ec2nodeclass-hash-version}')
    check "claim ${CLAIMS[i]} adopted: the EC2NodeClass's hash, version c1 ($have)" \
      test "$have" = "$(jp ec2nodeclass $CLASS '{.metadata.annotations.karpenter\.k8s\.aws/ec2nodeclass-hash}') c1"
    check "claim ${CLAIMS[i]} keeps its finalizer" test "$(jp nodeclaim "${CLAIMS[i]}" '{.metadata.finalizers}')" = '["karpenter.sh/termination"]'
  done
  check "the EC2NodeClass keeps its finalizer and carries karpenter-c's hash version" \
    test "$(jp ec2nodeclass $CLASS '{.metadata.finalizers} {.metadata.annotations.karpenter\.k8s\.aws/ec2nodeclass-hash-version}')" = \
    '["karpenter.k8s.aws/termination"] c1'
}

class_fixed() {
  k patch ec2nodeclass $CLASS --type merge -p '{"spec":{"subnetSelectorTerms":[{"tags":{"karpenter.sh/discovery":"e2e"}}]}}' >/dev/null
  pass "fixed the subnet selector (karpenter.sh/discovery: e2e)"
  wait_for '[ "$(condition ec2nodeclass $CLASS Ready)" = True ]' 60 ||
    fail "the EC2NodeClass did not turn Ready: $(jp ec2nodeclass $CLASS '{.status.conditions}')"
  pass "the EC2NodeClass resolved: Ready, subnets $(jp ec2nodeclass $CLASS '{.status.subnets[*].id}')"
  check "its subnets are moto's two" test "$(jp ec2nodeclass $CLASS '{.status.subnets[*].id}' | tr ' ' '\n' | sort | paste -sd' ' -)" = \
    "$(printf '%s\n' "${SUBNET[@]}" | sort | paste -sd' ' -)"
  wait_for '[ "$(condition nodepool $POOL Ready)" = True ]' 30 ||
    fail "the NodePool did not turn Ready: $(jp nodepool $POOL '{.status.conditions}')"
  check "the NodePool followed: NodeClassReady True" test "$(condition nodepool $POOL NodeClassReady)" = True
  pass "and Ready"
  local fixed=$SECONDS
  sleep 12
  pass "$((SECONDS - fixed))s more of passes with the class resolved ($((SECONDS - CONTROLLER_START))s in all)"
  nothing_relaunched "resolved"
  adopted
}

# The drift that was not found above is found when it is real: a change to the
# NodePool's template drifts both adopted claims.
drift_is_live() {
  k patch nodepool $POOL --type merge -p '{"spec":{"template":{"metadata":{"labels":{"team":"payments"}}}}}' >/dev/null
  wait_for '[ -n "$(disruptions | jq -r "select(.method == \"drift\") | .nodes")" ]' 30 ||
    fail "a real drift (the NodePool's template changed) was not acted on"
  pass "a real drift (the NodePool's template changed) is acted on: $(disruptions | head -n 1)"
}

logs_say() {
  check "the controller logged no ERROR about the adopted objects" \
    test -z "$(jq -c 'select(.level == "ERROR")' "$CONTROLLER_LOG" | grep -F -e "${CLAIMS[0]}" -e "${CLAIMS[1]}" \
      -e "${NODES[0]}" -e "${NODES[1]}" -e "\"$POOL\"" || true)"
  check "and ignored nothing: every object is its provider's" \
    test -z "$(jq -r 'select(.message == "ignoring an object another provider owns") | tostring' "$CONTROLLER_LOG")"
}

e2e_setup
karpenter_account
e2e_namespace $NS
karpenter_left
install_ours
class_unresolved
class_fixed
logs_say
drift_is_live
