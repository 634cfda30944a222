#!/usr/bin/env python3
"""Which of the AWS calls the AWS provider makes, or will make, a moto server emulates.

    scripts/moto-server.sh start DIR && python3 scripts/moto-probe.py "$(cat DIR/moto.url)"

Prints one line per call: `ok` (answered as EC2/EKS would), `missing` (moto has no
such action: it answers 500), or `wrong` (answered, but not as AWS does), with what
was seen. Figures only, nothing is asserted: it is how scripts/moto-server.sh's choice
of moto release was made, and how to re-check it when a new release comes out. Uses
the boto3 next to the moto it probes (run it with that interpreter).
"""
import sys

import boto3
import botocore.exceptions
import botocore.parsers

URL = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:5000"
KW = dict(endpoint_url=URL, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
ec2 = boto3.client("ec2", **KW)
eks = boto3.client("eks", **KW)
results = []


def probe(name, fn):
    try:
        verdict, seen = fn()
    except botocore.exceptions.ClientError as e:
        err = e.response["Error"]
        verdict, seen = "wrong", "%s: %s" % (err.get("Code"), str(err.get("Message", ""))[:80])
    except botocore.parsers.ResponseParserError:
        # moto answers an action it does not implement with an HTML 500 page.
        verdict, seen = "missing", "HTTP 500, not implemented"
    results.append((name, verdict, seen))


def code_of(call):
    try:
        call()
        return None
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"]


def an_ami():
    return [i for i in ec2.describe_images(Owners=["amazon"])["Images"] if i.get("Architecture") == "x86_64"][0]["ImageId"]


def capacity_reservations():
    r = ec2.create_capacity_reservation(InstanceType="m5.large", InstancePlatform="Linux/UNIX",
                                        AvailabilityZone="us-east-1a", InstanceCount=2)
    cr = r["CapacityReservation"]["CapacityReservationId"]
    d = ec2.describe_capacity_reservations(CapacityReservationIds=[cr])["CapacityReservations"]
    return ("ok" if d and d[0]["AvailableInstanceCount"] == 2 else "wrong"), str(d)[:80]


def placement_groups():
    ec2.create_placement_group(GroupName="kp-probe", Strategy="cluster")
    d = ec2.describe_placement_groups(GroupNames=["kp-probe"])["PlacementGroups"]
    return ("ok" if d and d[0]["Strategy"] == "cluster" else "wrong"), str(d)[:80]


def describe_cluster():
    eks.create_cluster(name="kp-probe", roleArn="arn:aws:iam::123456789012:role/eks",
                       resourcesVpcConfig={"subnetIds": []},
                       kubernetesNetworkConfig={"serviceIpv4Cidr": "10.100.0.0/16"})
    c = eks.describe_cluster(name="kp-probe")["cluster"]
    seen = "endpoint %s, CA %d bytes, service CIDR %s" % (
        c.get("endpoint"), len((c.get("certificateAuthority") or {}).get("data", "")),
        (c.get("kubernetesNetworkConfig") or {}).get("serviceIpv4Cidr"))
    ok = c.get("endpoint") and (c.get("kubernetesNetworkConfig") or {}).get("serviceIpv4Cidr") == "10.100.0.0/16"
    return ("ok" if ok else "wrong"), seen


def instance_status():
    iid = ec2.run_instances(ImageId=an_ami(), MinCount=1, MaxCount=1, InstanceType="m5.large")["Instances"][0]["InstanceId"]
    d = ec2.describe_instance_status(InstanceIds=[iid], IncludeAllInstances=True)["InstanceStatuses"]
    impaired = ec2.describe_instance_status(
        InstanceIds=[iid], IncludeAllInstances=True,
        Filters=[{"Name": "instance-status.status", "Values": ["impaired"]}])["InstanceStatuses"]
    seen = "%s; filter instance-status.status=impaired -> %d of 0 expected" % (
        [(s["InstanceState"]["Name"], s["InstanceStatus"]["Status"]) for s in d], len(impaired))
    return ("ok" if d and not impaired else "wrong"), seen


def dry_run(name, call):
    def f():
        code = code_of(call)
        return ("ok" if code == "DryRunOperation" else "wrong"), "answered %s" % (code or "as if not a dry run")
    probe("DryRun " + name, f)


probe("CreateCapacityReservation + DescribeCapacityReservations", capacity_reservations)
probe("CreatePlacementGroup + DescribePlacementGroups", placement_groups)
probe("EKS DescribeCluster", describe_cluster)
probe("DescribeInstanceStatus", instance_status)
ec2.create_launch_template(LaunchTemplateName="kp-probe", LaunchTemplateData={"ImageId": an_ami()})
dry_run("DescribeInstanceTypes", lambda: ec2.describe_instance_types(DryRun=True))
dry_run("RunInstances", lambda: ec2.run_instances(ImageId=an_ami(), MinCount=1, MaxCount=1, DryRun=True))
dry_run("CreateFleet", lambda: ec2.create_fleet(
    DryRun=True, Type="instant",
    LaunchTemplateConfigs=[{"LaunchTemplateSpecification": {"LaunchTemplateName": "kp-probe", "Version": "$Latest"},
                            "Overrides": [{"InstanceType": "m5.large"}]}],
    TargetCapacitySpecification={"TotalTargetCapacity": 1, "DefaultTargetCapacityType": "on-demand"}))
dry_run("CreateLaunchTemplate", lambda: ec2.create_launch_template(LaunchTemplateName="kp-dry", LaunchTemplateData={}, DryRun=True))
dry_run("TerminateInstances", lambda: ec2.terminate_instances(InstanceIds=["i-0123456789abcdef0"], DryRun=True))

import moto  # noqa: E402  (the version, for the header)
print("moto %s at %s" % (moto.__version__, URL))
for name, verdict, seen in results:
    print("%-58s %-8s %s" % (name, verdict, seen))
