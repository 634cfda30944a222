/*
 * NodeClaims as the provisioner creates them (Karpenter's ToNodeClaim), and
 * the NodePool template hash that later tells whether they drifted.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api/nodepool_hash.h"
#include "base/error.h"
#include "helpers/scenario.h"
#include "provisioning/nodeclaim_object.h"
#include "helpers/assert.h"

/* The first 8 bytes (big-endian) of SHA-256 over BASE_TEMPLATE's canonical form
 * {"metadata":{"labels":{"a":"1","b":"2"}},"spec":{"expireAfter":"720h","nodeClassRef":
 * {"group":"g","kind":"K","name":"n"},"taints":[{"effect":"NoExecute","key":"y"},
 * {"effect":"NoSchedule","key":"x"}]}}, computed independently of this code. */
#define PINNED_HASH "1872439950960552064"

#define POOL                                                                                                   \
    "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: general, uid: 1234-abcd}\n"                  \
    "spec:\n  template:\n    metadata:\n      labels: {team: web}\n      annotations: {note: hi}\n"             \
    "    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n"            \
    "      expireAfter: 720h\n      terminationGracePeriod: 1h\n"                                               \
    "      taints: [{key: dedicated, value: web, effect: NoSchedule}]\n"                                        \
    "      startupTaints: [{key: cni, effect: NoSchedule}]\n"                                                   \
    "      requirements:\n"                                                                                     \
    "        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n"                          \
    "        - {key: example.com/tier, operator: In, values: [gold]}\n"                                         \
    "        - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m5, c5], minValues: 2}\n"

#define POD                                                                                                    \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {tolerations: [{key: dedicated, operator: "    \
    "Exists}], containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]}\n"

static const char *str_at(const cJSON *o, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", path);
    const cJSON *cur = o;
    for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok && cur; tok = strtok_r(NULL, ".", &save))
        cur = cJSON_GetObjectItemCaseSensitive(cur, tok);
    return cJSON_IsString(cur) ? cur->valuestring : NULL;
}

static const cJSON *requirement(const cJSON *claim, const char *key)
{
    const cJSON *reqs = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(claim, "spec"), "requirements");
    const cJSON *r;
    cJSON_ArrayForEach(r, reqs) if (strcmp(str_at(r, "key"), key) == 0) return r;
    return NULL;
}

Test(nodeclaim_object, karpenter_shape)
{
    kp_scenario s;
    KP_ASSERT_OK(kp_scenario_run(&s, POOL POD, "builtin", NULL));
    cr_assert_eq(s.plan->n_claims, 1);
    cJSON *nc = kp_nodeclaim_object(s.plan, s.snap, 0, "42");
    cr_assert_not_null(nc);
    cr_expect_str_eq(str_at(nc, "apiVersion"), "karpenter.sh/v1");
    cr_expect_str_eq(str_at(nc, "kind"), "NodeClaim");
    cr_expect_str_eq(str_at(nc, "metadata.generateName"), "general-");
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nc, "metadata"), "labels");
    cr_expect_str_eq(str_at(labels, "team"), "web");
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(labels, "karpenter.sh/nodepool")->valuestring, "general");
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(labels, "karpenter.k8s.aws/ec2nodeclass")->valuestring,
                     "default");
    /* A custom label pinned to one value by the requirements becomes a label... */
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(labels, "example.com/tier")->valuestring, "gold");
    /* ...but a well-known one stays a requirement only. */
    cr_expect_null(cJSON_GetObjectItemCaseSensitive(labels, "karpenter.sh/capacity-type"));
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nc, "metadata"), "annotations");
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(ann, "karpenter.sh/nodepool-hash")->valuestring, "42");
    cr_expect_str_eq(cJSON_GetObjectItemCaseSensitive(ann, "karpenter.sh/nodepool-hash-version")->valuestring,
                     KP_NODEPOOL_HASH_VERSION);
    cr_expect_str_eq(str_at(ann, "note"), "hi");
    const cJSON *owner = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nc, "metadata"), "ownerReferences"), 0);
    cr_expect_str_eq(str_at(owner, "kind"), "NodePool");
    cr_expect_str_eq(str_at(owner, "uid"), "1234-abcd");
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(owner, "blockOwnerDeletion")));
    cr_expect_str_eq(str_at(nc, "spec.nodeClassRef.kind"), "EC2NodeClass");
    cr_expect_str_eq(str_at(nc, "spec.expireAfter"), "720h0m0s");
    cr_expect_str_eq(str_at(nc, "spec.terminationGracePeriod"), "1h0m0s");
    cr_expect_str_eq(str_at(nc, "spec.resources.requests.cpu"), "1");
    const cJSON *taints = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nc, "spec"), "taints");
    cr_expect_eq(cJSON_GetArraySize(taints), 1);
    cr_expect_str_eq(str_at(cJSON_GetArrayItem(taints, 0), "value"), "web");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nc, "spec"), "startupTaints");
    cr_expect_str_eq(str_at(cJSON_GetArrayItem(st, 0), "key"), "cni");
    /* Requirements: instance types listed, minValues kept, capacity type pinned. */
    const cJSON *it = requirement(nc, "node.kubernetes.io/instance-type");
    cr_assert_not_null(it);
    cr_expect_str_eq(str_at(it, "operator"), "In");
    cr_expect_gt(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(it, "values")), 1);
    const cJSON *fam = requirement(nc, "karpenter.k8s.aws/instance-family");
    cr_assert_not_null(fam);
    cr_expect_eq(cJSON_GetObjectItemCaseSensitive(fam, "minValues")->valueint, 2);
    const cJSON *ct = requirement(nc, "karpenter.sh/capacity-type");
    cr_expect_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ct, "values"), 0)->valuestring, "on-demand");
    /* The scheduling-only labels never reach the object. */
    cr_expect_null(requirement(nc, "karpenter.sh/registered"));
    cr_expect_null(requirement(nc, "kubernetes.io/hostname"));
    cJSON_Delete(nc);
    kp_scenario_free(&s);
}

