#!/usr/bin/env python3
"""Generate the CustomResourceDefinitions in crds/ and their C tables.

The schemas are written out here as data: Karpenter v1's field layout, types,
enums, patterns, bounds, defaults and CEL rules (karpenter.sh/v1 NodePool and
NodeClaim, karpenter.k8s.aws/v1 EC2NodeClass, karpenter.sh/v1alpha1
NodeOverlay), with our own descriptions.

Two variants are written:
  crds/*.yaml             for current clusters, with the CEL rules
                          (x-kubernetes-validations);
  crds/compat-1.20/*.yaml for Kubernetes 1.20-1.24, whose JSONSchemaProps
                          has no x-kubernetes-validations: kubectl's
                          client-side validation refuses the field ("unknown
                          field") and the API server would drop it anyway.
                          The admission webhook enforces those rules there.

It also writes shared/api/crd_tables.[ch]: the same schemas' enums, patterns,
bounds and defaults as C tables, which the webhook's validation and defaulting
and the decoders read (see "C tables" below).

Usage: scripts/gen-crds.py [--check]   (--check: fail if crds/ or the C tables
                                        are out of date)
"""
import copy
import json
import os
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crds")
COMPAT = os.path.join(OUT, "compat-1.20")
C_HEADER = os.path.join(ROOT, "shared", "api", "crd_tables.h")
C_SOURCE = os.path.join(ROOT, "shared", "api", "crd_tables.c")

# ---------------------------------------------------------------- helpers


def cel(rule, message):
    return {"rule": rule, "message": message}


def string(desc, **kw):
    return dict({"type": "string", "description": desc}, **kw)


def integer(desc, fmt="int64", **kw):
    return dict({"type": "integer", "format": fmt, "description": desc}, **kw)


def boolean(desc):
    return {"type": "boolean", "description": desc}


def obj(desc, props, required=None, **kw):
    out = {"type": "object", "description": desc,
           "properties": {k: props[k] for k in sorted(props)}}
    if required:
        out["required"] = sorted(required)
    out.update(kw)
    return out


def array(desc, items, **kw):
    return dict({"type": "array", "description": desc, "items": items}, **kw)


def string_map(desc, **kw):
    return dict({"type": "object", "description": desc,
                 "additionalProperties": {"type": "string"}}, **kw)


