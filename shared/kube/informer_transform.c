/* Trimming objects before they are cached (see informer_transform.h). */
#include "kube/informer_transform.h"

#include <stdbool.h>
#include <string.h>

static cJSON *field(const cJSON *obj, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(obj, name);
}

static void drop(cJSON *obj, const char *name)
{
    if (cJSON_IsObject(obj))
        cJSON_DeleteItemFromObjectCaseSensitive(obj, name);
}

static bool is_one_of(const char *name, const char *const *names)
{
    for (; *names; names++)
        if (strcmp(name, *names) == 0)
            return true;
    return false;
}

/* Keep only the members of `obj` named in `keep`. */
static void keep_only(cJSON *obj, const char *const *keep)
{
    if (!cJSON_IsObject(obj))
        return;
    cJSON *el = obj->child;
    while (el) {
        cJSON *next = el->next;
        if (!el->string || !is_one_of(el->string, keep))
            cJSON_Delete(cJSON_DetachItemViaPointer(obj, el));
        el = next;
    }
}

static void trim_metadata(cJSON *obj)
{
    cJSON *meta = field(obj, "metadata");
    drop(meta, "managedFields");
    drop(field(meta, "annotations"), "kubectl.kubernetes.io/last-applied-configuration");
}

/* What the pod decoder and the kwok kubelet read of a container. */
static const char *const container_fields[] = {"name", "image", "resources", "restartPolicy", "ports", NULL};

static void trim_containers_as(cJSON *arr, const char *const *keep)
{
    cJSON *c;
    cJSON_ArrayForEach(c, arr) keep_only(c, keep);
}

static void trim_containers(cJSON *arr)
{
    trim_containers_as(arr, container_fields);
}

/* A volume's source matters by its kind, except for PVCs and ephemeral
 * volumes, whose claims the solver follows. */
static void trim_volumes(cJSON *arr)
{
    cJSON *v, *src;
    cJSON_ArrayForEach(v, arr)
    {
        cJSON_ArrayForEach(src, v)
        {
            if (!src->string || !cJSON_IsObject(src) || !strcmp(src->string, "persistentVolumeClaim") ||
                !strcmp(src->string, "ephemeral"))
                continue;
            while (src->child)
                cJSON_Delete(cJSON_DetachItemViaPointer(src, src->child));
        }
    }
}

static void trim_pod_spec(cJSON *spec)
{
    trim_containers(field(spec, "containers"));
    trim_containers(field(spec, "initContainers"));
    trim_containers(field(spec, "ephemeralContainers"));
    trim_volumes(field(spec, "volumes"));
}

static const char *const pod_status_unread[] = {"ephemeralContainerStatuses", "podIP", "podIPs", "hostIP",
                                                "hostIPs", "qosClass", NULL};

/* Of a container's status, what in-place resize makes count (pod_requests.c). */
static const char *const container_status_fields[] = {"name", "resources", "allocatedResources", NULL};

static const char *const node_status_unread[] = {"images", "daemonEndpoints", "config", NULL};

static void drop_all(cJSON *obj, const char *const *names)
{
    for (; *names; names++)
        drop(obj, *names);
}

void kp_informer_trim(enum kp_kube_res res, cJSON *obj)
{
    if (!cJSON_IsObject(obj))
        return;
    trim_metadata(obj);
    switch (res) {
    case KP_RES_POD:
        trim_pod_spec(field(obj, "spec"));
        drop_all(field(obj, "status"), pod_status_unread);
        trim_containers_as(field(field(obj, "status"), "containerStatuses"), container_status_fields);
        trim_containers_as(field(field(obj, "status"), "initContainerStatuses"), container_status_fields);
        break;
    case KP_RES_DAEMONSET:
        trim_pod_spec(field(field(field(obj, "spec"), "template"), "spec"));
        break;
    case KP_RES_NODE:
        drop_all(field(obj, "status"), node_status_unread);
        break;
    default:
        break;
    }
    kp_informer_share_strings(obj);
}
