/*
 * Informers cache objects trimmed to what the program reads
 * (kube/informer_transform.h). Two things must hold: the heavy parts nothing
 * reads are gone, and nothing the controller decides from changed: the same
 * cluster, trimmed and not, gives the same plan.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "format/yaml.h"
#include "helpers/scenario.h"
#include "kube/informer_transform.h"
#include "helpers/assert.h"

#define MANAGED "managedFields: [{manager: kubectl, operation: Apply, fieldsType: FieldsV1, fieldsV1: {f:spec: {}}}]"
#define BUSY_CONTAINER                                                                                             \
    "{name: app, image: app:1, command: [run], args: [--fast], env: [{name: A, value: b}], workingDir: /w,"       \
    " volumeMounts: [{name: data, mountPath: /d}], livenessProbe: {httpGet: {path: /, port: 80}},"               \
    " securityContext: {runAsUser: 1}, imagePullPolicy: Always, terminationMessagePath: /dev/log,"               \
    " ports: [{containerPort: 80, hostPort: 8080}], resources: {requests: {cpu: 700m, memory: 1Gi}}}"

static const char *const cluster_docs[] = {
    "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default, " MANAGED "}\n"
    "spec: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default},"
    " requirements: []}}}\n",
    "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, " MANAGED "}\n"
    "spec: {selector: {matchLabels: {ds: agent}}, template: {metadata: {labels: {ds: agent}}, spec: {"
    "containers: [{name: a, image: agent:1, env: [{name: X, value: y}], resources: {requests: {cpu: 200m}}}],"
    " volumes: [{name: cfg, configMap: {name: agent-config, items: [{key: a, path: b}]}}]}}}\n",
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1, " MANAGED ", annotations: "
    "{kubectl.kubernetes.io/last-applied-configuration: '{\"big\": true}', keep: me}, labels: {"
    "kubernetes.io/hostname: n1, topology.kubernetes.io/zone: test-zone-1, kubernetes.io/arch: amd64}}\n"
    "spec: {providerID: 'kwok://n1'}\n"
    "status: {capacity: {cpu: '4', memory: 8Gi, pods: '20'}, allocatable: {cpu: '4', memory: 8Gi, pods: '20'},"
    " images: [{names: [app:1], sizeBytes: 1000}], daemonEndpoints: {kubeletEndpoint: {Port: 10250}},"
    " nodeInfo: {kubeletVersion: v1.20.2, architecture: amd64, operatingSystem: linux},"
    " conditions: [{type: Ready, status: 'True'}], addresses: [{type: InternalIP, address: 10.0.0.1}]}\n",
    "apiVersion: v1\nkind: Pod\nmetadata: {name: running, namespace: default, " MANAGED "}\n"
    "spec: {nodeName: n1, containers: [" BUSY_CONTAINER "], volumes: [{name: data, persistentVolumeClaim: "
    "{claimName: data}}, {name: token, projected: {sources: [{serviceAccountToken: {path: token}}]}}]}\n"
    "status: {phase: Running, podIP: 10.1.0.1, podIPs: [{ip: 10.1.0.1}], hostIP: 10.0.0.1, qosClass: Burstable,"
    " containerStatuses: [{name: app, ready: true, restartCount: 0, image: app:1, imageID: x, state: {running: "
    "{startedAt: '2024-01-01T00:00:00Z'}}, resources: {requests: {cpu: 250m}}, allocatedResources: {cpu: 250m}}],"
    " conditions: [{type: Ready, status: 'True'}]}\n",
    "apiVersion: v1\nkind: Pod\nmetadata: {name: pending, namespace: default, " MANAGED "}\n"
    "spec: {initContainers: [{name: side, image: s:1, restartPolicy: Always, env: [{name: Q, value: r}],"
    " resources: {requests: {cpu: 300m}}}], containers: [" BUSY_CONTAINER "],"
    " volumes: [{name: scratch, emptyDir: {sizeLimit: 1Gi}}, {name: eph, ephemeral: {volumeClaimTemplate: "
    "{spec: {storageClassName: fast, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}}}]}\n"
    "status: {phase: Pending, conditions: [{type: PodScheduled, status: 'False', reason: Unschedulable}]}\n",
    "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast}\nprovisioner: ebs.csi.aws.com\n"
    "volumeBindingMode: WaitForFirstConsumer\n",
    "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: default}\n"
    "spec: {storageClassName: fast, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n",
};

static enum kp_kube_res res_of(const cJSON *doc)
{
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "kind"));
    if (kind && !strcmp(kind, "Pod"))
        return KP_RES_POD;
    if (kind && !strcmp(kind, "Node"))
        return KP_RES_NODE;
    if (kind && !strcmp(kind, "DaemonSet"))
        return KP_RES_DAEMONSET;
    if (kind && !strcmp(kind, "NodePool"))
        return KP_RES_NODEPOOL;
    return KP_RES_PVC;
}

static cJSON *parse(const char *yaml)
{
    cJSON *doc = NULL;
    KP_ASSERT_OK(kp_yaml_parse_one(&doc, yaml, strlen(yaml), "doc", NULL));
    return doc;
}

/* The cluster as JSON documents, trimmed or not. */
static char *cluster(bool trimmed)
{
    size_t cap = 1 << 16, len = 0;
    char *out = calloc(1, cap);
    for (size_t i = 0; i < sizeof(cluster_docs) / sizeof(cluster_docs[0]); i++) {
        cJSON *doc = parse(cluster_docs[i]);
        if (trimmed)
            kp_informer_trim(res_of(doc), doc);
        char *text = cJSON_PrintUnformatted(doc);
        size_t n = strlen(text);
        cr_assert_lt(len + n + 8, cap);
        len += (size_t)snprintf(out + len, cap - len, "---\n%s\n", text);
        free(text);
        cJSON_Delete(doc);
    }
    return out;
}