QUANTITY_PATTERN = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")
QUALIFIED_NAME = (r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?"
                  r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
NILLABLE_DURATION = r"^(([0-9]+(s|m|h))+|Never)$"
DURATION = r"^([0-9]+(s|m|h))+$"


def quantity_map(desc):
    return {"type": "object", "description": desc, "additionalProperties": {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "pattern": QUANTITY_PATTERN, "x-kubernetes-int-or-string": True}}


def conditions(reason_pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$", required=None,
               reason_min=True, list_map=True):
    reason = string("A CamelCase reason for the last transition.", maxLength=1024,
                    pattern=reason_pattern)
    if reason_min:
        reason["minLength"] = 1
    return array(
        "The object's status conditions (Ready and the conditions it is made of).",
        obj("One condition of the object.", {
            "lastTransitionTime": string("When the status last changed.", format="date-time"),
            "message": string("Details for people.", maxLength=32768),
            "observedGeneration": integer("The generation the condition was computed for.",
                                          minimum=0),
            "reason": reason,
            "status": string("True, False or Unknown.", enum=["True", "False", "Unknown"]),
            "type": string("The condition's type, in CamelCase.", maxLength=316,
                           pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                                   r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"),
        }, required=required or ["lastTransitionTime", "message", "reason", "status", "type"]),
        **({"x-kubernetes-list-map-keys": ["type"], "x-kubernetes-list-type": "map"}
           if list_map else {}))


def top(desc, spec, status, spec_required=True):
    props = {
        "apiVersion": string("The versioned schema of this object."),
        "kind": string("The REST resource this object represents."),
        "metadata": {"type": "object"},
        "spec": spec,
        "status": status,
    }
    return obj(desc, props, required=["spec"] if spec_required else None)


# ---------------------------------------------------------------- karpenter.sh

AWS_LABELS = [
    "karpenter.k8s.aws/instance-tenancy", "karpenter.k8s.aws/capacity-reservation-type",
    "karpenter.k8s.aws/capacity-reservation-id",
    "karpenter.k8s.aws/capacity-reservation-interruptible", "karpenter.k8s.aws/ec2nodeclass",
    "karpenter.k8s.aws/instance-encryption-in-transit-supported",
    "karpenter.k8s.aws/nitro-sandbox", "karpenter.k8s.aws/instance-category",
    "karpenter.k8s.aws/instance-hypervisor", "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-generation", "karpenter.k8s.aws/instance-local-nvme",
    "karpenter.k8s.aws/instance-size", "karpenter.k8s.aws/instance-cpu",
    "karpenter.k8s.aws/instance-cpu-manufacturer",
    "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
    "karpenter.k8s.aws/instance-memory", "karpenter.k8s.aws/instance-ebs-bandwidth",
    "karpenter.k8s.aws/instance-network-bandwidth", "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-manufacturer", "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-gpu-memory", "karpenter.k8s.aws/instance-accelerator-name",
    "karpenter.k8s.aws/instance-accelerator-manufacturer",
    "karpenter.k8s.aws/instance-accelerator-count",
    "karpenter.k8s.aws/instance-capability-flex", "karpenter.k8s.aws/placement-group-id",
    "karpenter.k8s.aws/placement-group-partition",
]
AWS_LIST = "[" + ", ".join('"%s"' % k for k in AWS_LABELS) + "]"


def key_rules(nodepool, each):
    """CEL rules on label keys: `each` wraps a rule over self for a map's keys."""
    def wrap(expr):
        return "self.all(x, %s)" % expr.replace("self", "x") if each else expr
    rules = [cel(wrap('self in ["karpenter.sh/capacity-type", "karpenter.sh/nodepool"] || '
                      '!self.find("^([^/]+)").endsWith("karpenter.sh")'),
                 'label domain "karpenter.sh" is restricted')]
    if nodepool:
        rules.append(cel(wrap('self != "karpenter.sh/nodepool"'),
                         'label "karpenter.sh/nodepool" is restricted'))
    rules.append(cel(wrap('self != "kubernetes.io/hostname"'),
                     'label "kubernetes.io/hostname" is restricted'))
    rules.append(cel(wrap('self in %s || !self.find("^([^/]+)").endsWith("karpenter.k8s.aws")'
                          % AWS_LIST), 'label domain "karpenter.k8s.aws" is restricted'))
    return rules


def requirements(nodepool):
    item = obj("A node selector requirement, optionally asking for a minimum number of "
               "distinct values.", {
                   "key": string("The label key the requirement is about.", maxLength=316,
                                 pattern=QUALIFIED_NAME,
                                 **{"x-kubernetes-validations": key_rules(nodepool, False)}),
                   "minValues": {"type": "integer", "minimum": 1, "maximum": 50,
                                 "description": "The least number of distinct values a "
                                                "NodeClaim must keep for this key (alpha)."},
                   "operator": string("How the key relates to the values.",
                                      enum=["In", "NotIn", "Exists", "DoesNotExist", "Gt",
                                            "Lt", "Gte", "Lte"]),
                   "values": array("The values: at least one for In and NotIn, none for "
                                   "Exists and DoesNotExist, a single non-negative integer "
                                   "for Gt, Lt, Gte and Lte.",
                                   {"type": "string", "maxLength": 63, "pattern": LABEL_VALUE},
                                   **{"x-kubernetes-list-type": "atomic"}),
               }, required=["key", "operator"])
    return array(
        "Label requirements every node launched from here satisfies.", item, maxItems=100,
        **{"x-kubernetes-list-type": "atomic", "x-kubernetes-validations": [
            cel("self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)",
                "requirements with operator 'In' must have a value defined"),
            cel("self.all(x, (x.operator == 'Gt' || x.operator == 'Lt' || x.operator == 'Gte' "
                "|| x.operator == 'Lte') ? (x.values.size() == 1 && int(x.values[0]) >= 0) "
                ": true)",
                "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive "
                "integer value"),
            cel("self.all(x, (x.operator == 'In' && has(x.minValues)) ? x.values.size() >= "
                "x.minValues : true)",
                "requirements with 'minValues' must have at least that many values specified in "
                "the 'values' field"),
        ]})


def taints(desc):
    return array(desc, obj("A taint put on the node.", {
        "effect": string("What the taint does to pods that do not tolerate it.",
                         enum=["NoSchedule", "PreferNoSchedule", "NoExecute"]),
        "key": string("The taint's key.", minLength=1, pattern=QUALIFIED_NAME),
        "timeAdded": string("When the taint was added (NoExecute taints only).",
                            format="date-time"),
        "value": string("The taint's value.", pattern=QUALIFIED_NAME),
    }, required=["effect", "key"]), **{"x-kubernetes-list-type": "atomic"})


def node_class_ref(immutable):
    extra = {}
    if immutable:
        extra["x-kubernetes-validations"] = [
            cel("self.group == oldSelf.group", "nodeClassRef.group is immutable"),
            cel("self.kind == oldSelf.kind", "nodeClassRef.kind is immutable")]
    return obj("The provider-specific node class nodes are launched with.", {
        "group": string("The node class's API group (no version).", pattern="^[^/]*$",
                        **{"x-kubernetes-validations": [cel("self != ''",
                                                            "group may not be empty")]}),
        "kind": string("The node class's kind.", **{"x-kubernetes-validations": [
            cel("self != ''", "kind may not be empty")]}),
        "name": string("The node class's name.", **{"x-kubernetes-validations": [
            cel("self != ''", "name may not be empty")]}),
    }, required=["group", "kind", "name"], **extra)


def claim_spec_props(nodepool):
    return {
        "expireAfter": string("How long a node may live before it is replaced, or Never.",
                              default="720h", pattern=NILLABLE_DURATION),
        "nodeClassRef": node_class_ref(nodepool),
        "requirements": requirements(nodepool),
        "startupTaints": taints("Taints the node starts with and something removes once "
                                "the node is initialized; pods need not tolerate them."),
        "taints": taints("Taints the node carries."),
        "terminationGracePeriod": string("How long draining may take before pods are deleted "
                                         "regardless of disruption budgets.", pattern=DURATION),
    }


def budgets():
    budget = obj("How many nodes may be disrupted at once, optionally on a schedule.", {
        "duration": string("How long the budget stays active after each scheduled start "
                           "(hours and minutes).",
                           pattern=r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$"),
        "nodes": string("A node count or a percentage of the NodePool's nodes.", default="10%",
                        pattern=r"^((100|[0-9]{1,2})%|[0-9]+)$"),
        "reasons": array("The disruption reasons the budget limits (all when empty).",
                         string("A disruption reason.",
                                enum=["Underutilized", "Empty", "Drifted"]),
                         maxItems=50, **{"x-kubernetes-list-type": "set"}),
        "schedule": string("A cron schedule (UTC) for when the budget starts to apply.",
                           pattern=r"^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))"
                                   r"|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$"),
    }, required=["nodes"])
    return array("Limits on voluntary disruption; the most restrictive active one applies.",
                 budget, default=[{"nodes": "10%"}], maxItems=50,
                 **{"x-kubernetes-list-type": "atomic", "x-kubernetes-validations": [
                     cel("self.all(x, has(x.schedule) == has(x.duration))",
                         "'schedule' must be set with 'duration'")]})


def nodepool_schema():
    labels = dict(string_map("Labels every node launched from the NodePool gets.",
                             maxProperties=100,
                             **{"x-kubernetes-map-type": "atomic",
                                "x-kubernetes-validations": key_rules(True, True)}))
    labels["additionalProperties"] = {"type": "string", "maxLength": 63, "pattern": LABEL_VALUE}
    template = obj("What the NodeClaims launched from this NodePool look like.", {
        "metadata": obj("Labels and annotations for the nodes.", {
            "annotations": string_map("Annotations every node launched from the NodePool "
                                      "gets.", **{"x-kubernetes-map-type": "granular"}),
            "labels": labels,
        }),
        "spec": obj("The NodeClaim spec, without resource requests.", claim_spec_props(True),
                    required=["nodeClassRef", "requirements"]),
    }, required=["spec"])
    disruption = obj("When and how Karpenter may disrupt the NodePool's nodes.", {
        "budgets": budgets(),
        "consolidateAfter": string("How long a node must stay consolidatable before it is "
                                   "consolidated, or Never.", default="0s",
                                   pattern=NILLABLE_DURATION),
        "consolidationPolicy": string("Which nodes consolidation considers.",
                                      default="WhenEmptyOrUnderutilized",
                                      enum=["WhenEmpty", "WhenEmptyOrUnderutilized",
                                            "Balanced"]),
    }, default={"consolidateAfter": "0s"})
    spec = obj("Which nodes the NodePool may launch, and how they are disrupted.", {
        "disruption": disruption,
        "limits": quantity_map("Upper bounds on the total resources (and nodes) of the "
                               "NodePool."),
        "replicas": integer("A fixed node count: makes the NodePool static (alpha).",
                            minimum=0),
        "template": template,
        "weight": integer("Priority among NodePools; higher is tried first.", fmt="int32",
                          minimum=1, maximum=100),
    }, required=["template"], **{"x-kubernetes-validations": [
        cel("has(self.replicas) == has(oldSelf.replicas)",
            "Cannot transition NodePool between static (replicas set) and dynamic (replicas "
            "unset) provisioning modes"),
        cel("!has(self.replicas) || (!has(self.limits) || size(self.limits) == 0 || "
            "(size(self.limits) == 1 && 'nodes' in self.limits))",
            "only 'limits.nodes' is supported on static NodePools"),
        cel("!has(self.replicas) || !has(self.weight)",
            "'weight' is not supported on static NodePools"),
    ]})
    status = obj("What the NodePool has launched.", {
        "conditions": conditions(),
        "nodeClassObservedGeneration": integer("The node class generation last observed."),
        "nodes": integer("How many nodes the NodePool has.", default=0),
        "resources": quantity_map("The resources of the NodePool's nodes, summed."),
    })
    return top("A NodePool: a template and constraints for the nodes Karpenter launches.",
               spec, status)


def nodeclaim_schema():
    props = claim_spec_props(False)
    props["resources"] = obj("The resources the node is launched for.", {
        "requests": quantity_map("The least resources the node must have."),
    })
    spec = obj("The node Karpenter is asked to launch.", props,
               required=["nodeClassRef", "requirements"],
               **{"x-kubernetes-validations": [cel("self == oldSelf", "spec is immutable")]})
    status = obj("The launched node.", {
        "allocatable": quantity_map("What the node offers to pods."),
        "capacity": quantity_map("What the node has."),
        "conditions": conditions(reason_pattern=r"^([A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?|)$",
                                 required=["lastTransitionTime", "status", "type"],
                                 reason_min=False),
        "imageID": string("The image the node booted."),
        "lastPodEventTime": string("When a pod was last scheduled to or removed from the node.",
                                   format="date-time"),
        "nodeName": string("The Node object's name."),
        "providerID": string("The cloud provider's ID of the instance."),
    })
    return top("A NodeClaim: one node Karpenter launches and manages.", spec, status)


# ---------------------------------------------------------------- karpenter.k8s.aws

# Tags Karpenter sets itself: (exact key or key prefix, as the message shows
# it, the CEL rule as Karpenter writes it).
RESTRICTED_TAG_RULES = [
    ("eks:eks-cluster-name", "eks:eks-cluster-name", "self.all(k, k !='eks:eks-cluster-name')"),
    ("kubernetes.io/cluster", "kubernetes.io/cluster/",
     "self.all(k, !k.startsWith('kubernetes.io/cluster') )"),
    ("karpenter.sh/nodepool", "karpenter.sh/nodepool", "self.all(k, k != 'karpenter.sh/nodepool')"),
    ("karpenter.sh/nodeclaim", "karpenter.sh/nodeclaim",
     "self.all(k, k !='karpenter.sh/nodeclaim')"),
    ("karpenter.k8s.aws/ec2nodeclass", "karpenter.k8s.aws/ec2nodeclass",
     "self.all(k, k !='karpenter.k8s.aws/ec2nodeclass')"),
]
RESTRICTED_TAGS = [key for key, _, rule in RESTRICTED_TAG_RULES if "startsWith" not in rule]
RESTRICTED_TAG_PREFIXES = [key for key, _, rule in RESTRICTED_TAG_RULES if "startsWith" in rule]
for _key, _, _rule in RESTRICTED_TAG_RULES:
    assert "'%s'" % _key in _rule, _rule

EMPTY_TAGS = cel("self.all(k, k != '' && self[k] != '')",
                 "empty tag keys or values aren't supported")


def selector_tags():
    return string_map("Tags to match; '*' matches any value.", maxProperties=20,
                      **{"x-kubernetes-validations": [EMPTY_TAGS]})


# AMI alias families: (alias family, the amiFamily it implies, its article).
ALIAS_FAMILIES = [("al2", "AL2", "an"), ("al2023", "AL2023", "an"),
                  ("bottlerocket", "Bottlerocket", "a"), ("windows2019", "Windows2019", "a"),
                  ("windows2022", "Windows2022", "a"), ("windows2025", "Windows2025", "a")]
ALIASES = [a for a, _, _ in ALIAS_FAMILIES]
WINDOWS_ALIASES = [a for a in ALIASES if a.startswith("windows")]


def ami_alias():
    return string("An EKS-optimized AMI as family@version (version 'latest' follows new "
                  "releases).", maxLength=30, **{"x-kubernetes-validations": [
                      cel("self.matches('^[a-zA-Z0-9]+@.+$')",
                          "'alias' is improperly formatted, must match the format "
                          "'family@version'"),
                      cel("self.split('@')[0] in [%s]" % ",".join("'%s'" % a for a in ALIASES),
                          "family is not supported, must be one of the following: %s"
                          % ", ".join("'%s'" % a for a in ALIASES)),
                      cel("self.split('@')[0] in [%s] ? self.split('@')[1] == 'latest' : true"
                          % ",".join("'%s'" % a for a in WINDOWS_ALIASES),
                          "windows families may only specify version 'latest'")]})


def family_rule(alias, family, article):
    return cel("!has(self.amiFamily) || (self.amiSelectorTerms.exists(x, has(x.alias) && "
               "x.alias.find('^[^@]+') == '%s') ? (self.amiFamily == 'Custom' || "
               "self.amiFamily == '%s') : true)" % (alias, family),
               "if set, amiFamily must be '%s' or 'Custom' when using %s %s alias"
               % (family, article, family))


def ec2_selectors():
    ami = array("How AMIs are found; terms are ORed.", obj(
        "One way to match AMIs; its fields are ANDed.", {
            "alias": ami_alias(),
            "id": string("An AMI ID.", pattern="ami-[0-9a-z]+"),
            "name": string("An AMI name (not its Name tag)."),
            "owner": string("An account ID, self, amazon or aws-marketplace."),
            "ssmParameter": string("An SSM parameter holding an AMI ID."),
            "tags": selector_tags(),
        }), minItems=1, maxItems=30, **{"x-kubernetes-validations": [
            cel("self.all(x, has(x.tags) || has(x.id) || has(x.name) || has(x.alias) || "
                "has(x.ssmParameter))",
                "expected at least one, got none, ['tags', 'id', 'name', 'alias', "
                "'ssmParameter']"),
            cel("!self.exists(x, has(x.id) && (has(x.alias) || has(x.tags) || has(x.name) || "
                "has(x.owner)))",
                "'id' is mutually exclusive, cannot be set with a combination of other fields "
                "in amiSelectorTerms"),
            cel("!self.exists(x, has(x.alias) && (has(x.id) || has(x.tags) || has(x.name) || "
                "has(x.owner)))",
                "'alias' is mutually exclusive, cannot be set with a combination of other "
                "fields in amiSelectorTerms"),
            cel("!(self.exists(x, has(x.alias)) && self.size() != 1)",
                "'alias' is mutually exclusive, cannot be set with a combination of other "
                "amiSelectorTerms")]})
    subnets = array("How subnets are found; terms are ORed.", obj(
        "One way to match subnets; its fields are ANDed.", {
            "id": string("A subnet ID.", pattern="subnet-[0-9a-z]+"),
            "tags": selector_tags(),
        }), maxItems=30, **{"x-kubernetes-validations": [
            cel("self.size() != 0", "subnetSelectorTerms cannot be empty"),
            cel("self.all(x, has(x.tags) || has(x.id))",
                "expected at least one, got none, ['tags', 'id']"),
            cel("!self.all(x, has(x.id) && has(x.tags))",
                "'id' is mutually exclusive, cannot be set with a combination of other fields "
                "in a subnet selector term")]})
    groups = array("How security groups are found; terms are ORed.", obj(
        "One way to match security groups; its fields are ANDed.", {
            "id": string("A security group ID.", pattern="sg-[0-9a-z]+"),
            "name": string("A security group name (not its Name tag)."),
            "tags": selector_tags(),
        }), maxItems=30, **{"x-kubernetes-validations": [
            cel("self.size() != 0", "securityGroupSelectorTerms cannot be empty"),
            cel("self.all(x, has(x.tags) || has(x.id) || has(x.name))",
                "expected at least one, got none, ['tags', 'id', 'name']"),
            cel("!self.all(x, has(x.id) && (has(x.tags) || has(x.name)))",
                "'id' is mutually exclusive, cannot be set with a combination of other fields "
                "in a security group selector term"),
            cel("!self.all(x, has(x.name) && (has(x.tags) || has(x.id)))",
                "'name' is mutually exclusive, cannot be set with a combination of other fields "
                "in a security group selector term")]})
    reservations = array("How capacity reservations are found; terms are ORed.", obj(
        "One way to match capacity reservations; its fields are ANDed.", {
            "id": string("A capacity reservation ID.", pattern="^cr-[0-9a-z]+$"),
            "instanceMatchCriteria": string("How instances match the reservation.",
                                            enum=["open", "targeted"]),
            "ownerID": string("The owning account ID.", pattern="^[0-9]{12}$"),
            "tags": selector_tags(),
        }), maxItems=30, **{"x-kubernetes-validations": [
            cel("self.all(x, has(x.tags) || has(x.id) || has(x.instanceMatchCriteria))",
                "expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']"),
            cel("!self.all(x, has(x.id) && (has(x.tags) || has(x.ownerID) || "
                "has(x.instanceMatchCriteria)))",
                "'id' is mutually exclusive, cannot be set along with other fields in a "
                "capacity reservation selector term")]})
    return ami, subnets, groups, reservations


def block_devices():
    ebs = obj("An EBS volume for the device.", {
        "deleteOnTermination": boolean("Delete the volume when the instance terminates."),
        "encrypted": boolean("Encrypt the volume."),
        "iops": integer("Provisioned IOPS (gp3, io1, io2)."),
        "kmsKeyID": string("The KMS key that encrypts the volume."),
        "snapshotID": string("A snapshot to create the volume from."),
        "throughput": integer("Throughput in MiB/s (gp3)."),
        "volumeInitializationRate": integer("How fast a volume from a snapshot is "
                                            "initialized, in MiB/s.", fmt="int32",
                                            minimum=100, maximum=300),
        "volumeSize": string("The volume's size in Gi, G, Ti or T.", pattern=(
            r"^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi|"
            r"(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G|"
            r"([1-9]||[1-5][0-7]|58)Ti|([1-9]||[1-5][0-9]|6[0-3]|64)T)$")),
        "volumeType": string("The EBS volume type.",
                             enum=["standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"]),
    }, **{"x-kubernetes-validations": [
        cel("has(self.snapshotID) || has(self.volumeSize)",
            "snapshotID or volumeSize must be defined"),
        cel("!has(self.volumeInitializationRate) || (has(self.snapshotID) && "
            "self.snapshotID != '')",
            "snapshotID must be set when volumeInitializationRate is set")]})
    return array("Block devices attached to the nodes.", obj("One block device.", {
        "deviceName": string("The device name, such as /dev/xvda."),
        "ebs": ebs,
        "rootVolume": boolean("Whether the kubelet's root directory lives here (at most one)."),
    }), maxItems=50, **{"x-kubernetes-validations": [
        cel("self.filter(x, has(x.rootVolume)?x.rootVolume==true:false).size() <= 1",
            "must have only one blockDeviceMappings with rootVolume")]})


def ec2_spec():
    ami, subnets, groups, reservations = ec2_selectors()
    no_empty = lambda field: {"x-kubernetes-validations": [
        cel("self != ''", "%s cannot be empty" % field)]}
    props = {
        "amiFamily": string("The AMI family: user data format and default block devices.",
                            enum=["AL2", "AL2023", "Bottlerocket", "Custom", "Windows2019",
                                  "Windows2022", "Windows2025"]),
        "amiSelectorTerms": ami,
        "associatePublicIPAddress": boolean("Give the nodes public IP addresses."),
        "blockDeviceMappings": block_devices(),
        "capacityReservationSelectorTerms": reservations,
        "connectionTracking": obj("Idle connection tracking timeouts for the nodes' ENIs.", {
            "tcpEstablishedTimeout": integer("Seconds an idle established TCP flow is kept.",
                                             fmt="int32", minimum=60, maximum=432000),
            "udpStreamTimeout": integer("Seconds an idle UDP stream is kept.", fmt="int32",
                                        minimum=60, maximum=180),
            "udpTimeout": integer("Seconds an idle one-way UDP flow is kept.", fmt="int32",
                                  minimum=30, maximum=60),
        }, **{"x-kubernetes-validations": [cel(
            "has(self.tcpEstablishedTimeout) || has(self.udpStreamTimeout) || "
            "has(self.udpTimeout)",
            "at least one of tcpEstablishedTimeout, udpStreamTimeout, or udpTimeout must be "
            "set")]}),
        "context": string("Reserved by EC2 (the Fleet API's Context)."),
        "cpuOptions": obj("CPU options for the nodes.", {
            "nestedVirtualization": string("Nested virtualization on the instances.",
                                           enum=["enabled", "disabled"]),
        }),
        "detailedMonitoring": boolean("Detailed CloudWatch monitoring for the nodes."),
        "instanceProfile": string("An existing instance profile for the nodes (instead of "
                                  "role).", **no_empty("instanceProfile")),
        "instanceStorePolicy": string("How instance store disks are used.", enum=["RAID0"]),
        "ipPrefixCount": integer("IPv4 prefixes assigned to the primary interface.",
                                 fmt="int32", minimum=0),
        "kubelet": {"type": "object", "description": "KubeletConfiguration fields passed to "
                    "the nodes' kubelet.", "additionalProperties": {
                        "x-kubernetes-preserve-unknown-fields": True},
                    "x-kubernetes-preserve-unknown-fields": True},
        "metadataOptions": obj("Instance metadata service settings for the nodes.", {
            "httpEndpoint": string("The metadata endpoint.", default="enabled",
                                   enum=["enabled", "disabled"]),
            "httpProtocolIPv6": string("The IPv6 metadata endpoint.", default="disabled",
                                       enum=["enabled", "disabled"]),
            "httpPutResponseHopLimit": integer("Hops a metadata PUT response may travel.",
                                               default=1, minimum=1, maximum=64),
            "httpTokens": string("Whether session tokens (IMDSv2) are required.",
                                 default="required", enum=["required", "optional"]),
        }, default={"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled",
                    "httpPutResponseHopLimit": 1, "httpTokens": "required"}),
        "networkInterfaces": array("Network interfaces for the nodes.", obj(
            "One network interface.", {
                "deviceIndex": integer("The attachment's device index.", fmt="int32",
                                       minimum=0),
                "interfaceType": string("A normal interface or an EFA-only one.",
                                        enum=["interface", "efa-only"]),
                "networkCardIndex": integer("The network card it attaches to.", fmt="int32",
                                            minimum=0),
            }, required=["deviceIndex", "interfaceType", "networkCardIndex"]),
            maxItems=150, **{"x-kubernetes-validations": [
                cel("self.size() == 0 || self.exists(x, x.deviceIndex == 0 && "
                    "x.networkCardIndex == 0 && x.interfaceType == 'interface')",
                    "networkInterfaces must include a primary interface with "
                    "interfaceType='interface'"),
                cel("self.all(x, self.filter(y, x.networkCardIndex == y.networkCardIndex && "
                    "x.deviceIndex == y.deviceIndex).size() == 1 && (x.interfaceType != "
                    "'efa-only' || self.filter(y, x.networkCardIndex == y.networkCardIndex && "
                    "y.interfaceType == 'efa-only').size() == 1))",
                    "networkInterfaces must not have duplicate networkCardIndex and deviceIndex "
                    "pairs, and can have at most one efa device per network card")]}),
        "placementGroupSelector": obj("The placement group to launch into.", {
            "id": string("A placement group ID.", pattern="^pg-[0-9a-z]+$"),
            "name": string("A placement group name.", minLength=1),
        }, **{"x-kubernetes-validations": [
            cel("has(self.name) || has(self.id)", "expected at least one, got none, ['name', "
                "'id']"),
            cel("!(has(self.name) && has(self.id))", "'name' and 'id' are mutually exclusive")]}),
        "role": string("The IAM role of the nodes (Karpenter manages their instance profile).",
                       **no_empty("role")),
        "securityGroupSelectorTerms": groups,
        "subnetSelectorTerms": subnets,
        "tags": string_map("Tags for the instances, volumes and launch templates.", **{
            "x-kubernetes-validations": [
                cel("self.all(k, k != '')", "empty tag keys aren't supported"),
            ] + [cel(rule, "tag contains a restricted tag matching %s" % shown)
                 for _, shown, rule in RESTRICTED_TAG_RULES]}),
        "userData": string("User data for the nodes, merged with what Karpenter needs."),
    }
    rules = [cel("(has(self.role) && !has(self.instanceProfile)) || (!has(self.role) && "
                 "has(self.instanceProfile))",
                 "must specify exactly one of ['role', 'instanceProfile']")]
    for alias, family, article in ALIAS_FAMILIES:
        rules.append(family_rule(alias, family, article))
    rules.append(cel("self.amiSelectorTerms.exists(x, has(x.alias)) ? true : has(self.amiFamily)",
                     "must specify amiFamily if amiSelectorTerms does not contain an alias"))
    return obj("How EC2 instances are launched for nodes.", props,
               required=["amiSelectorTerms", "securityGroupSelectorTerms",
                         "subnetSelectorTerms"], **{"x-kubernetes-validations": rules})


def ec2_status():
    requirement = obj("A requirement an AMI satisfies.", {
        "key": string("The label key."),
        "operator": string("The operator."),
        "values": array("The values.", {"type": "string"},
                        **{"x-kubernetes-list-type": "atomic"}),
    }, required=["key", "operator"])
    return obj("What the EC2NodeClass resolved to.", {
        "amis": array("The AMIs found.", obj("One AMI.", {
            "deprecated": boolean("Whether the AMI is deprecated."),
            "id": string("The AMI ID."),
            "name": string("The AMI name."),
            "requirements": array("Which nodes the AMI is for.", requirement),
        }, required=["id", "requirements"])),
        "capacityReservations": array("The capacity reservations found.", obj(
            "One capacity reservation.", {
                "availabilityZone": string("Its availability zone."),
                "endTime": string("When it ends.", format="date-time"),
                "id": string("Its ID.", pattern="^cr-[0-9a-z]+$"),
                "instanceMatchCriteria": string("How instances match it.",
                                                enum=["open", "targeted"]),
                "instanceType": string("Its instance type."),
                "interruptible": boolean("Whether its capacity can be interrupted."),
                "ownerID": string("The owning account.", pattern="^[0-9]{12}$"),
                "reservationType": string("Its type.", default="default",
                                          enum=["default", "capacity-block"]),
                "state": string("Its state.", default="active", enum=["active", "expiring"]),
            }, required=["availabilityZone", "id", "instanceMatchCriteria", "instanceType",
                         "ownerID"])),
        "conditions": conditions(list_map=False),
        "instanceProfile": string("The instance profile in use."),
        "securityGroups": array("The security groups found.", obj("One security group.", {
            "id": string("Its ID."), "name": string("Its name.")}, required=["id"])),
        "subnets": array("The subnets found.", obj("One subnet.", {
            "id": string("Its ID."), "zone": string("Its availability zone."),
            "zoneID": string("Its availability zone ID.")}, required=["id", "zone"])),
    })


# ---------------------------------------------------------------- karpenter.kwok.sh


def kwok_status():
    # Ready from the start, as Karpenter's KWOKNodeClass: there is nothing to
    # resolve. A class set Ready=False by hand stops launches (NodeClassNotReady).
    ready = {"type": "Ready", "status": "True", "reason": "Ready", "message": "",
             "lastTransitionTime": "2024-01-01T00:00:00Z"}
    return obj("What the class resolved to.", {"conditions": conditions()},
               default={"conditions": [ready]})


def kwoknodeclass_schema():
    # No fields yet: Karpenter's nodeRegistrationDelay is not implemented, so the
    # API server refuses it (unknown field) rather than accepting and ignoring it.
    return top("A KWOKNodeClass: the node class of the kwok provider (Nodes without machines).",
               obj("The class's settings (none yet).", {}), kwok_status(), spec_required=False)


def ec2nodeclass_schema():
    return top("An EC2NodeClass: the AWS settings nodes are launched with.", ec2_spec(),
               ec2_status(), spec_required=False)


# ---------------------------------------------------------------- autoscaling.x-k8s.io


def capacitybuffer_schema():
    """CapacityBuffer v1beta1, the API Cluster Autoscaler and Karpenter share."""
    def ref(desc, props, required):
        return obj(desc, {k: string(v, minLength=1) if k != "apiGroup" else string(v)
                          for k, v in props.items()}, required=required)
    spec = obj("The headroom: the shape of one chunk and how many chunks.", {
        "limits": quantity_map("Resource totals the chunks may request at most; alone, as many "
                               "chunks as fit in them."),
        "percentage": integer("Chunks as a percentage of the scalableRef's replicas, rounded up, "
                              "at least 1.", fmt="int32", minimum=0),
        "podTemplateRef": ref("A PodTemplate in the buffer's namespace: the shape of one chunk.",
                              {"name": "The PodTemplate's name."}, ["name"]),
        "provisioningStrategy": string("How the buffer is used; buffer.x-k8s.io/active-capacity "
                                       "(placeholder pods the autoscaler provisions for).",
                                       default="buffer.x-k8s.io/active-capacity"),
        "replicas": integer("How many chunks; with percentage, the larger of the two.",
                            fmt="int32", minimum=0),
        "scalableRef": ref("A workload with a scale subresource (Deployment, StatefulSet or "
                           "ReplicaSet) whose pod template is the chunk's shape.",
                           {"apiGroup": "Its API group (apps; empty for the core group).",
                            "kind": "Its kind.", "name": "Its name."}, ["kind", "name"]),
    }, **{"x-kubernetes-validations": [
        cel("!has(self.podTemplateRef) || has(self.replicas) || has(self.limits)",
            "If podTemplateRef is set, replicas or limits must also be set"),
        cel("!(has(self.podTemplateRef) && has(self.scalableRef))",
            "You must define either PodTemplateRef or ScalableRef, but not both")]})
    status = obj("What the autoscaler made of the buffer.", {
        "conditions": conditions(required=["lastTransitionTime", "message", "reason", "status",
                                           "type"]),
        "podTemplateGeneration": integer("The generation of the PodTemplate used."),
        "podTemplateRef": obj("The PodTemplate used.", {"name": string("Its name.", minLength=1)},
                              required=["name"]),
        "provisioningStrategy": string("The strategy in use."),
        "replicas": integer("The chunks being kept.", fmt="int32"),
    })
    return top("A CapacityBuffer: spare capacity kept for pods that do not exist yet.", spec,
               status)


def namespaced(doc, categories, short):
    doc["spec"]["scope"] = "Namespaced"
    doc["spec"]["names"]["categories"] = categories
    doc["spec"]["names"]["shortNames"] = short
    return doc


# ---------------------------------------------------------------- NodeOverlay

# Resources a NodeOverlay's capacity may not set: the cloud reports them.
OVERLAY_RESTRICTED = ["cpu", "memory", "ephemeral-storage", "pods"]
PRICE_ADJUSTMENT = r"^(([+-]{1}(\d*\.?\d+))|(\+{1}\d*\.?\d+%)|(^(-\d{1,2}(\.\d+)?%)$)|(-100%))$"


def overlay_requirements():
    item = obj("A node selector requirement on the labels of instance types and offerings.", {
        "key": string("The label key the requirement is about.", maxLength=316,
                      pattern=QUALIFIED_NAME,
                      **{"x-kubernetes-validations": key_rules(False, False)}),
        "operator": string("How the key relates to the values.",
                           enum=["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte",
                                 "Lte"]),
        "values": array("The values: at least one for In and NotIn, none for Exists and "
                        "DoesNotExist, a single non-negative integer for Gt, Lt, Gte and Lte.",
                        {"type": "string", "maxLength": 63, "pattern": LABEL_VALUE},
                        **{"x-kubernetes-list-type": "atomic"}),
    }, required=["key", "operator"])
    return array(
        "Which instance types (and offerings) the overlay applies to: well-known labels, the "
        "NodePool's name and its template labels. Empty selects every instance type.", item,
        maxItems=100, **{"x-kubernetes-list-type": "atomic", "x-kubernetes-validations": [
            cel("self.all(x, x.operator == 'NotIn' ? x.values.size() != 0 : true)",
                "requirements with operator 'NotIn' must have a value defined"),
            cel("self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)",
                "requirements with operator 'In' must have a value defined"),
            cel("self.all(x, (x.operator == 'Gt' || x.operator == 'Lt' || x.operator == 'Gte' "
                "|| x.operator == 'Lte') ? (x.values.size() == 1 && int(x.values[0]) >= 0) "
                ": true)",
                "requirements operator 'Gt', 'Lt', 'Gte' or 'Lte' must have a single positive "
                "integer value"),
        ]})


def nodeoverlay_schema():
    capacity = quantity_map("Extended resources the selected instance types are assumed to "
                            "have, beside what the cloud reports (never cpu, memory, "
                            "ephemeral-storage or pods).")
    capacity["x-kubernetes-validations"] = [
        cel("self.all(x, !(x in [%s]))" % ", ".join("'%s'" % r for r in OVERLAY_RESTRICTED),
            "invalid resource restricted")]
    spec = obj("What the scheduling simulation assumes about the instance types selected.", {
        "capacity": capacity,
        "price": string("The hourly price every selected offering is assumed to cost.",
                        pattern=r"^\d+(\.\d+)?$"),
        "priceAdjustment": string("A change to the price of every selected offering: a signed "
                                  "amount (+0.5, -0.25) or a percentage (+10%, -15%).",
                                  pattern=PRICE_ADJUSTMENT),
        "requirements": overlay_requirements(),
        "weight": integer("Precedence among overlays that select the same instance type; "
                          "higher wins, absent is 0.", fmt="int32", minimum=1, maximum=10000),
    }, required=["requirements"], **{"x-kubernetes-validations": [
        cel("!has(self.price) || !has(self.priceAdjustment)",
            "cannot set both 'price' and 'priceAdjustment'")]})
    status = obj("Whether the overlay is applied.", {"conditions": conditions()})
    return top("A NodeOverlay: changes to the price and capacity of instance types the "
               "scheduling simulation assumes (alpha).", spec, status)


# ---------------------------------------------------------------- CRDs


def column(name, path, typ="string", priority=0):
    c = {"name": name, "type": typ, "jsonPath": path}
    if priority:
        c["priority"] = priority
    return c


READY = '.status.conditions[?(@.type=="Ready")].status'


def crd(group, kind, plural, schema, columns, subresources, short=None, version="v1"):
    names = {"categories": ["karpenter"], "kind": kind, "listKind": kind + "List",
             "plural": plural, "singular": kind.lower()}
    if short:
        names["shortNames"] = short
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "%s.%s" % (plural, group)},
        "spec": {"group": group, "names": names, "scope": "Cluster", "versions": [{
            "name": version, "served": True, "storage": True,
            "additionalPrinterColumns": columns,
            "schema": {"openAPIV3Schema": schema},
            "subresources": subresources}]},
    }


def all_crds():
    return {
        "karpenter.sh_nodepools.yaml": crd(
            "karpenter.sh", "NodePool", "nodepools", nodepool_schema(), [
                column("NodeClass", ".spec.template.spec.nodeClassRef.name"),
                column("Nodes", ".status.nodes"),
                column("Ready", READY),
                column("Age", ".metadata.creationTimestamp", "date"),
                column("Weight", ".spec.weight", "integer", 1),
                column("CPU", ".status.resources.cpu", priority=1),
                column("Memory", ".status.resources.memory", priority=1)],
            {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                     "statusReplicasPath": ".status.nodes"}}),
        "karpenter.sh_nodeclaims.yaml": crd(
            "karpenter.sh", "NodeClaim", "nodeclaims", nodeclaim_schema(), [
                column("Type", ".metadata.labels.node\\.kubernetes\\.io/instance-type"),
                column("Capacity", ".metadata.labels.karpenter\\.sh/capacity-type"),
                column("Zone", ".metadata.labels.topology\\.kubernetes\\.io/zone"),
                column("Node", ".status.nodeName"),
                column("Ready", READY),
                column("Age", ".metadata.creationTimestamp", "date"),
                column("ImageID", ".status.imageID", priority=1),
                column("ID", ".status.providerID", priority=1),
                column("NodePool", ".metadata.labels.karpenter\\.sh/nodepool", priority=1),
                column("NodeClass", ".spec.nodeClassRef.name", priority=1),
                column("Drifted", '.status.conditions[?(@.type=="Drifted")].status',
                       priority=1)],
            {"status": {}}),
        "karpenter.k8s.aws_ec2nodeclasses.yaml": crd(
            "karpenter.k8s.aws", "EC2NodeClass", "ec2nodeclasses", ec2nodeclass_schema(), [
                column("Ready", READY),
                column("Age", ".metadata.creationTimestamp", "date"),
                column("Role", ".spec.role", priority=1)],
            {"status": {}}, short=["ec2nc", "ec2ncs"]),
        "karpenter.sh_nodeoverlays.yaml": crd(
            "karpenter.sh", "NodeOverlay", "nodeoverlays", nodeoverlay_schema(), [
                column("Ready", READY),
                column("Age", ".metadata.creationTimestamp", "date"),
                column("Weight", ".spec.weight", "integer", 1)],
            {"status": {}}, short=["overlays"], version="v1alpha1"),
        "karpenter.kwok.sh_kwoknodeclasses.yaml": crd(
            "karpenter.kwok.sh", "KWOKNodeClass", "kwoknodeclasses", kwoknodeclass_schema(), [
                column("Ready", READY),
                column("Age", ".metadata.creationTimestamp", "date")],
            {"status": {}}, short=["kwoknc", "kwokncs"], version="v1alpha1"),
        "autoscaling.x-k8s.io_capacitybuffers.yaml": namespaced(crd(
            "autoscaling.x-k8s.io", "CapacityBuffer", "capacitybuffers", capacitybuffer_schema(), [
                column("Strategy", ".spec.provisioningStrategy"),
                column("PodTemplate", ".status.podTemplateRef.name"),
                column("Replicas", ".status.replicas", "integer"),
                column("ConditionsType", ".status.conditions[*].type"),
                column("ConditionsStatus", ".status.conditions[*].status"),
                column("ConditionsReason", ".status.conditions[*].reason"),
                column("Age", ".metadata.creationTimestamp", "date")],
            {"status": {}}, version="v1beta1"), ["autoscaling"], ["cb"]),
    }


