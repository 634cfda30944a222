#!/usr/bin/env bash
# --cloud-provider aws on the real control plane, with moto's server as EC2, IAM and
# SQS: the EC2NodeClass resolves (subnets and security groups by tag, the AMI by id,
# an instance profile for the role) and turns Ready; a pending pod leads to a
# NodeClaim whose CreateFleet launch is an instance in moto, tagged for the claim;
# a stand-in for the instance's kubelet joins a Node with that providerID, the claim
# registers and initializes, kube-scheduler binds the pod; deleting the claim
# terminates the instance; a spot interruption warning on the queue does too;
# moving the class to a new AMI (a new image registered in moto) drifts the claim
# (Drifted, the provider's reason) and replaces its instance with one on the new
# image, the pod moving over; a class selecting a capacity reservation with one
# place left reports it in status.capacityReservations, and of two pods that each
# need a node, one launches into the reservation (capacity-type reserved, its id and
# type as labels, the launch template targeting it) and the other on-demand, the
# place being used up; terminating the reserved instance gives the place back and
# the next pod launches reserved again; deleting the class deletes its instance
# profile and launch templates.
#
# EC2 is moto, behind one double (tests/e2e/ec2_reservation_double.py) for the
# one API moto lacks: DescribeCapacityReservations (moto answers HTTP 500, not
# implemented; scripts/moto-probe.py). The double also remembers which launches
# targeted the reservation, as EC2 does (moto drops the launch template's
# CapacityReservationSpecification): the reservation's available count, and
# DescribeInstances' capacityReservationId for those instances, follow them.
# Everything else goes to moto unchanged.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
readonly ROOT="$HERE/../.."
readonly NS=e2e-aws
MOTO_DIR=""
MOTO_URL=""
EC2_URL="" # the reservation double in front of moto: what the controller talks to
readonly CR=cr-0e2e0000000000001
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=us-east-1

# ec2py EXPR: a boto3 call against moto from Debian's python.
boto() {
  /usr/bin/python3 - "$MOTO_URL" "$@" <<'PY'
import boto3, json, sys
url, what = sys.argv[1], sys.argv[2]
ec2 = boto3.client("ec2", endpoint_url=url, region_name="us-east-1")
iam = boto3.client("iam", endpoint_url=url, region_name="us-east-1")
sqs = boto3.client("sqs", endpoint_url=url, region_name="us-east-1")
tag = [{"ResourceType": None, "Tags": [{"Key": "karpenter.sh/discovery", "Value": "e2e"}]}]
def tagged(kind):
    return [{"ResourceType": kind, "Tags": tag[0]["Tags"]}]
if what == "account":
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    for zone, cidr in (("us-east-1a", "10.0.1.0/24"), ("us-east-1b", "10.0.2.0/24")):
        ec2.create_subnet(VpcId=vpc, CidrBlock=cidr, AvailabilityZone=zone, TagSpecifications=tagged("subnet"))
    ec2.create_security_group(GroupName="nodes", Description="nodes", VpcId=vpc, TagSpecifications=tagged("security-group"))
    image = [i for i in ec2.describe_images()["Images"] if i.get("Architecture") == "x86_64"][0]["ImageId"]
    iam.create_role(RoleName="KarpenterNodeRole-e2e", AssumeRolePolicyDocument="{}")
    sqs.create_queue(QueueName="e2e-interruption")
    print(image)
elif what == "interrupt":
    # What EventBridge puts on the queue two minutes before EC2 takes a spot instance.
    iid = sys.argv[3]
    body = {"version": "0", "id": "e2e-1", "detail-type": "EC2 Spot Instance Interruption Warning",
            "source": "aws.ec2", "account": "123456789012", "time": "2026-01-01T00:00:00Z",
            "region": "us-east-1", "resources": ["arn:aws:ec2:us-east-1:123456789012:instance/" + iid],
            "detail": {"instance-id": iid, "instance-action": "terminate"}}
    sqs.send_message(QueueUrl=sqs.get_queue_url(QueueName="e2e-interruption")["QueueUrl"], MessageBody=json.dumps(body))
elif what == "queued":
    url = sqs.get_queue_url(QueueName="e2e-interruption")["QueueUrl"]
    a = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
    print(int(a["ApproximateNumberOfMessages"]) + int(a["ApproximateNumberOfMessagesNotVisible"]))
elif what == "instances":
    out = []
    for r in ec2.describe_instances()["Reservations"]:
        for i in r["Instances"]:
            tags = {t["Key"]: t["Value"] for t in i.get("Tags", [])}
            out.append("%s %s %s %s %s" % (i["InstanceId"], i["State"]["Name"], i["InstanceType"], i["ImageId"],
                                           tags.get("karpenter.sh/nodeclaim", "-")))
    print("\n".join(out))
elif what == "new-image":
    # A new image id with the same architecture: a copy, as the next release of an AMI would be.
    print(ec2.copy_image(SourceImageId=sys.argv[3], SourceRegion="us-east-1", Name="e2e-next-release")["ImageId"])
elif what == "leftovers":
    # moto ignores PathPrefix: filter here.
    profiles = [p["InstanceProfileName"] for p in iam.list_instance_profiles()["InstanceProfiles"]
                if p["Path"].startswith("/karpenter/")]
    templates = [t["LaunchTemplateName"] for t in ec2.describe_launch_templates()["LaunchTemplates"]]
    print("profiles=%s templates=%s" % (",".join(profiles), ",".join(templates)))
PY
}

