/*
 * Decoding Nodes, and dispatching any object on apiVersion and kind.
 */
#include "test_decode_util.h"

#define MI (INT64_C(1024) * 1024 * 1000)

Test(decode_node, full)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "node_full.json", &obj);
    cr_assert_eq(obj.kind, KP_KIND_NODE);
    const kp_node *n = &obj.u.node;
    cr_expect_str_eq(n->meta.name, "ip-192-168-71-87.us-west-2.compute.internal");
    cr_expect_str_eq(kp_labels_get(&n->meta.labels, "karpenter.sh/nodepool"), "default");
    cr_expect_str_eq(n->provider_id, "aws:///us-west-2a/i-0123456789abcdef0");
    cr_expect(n->unschedulable);
    cr_assert_eq(n->n_taints, 2);
    cr_expect_str_eq(n->taints[0].key, "karpenter.sh/disrupted");
    cr_expect_eq(n->taints[0].effect, KP_EFFECT_NO_SCHEDULE);
    cr_expect_str_eq(n->taints[1].value, "gpu");
    cr_expect_eq(n->taints[1].effect, KP_EFFECT_PREFER_NO_SCHEDULE);
    cr_expect_eq(MILLI(&n->capacity, "cpu"), 2000);
    cr_expect_eq(MILLI(&n->capacity, "memory"), 7910 * MI);
    cr_expect_eq(MILLI(&n->capacity, "ephemeral-storage"), INT64_C(20959212) * 1024 * 1000);
    cr_expect_eq(MILLI(&n->allocatable, "cpu"), 1930);
    cr_expect_eq(MILLI(&n->allocatable, "ephemeral-storage"), INT64_C(18242267924000));
    cr_expect_not_null(kp_resource_list_get(&n->allocatable, "hugepages-2Mi"));
    cr_expect_null(kp_resource_list_get(&n->allocatable, "nvidia.com/gpu"));
    cr_expect(kp_conditions_is_true(&n->conditions, "Ready"));
    cr_expect_not(kp_conditions_is_true(&n->conditions, "MemoryPressure"));
    cr_expect_str_eq(kp_conditions_get(&n->conditions, "Ready")->message,
                     "kubelet is posting ready status");
    cr_expect_str_eq(n->node_info.kubelet_version, "v1.30.0-eks-036c24b");
    cr_expect_str_eq(n->node_info.architecture, "amd64");
    cr_expect_str_eq(n->node_info.operating_system, "linux");
    cr_expect_str_eq(n->node_info.container_runtime_version, "containerd://1.7.11");
    kp_arena_free(arena);
}

Test(decode_node, minimal_and_allocatable_defaults_to_capacity)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena, "{'apiVersion':'v1','kind':'Node','status':{'capacity':{'cpu':'4'}}}", &obj);
    const kp_node *n = &obj.u.node;
    cr_expect_str_eq(n->provider_id, "");
    cr_expect_not(n->unschedulable);
    cr_expect_eq(n->n_taints, 0);
    cr_expect_eq(MILLI(&n->allocatable, "cpu"), 4000);
    cr_expect_str_eq(n->node_info.kubelet_version, "");
    kp_arena_free(arena);
}

/* A JSON object may repeat a key (cJSON keeps both): the last one written wins,
 * as in Go, and the maps come out sorted by key. */
Test(decode_node, repeated_map_keys_keep_the_last)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'v1','kind':'Node','metadata':{'labels':{'z':'1','a':'x','z':'2',"
              "'m':null}},'status':{'capacity':{'cpu':'4','memory':'1Gi','cpu':'8'}}}",
              &obj);
    const kp_node *n = &obj.u.node;
    cr_assert_eq(n->meta.labels.count, 3);
    cr_expect_str_eq(n->meta.labels.items[0].key, "a");
    cr_expect_str_eq(n->meta.labels.items[1].key, "m");
    cr_expect_str_eq(n->meta.labels.items[1].value, "");
    cr_expect_str_eq(n->meta.labels.items[2].key, "z");
    cr_expect_str_eq(n->meta.labels.items[2].value, "2");
    cr_assert_eq(n->capacity.count, 2);
    cr_expect_eq(MILLI(&n->capacity, "cpu"), 8000);
    cr_expect_str_eq(n->capacity.items[0].name, "cpu");
    cr_expect_str_eq(n->capacity.items[1].name, "memory");
    kp_arena_free(arena);
}

static const decode_error_case node_errors[] = {
    {"{'spec':{'taints':[{'key':'k','effect':'Bar'}]}}",
     "spec.taints[0].effect: Unsupported value: \"Bar\": supported values: \"NoExecute\", "
     "\"NoSchedule\", \"PreferNoSchedule\""},
    {"{'spec':{'taints':[{'key':'k','value':1,'effect':'NoSchedule'}]}}",
     "spec.taints[0].value: expected string, got number"},
    {"{'spec':{'unschedulable':'yes'}}", "spec.unschedulable: expected boolean, got string"},
    {"{'spec':{'providerID':[]}}", "spec.providerID: expected string, got array"},
    {"{'status':{'capacity':{'cpu':'2x'}}}", "status.capacity.cpu: quantity \"2x\"..."},
    {"{'status':{'allocatable':{'pods':false}}}",
     "status.allocatable.pods: expected quantity (string or number), got boolean"},
    {"{'status':{'conditions':[{'type':1}]}}",
     "status.conditions[0].type: expected string, got number"},
    {"{'status':{'conditions':[{'observedGeneration':'1'}]}}",
     "status.conditions[0].observedGeneration: expected integer, got string"},
    {"{'status':{'nodeInfo':{'kubeletVersion':130}}}",
     "status.nodeInfo.kubeletVersion: expected string, got number"},
    {"{'status':'Ready'}", "status: expected object, got string"},
};