# ---------------------------------------------------------------- C tables
#
# The webhook's validation and defaulting and the decoders read the schemas'
# enums, patterns, bounds and defaults from shared/api/crd_tables.[ch], written
# here from the same schemas, so the C code holds no copy of them.

NODEPOOL = "karpenter.sh_nodepools.yaml"
NODECLAIM = "karpenter.sh_nodeclaims.yaml"
EC2NODECLASS = "karpenter.k8s.aws_ec2nodeclasses.yaml"
NODEOVERLAY = "karpenter.sh_nodeoverlays.yaml"
CAPACITYBUFFER = "autoscaling.x-k8s.io_capacitybuffers.yaml"

NP_TEMPLATE = "spec.template.spec."
EC2_TERMS = ["amiSelectorTerms", "subnetSelectorTerms", "securityGroupSelectorTerms",
             "capacityReservationSelectorTerms"]

# (C name, CRD, field path, schema keywords, other fields that must agree).
# A path walks properties by name; "[]" steps into an array's items.
C_FIELDS = [
    # karpenter.sh: NodePool, NodeClaim and NodeOverlay; autoscaling.x-k8s.io: CapacityBuffer
    ("consolidation_policy", NODEPOOL, "spec.disruption.consolidationPolicy",
     ["enum", "default"], []),
    ("budget_reason", NODEPOOL, "spec.disruption.budgets[].reasons[]", ["enum"], []),
    ("budget_reasons", NODEPOOL, "spec.disruption.budgets[].reasons", ["maxItems"], []),
    ("budgets", NODEPOOL, "spec.disruption.budgets", ["maxItems"], []),
    ("budget_nodes", NODEPOOL, "spec.disruption.budgets[].nodes", ["pattern", "default"], []),
    ("budget_schedule", NODEPOOL, "spec.disruption.budgets[].schedule", ["pattern"], []),
    ("budget_duration", NODEPOOL, "spec.disruption.budgets[].duration", ["pattern"], []),
    ("nillable_duration", NODEPOOL, NP_TEMPLATE + "expireAfter", ["pattern"],
     [(NODEPOOL, "spec.disruption.consolidateAfter"), (NODECLAIM, "spec.expireAfter")]),
    ("duration", NODEPOOL, NP_TEMPLATE + "terminationGracePeriod", ["pattern"],
     [(NODECLAIM, "spec.terminationGracePeriod")]),
    ("nodepool_weight", NODEPOOL, "spec.weight", ["minimum", "maximum"], []),
    ("nodepool_replicas", NODEPOOL, "spec.replicas", ["minimum"], []),
    ("nodepool_labels", NODEPOOL, "spec.template.metadata.labels", ["maxProperties"], []),
    ("requirements", NODEPOOL, NP_TEMPLATE + "requirements", ["maxItems"],
     [(NODECLAIM, "spec.requirements"), (NODEOVERLAY, "spec.requirements")]),
    ("requirement_operator", NODEPOOL, NP_TEMPLATE + "requirements[].operator", ["enum"],
     [(NODECLAIM, "spec.requirements[].operator"),
      (NODEOVERLAY, "spec.requirements[].operator")]),
    ("requirement_key", NODEPOOL, NP_TEMPLATE + "requirements[].key", ["maxLength"],
     [(NODECLAIM, "spec.requirements[].key"), (NODEOVERLAY, "spec.requirements[].key")]),
    ("qualified_name", NODEPOOL, NP_TEMPLATE + "requirements[].key", ["pattern"],
     [(NODECLAIM, "spec.requirements[].key"), (NODEOVERLAY, "spec.requirements[].key")] +
     [(crd, prefix + taints + "[]." + member)
      for crd, prefix in [(NODEPOOL, NP_TEMPLATE), (NODECLAIM, "spec.")]
      for taints in ["taints", "startupTaints"] for member in ["key", "value"]]),
    ("min_values", NODEPOOL, NP_TEMPLATE + "requirements[].minValues", ["minimum", "maximum"],
     [(NODECLAIM, "spec.requirements[].minValues")]),
    ("taint_effect", NODEPOOL, NP_TEMPLATE + "taints[].effect", ["enum"],
     [(NODEPOOL, NP_TEMPLATE + "startupTaints[].effect"), (NODECLAIM, "spec.taints[].effect"),
      (NODECLAIM, "spec.startupTaints[].effect")]),
    ("taint_key", NODEPOOL, NP_TEMPLATE + "taints[].key", ["minLength"],
     [(NODEPOOL, NP_TEMPLATE + "startupTaints[].key"), (NODECLAIM, "spec.taints[].key"),
      (NODECLAIM, "spec.startupTaints[].key")]),
    ("node_class_group", NODEPOOL, NP_TEMPLATE + "nodeClassRef.group", ["pattern"],
     [(NODECLAIM, "spec.nodeClassRef.group")]),
    ("overlay_price", NODEOVERLAY, "spec.price", ["pattern"], []),
    ("overlay_price_adjustment", NODEOVERLAY, "spec.priceAdjustment", ["pattern"], []),
    ("overlay_weight", NODEOVERLAY, "spec.weight", ["minimum", "maximum"], []),
    ("buffer_provisioning_strategy", CAPACITYBUFFER, "spec.provisioningStrategy", ["default"],
     []),
    # karpenter.k8s.aws: EC2NodeClass
    ("ami_family", EC2NODECLASS, "spec.amiFamily", ["enum"], []),
    ("selector_terms", EC2NODECLASS, "spec.subnetSelectorTerms", ["maxItems"],
     [(EC2NODECLASS, "spec." + t) for t in EC2_TERMS]),
    ("selector_tags", EC2NODECLASS, "spec.subnetSelectorTerms[].tags", ["maxProperties"],
     [(EC2NODECLASS, "spec.%s[].tags" % t) for t in EC2_TERMS]),
    ("ami_id", EC2NODECLASS, "spec.amiSelectorTerms[].id", ["pattern"], []),
    ("ami_alias", EC2NODECLASS, "spec.amiSelectorTerms[].alias", ["maxLength"], []),
    ("subnet_id", EC2NODECLASS, "spec.subnetSelectorTerms[].id", ["pattern"], []),
    ("security_group_id", EC2NODECLASS, "spec.securityGroupSelectorTerms[].id", ["pattern"],
     []),
    ("capacity_reservation_id", EC2NODECLASS, "spec.capacityReservationSelectorTerms[].id",
     ["pattern"], []),
    ("instance_match_criteria", EC2NODECLASS,
     "spec.capacityReservationSelectorTerms[].instanceMatchCriteria", ["enum"], []),
    ("owner_id", EC2NODECLASS, "spec.capacityReservationSelectorTerms[].ownerID", ["pattern"],
     []),
    ("block_device_mappings", EC2NODECLASS, "spec.blockDeviceMappings", ["maxItems"], []),
    ("volume_size", EC2NODECLASS, "spec.blockDeviceMappings[].ebs.volumeSize", ["pattern"], []),
    ("volume_type", EC2NODECLASS, "spec.blockDeviceMappings[].ebs.volumeType", ["enum"], []),
    ("volume_initialization_rate", EC2NODECLASS,
     "spec.blockDeviceMappings[].ebs.volumeInitializationRate", ["minimum", "maximum"], []),
    ("network_interfaces", EC2NODECLASS, "spec.networkInterfaces", ["maxItems"], []),
    ("interface_type", EC2NODECLASS, "spec.networkInterfaces[].interfaceType", ["enum"], []),
    ("network_card_index", EC2NODECLASS, "spec.networkInterfaces[].networkCardIndex",
     ["minimum"], [(EC2NODECLASS, "spec.networkInterfaces[].deviceIndex")]),
    ("placement_group_id", EC2NODECLASS, "spec.placementGroupSelector.id", ["pattern"], []),
    ("placement_group_name", EC2NODECLASS, "spec.placementGroupSelector.name", ["minLength"],
     []),
    ("http_endpoint", EC2NODECLASS, "spec.metadataOptions.httpEndpoint", ["enum"],
     [(EC2NODECLASS, "spec.metadataOptions.httpProtocolIPv6")]),
    ("nested_virtualization", EC2NODECLASS, "spec.cpuOptions.nestedVirtualization", ["enum"],
     []),
    ("http_tokens", EC2NODECLASS, "spec.metadataOptions.httpTokens", ["enum"], []),
    ("hop_limit", EC2NODECLASS, "spec.metadataOptions.httpPutResponseHopLimit",
     ["minimum", "maximum"], []),
    ("tcp_established_timeout", EC2NODECLASS, "spec.connectionTracking.tcpEstablishedTimeout",
     ["minimum", "maximum"], []),
    ("udp_stream_timeout", EC2NODECLASS, "spec.connectionTracking.udpStreamTimeout",
     ["minimum", "maximum"], []),
    ("udp_timeout", EC2NODECLASS, "spec.connectionTracking.udpTimeout", ["minimum", "maximum"],
     []),
    ("ip_prefix_count", EC2NODECLASS, "spec.ipPrefixCount", ["minimum"], []),
    ("instance_store_policy", EC2NODECLASS, "spec.instanceStorePolicy", ["enum"], []),
]