stop_moto() { bash "$ROOT/scripts/moto-server.sh" stop "$MOTO_DIR" >/dev/null 2>&1 || true; }

# The DescribeCapacityReservations double: reservation $CR, m5.large in us-east-1a
# (a zone of the account's subnets), one instance in all.
start_double() {
  local pid
  cat >"$MOTO_DIR/reservations.json" <<EOF2
[{"id": "$CR", "instanceType": "m5.large", "zone": "us-east-1a", "zoneId": "use1-az6", "total": 1,
  "tags": {"karpenter.sh/discovery": "e2e"}}]
EOF2
  /usr/bin/python3 "$HERE/ec2_reservation_double.py" "$MOTO_URL" "$MOTO_DIR/reservations.json" \
    "$MOTO_DIR/double.log" "$MOTO_DIR/double.port" 2>"$MOTO_DIR/double.err" &
  pid=$!
  e2e_cleanup e2e_stop_pid "$pid"
  wait_for "[ -s '$MOTO_DIR/double.port' ]" 30 || fail "the reservation double did not start: $(cat "$MOTO_DIR/double.err")"
  EC2_URL="http://127.0.0.1:$(cat "$MOTO_DIR/double.port")"
  pass "the DescribeCapacityReservations double at $EC2_URL answers for $CR and forwards the rest to moto"
}

# nodeclass_yaml NAME [SPEC-LINE]: an EC2NodeClass of the account's tagged subnets,
# security group, role and first AMI.
IMAGE=""
nodeclass_yaml() {
  cat <<EOF2
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: $1}
spec:
  role: KarpenterNodeRole-e2e
  amiFamily: AL2023
  amiSelectorTerms: [{id: $IMAGE}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: e2e}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: e2e}}]
  ${2:-}
EOF2
}

setup() {
  local image
  e2e_setup
  bash "$ROOT/scripts/moto-server.sh" install >/dev/null
  MOTO_DIR="$KP_E2E_DIR/moto"
  mkdir -p "$MOTO_DIR"
  MOTO_URL=$(bash "$ROOT/scripts/moto-server.sh" start "$MOTO_DIR")
  e2e_cleanup stop_moto
  image=$(boto account)
  pass "moto at $MOTO_URL with a VPC, two tagged subnets, a security group, role and AMI $image"
  start_double
  IMAGE=$image
  e2e_namespace $NS
  e2e_karpenter_rbac
  wait_for "k get ec2nodeclasses" 30 || fail "the EC2NodeClass CRD is not served"
  k apply -f - >/dev/null <<EOF2
$(nodeclass_yaml default)
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
        - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m]}
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      expireAfter: Never
  disruption: {consolidateAfter: Never}