Test(nodeclaim_object, no_hash_no_annotations)
{
    kp_scenario s;
    KP_ASSERT_OK(kp_scenario_run(&s, POOL POD, "builtin", NULL));
    cJSON *nc = kp_nodeclaim_object(s.plan, s.snap, 0, NULL);
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nc, "metadata"), "annotations");
    cr_expect_null(cJSON_GetObjectItemCaseSensitive(ann, "karpenter.sh/nodepool-hash"));
    cJSON_Delete(nc);
    kp_scenario_free(&s);
}

Test(nodeclaim_object, node_class_label)
{
    char buf[64];
    cr_expect_str_eq(kp_node_class_label("karpenter.k8s.aws", "EC2NodeClass", buf, sizeof(buf)),
                     "karpenter.k8s.aws/ec2nodeclass");
    cr_expect_str_eq(kp_node_class_label("karpenter.kwok.sh", "KWOKNodeClass", buf, sizeof(buf)),
                     "karpenter.kwok.sh/kwoknodeclass");
    cr_expect_str_eq(kp_node_class_label("g", "Kind", buf, 4), "g/k");
}

/* ------------------------------------------------------------------ hash */

static const char *hash_of(const char *json, char *buf)
{
    cJSON *o = cJSON_Parse(json);
    cr_assert_not_null(o, "bad test JSON: %s", json);
    kp_nodepool_hash(o, buf, KP_NODEPOOL_HASH_LEN);
    cJSON_Delete(o);
    return buf;
}

#define BASE_TEMPLATE                                                                                          \
    "\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}},\"spec\":{\"nodeClassRef\":{\"group\":\"g\","        \
    "\"kind\":\"K\",\"name\":\"n\"},\"taints\":[{\"key\":\"x\",\"effect\":\"NoSchedule\"},{\"key\":\"y\","   \
    "\"effect\":\"NoExecute\"}],\"expireAfter\":\"720h\""

Test(nodepool_hash, same_template_same_hash)
{
    char a[KP_NODEPOOL_HASH_LEN], b[KP_NODEPOOL_HASH_LEN];
    hash_of("{\"spec\":{\"template\":{" BASE_TEMPLATE "}}}}", a);
    /* Keys reordered, taints reordered, a requirement added, things outside
     * the template changed: none of it is drift. */
    hash_of("{\"spec\":{\"weight\":5,\"limits\":{\"cpu\":\"10\"},\"disruption\":{\"consolidateAfter\":\"1m\"},"
            "\"template\":{\"spec\":{\"expireAfter\":\"720h\",\"taints\":[{\"effect\":\"NoExecute\",\"key\":\"y\"},"
            "{\"key\":\"x\",\"effect\":\"NoSchedule\"}],\"nodeClassRef\":{\"name\":\"n\",\"kind\":\"K\",\"group\":"
            "\"g\"},\"requirements\":[{\"key\":\"k\",\"operator\":\"Exists\"}]},\"metadata\":{\"labels\":{\"b\":"
            "\"2\",\"a\":\"1\"},\"annotations\":{}}}}}",
            b);
    cr_expect_str_eq(a, b);
}