# Lists that live in CEL rules rather than in a keyword: (C name, values).
ALIAS_RULES = "EC2NodeClass spec.amiSelectorTerms[].alias (its CEL rules)"
C_LISTS = [
    ("ami_alias_family", ALIASES, ALIAS_RULES),
    ("ami_alias_implied_family", [f for _, f, _ in ALIAS_FAMILIES], ALIAS_RULES),
    ("ami_alias_article", [a for _, _, a in ALIAS_FAMILIES], ALIAS_RULES),
    ("overlay_restricted_capacity", OVERLAY_RESTRICTED,
     "NodeOverlay spec.capacity (its CEL rule)"),
    ("restricted_tag", RESTRICTED_TAGS, "EC2NodeClass spec.tags: keys refused (its CEL rules)"),
    ("restricted_tag_prefix", RESTRICTED_TAG_PREFIXES,
     "EC2NodeClass spec.tags: key prefixes refused (its CEL rules)"),
    ("aws_label", AWS_LABELS, "karpenter.k8s.aws label keys allowed in NodePools, NodeClaims "
     "and NodeOverlays (their key CEL rules)"),
]

# The admission kinds whose defaults the webhook applies (status is a
# subresource: its defaults are the API server's).
C_DEFAULTS = [("nodepool", NODEPOOL), ("nodeclaim", NODECLAIM),
              ("ec2nodeclass", EC2NODECLASS), ("nodeoverlay", NODEOVERLAY)]