EOF2
  e2e_start_controller controller --disable-leader-election --cloud-provider aws --cluster-name e2e \
    --aws-endpoint-url "$EC2_URL" --cluster-endpoint "$KP_E2E_API_URL" --cluster-cidr 10.96.0.0/16 \
    --interruption-queue e2e-interruption --batch-idle-duration 500ms \
    --disable-dry-run # moto launches a fleet asked for as a dry run
}

nodeclass_ready() {
  wait_for '[ "$(k get ec2nodeclass default -o jsonpath="{.status.conditions[?(@.type==\"Ready\")].status}")" = True ]' 60 ||
    fail "EC2NodeClass not Ready: $(k get ec2nodeclass default -o jsonpath='{.status.conditions}')"
  pass "EC2NodeClass Ready with subnets $(k get ec2nodeclass default -o jsonpath='{.status.subnets[*].id}')"
  check "its instance profile is resolved" test -n "$(k get ec2nodeclass default -o jsonpath='{.status.instanceProfile}')"
  check "it carries the class hash" test -n \
    "$(k get ec2nodeclass default -o jsonpath='{.metadata.annotations.karpenter\.k8s\.aws/ec2nodeclass-hash}')"
  check "and the finalizer" grep -q karpenter.k8s.aws/termination <<<"$(k get ec2nodeclass default -o jsonpath='{.metadata.finalizers}')"
}

CLAIM=""
PID=""
launch() {
  k -n $NS apply -f - >/dev/null <<EOF2
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  terminationGracePeriodSeconds: 0
  containers: [{name: pause, image: registry.k8s.io/pause:3.7, resources: {requests: {cpu: "1"}}}]
EOF2
  wait_for '[ -n "$(k get nodeclaims -o jsonpath="{.items[0].status.providerID}")" ]' 60 ||
    fail "no launched NodeClaim: $(k get nodeclaims -o yaml | tail -n 30)"
  CLAIM=$(k get nodeclaims -o jsonpath='{.items[0].metadata.name}')
  PID=$(k get nodeclaim "$CLAIM" -o jsonpath='{.status.providerID}')
  pass "NodeClaim $CLAIM launched as $PID"
  check "the provider ID is aws:///zone/i-..." grep -Eq '^aws:///us-east-1[ab]/i-[0-9a-f]+$' <<<"$PID"
  check "moto runs the instance, tagged with the claim" \
    grep -q "^${PID##*/} running .* $CLAIM\$" <<<"$(boto instances)"
}

# join_node CLAIM NODE: the claim's instance's kubelet joining as NODE: a Node with
# the providerID, Karpenter's unregistered taint, then a Ready status.
join_node() {
  local claim="$1" node="$2" type pid
  type=$(k get nodeclaim "$claim" -o jsonpath='{.metadata.labels.node\.kubernetes\.io/instance-type}')
  pid=$(k get nodeclaim "$claim" -o jsonpath='{.status.providerID}')
  k apply -f - >/dev/null <<EOF2
apiVersion: v1
kind: Node
metadata:
  name: $node
  labels: {kubernetes.io/hostname: $node, node.kubernetes.io/instance-type: $type}
spec:
  providerID: $pid
  taints: [{key: karpenter.sh/unregistered, effect: NoExecute}]
EOF2
  api PATCH "/api/v1/nodes/$node/status" "{\"status\":{\"capacity\":{\"cpu\":\"8\",\"memory\":\"16Gi\",\"pods\":\"110\"},
    \"allocatable\":{\"cpu\":\"7\",\"memory\":\"14Gi\",\"pods\":\"110\"},
    \"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"message\":\"ok\",
    \"lastHeartbeatTime\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\",\"lastTransitionTime\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}]}}" \
    application/merge-patch+json >/dev/null
  # Admission gave it node.kubernetes.io/not-ready; a kubelet's node controller would lift it.
  wait_for "k get node $node" 10 || return 1
  k patch node "$node" --type json -p '[{"op":"remove","path":"/spec/taints"}]' >/dev/null 2>&1 || true
}