static char *plan_of(bool trimmed)
{
    kp_scenario s;
    char *yaml = cluster(trimmed);
    KP_ASSERT_OK(kp_scenario_run(&s, yaml, "builtin", NULL));
    cr_assert_eq(s.plan->n_claims, 1, "the pending pod needs a node");
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(s.json, "summary"), "solveMillis");
    char *text = cJSON_PrintUnformatted(s.json);
    kp_scenario_free(&s);
    free(yaml);
    return text;
}

Test(informer_transform, the_plan_is_the_same_from_trimmed_objects)
{
    char *whole = plan_of(false), *trimmed = plan_of(true);
    cr_expect_str_eq(trimmed, whole);
    free(whole);
    free(trimmed);
}

static const cJSON *at(const cJSON *obj, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok && obj; tok = strtok_r(NULL, ".", &save))
        obj = cJSON_IsArray(obj) ? cJSON_GetArrayItem(obj, (int)strtol(tok, NULL, 10)) : cJSON_GetObjectItemCaseSensitive(obj, tok);
    return obj;
}

Test(informer_transform, pods_lose_what_nothing_reads)
{
    cJSON *pod = parse(cluster_docs[3]);
    kp_informer_trim(KP_RES_POD, pod);
    cr_expect_null(at(pod, "metadata.managedFields"));
    cr_expect_not_null(at(pod, "metadata.name"));
    const cJSON *c = at(pod, "spec.containers.0");
    cr_expect_eq(cJSON_GetArraySize(c), 4, "name, image, ports, resources");
    cr_expect_not_null(at(c, "resources.requests.cpu"));
    cr_expect_not_null(at(c, "ports.0.hostPort"));
    cr_expect_null(at(c, "env"));
    cr_expect_null(at(c, "livenessProbe"));
    cr_expect_str_eq(at(pod, "spec.volumes.0.persistentVolumeClaim.claimName")->valuestring, "data");
    cr_expect(cJSON_IsObject(at(pod, "spec.volumes.1.projected")), "the source's kind stays");
    cr_expect_null(at(pod, "spec.volumes.1.projected.sources"));
    const cJSON *cs = at(pod, "status.containerStatuses.0");
    cr_expect_eq(cJSON_GetArraySize(cs), 3, "name, resources, allocatedResources (in-place resize)");
    cr_expect_not_null(at(cs, "allocatedResources.cpu"));
    cr_expect_null(at(cs, "state"));
    cr_expect_null(at(pod, "status.podIPs"));
    cr_expect_str_eq(at(pod, "status.phase")->valuestring, "Running");
    cr_expect_not_null(at(pod, "status.conditions.0"));
    cJSON_Delete(pod);
}