C_SUFFIX = {"pattern": "PATTERN", "minimum": "MIN", "maximum": "MAX", "maxItems": "MAX_ITEMS",
            "maxLength": "MAX_LENGTH", "minLength": "MIN_LENGTH",
            "maxProperties": "MAX_PROPERTIES", "default": "DEFAULT"}


def openapi(docs, name):
    return docs[name]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def field(docs, name, path):
    node = openapi(docs, name)
    for part in path.split("."):
        items = part.endswith("[]")
        node = node["properties"][part[:-2] if items else part]
        if items:
            node = node["items"]
    return node


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def c_constant(value):
    """An enum value as a C identifier part: WhenEmpty -> WHEN_EMPTY, efa-only -> EFA_ONLY."""
    out = ""
    for i, ch in enumerate(value):
        if ch.isupper() and i and (value[i - 1].islower() or value[i - 1].isdigit()):
            out += "_"
        out += "_" if not ch.isalnum() else ch.upper()
    return out


def c_value(value):
    return c_string(value) if isinstance(value, str) else str(value)


def c_list(name, values, header, source):
    upper = name.upper()
    header.append("#define KP_CRD_%s_COUNT %d" % (upper, len(values)))
    header.append("enum kp_crd_%s {" % name)
    header.extend("    KP_CRD_%s_%s," % (upper, c_constant(v)) for v in values)
    header.append("};")
    header.append("extern const char *const kp_crd_%s_names[]; /* NULL-terminated */" % name)
    c_names(name, values, source)