join() {
  local node=ip-10-0-1-10.ec2.internal
  join_node "$CLAIM" "$node" || fail "the Node was not created"
  wait_for '[ "$(k get nodeclaim '"$CLAIM"' -o jsonpath="{.status.conditions[?(@.type==\"Initialized\")].status}")" = True ]' 60 ||
    fail "claim not Initialized: $(k get nodeclaim "$CLAIM" -o jsonpath='{.status.conditions}')"
  pass "the claim registered and initialized with Node $node"
  check "the claim names its node" test "$(k get nodeclaim "$CLAIM" -o jsonpath='{.status.nodeName}')" = "$node"
  wait_for "[ \"\$(k -n $NS get pod web -o jsonpath='{.spec.nodeName}')\" = $node ]" 60 || fail "pod not bound to $node"
  pass "kube-scheduler bound the pod to the new node"
}

terminate() {
  k -n $NS delete pod web --grace-period=0 --force >/dev/null 2>&1 || true
  k delete nodeclaim "$CLAIM" --wait=false >/dev/null
  wait_for "! k get nodeclaim $CLAIM" 90 || fail "claim $CLAIM not gone"
  pass "the NodeClaim and its Node are gone"
  check "the instance is terminated in moto" grep -Eq "^${PID##*/} (shutting-down|terminated) " <<<"$(boto instances)"
}

# The class's finalizer cleans up what the controller made for it in the account
# (what it made: checked at the end of drift, while a launch template is in use; left
# unused for a minute, a template is deleted by the controller's sweep anyway).
delete_class() {
  k delete nodepool default --wait=false >/dev/null
  k delete ec2nodeclass default --wait=false >/dev/null
  wait_for "! k get ec2nodeclass default" 60 ||
    fail "EC2NodeClass still there: $(k get ec2nodeclass default -o jsonpath='{.metadata.finalizers}')"
  pass "the EC2NodeClass is gone (its finalizer removed)"
  check "its instance profile and launch templates are deleted ($(boto leftovers))" \
    test "$(boto leftovers)" = "profiles= templates="
  check "the role itself stays (it is the operator's)" /usr/bin/python3 -c "
import boto3; boto3.client('iam', endpoint_url='$MOTO_URL', region_name='us-east-1').get_role(RoleName='KarpenterNodeRole-e2e')"
}

# A spot interruption warning on the queue (--interruption-queue): the controller
# deletes the claim (drain, then TerminateInstances) and deletes the message.
interrupt() {
  boto interrupt "${PID##*/}"
  pass "sent a spot interruption warning for ${PID##*/} to the queue"
  wait_for "! k get nodeclaim $CLAIM" 90 || fail "claim $CLAIM not deleted after the interruption warning"
  pass "the interrupted instance's NodeClaim is gone"
  check "the instance is terminated in moto" grep -Eq "^${PID##*/} (shutting-down|terminated) " <<<"$(boto instances)"
  wait_for '[ "$(boto queued)" = 0 ]' 30 || true
  check "the message was deleted from the queue" test "$(boto queued)" = 0
  check "the claim's events say SpotInterrupted and TerminatingOnInterruption" \
    grep -q "SpotInterrupted.*TerminatingOnInterruption\|TerminatingOnInterruption.*SpotInterrupted" \
    <<<"$(k get events -A --field-selector involvedObject.name="$CLAIM" -o jsonpath='{.items[*].reason}')"
}

# The kubelets of every instance launched from now on: each claim with an instance
# and no Node gets one (node-<instance id>), until $KP_E2E_DIR/agent.off exists.
AGENT_PID=""
start_agent() {
  (
    while [ ! -e "$KP_E2E_DIR/agent.off" ]; do
      k get nodeclaims -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.providerID}{" "}{.status.nodeName}{"\n"}{end}' 2>/dev/null |
        while read -r claim pid node; do
          [ -n "$pid" ] && [ -z "$node" ] || continue
          k get node "node-${pid##*/}" >/dev/null 2>&1 || join_node "$claim" "node-${pid##*/}" || true
        done
      sleep 1
    done
  ) &
  AGENT_PID=$!
  e2e_cleanup e2e_stop_pid "$AGENT_PID"
}

claim_cond() { k get nodeclaim "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].$3}"; }
app_node() { k -n $NS get pods -l app=app -o jsonpath='{.items[*].spec.nodeName}'; }