Test(decode_node, errors)
{
    RUN_ERROR_CASES("v1", "Node", node_errors);
}

Test(decode_object, kind_lookup_and_names)
{
    static const struct {
        const char *api_version, *kind;
        enum kp_kind want;
    } table[] = {
        {"v1", "Pod", KP_KIND_POD},
        {"v1", "Node", KP_KIND_NODE},
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
        {"v1", "PersistentVolumeClaim", KP_KIND_PVC},
        {"v1", "PersistentVolume", KP_KIND_PV},
        {"storage.k8s.io/v1", "StorageClass", KP_KIND_STORAGE_CLASS},
        {"karpenter.sh/v1beta1", "NodePool", KP_KIND_UNKNOWN},
        {"v1", "ConfigMap", KP_KIND_UNKNOWN},
        {"apps/v1", "pod", KP_KIND_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        enum kp_kind k = kp_kind_lookup(table[i].api_version, table[i].kind);
        cr_expect_eq(k, table[i].want, "%s %s", table[i].api_version, table[i].kind);
        if (k != KP_KIND_UNKNOWN) cr_expect_str_eq(kp_kind_name(k), table[i].kind);
    }
    cr_expect_str_eq(kp_kind_name(KP_KIND_UNKNOWN), "Unknown");
}

Test(decode_object, unknown_kind_is_not_found)
{
    kp_arena *arena = kp_arena_new();
    cJSON *json = sq_json("{'apiVersion':'v1','kind':'ConfigMap','data':{'a':'b'}}");
    kp_object obj;
    obj.kind = KP_KIND_NODE;
    cr_expect_eq(kp_decode_object(arena, json, &obj), KP_ENOTFOUND);
    cr_expect_str_eq(kp_error_last(), "unsupported kind ConfigMap (apiVersion v1)");
    cr_expect_eq(obj.kind, KP_KIND_NODE, "output untouched");
    cJSON_Delete(json);
    kp_arena_free(arena);
}

static const decode_error_case type_meta_errors[] = {
    {"{'kind':'Pod','apiVersion':''}", "apiVersion: Required value"},
    {"{'apiVersion':'v1','kind':''}", "kind: Required value"},
    {"{'apiVersion':1}", "apiVersion: expected string, got number"},
    {"{'apiVersion':'v1','kind':['Pod']}", "kind: expected string, got array"},
    {"{'apiVersion':'v1','kind':'Pod','metadata':{'name':1}}",
     "metadata.name: expected string, got number"},
};

Test(decode_object, type_meta_errors)
{
    RUN_ERROR_CASES("v1", "Pod", type_meta_errors);
}

Test(decode_object, not_an_object)
{
    kp_arena *arena = kp_arena_new();
    cJSON *json = cJSON_Parse("\"Pod\"");
    kp_object obj;
    cr_expect_eq(kp_decode_object(arena, json, &obj), KP_EINVALID);
    cr_expect_str_eq(kp_error_last(), "expected object, got string");
    cJSON_Delete(json);
    kp_arena_free(arena);
}

Test(decode_object, meta_accessor_covers_every_kind)
{
    static const char *const docs[] = {
        "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'x'}}",
        "{'apiVersion':'v1','kind':'Node','metadata':{'name':'x'}}",
        "{'apiVersion':'karpenter.sh/v1','kind':'NodePool','metadata':{'name':'x'}}",
        "{'apiVersion':'karpenter.sh/v1','kind':'NodeClaim','metadata':{'name':'x'}}",
        "{'apiVersion':'karpenter.k8s.aws/v1','kind':'EC2NodeClass','metadata':{'name':'x'}}",
        "{'apiVersion':'apps/v1','kind':'DaemonSet','metadata':{'name':'x'}}",
        "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'x'}}",
        "{'apiVersion':'apps/v1','kind':'StatefulSet','metadata':{'name':'x'}}",
        "{'apiVersion':'apps/v1','kind':'ReplicaSet','metadata':{'name':'x'}}",
        "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'x'}}",
        "{'apiVersion':'policy/v1','kind':'PodDisruptionBudget','metadata':{'name':'x'}}",
        "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':'x'}}",
        "{'apiVersion':'v1','kind':'PersistentVolume','metadata':{'name':'x'}}",
        "{'apiVersion':'storage.k8s.io/v1','kind':'StorageClass','metadata':{'name':'x'}}",
    };
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        kp_arena *arena = kp_arena_new();
        kp_object obj;
        decode_sq(arena, docs[i], &obj);
        const kp_object_meta *m = kp_object_get_meta(&obj);
        cr_assert_not_null(m, "%s", docs[i]);
        cr_expect_str_eq(m->name, "x", "%s", docs[i]);
        cr_expect_str_eq(obj.kind_name, kp_kind_name(obj.kind));
        kp_arena_free(arena);
    }
    kp_object unknown;
    memset(&unknown, 0, sizeof(unknown));
    cr_expect_null(kp_object_get_meta(&unknown));
}