def c_names(name, values, source):
    source.append("const char *const kp_crd_%s_names[] = {" % name)
    source.extend("    %s," % c_string(v) for v in values)
    source.append("    NULL,")
    source.append("};")


def c_field(docs, entry, header, source):
    name, crd_name, path, keywords, same = entry
    node = field(docs, crd_name, path)
    header.append("")
    kind = lambda crd_file: docs[crd_file]["spec"]["names"]["kind"]
    fields = ["%s %s" % (kind(crd_name), path)] + ["%s %s" % (kind(c), p) for c, p in same
                                                     if (c, p) != (crd_name, path)]
    header.append("/* " + "\n * ".join(fields) + " */")
    for key in keywords:
        if key not in node:
            raise SystemExit("%s %s has no %s" % (crd_name, path, key))
        for other_crd, other_path in same:
            other = field(docs, other_crd, other_path)
            if other.get(key) != node[key]:
                raise SystemExit("%s %s and %s %s differ in %s, but share %s"
                                 % (crd_name, path, other_crd, other_path, key, name))
        if key == "enum":
            c_list(name, node[key], header, source)
        else:
            header.append("#define KP_CRD_%s_%s %s" % (name.upper(), C_SUFFIX[key],
                                                         c_value(node[key])))


def defaults_of(node, path, out):
    """(path, JSON) for every default below `node`, parents first; a parent's
    scalar and object members before its arrays (the webhook's patch order)."""
    if "default" in node and path:
        out.append(("/".join(path), json.dumps(node["default"], separators=(",", ":"))))
    if "items" in node:
        defaults_of(node["items"], path + ["*"], out)
    props = node.get("properties", {})
    for arrays in (False, True):
        for key in sorted(props):
            if (props[key].get("type") == "array") == arrays:
                if path or key != "status":
                    defaults_of(props[key], path + [key], out)
    return out