# Cloud drift: the EC2NodeClass moves to a new AMI (a new image registered in moto);
# the claim of an instance on the old one turns Drifted and is replaced: a new
# instance on the new image, the old one terminated, the pod moved.
drift() {
  local old_claim old_pid old_image image new_claim new_pid reason made
  start_agent
  k -n $NS apply -f - >/dev/null <<EOF2
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  replicas: 1
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{name: pause, image: registry.k8s.io/pause:3.7, resources: {requests: {cpu: "1"}}}]
EOF2
  wait_for '[ -n "$(app_node)" ]' 120 || fail "the Deployment's pod was not bound: $(k get nodeclaims -o wide)"
  old_claim=$(k get nodeclaims -o jsonpath='{.items[0].metadata.name}')
  wait_for "[ \"\$(claim_cond $old_claim Initialized status)\" = True ]" 60 || fail "claim $old_claim not initialized"
  old_pid=$(k get nodeclaim "$old_claim" -o jsonpath='{.status.providerID}')
  old_image=$(k get nodeclaim "$old_claim" -o jsonpath='{.status.imageID}')
  pass "the pod runs on $(app_node), claim $old_claim, instance ${old_pid##*/} on image $old_image"
  check "the claim is not drifted yet" test "$(claim_cond "$old_claim" Drifted status)" != True
  image=$(boto new-image "$old_image")
  k patch ec2nodeclass default --type merge -p "{\"spec\":{\"amiSelectorTerms\":[{\"id\":\"$image\"}]}}" >/dev/null
  wait_for "[ \"\$(k get ec2nodeclass default -o jsonpath='{.status.amis[*].id}')\" = $image ]" 120 ||
    fail "the EC2NodeClass did not resolve the new AMI: $(k get ec2nodeclass default -o jsonpath='{.status.amis}')"
  pass "the EC2NodeClass now resolves the new image $image"
  wait_for "[ \"\$(claim_cond $old_claim Drifted status)\" = True ]" 420 ||
    fail "claim $old_claim never turned Drifted: $(k get nodeclaim "$old_claim" -o jsonpath='{.status.conditions}')"
  reason=$(claim_cond "$old_claim" Drifted reason)
  pass "claim $old_claim is Drifted, reason $reason"
  check "the reason is the cloud provider's (AMIDrift or NodeClassDrift)" grep -Eqx 'AMIDrift|NodeClassDrift' <<<"$reason"
  wait_for "! k get nodeclaim $old_claim" 300 || fail "the drifted claim $old_claim was not replaced"
  new_claim=$(k get nodeclaims -o jsonpath='{.items[0].metadata.name}')
  new_pid=$(k get nodeclaim "$new_claim" -o jsonpath='{.status.providerID}')
  pass "the drifted claim is gone; its replacement $new_claim runs ${new_pid##*/}"
  check "the old instance is terminated in moto" grep -Eq "^${old_pid##*/} (shutting-down|terminated) " <<<"$(boto instances)"
  check "the new instance runs the new image" grep -q "^${new_pid##*/} running [^ ]* $image $new_claim\$" <<<"$(boto instances)"
  check "the replacement's claim names the new image" test "$(k get nodeclaim "$new_claim" -o jsonpath='{.status.imageID}')" = "$image"
  wait_for "[ \"\$(app_node)\" = node-${new_pid##*/} ]" 60 || fail "the pod is not on the new node: $(app_node)"
  pass "the pod moved to the new node node-${new_pid##*/}"
  made=$(boto leftovers)
  check "an instance profile and a launch template exist for the class ($made)" \
    grep -Eq '^profiles=[^ ]+ templates=.+$' <<<"$made"
  touch "$KP_E2E_DIR/agent.off"
  e2e_stop_pid "$AGENT_PID"
  k -n $NS delete deployment app >/dev/null
  k delete nodeclaims --all --wait=false >/dev/null
  wait_for '[ "$(count nodeclaims)" -eq 0 ]' 90 || fail "claims left after the drift: $(k get nodeclaims -o name)"
}

# ---------------------------------------------------------- capacity reservations

