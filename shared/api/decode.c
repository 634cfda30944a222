/*
 * Decoding any supported object: the apiVersion/kind table and the
 * dispatch to each kind's decoder.
 */
#include "api/decode.h"
#include "api/nodeoverlay.h"

#include "api/decode_internal.h"
#include "base/error.h"

#include <string.h>

typedef struct kind_entry {
    const char *api_version;
    const char *kind;
    enum kp_kind value;
} kind_entry;

static const kind_entry kinds[] = {
    {"v1", "Pod", KP_KIND_POD},
    {"v1", "Node", KP_KIND_NODE},
    {"v1", "PersistentVolumeClaim", KP_KIND_PVC},
    {"v1", "PersistentVolume", KP_KIND_PV},
    {"karpenter.sh/v1", "NodePool", KP_KIND_NODEPOOL},
    {"karpenter.sh/v1", "NodeClaim", KP_KIND_NODECLAIM},
    {"karpenter.k8s.aws/v1", "EC2NodeClass", KP_KIND_EC2NODECLASS},
    {"apps/v1", "DaemonSet", KP_KIND_DAEMONSET},
    {"apps/v1", "Deployment", KP_KIND_DEPLOYMENT},
    {"apps/v1", "StatefulSet", KP_KIND_STATEFULSET},
    {"apps/v1", "ReplicaSet", KP_KIND_REPLICASET},
    {"batch/v1", "Job", KP_KIND_JOB},
    {"policy/v1", "PodDisruptionBudget", KP_KIND_PDB},
    {"policy/v1beta1", "PodDisruptionBudget", KP_KIND_PDB},
    {"storage.k8s.io/v1", "StorageClass", KP_KIND_STORAGE_CLASS},
    {"karpenter.sh/v1alpha1", "NodeOverlay", KP_KIND_NODEOVERLAY},
    {"storage.k8s.io/v1", "CSINode", KP_KIND_CSINODE},
};

enum kp_kind kp_kind_lookup(const char *api_version, const char *kind)
{
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (strcmp(kinds[i].api_version, api_version) == 0 && strcmp(kinds[i].kind, kind) == 0)
            return kinds[i].value;
    }
    return KP_KIND_UNKNOWN;
}

const char *kp_kind_name(enum kp_kind kind)
{
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if (kinds[i].value == kind) return kinds[i].kind;
    }
    return "Unknown";
}

const kp_object_meta *kp_object_get_meta(const kp_object *obj)
{
    switch (obj->kind) {
    case KP_KIND_POD:
        return &obj->u.pod.meta;
    case KP_KIND_NODE:
        return &obj->u.node.meta;
    case KP_KIND_NODEPOOL:
        return &obj->u.nodepool.meta;
    case KP_KIND_NODECLAIM:
        return &obj->u.nodeclaim.meta;
    case KP_KIND_EC2NODECLASS:
        return &obj->u.ec2nodeclass.meta;
    case KP_KIND_DAEMONSET:
    case KP_KIND_DEPLOYMENT:
    case KP_KIND_STATEFULSET:
    case KP_KIND_REPLICASET:
    case KP_KIND_JOB:
        return &obj->u.workload.meta;
    case KP_KIND_PDB:
        return &obj->u.pdb.meta;
    case KP_KIND_PVC:
        return &obj->u.pvc.meta;
    case KP_KIND_PV:
        return &obj->u.pv.meta;
    case KP_KIND_STORAGE_CLASS:
        return &obj->u.storage_class.meta;
    case KP_KIND_NODEOVERLAY:
        return &obj->u.nodeoverlay.meta;
    case KP_KIND_CSINODE:
        return &obj->u.csinode.meta;
    case KP_KIND_UNKNOWN:
        break;
    }
    return NULL;
}

static int decode_body(kp_arena *arena, const cJSON *json, kp_object *obj)
{
    switch (obj->kind) {
    case KP_KIND_POD:
        return kp_decode_pod(arena, json, &obj->u.pod);
    case KP_KIND_NODE:
        return kp_decode_node(arena, json, &obj->u.node);
    case KP_KIND_NODEPOOL:
        return kp_decode_nodepool(arena, json, &obj->u.nodepool);
    case KP_KIND_NODECLAIM:
        return kp_decode_nodeclaim(arena, json, &obj->u.nodeclaim);
    case KP_KIND_EC2NODECLASS:
        return kp_decode_ec2nodeclass(arena, json, &obj->u.ec2nodeclass);
    case KP_KIND_DAEMONSET:
    case KP_KIND_DEPLOYMENT:
    case KP_KIND_STATEFULSET:
    case KP_KIND_REPLICASET:
    case KP_KIND_JOB:
        return kp_decode_workload(arena, json, obj->kind, &obj->u.workload);
    case KP_KIND_PDB:
        return kp_decode_pdb(arena, json, &obj->u.pdb);
    case KP_KIND_PVC:
        return kp_decode_pvc(arena, json, &obj->u.pvc);
    case KP_KIND_PV:
        return kp_decode_pv(arena, json, &obj->u.pv);
    case KP_KIND_STORAGE_CLASS:
        return kp_decode_storage_class(arena, json, &obj->u.storage_class);
    case KP_KIND_NODEOVERLAY:
        return kp_decode_nodeoverlay(arena, json, &obj->u.nodeoverlay);
    case KP_KIND_CSINODE:
        return kp_decode_csinode(arena, json, &obj->u.csinode);
    case KP_KIND_UNKNOWN:
        break;
    }
    return KP_ENOTFOUND;
}

int kp_decode_meta(kp_arena *arena, const cJSON *json, kp_object_meta *out)
{
    kp_decoder d;
    kp_object_meta meta;
    kp_dec_init(&d, arena);
    int err = kp_dec_expect_object(&d, json);
    if (err == 0)
        err = kp_dec_meta(&d, json, &meta);
    if (err == 0)
        *out = meta;
    return err;
}

int kp_decode_object(kp_arena *arena, const cJSON *json, kp_object *out)
{
    kp_decoder d;
    kp_object obj;
    int err;
    memset(&obj, 0, sizeof(obj));
    kp_dec_init(&d, arena);
    if ((err = kp_dec_expect_object(&d, json)) < 0 ||
        (err = kp_dec_string(&d, json, "apiVersion", &obj.api_version)) < 0 ||
        (err = kp_dec_string(&d, json, "kind", &obj.kind_name)) < 0)
        return err;
    if (!*obj.api_version) return kp_dec_required(&d, "apiVersion");
    if (!*obj.kind_name) return kp_dec_required(&d, "kind");
    obj.kind = kp_kind_lookup(obj.api_version, obj.kind_name);
    if (obj.kind == KP_KIND_UNKNOWN)
        return kp_error_set(KP_ENOTFOUND, "unsupported kind %s (apiVersion %s)", obj.kind_name,
                            obj.api_version);
    if ((err = decode_body(arena, json, &obj)) < 0) return err;
    *out = obj;
    return 0;
}