C_NOTE = ("/* Generated by scripts/gen-crds.py from the CRD schemas; edit that script, not this "
          "file. */")


def c_tables(docs):
    header = [C_NOTE, "#ifndef KP_API_CRD_TABLES_H", "#define KP_API_CRD_TABLES_H", "",
              "#include <stddef.h>", "", "/* clang-format off */"]
    source = [C_NOTE, '#include "api/crd_tables.h"', "", "/* clang-format off */"]
    for entry in C_FIELDS:
        c_field(docs, entry, header, source)
    for name, values, where in C_LISTS:
        header.append("")
        header.append("/* %s */" % where)
        header.append("#define KP_CRD_%s_COUNT %d" % (name.upper(), len(values)))
        header.append("extern const char *const kp_crd_%s_names[]; /* NULL-terminated */" % name)
        c_names(name, values, source)
    header += ["", "/* A default: where (members joined by '/', \"*\" for every array element) "
               "and its JSON. */", "typedef struct kp_crd_default {", "    const char *path;",
               "    const char *json;", "} kp_crd_default;"]
    for kind, crd_name in C_DEFAULTS:
        header.append("extern const kp_crd_default kp_crd_%s_defaults[]; /* ends with NULLs */"
                      % kind)
        source.append("const kp_crd_default kp_crd_%s_defaults[] = {" % kind)
        for path, value in defaults_of(openapi(docs, crd_name), [], []):
            source.append("    {%s, %s}," % (c_string(path), c_string(value)))
        source.append("    {NULL, NULL},")
        source.append("};")
    header += ["/* clang-format on */", "", "#endif"]
    source.append("/* clang-format on */")
    return "\n".join(header) + "\n", "\n".join(source) + "\n"