# claims of the NodePool "reserved", one per line: name capacity-type reservation-id providerID
reserved_claims() {
  k get nodeclaims -l karpenter.sh/nodepool=reserved -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.metadata.labels.karpenter\.sh/capacity-type}{" "}{.metadata.labels.karpenter\.k8s\.aws/capacity-reservation-id}{" "}{.status.providerID}{"\n"}{end}'
}
launched_reserved_claims() { reserved_claims | awk '$NF ~ /^aws:/' | grep -c . || true; }
claim_label() { k get nodeclaim "$1" -o jsonpath="{.metadata.labels.$2}"; }
claim_req() { k get nodeclaim "$1" -o jsonpath="{.spec.requirements[?(@.key==\"$2\")].values}"; }
# double_log ACTION: the double's log lines for one action
double_log() { grep -F "\"action\": \"$1\"" "$MOTO_DIR/double.log" || true; }

# pods NAME...: pods of the reserved pool, 1500m CPU each (an m5.large has room for one)
reserved_pods() {
  local name
  for name in "$@"; do
    cat <<EOF2
---
apiVersion: v1
kind: Pod
metadata: {name: $name, namespace: $NS}
spec:
  terminationGracePeriodSeconds: 0
  nodeSelector: {karpenter.sh/nodepool: reserved}
  tolerations: [{key: e2e/reserved, operator: Exists}]
  containers: [{name: pause, image: registry.k8s.io/pause:3.7, resources: {requests: {cpu: 1500m}}}]
EOF2
  done | k apply -f - >/dev/null
}

reservation_class() {
  k apply -f - >/dev/null <<EOF2
$(nodeclass_yaml reserved "capacityReservationSelectorTerms: [{id: $CR}]")
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: reserved}
spec:
  template:
    spec:
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [reserved, on-demand]}
        - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}
      taints: [{key: e2e/reserved, effect: NoSchedule}]
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: reserved}
      expireAfter: Never
  disruption: {consolidateAfter: Never}
EOF2
  wait_for "[ \"\$(k get ec2nodeclass reserved -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}')\" = True ]" 60 ||
    fail "EC2NodeClass reserved not Ready: $(k get ec2nodeclass reserved -o jsonpath='{.status.conditions}')"
  pass "EC2NodeClass reserved is Ready, status.capacityReservations: $(k get ec2nodeclass reserved -o jsonpath='{.status.capacityReservations}')"
  check "CapacityReservationsReady is True" test \
    "$(k get ec2nodeclass reserved -o jsonpath='{.status.conditions[?(@.type=="CapacityReservationsReady")].status}')" = True
  check "status.capacityReservations holds $CR: m5.large in us-east-1a, default, targeted" test \
    "$(k get ec2nodeclass reserved -o jsonpath='{range .status.capacityReservations[*]}{.id} {.instanceType} {.availabilityZone} {.reservationType} {.instanceMatchCriteria}{end}')" \
    = "$CR m5.large us-east-1a default targeted"
  check "the controller asked the double for it by id" grep -q "\"ids\": \[\"$CR\"\]" <<<"$(double_log DescribeCapacityReservations)"
}