Test(nodepool_hash, template_changes_change_it)
{
    char base[KP_NODEPOOL_HASH_LEN], other[KP_NODEPOOL_HASH_LEN];
    hash_of("{\"spec\":{\"template\":{" BASE_TEMPLATE "}}}}", base);
    static const char *const changed[] = {
        "{\"spec\":{\"template\":{" BASE_TEMPLATE ",\"terminationGracePeriod\":\"1h\"}}}}",
        "{\"spec\":{\"template\":{" BASE_TEMPLATE ",\"startupTaints\":[{\"key\":\"s\",\"effect\":\"NoSchedule\"}]}}}}",
        "{\"spec\":{\"template\":{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"3\"}},\"spec\":{\"nodeClassRef\":"
        "{\"group\":\"g\",\"kind\":\"K\",\"name\":\"n\"},\"taints\":[{\"key\":\"x\",\"effect\":\"NoSchedule\"},"
        "{\"key\":\"y\",\"effect\":\"NoExecute\"}],\"expireAfter\":\"720h\"}}}}",
        "{\"spec\":{\"template\":{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}},\"spec\":{\"nodeClassRef\":"
        "{\"group\":\"g\",\"kind\":\"K\",\"name\":\"other\"},\"taints\":[{\"key\":\"x\",\"effect\":\"NoSchedule\"},"
        "{\"key\":\"y\",\"effect\":\"NoExecute\"}],\"expireAfter\":\"720h\"}}}}",
        "{\"spec\":{\"template\":{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}},\"spec\":{\"nodeClassRef\":"
        "{\"group\":\"g\",\"kind\":\"K\",\"name\":\"n\"},\"taints\":[{\"key\":\"x\",\"effect\":\"NoSchedule\"}],"
        "\"expireAfter\":\"720h\"}}}}",
    };
    for (size_t i = 0; i < sizeof(changed) / sizeof(changed[0]); i++)
        cr_expect_str_neq(hash_of(changed[i], other), base, "change %zu kept the hash", i);
}

Test(nodepool_hash, empty_values_are_absent)
{
    char a[KP_NODEPOOL_HASH_LEN], b[KP_NODEPOOL_HASH_LEN], c[KP_NODEPOOL_HASH_LEN];
    hash_of("{\"spec\":{\"template\":{\"spec\":{\"nodeClassRef\":{\"name\":\"n\"}}}}}", a);
    hash_of("{\"spec\":{\"template\":{\"metadata\":{\"labels\":{}},\"spec\":{\"taints\":[],\"nodeClassRef\":"
            "{\"name\":\"n\",\"group\":\"\"}}}}}",
            b);
    cr_expect_str_eq(a, b);
    /* No template at all hashes like an empty one. */
    hash_of("{\"spec\":{}}", b);
    hash_of("{\"spec\":{\"template\":{}}}", c);
    cr_expect_str_eq(b, c);
    cr_expect_str_neq(a, b);
}

Test(nodepool_hash, stable_across_releases)
{
    /* Changing how the hash is computed drifts every node in every cluster
     * on upgrade: this value may change only with KP_NODEPOOL_HASH_VERSION. */
    char h[KP_NODEPOOL_HASH_LEN];
    hash_of("{\"spec\":{\"template\":{" BASE_TEMPLATE "}}}}", h);
    cr_expect_str_eq(KP_NODEPOOL_HASH_VERSION, "c1");
    cr_expect_str_eq(h, PINNED_HASH, "hash is now %s", h);
}

#define OVERLAY(name, spec)                                                                                    \
    "---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: " name "}\nspec: " spec "\n"

/* Karpenter marks a claim one of whose instance types a NodeOverlay changed. */
Test(nodeclaim_object, overlay_annotations)
{
    static const char *const cases[][3] = {
        {"", NULL, NULL},
        {OVERLAY("discount", "{priceAdjustment: '-10%', requirements: []}"), "true", NULL},
        {OVERLAY("fuse", "{capacity: {example.com/fuse: '1'}, requirements: []}"), NULL, "true"},
        {OVERLAY("elsewhere", "{price: '1', requirements: [{key: karpenter.sh/nodepool, operator: In, values: [x]}]}"),
         NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char yaml[4096];
        snprintf(yaml, sizeof(yaml), "%s%s%s", POOL, POD, cases[i][0]);
        kp_scenario s;
        cr_assert_eq(kp_scenario_run(&s, yaml, "builtin", NULL), 0, "%s", kp_error_last());
        cr_assert_eq(s.plan->n_claims, 1);
        cJSON *nc = kp_nodeclaim_object(s.plan, s.snap, 0, NULL);
        const cJSON *ann = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(nc, "metadata"), "annotations");
        const char *price = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, "karpenter.sh/price-overlay-applied"));
        const char *capacity =
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ann, "karpenter.sh/capacity-overlay-applied"));
        if (cases[i][1]) cr_expect(price && !strcmp(price, cases[i][1]), "case %zu: price %s", i, price);
        else cr_expect_null(price, "case %zu", i);
        if (cases[i][2]) cr_expect(capacity && !strcmp(capacity, cases[i][2]), "case %zu: capacity %s", i, capacity);
        else cr_expect_null(capacity, "case %zu", i);
        cJSON_Delete(nc);
        kp_scenario_free(&s);
    }
}
