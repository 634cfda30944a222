#include "kube/resources.h"

#include <string.h>

#define CORE(plural, kind, ns)                                                                     \
    {                                                                                              \
        "", "v1", "v1", plural, kind, ns                                                           \
    }
#define GROUP(g, v, plural, kind, ns)                                                              \
    {                                                                                              \
        g, v, g "/" v, plural, kind, ns                                                            \
    }

static const kp_kube_resource table[KP_RES_COUNT] = {
    [KP_RES_POD] = CORE("pods", "Pod", true),
    [KP_RES_NODE] = CORE("nodes", "Node", false),
    [KP_RES_NAMESPACE] = CORE("namespaces", "Namespace", false),
    [KP_RES_EVENT] = CORE("events", "Event", true),
    [KP_RES_PVC] = CORE("persistentvolumeclaims", "PersistentVolumeClaim", true),
    [KP_RES_PV] = CORE("persistentvolumes", "PersistentVolume", false),
    [KP_RES_CONFIGMAP] = CORE("configmaps", "ConfigMap", true),
    [KP_RES_SERVICE] = CORE("services", "Service", true),
    [KP_RES_REPLICATIONCONTROLLER] = CORE("replicationcontrollers", "ReplicationController", true),
    [KP_RES_STORAGECLASS] = GROUP("storage.k8s.io", "v1", "storageclasses", "StorageClass", false),
    [KP_RES_CSINODE] = GROUP("storage.k8s.io", "v1", "csinodes", "CSINode", false),
    [KP_RES_VOLUMEATTACHMENT] =
        GROUP("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", false),
    [KP_RES_DAEMONSET] = GROUP("apps", "v1", "daemonsets", "DaemonSet", true),
    [KP_RES_DEPLOYMENT] = GROUP("apps", "v1", "deployments", "Deployment", true),
    [KP_RES_REPLICASET] = GROUP("apps", "v1", "replicasets", "ReplicaSet", true),
    [KP_RES_STATEFULSET] = GROUP("apps", "v1", "statefulsets", "StatefulSet", true),
    [KP_RES_JOB] = GROUP("batch", "v1", "jobs", "Job", true),
    [KP_RES_PDB] = GROUP("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true),
    [KP_RES_LEASE] = GROUP("coordination.k8s.io", "v1", "leases", "Lease", true),
    [KP_RES_PRIORITYCLASS] =
        GROUP("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", false),
    [KP_RES_CRD] = GROUP("apiextensions.k8s.io", "v1", "customresourcedefinitions",
                         "CustomResourceDefinition", false),
    [KP_RES_NODEPOOL] = GROUP("karpenter.sh", "v1", "nodepools", "NodePool", false),
    [KP_RES_NODECLAIM] = GROUP("karpenter.sh", "v1", "nodeclaims", "NodeClaim", false),
    [KP_RES_EC2NODECLASS] =
        GROUP("karpenter.k8s.aws", "v1", "ec2nodeclasses", "EC2NodeClass", false),
    [KP_RES_KWOKNODECLASS] =
        GROUP("karpenter.kwok.sh", "v1alpha1", "kwoknodeclasses", "KWOKNodeClass", false),
    [KP_RES_PODTEMPLATE] = CORE("podtemplates", "PodTemplate", true),
    [KP_RES_CAPACITYBUFFER] =
        GROUP("autoscaling.x-k8s.io", "v1beta1", "capacitybuffers", "CapacityBuffer", true),
    [KP_RES_NODEOVERLAY] = GROUP("karpenter.sh", "v1alpha1", "nodeoverlays", "NodeOverlay", false),
};

static const kp_kube_resource pdb_v1beta1 =
    GROUP("policy", "v1beta1", "poddisruptionbudgets", "PodDisruptionBudget", true);

const kp_kube_resource *kp_kube_resource_get(enum kp_kube_res res)
{
    return (unsigned)res < KP_RES_COUNT ? &table[res] : NULL;
}

const kp_kube_resource *kp_kube_resource_pdb_v1beta1(void)
{
    return &pdb_v1beta1;
}

enum kp_kube_res kp_kube_resource_find(const char *name)
{
    for (int i = 0; i < KP_RES_COUNT; i++)
        if (strcmp(table[i].plural, name) == 0 || strcmp(table[i].kind, name) == 0)
            return (enum kp_kube_res)i;
    return KP_RES_COUNT;
}

static int unreserved(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

int kp_kube_escape(kp_buf *out, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    int err = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && !err; p++) {
        if (unreserved(*p)) {
            err = kp_buf_putc(out, (char)*p);
        } else {
            char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            err = kp_buf_append(out, esc, 3);
        }
    }
    return err;
}

static int segment(kp_buf *out, const char *s)
{
    int err = kp_buf_putc(out, '/');
    return err < 0 ? err : kp_kube_escape(out, s);
}

int kp_kube_resource_path(kp_buf *out, const kp_kube_resource *r, const char *ns, const char *name,
                          const char *subresource)
{
    int err = *r->group ? kp_buf_printf(out, "/apis/%s/%s", r->group, r->version)
                        : kp_buf_printf(out, "/api/%s", r->version);
    if (!err && r->namespaced && ns && *ns) {
        err = kp_buf_puts(out, "/namespaces");
        if (!err) err = segment(out, ns);
    }
    if (!err) err = kp_buf_printf(out, "/%s", r->plural);
    if (!err && name) err = segment(out, name);
    if (!err && name && subresource) err = kp_buf_printf(out, "/%s", subresource);
    return err;
}
