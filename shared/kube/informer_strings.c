/*
 * Shared strings for cached objects (see informer_transform.h). cJSON gives
 * every member name and every string value an allocation of its own: of a
 * trimmed Pod's ~9 KiB, about a third is the same names ("lastTransitionTime",
 * "resources") and values ("True", "NoExecute") over and over. Those that
 * Kubernetes objects use everywhere point at the constants below instead,
 * flagged so that cJSON never frees them: cJSON_StringIsConst for a name
 * (cJSON_Duplicate keeps pointing at the constant, which lives as long as
 * the program), cJSON_IsReference for a value (a duplicate gets a copy).
 *
 * Both tables must stay sorted (strcmp order): they are searched by
 * bisection; test_kube_informer_transform checks the order.
 */
#include "kube/informer_transform.h"

#include <stdlib.h>
#include <string.h>

static const char *const names[] = {
    "Port",
    "address",
    "addresses",
    "allocatable",
    "allocatedResources",
    "annotations",
    "apiVersion",
    "app",
    "architecture",
    "blockOwnerDeletion",
    "bootID",
    "capacity",
    "claimName",
    "conditions",
    "containerRuntimeVersion",
    "containerStatuses",
    "containers",
    "controller",
    "cpu",
    "creationTimestamp",
    "daemonEndpoints",
    "defaultMode",
    "deletionGracePeriodSeconds",
    "deletionTimestamp",
    "dnsPolicy",
    "effect",
    "enableServiceLinks",
    "ephemeral-storage",
    "expireAfter",
    "finalizers",
    "generateName",
    "generation",
    "group",
    "hostIP",
    "image",
    "imageID",
    "imagePullPolicy",
    "initContainers",
    "ip",
    "karpenter.k8s.aws/ec2nodeclass",
    "karpenter.k8s.aws/instance-category",
    "karpenter.k8s.aws/instance-cpu",
    "karpenter.k8s.aws/instance-cpu-manufacturer",
    "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-generation",
    "karpenter.k8s.aws/instance-hypervisor",
    "karpenter.k8s.aws/instance-memory",
    "karpenter.k8s.aws/instance-size",
    "karpenter.sh/capacity-type",
    "karpenter.sh/do-not-disrupt",
    "karpenter.sh/initialized",
    "karpenter.sh/nodepool",
    "karpenter.sh/nodepool-hash",
    "karpenter.sh/nodepool-hash-version",
    "karpenter.sh/registered",
    "kernelVersion",
    "key",
    "kind",
    "kubeProxyVersion",
    "kubeletEndpoint",
    "kubeletVersion",
    "kubernetes.io/arch",
    "kubernetes.io/hostname",
    "kubernetes.io/os",
    "labels",
    "lastHeartbeatTime",
    "lastProbeTime",
    "lastState",
    "lastTransitionTime",
    "limits",
    "machineID",
    "matchExpressions",
    "matchLabels",
    "maxSkew",
    "memory",
    "message",
    "metadata",
    "mountPath",
    "name",
    "namespace",
    "node.kubernetes.io/instance-type",
    "nodeAffinity",
    "nodeClassRef",
    "nodeInfo",
    "nodeName",
    "nodeSelector",
    "nodeSelectorTerms",
    "observedGeneration",
    "operatingSystem",
    "operator",
    "osImage",
    "ownerReferences",
    "persistentVolumeClaim",
    "phase",
    "pod-template-hash",
    "podAffinity",
    "podAntiAffinity",
    "pods",
    "ports",
    "preemptionPolicy",
    "priority",
    "priorityClassName",
    "protocol",
    "providerID",
    "readOnly",
    "ready",
    "reason",
    "requests",
    "requiredDuringSchedulingIgnoredDuringExecution",
    "requirements",
    "resourceVersion",
    "resources",
    "restartCount",
    "restartPolicy",
    "running",
    "schedulerName",
    "secret",
    "secretName",
    "securityContext",
    "serviceAccount",
    "serviceAccountName",
    "spec",
    "startTime",
    "started",
    "startedAt",
    "state",
    "status",
    "systemUUID",
    "taints",
    "terminationGracePeriodSeconds",
    "timeAdded",
    "tolerationSeconds",
    "tolerations",
    "topology.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topologyKey",
    "topologySpreadConstraints",
    "type",
    "uid",
    "unschedulable",
    "value",
    "values",
    "volumeMounts",
    "volumes",
    "whenUnsatisfiable",
};

static const char *const values[] = {
    "",
    "Always",
    "BestEffort",
    "Burstable",
    "ClusterFirst",
    "ContainersReady",
    "DaemonSet",
    "DiskPressure",
    "DoNotSchedule",
    "Equal",
    "Exists",
    "Failed",
    "False",
    "Gt",
    "Guaranteed",
    "Hostname",
    "IfNotPresent",
    "In",
    "Initialized",
    "InternalIP",
    "Job",
    "Launched",
    "Lt",
    "MemoryPressure",
    "Never",
    "NoExecute",
    "NoSchedule",
    "Node",
    "NodeClaim",
    "NodePool",
    "NotIn",
    "OnFailure",
    "PIDPressure",
    "Pending",
    "Pod",
    "PodScheduled",
    "PreemptLowerPriority",
    "PreferNoSchedule",
    "Ready",
    "Registered",
    "ReplicaSet",
    "Running",
    "ScheduleAnyway",
    "StatefulSet",
    "Succeeded",
    "TCP",
    "True",
    "Unknown",
    "Unschedulable",
    "amd64",
    "apps/v1",
    "arm64",
    "default",
    "false",
    "karpenter.sh/termination",
    "karpenter.sh/v1",
    "kubernetes.io/hostname",
    "linux",
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "on-demand",
    "reserved",
    "spot",
    "topology.kubernetes.io/zone",
    "true",
    "v1",
};

static int by_text(const void *key, const void *elem)
{
    return strcmp(key, *(const char *const *)elem);
}

static const char *shared(const char *const *table, size_t n, const char *s)
{
    const char *const *hit = bsearch(s, table, n, sizeof(*table), by_text);
    return hit ? *hit : NULL;
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void share_one(cJSON *item)
{
    const char *s;
    if (item->string && !(item->type & cJSON_StringIsConst) &&
        (s = shared(names, COUNT(names), item->string)) != NULL) {
        free(item->string);
        item->string = (char *)s; /* never written: cJSON only reads and copies names */
        item->type |= cJSON_StringIsConst;
    }
    if (cJSON_IsString(item) && !(item->type & cJSON_IsReference) &&
        (s = shared(values, COUNT(values), item->valuestring)) != NULL) {
        free(item->valuestring);
        item->valuestring = (char *)s;
        item->type |= cJSON_IsReference;
    }
}

void kp_informer_share_strings(cJSON *obj)
{
    for (cJSON *item = obj ? obj->child : NULL; item; item = item->next) {
        share_one(item);
        if (item->child)
            kp_informer_share_strings(item);
    }
}

static bool sorted(const char *const *table, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (strcmp(table[i - 1], table[i]) >= 0)
            return false;
    return true;
}

bool kp_informer_shared_tables_sorted(void)
{
    return sorted(names, COUNT(names)) && sorted(values, COUNT(values));
}