def without_cel(node):
    if isinstance(node, dict):
        return {k: without_cel(v) for k, v in node.items() if k != "x-kubernetes-validations"}
    if isinstance(node, list):
        return [without_cel(v) for v in node]
    return node


HEADER = ("# Generated by scripts/gen-crds.py; edit that script, not this file.\n"
          "# %s\n---\n")


def render(doc, note):
    body = yaml.safe_dump(doc, sort_keys=False, width=100, default_flow_style=False)
    return HEADER % note + body


def main():
    check = "--check" in sys.argv[1:]
    outputs = {}
    docs = all_crds()
    outputs[C_HEADER], outputs[C_SOURCE] = c_tables(docs)
    for name, doc in docs.items():
        outputs[os.path.join(OUT, name)] = render(
            doc, "For Kubernetes 1.25 and later (CEL rules included).")
        outputs[os.path.join(COMPAT, name)] = render(
            without_cel(copy.deepcopy(doc)),
            "For Kubernetes 1.20-1.24: no CEL rules (the admission webhook enforces them).")
    stale = []
    for path, text in sorted(outputs.items()):
        old = open(path).read() if os.path.exists(path) else None
        if old == text:
            continue
        stale.append(os.path.relpath(path, ROOT))
        if not check:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
    if check and stale:
        print("out of date (run scripts/gen-crds.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    for path in stale:
        print("wrote " + path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