Test(informer_transform, nodes_lose_images_and_keep_the_rest)
{
    cJSON *node = parse(cluster_docs[2]);
    kp_informer_trim(KP_RES_NODE, node);
    cr_expect_null(at(node, "status.images"));
    cr_expect_null(at(node, "status.daemonEndpoints"));
    cr_expect_eq(cJSON_GetArraySize(at(node, "metadata.annotations")), 1, "only the last-applied one goes");
    cr_expect_not_null(at(node, "status.nodeInfo.kubeletVersion"));
    cr_expect_not_null(at(node, "status.addresses.0.address"));
    cr_expect_not_null(at(node, "status.allocatable.cpu"));
    cr_expect_not_null(at(node, "spec.providerID"));
    cJSON_Delete(node);
}

/* Fewer bytes to keep: the figure the cache's memory follows. */
Test(informer_transform, a_busy_pod_shrinks)
{
    cJSON *pod = parse(cluster_docs[3]);
    char *before = cJSON_PrintUnformatted(pod);
    kp_informer_trim(KP_RES_POD, pod);
    char *after = cJSON_PrintUnformatted(pod);
    cr_expect_lt(strlen(after) * 2, strlen(before), "%zu -> %zu bytes", strlen(before), strlen(after));
    free(before);
    free(after);
    cJSON_Delete(pod);
}

static cJSON *trimmed_pod(const char *name)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\","
             "\"labels\":{\"app.example.com/team\":\"blue\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
             "\"image\":\"i:1\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":\"Running\","
             "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"lastProbeTime\":null}]}}",
             name);
    cJSON *pod = cJSON_Parse(json);
    cr_assert_not_null(pod);
    kp_informer_trim(KP_RES_POD, pod);
    return pod;
}

Test(informer_transform, shared_string_tables_are_sorted_for_bisection)
{
    cr_expect(kp_informer_shared_tables_sorted());
}

/* The names and values Kubernetes repeats in every object are one constant
 * copy; the rest stay the object's own; the object reads and prints the same,
 * and duplicates and deletes cleanly (ASan checks every free). */
Test(informer_transform, well_known_names_and_values_are_shared)
{
    cJSON *a = trimmed_pod("a"), *b = trimmed_pod("b");
    const cJSON *ma = at(a, "metadata"), *mb = at(b, "metadata");
    cr_expect_eq(ma->string, mb->string, "\"metadata\" is one copy");
    cr_expect(ma->type & cJSON_StringIsConst);
    const cJSON *ra = at(a, "status.conditions.0.status"), *rb = at(b, "status.conditions.0.status");
    cr_expect_eq(ra->valuestring, rb->valuestring, "\"True\" is one copy");
    cr_expect(ra->type & cJSON_IsReference);
    cr_expect_str_eq(cJSON_GetStringValue(at(a, "metadata.name")), "a");
    cr_expect_neq(at(a, "metadata.name")->valuestring, at(b, "metadata.name")->valuestring);
    const cJSON *team = cJSON_GetObjectItemCaseSensitive(at(a, "metadata.labels"), "app.example.com/team");
    cr_expect(!(team->type & cJSON_StringIsConst), "an unknown label key stays the object's own");
    cr_expect_str_eq(cJSON_GetStringValue(team), "blue");

    char *text = cJSON_PrintUnformatted(a);
    cr_expect_str_eq(text, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"namespace\":"
                           "\"default\",\"labels\":{\"app.example.com/team\":\"blue\"}},\"spec\":{\"containers\":[{"
                           "\"name\":\"c\",\"image\":\"i:1\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},"
                           "\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":"
                           "\"True\",\"lastProbeTime\":null}]}}");
    free(text);
    cJSON *copy = cJSON_Duplicate(a, 1);
    cr_expect(cJSON_Compare(copy, a, 1));
    cJSON_Delete(a);
    cr_expect_str_eq(cJSON_GetStringValue(at(copy, "status.phase")), "Running", "the copy outlives the original");
    cJSON_Delete(copy);
    cJSON_Delete(b);
}
