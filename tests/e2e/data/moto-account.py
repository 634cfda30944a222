"""An AWS account in moto as Karpenter's getting-started leaves it, for the e2e tests
that run the AWS provider (test_ownership.sh, test_migration.sh). Runs on Debian's
python (/usr/bin/python3), where boto3 and moto are installed.

  moto-account.py URL account CLUSTER            VPC, two subnets and a security group
        tagged karpenter.sh/discovery=CLUSTER, the node role KarpenterNodeRole-CLUSTER;
        prints "image=AMI subnet-us-east-1a=ID subnet-us-east-1b=ID sg=ID"
  moto-account.py URL profile NAME ROLE PATH     an instance profile holding ROLE
  moto-account.py URL launch CLUSTER CLASS POOL CLAIM TYPE SUBNET SG IMAGE PROFILE
        a running instance tagged as Karpenter v1 tags the ones it launches; prints its id
  moto-account.py URL instances                  "ID STATE TYPE NODECLAIM-TAG" per instance
"""
import sys

import boto3

REGION = "us-east-1"


def client(url, service):
    return boto3.client(service, endpoint_url=url, region_name=REGION,
                        aws_access_key_id="testing", aws_secret_access_key="testing")


def tags(kind, pairs):
    return [{"ResourceType": kind, "Tags": [{"Key": k, "Value": v} for k, v in pairs.items()]}]


def account(url, cluster):
    ec2, iam = client(url, "ec2"), client(url, "iam")
    discovery = {"karpenter.sh/discovery": cluster}
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    out = []
    images = [i for i in ec2.describe_images()["Images"] if i.get("Architecture") == "x86_64"]
    out.append("image=" + images[0]["ImageId"])
    for zone, cidr in (("us-east-1a", "10.0.1.0/24"), ("us-east-1b", "10.0.2.0/24")):
        s = ec2.create_subnet(VpcId=vpc, CidrBlock=cidr, AvailabilityZone=zone,
                              TagSpecifications=tags("subnet", discovery))["Subnet"]["SubnetId"]
        out.append("subnet-%s=%s" % (zone, s))
    sg = ec2.create_security_group(GroupName="nodes", Description="nodes", VpcId=vpc,
                                   TagSpecifications=tags("security-group", discovery))["GroupId"]
    out.append("sg=" + sg)
    iam.create_role(RoleName="KarpenterNodeRole-" + cluster, AssumeRolePolicyDocument="{}")
    print(" ".join(out))


def profile(url, name, role, path):
    iam = client(url, "iam")
    iam.create_instance_profile(InstanceProfileName=name, Path=path)
    iam.add_role_to_instance_profile(InstanceProfileName=name, RoleName=role)


def launch(url, cluster, cls, pool, claim, itype, subnet, sg, image, prof):
    # Karpenter v1: the static tags of every launch, then karpenter.sh/nodeclaim and
    # Name from its tagging controller once the claim exists.
    t = {"kubernetes.io/cluster/" + cluster: "owned", "eks:eks-cluster-name": cluster,
         "karpenter.sh/nodepool": pool, "karpenter.k8s.aws/ec2nodeclass": cls,
         "karpenter.sh/nodeclaim": claim, "Name": claim}
    r = client(url, "ec2").run_instances(
        ImageId=image, InstanceType=itype, MinCount=1, MaxCount=1, SubnetId=subnet,
        SecurityGroupIds=[sg], IamInstanceProfile={"Name": prof},
        TagSpecifications=tags("instance", t) + tags("volume", t))
    print(r["Instances"][0]["InstanceId"])


def instances(url):
    for r in client(url, "ec2").describe_instances()["Reservations"]:
        for i in r["Instances"]:
            t = {x["Key"]: x["Value"] for x in i.get("Tags", [])}
            print(i["InstanceId"], i["State"]["Name"], i["InstanceType"], t.get("karpenter.sh/nodeclaim", "-"))


def main(argv):
    url, what, args = argv[1], argv[2], argv[3:]
    {"account": account, "profile": profile, "launch": launch,
     "instances": instances}[what](url, *args)


if __name__ == "__main__":
    main(sys.argv)