# Two pods needing a node each, in one batch, with one place in the reservation:
# one claim launches into it, the other on-demand (the solve counted the place).
reserve_two() {
  local line r_claim r_pid o_claim
  reserved_pods r1 r2
  wait_for '[ "$(launched_reserved_claims)" -ge 2 ]' 90 ||
    fail "two launched claims expected: $(reserved_claims)"
  pass "two claims launched: $(reserved_claims | tr '\n' ';')"
  line=$(reserved_claims | awk '$2 == "reserved"')
  check "exactly one of them is reserved" test "$(grep -c . <<<"$line")" = 1
  read -r r_claim _ _ r_pid <<<"$line"
  o_claim=$(reserved_claims | awk '$2 != "reserved" {print $1}')
  check "the reserved claim carries $CR as its capacity-reservation-id" test "$(claim_label "$r_claim" 'karpenter\.k8s\.aws/capacity-reservation-id')" = "$CR"
  check "and capacity-reservation-type default" test "$(claim_label "$r_claim" 'karpenter\.k8s\.aws/capacity-reservation-type')" = default
  check "it was planned onto the reservation: requirements capacity-type [reserved], reservation-id [$CR]" test \
    "$(claim_req "$r_claim" karpenter.sh/capacity-type) $(claim_req "$r_claim" karpenter.k8s.aws/capacity-reservation-id)" = "[\"reserved\"] [\"$CR\"]"
  check "the other claim ($o_claim) is on-demand" test "$(claim_label "$o_claim" 'karpenter\.sh/capacity-type')" = on-demand
  check "and has no reservation label" test -z "$(claim_label "$o_claim" 'karpenter\.k8s\.aws/capacity-reservation-id')"
  check "its requirements do not allow reserved: the place was counted in the solve ($(claim_req "$o_claim" karpenter.sh/capacity-type))" \
    bash -c "! grep -q reserved <<<'$(claim_req "$o_claim" karpenter.sh/capacity-type)'"
  check "the launch template targets $CR with capacity-reservations-only" grep -q \
    "\"preference\": \"capacity-reservations-only\", \"reservation\": \"$CR\"" <<<"$(double_log CreateLaunchTemplate)"
  check "the CreateFleet of ${r_pid##*/} used that template" grep -q \
    "\"instances\": \[\"${r_pid##*/}\"\], \"reservations\": \[\"$CR\"\]" <<<"$(double_log CreateFleet)"
  check "no other launch went into the reservation" test "$(double_log CreateFleet | grep -c "\"reservations\": \[\"$CR")" = 1
  R_CLAIM=$r_claim
  R_PID=$r_pid
}

# The place comes back when the reserved instance terminates; the next pod takes it.
reserve_again() {
  local line
  k -n $NS delete pod r1 --grace-period=0 --force >/dev/null 2>&1 || true
  k delete nodeclaim "$R_CLAIM" --wait=false >/dev/null
  wait_for "! k get nodeclaim $R_CLAIM" 90 || fail "claim $R_CLAIM not gone"
  check "TerminateInstances ended ${R_PID##*/}" grep -q "${R_PID##*/}" <<<"$(double_log TerminateInstances)"
  pass "the reserved claim is gone; the reservation has its place back"
  reserved_pods r3
  wait_for '[ "$(reserved_claims | awk '"'"'$2 == "reserved" && $NF ~ /^aws:/'"'"' | grep -c .)" = 1 ]' 120 ||
    fail "no reserved claim for the third pod: $(reserved_claims)"
  line=$(reserved_claims | awk '$2 == "reserved"')
  pass "the third pod's claim launched reserved: $line"
  check "into $CR" test "$(awk '{print $3}' <<<"$line")" = "$CR"
  check "the on-demand claim stays on-demand" test "$(reserved_claims | awk '$2 == "on-demand"' | grep -c .)" = 1
  # The capacity-type controller (every minute) relabels a reserved claim whose
  # instance EC2 reports outside any reservation; this one's is inside.
  sleep 65
  check "a minute on, after the capacity-type controller's pass, it is still reserved in $CR" test \
    "$(reserved_claims | awk '$2 == "reserved" {print $3}')" = "$CR"
  check "the controller lists its instances through the double (DescribeInstances)" test "$(double_log DescribeInstances | grep -c .)" -gt 0
}

reservation_cleanup() {
  k -n $NS delete pod r2 r3 --grace-period=0 --force >/dev/null 2>&1 || true
  k delete nodepool reserved --wait=false >/dev/null
  k delete nodeclaims -l karpenter.sh/nodepool=reserved --wait=false >/dev/null
  wait_for '[ "$(count nodeclaims)" -eq 0 ]' 90 || fail "reserved claims left: $(reserved_claims)"
  k delete ec2nodeclass reserved --wait=false >/dev/null
  wait_for "! k get ec2nodeclass reserved" 60 || fail "EC2NodeClass reserved still there"
  pass "the reserved pool, its claims and class are gone"
}

R_CLAIM=""
R_PID=""
reservations() {
  reservation_class
  reserve_two
  reserve_again
  reservation_cleanup
}

setup
nodeclass_ready
launch
join
terminate
launch
join
interrupt
drift
reservations
delete_class
