/* The kwok cloud provider (shared/cloud/kwok/kwok.h) against the fake API server. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/decode.h"
#include "api/nodeoverlay.h"
#include "base/error.h"
#include "cloud/kwok/kwok.h"
#include "cloud/overlay.h"
#include "helpers/fake_apiserver.h"
#include "kube/ops.h"
#include "helpers/assert.h"

#define NOW_NS (INT64_C(1767225600) * KP_NS_PER_SEC) /* 2026-01-01T00:00:00Z */
#define GI     (INT64_C(1) << 30)
#define MI     (INT64_C(1) << 20)

static fake_api *fa;
static kp_kube_client *client;
static kp_catalog *catalog;
static kp_fake_clock clk;
static kp_cloud_provider *cp;
static kp_arena *arena;

static void add_offering(kp_instance_type *it, const char *zone, const char *ct, double price,
                         bool available)
{
    kp_it_add_offering(catalog, it, zone, ct, price, available);
}

static kp_instance_type *add_type(const char *name, int64_t cpus, int64_t mem_gi, const char *arch,
                                  const char *family)
{
    static const char *const oses[] = {"linux", "windows"};
    static const char *const zones[] = {"zone-a", "zone-b"};
    static const char *const cts[] = {"spot", "on-demand"};
    kp_instance_type *it = kp_catalog_add_type(catalog, name);
    kp_it_add_label(catalog, it, "node.kubernetes.io/instance-type", name);
    kp_it_add_label(catalog, it, "kubernetes.io/arch", arch);
    kp_it_add_req(catalog, it, "kubernetes.io/os", KP_OP_IN, oses, 2);
    kp_it_add_req(catalog, it, "topology.kubernetes.io/zone", KP_OP_IN, zones, 2);
    kp_it_add_req(catalog, it, "karpenter.sh/capacity-type", KP_OP_IN, cts, 2);
    kp_it_add_label(catalog, it, "karpenter.kwok.sh/instance-family", family);
    kp_it_add_req(catalog, it, "example.com/special", KP_OP_DOES_NOT_EXIST, NULL, 0);
    kp_it_set_capacity(catalog, it, "cpu", cpus * 1000);
    kp_it_set_capacity(catalog, it, "memory", mem_gi * GI * 1000);
    kp_it_set_capacity(catalog, it, "pods", 110 * 1000);
    kp_it_set_overhead(catalog, it, "cpu", 100);
    kp_it_set_overhead(catalog, it, "memory", 100 * MI * 1000);
    return it;
}

/*
 * small  amd64  zone-a spot 0.05 | zone-b spot 0.04 (unavailable) | zone-a od 0.10 | zone-b od 0.09
 * large  arm64  zone-a spot 0.20 | zone-b od 0.30
 * tie-a, tie-b  amd64  zone-a od 0.50 each
 * bare   no labels, no zone or capacity-type requirements: zone-a od 9.00
 */
static void build_catalog(void)
{
    catalog = kp_catalog_new("kwok test");
    kp_instance_type *it = add_type("small", 2, 4, "amd64", "s");
    add_offering(it, "zone-a", "spot", 0.05, true);
    add_offering(it, "zone-b", "spot", 0.04, false);
    add_offering(it, "zone-a", "on-demand", 0.10, true);
    add_offering(it, "zone-b", "on-demand", 0.09, true);
    it = add_type("large", 8, 32, "arm64", "l");
    add_offering(it, "zone-a", "spot", 0.20, true);
    add_offering(it, "zone-b", "on-demand", 0.30, true);
    add_offering(add_type("tie-a", 4, 8, "amd64", "t"), "zone-a", "on-demand", 0.5, true);
    add_offering(add_type("tie-b", 4, 8, "amd64", "t"), "zone-a", "on-demand", 0.5, true);
    it = kp_catalog_add_type(catalog, "bare"); /* no labels but its name */
    kp_it_set_capacity(catalog, it, "cpu", 1000);
    add_offering(it, "zone-a", "on-demand", 9.0, true);
}

/* A KWOKNodeClass in the fake API server; `ready` NULL: no status at all. */
static void put_class(const char *name, const char *ready)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"karpenter.kwok.sh/v1alpha1\",\"kind\":\"KWOKNodeClass\","
             "\"metadata\":{\"name\":\"%s\"}%s%s%s}",
             name, ready ? ",\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"" : "",
             ready ? ready : "", ready ? "\",\"reason\":\"Test\",\"message\":\"held back\"}]}" : "");
    cr_assert_gt(fake_api_put(fa, "/apis/karpenter.kwok.sh/v1alpha1/kwoknodeclasses", json), 0);
}

static void setup(void)
{
    fa = fake_api_start();
    cr_assert_not_null(fa);
    kp_kube_config cfg = {0};
    cfg.server = (char *)fake_api_url(fa);
    kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
    o.qps = 0;
    cr_assert_eq(kp_kube_client_new(&client, &cfg, &o), 0);
    build_catalog();
    kp_fake_clock_init(&clk, NOW_NS);
    kp_kwok_opts ko = KP_KWOK_OPTS_INIT;
    ko.catalog = catalog;
    ko.clock = &clk.base;
    KP_ASSERT_OK(kp_kwok_provider_new(client, &ko, &cp));
    arena = kp_arena_new();
    put_class("default", NULL);
}

static void teardown(void)
{
    kp_cloud_free(cp);
    kp_arena_free(arena);
    kp_catalog_free(catalog);
    kp_kube_client_free(client);
    fake_api_stop(fa);
}

TestSuite(kwok, .init = setup, .fini = teardown);

/* A claim with `annotations` and `requests` (JSON object bodies). */
static kp_nodeclaim claim_full(const char *name, const char *annotations, const char *reqs, const char *requests)
{
    char json[4096];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{\"karpenter.sh/nodepool\":\"default\",\"team\":\"web\"},\"annotations\":{%s}},\"spec\":{\"requirements\":"
             "[%s],\"resources\":{\"requests\":{%s}},\"nodeClassRef\":{\"group\":\"karpenter.kwok.sh\",\"kind\":"
             "\"KWOKNodeClass\",\"name\":\"default\"}}}",
             name, annotations, reqs, requests);
    cJSON *obj = cJSON_Parse(json);
    cr_assert_not_null(obj, "bad test JSON: %s", json);
    kp_nodeclaim claim;
    KP_ASSERT_OK(kp_decode_nodeclaim(arena, obj, &claim));
    cJSON_Delete(obj);
    return claim;
}

/* A NodeClaim named `name` with `reqs` (a JSON array body) as its requirements. */
static kp_nodeclaim claim_with(const char *name, const char *reqs)
{
    return claim_full(name, "\"note\":\"hi\"", reqs, "");
}

#define REQ(key, op, values) "{\"key\":\"" key "\",\"operator\":\"" op "\",\"values\":[" values "]}"
#define TYPES(values)        REQ("node.kubernetes.io/instance-type", "In", values)

static const char *path_str(const cJSON *obj, const char *a, const char *b, const char *c)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, a);
    if (b) v = cJSON_GetObjectItemCaseSensitive(v, b);
    if (c) v = cJSON_GetObjectItemCaseSensitive(v, c);
    return cJSON_GetStringValue(v);
}

static cJSON *stored_node(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "/api/v1/nodes/%s", name);
    return fake_api_get(fa, path);
}

static const cJSON *condition(const cJSON *obj, const char *type)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "status"), "conditions"))
    {
        if (strcmp(path_str(c, "type", NULL, NULL), type) == 0) return c;
    }
    return NULL;
}

Test(kwok, create_posts_a_node_shaped_like_the_claim)
{
    kp_nodeclaim claim = claim_with(
        "default-abc12",
        TYPES("\"small\",\"large\"") "," REQ("karpenter.sh/nodepool", "In", "\"default\"") "," REQ(
            "karpenter.sh/capacity-type", "In", "\"spot\",\"on-demand\""));
    kp_cloud_instance in;
    cr_assert_eq(cp->ops->create(cp, &claim, arena, &in), 0, "%s", kp_error_last());
    cJSON *node = stored_node("default-abc12");
    cr_assert_not_null(node);
    cr_expect_str_eq(path_str(node, "spec", "providerID", NULL), "kwok://default-abc12");
    static const char *const labels[][2] = {
        {"node.kubernetes.io/instance-type", "small"},
        {"topology.kubernetes.io/zone", "zone-a"},
        {"karpenter.sh/capacity-type", "spot"},
        {"karpenter.sh/nodepool", "default"},
        {"team", "web"},
        {"kubernetes.io/hostname", "default-abc12"},
        {"kubernetes.io/arch", "amd64"},
        {"kubernetes.io/os", "linux"},
        {"karpenter.kwok.sh/instance-family", "s"},
        {"kwok.x-k8s.io/node", "fake"},
    };
    for (size_t i = 0; i < sizeof(labels) / sizeof(*labels); i++)
        cr_expect_str_eq(path_str(node, "metadata", "labels", labels[i][0]), labels[i][1],
                         "label %s", labels[i][0]);
    cr_expect_null(path_str(node, "metadata", "labels", "example.com/special"));
    cr_expect_str_eq(path_str(node, "metadata", "annotations", "note"), "hi");
    cr_expect_str_eq(path_str(node, "metadata", "annotations", "kwok.x-k8s.io/node"), "fake");
    const cJSON *taints = cJSON_GetObjectItem(cJSON_GetObjectItem(node, "spec"), "taints");
    cr_assert_eq(cJSON_GetArraySize(taints), 1);
    cr_expect_str_eq(path_str(cJSON_GetArrayItem(taints, 0), "key", NULL, NULL),
                     "karpenter.sh/unregistered");
    cr_expect_str_eq(path_str(cJSON_GetArrayItem(taints, 0), "effect", NULL, NULL), "NoExecute");
    cr_expect_str_eq(path_str(node, "status", "capacity", "cpu"), "2");
    cr_expect_str_eq(path_str(node, "status", "capacity", "memory"), "4Gi");
    cr_expect_str_eq(path_str(node, "status", "capacity", "pods"), "110");
    cr_expect_str_eq(path_str(node, "status", "allocatable", "cpu"), "1900m");
    cr_expect_str_eq(path_str(node, "status", "allocatable", "memory"), "3996Mi");
    cr_expect_str_eq(path_str(condition(node, "Ready"), "status", NULL, NULL), "True");
    cr_expect_str_eq(path_str(condition(node, "Ready"), "lastHeartbeatTime", NULL, NULL),
                     "2026-01-01T00:00:00Z");
    cr_expect_str_eq(path_str(condition(node, "MemoryPressure"), "status", NULL, NULL), "False");
    cr_expect_str_eq(path_str(node, "status", "nodeInfo", "architecture"), "amd64");
    cr_expect_str_eq(path_str(node, "status", "nodeInfo", "operatingSystem"), "linux");
    cr_expect_str_eq(path_str(node, "status", "nodeInfo", "kubeletVersion"),
                     KP_KWOK_KUBELET_VERSION);
    const char *ip =
        path_str(cJSON_GetArrayItem(
                     cJSON_GetObjectItem(cJSON_GetObjectItem(node, "status"), "addresses"), 0),
                 "address", NULL, NULL);
    cr_expect(ip && strncmp(ip, "10.", 3) == 0, "InternalIP %s", ip ? ip : "(none)");
    cJSON_Delete(node);

    cr_expect_str_eq(in.provider_id, "kwok://default-abc12");
    cr_expect_str_eq(in.nodeclaim, "default-abc12");
    cr_expect_str_eq(in.nodepool, "default");
    cr_expect_str_eq(in.instance_type, "small");
    cr_expect_str_eq(in.zone, "zone-a");
    cr_expect_str_eq(in.capacity_type, "spot");
    cr_expect_str_eq(kp_labels_get(&in.labels, "team"), "web");
    cr_expect_eq(kp_resource_list_milli(&in.capacity, "cpu"), 2000);
    cr_expect_eq(kp_resource_list_milli(&in.allocatable, "cpu"), 1900);
    cr_expect_eq(kp_resource_list_milli(&in.allocatable, "memory"), (4 * GI - 100 * MI) * 1000);
    cr_expect_eq(in.created_ns, NOW_NS,
                 "the fake server sets no creationTimestamp: the clock's time");
    cr_expect_not(in.terminating);
}

typedef struct choice_case {
    const char *name;
    const char *reqs;
    const char *type, *zone, *ct; /* NULL type: insufficient capacity */
} choice_case;

static const choice_case choice_cases[] = {
    {"cheapest available", TYPES("\"small\",\"large\""), "small", "zone-a", "spot"},
    {"capacity type",
     TYPES("\"small\",\"large\"") "," REQ("karpenter.sh/capacity-type", "In", "\"on-demand\""),
     "small", "zone-b", "on-demand"},
    {"zone NotIn", TYPES("\"small\"") "," REQ("topology.kubernetes.io/zone", "NotIn", "\"zone-a\""),
     "small", "zone-b", "on-demand"},
    {"only an unavailable offering",
     TYPES("\"small\"") "," REQ("topology.kubernetes.io/zone", "In", "\"zone-b\"") "," REQ(
         "karpenter.sh/capacity-type", "In", "\"spot\""),
     NULL, NULL, NULL},
    {"a type label: arch",
     TYPES("\"small\",\"large\"") "," REQ("kubernetes.io/arch", "In", "\"arm64\""), "large",
     "zone-a", "spot"},
    {"a type label: family",
     TYPES("\"small\",\"large\"") "," REQ("karpenter.kwok.sh/instance-family", "In", "\"l\""),
     "large", "zone-a", "spot"},
    {"a key the type rules out", TYPES("\"small\"") "," REQ("example.com/special", "In", "\"yes\""),
     NULL, NULL, NULL},
    {"a key only the claim has", TYPES("\"large\"") "," REQ("team", "In", "\"web\""), "large",
     "zone-a", "spot"},
    {"ties keep the claim's order", TYPES("\"tie-b\",\"tie-a\""), "tie-b", "zone-a", "on-demand"},
    {"ties keep the claim's order, reversed", TYPES("\"tie-a\",\"tie-b\""), "tie-a", "zone-a",
     "on-demand"},
    {"no instance-type requirement: the catalog", REQ("kubernetes.io/arch", "In", "\"amd64\""),
     "small", "zone-a", "spot"},
    {"unknown types", TYPES("\"nope\",\"nada\""), NULL, NULL, NULL},
    {"instance type NotIn", REQ("node.kubernetes.io/instance-type", "NotIn", "\"small\",\"large\""),
     "tie-a", "zone-a", "on-demand"},
};

/* Karpenter's kwok provider: no KWOKNodeClass, no capacity; a class that is
 * Ready=False stops launches with its message; another provider's class is
 * not ours to launch. */
Test(kwok, node_class_must_exist_be_ready_and_be_kwoks)
{
    kp_cloud_instance in;
    fake_api_remove(fa, "/apis/karpenter.kwok.sh/v1alpha1/kwoknodeclasses/default");
    kp_nodeclaim claim = claim_with("no-class", TYPES("\"small\""));
    cr_expect_eq(cp->ops->create(cp, &claim, arena, &in), KP_EINSUFFICIENT_CAPACITY);
    cr_expect(strstr(kp_error_last(), "KWOKNodeClass default not found"), "%s", kp_error_last());
    put_class("default", "False");
    cr_expect_eq(cp->ops->create(cp, &claim, arena, &in), KP_ENOTREADY);
    cr_expect(strstr(kp_error_last(), "held back"), "%s", kp_error_last());
    claim.spec.node_class_ref.group = "karpenter.k8s.aws";
    claim.spec.node_class_ref.kind = "EC2NodeClass";
    cr_expect_eq(cp->ops->create(cp, &claim, arena, &in), KP_EINVALID);
    cJSON *node = stored_node("no-class");
    cr_expect_null(node, "no Node is created without a usable class");
    cJSON_Delete(node);
    put_class("default", "True");
    claim = claim_with("with-class", TYPES("\"small\""));
    cr_expect_eq(cp->ops->create(cp, &claim, arena, &in), 0, "%s", kp_error_last());
}

Test(kwok, offering_choice)
{
    char name[32];
    for (size_t i = 0; i < sizeof(choice_cases) / sizeof(*choice_cases); i++) {
        const choice_case *c = &choice_cases[i];
        snprintf(name, sizeof(name), "claim-%zu", i);
        kp_nodeclaim claim = claim_with(name, c->reqs);
        kp_cloud_instance in;
        int err = cp->ops->create(cp, &claim, arena, &in);
        if (!c->type) {
            cr_expect_eq(err, KP_EINSUFFICIENT_CAPACITY, "%s: %d %s", c->name, err,
                         kp_error_last());
            cJSON *node = stored_node(name);
            cr_expect_null(node, "%s: no node after insufficient capacity", c->name);
            cJSON_Delete(node);
            continue;
        }
        cr_assert_eq(err, 0, "%s: %s", c->name, kp_error_last());
        cr_expect_str_eq(in.instance_type, c->type, "%s", c->name);
        cr_expect_str_eq(in.zone, c->zone, "%s", c->name);
        cr_expect_str_eq(in.capacity_type, c->ct, "%s", c->name);
    }
}

Test(kwok, insufficient_capacity_posts_nothing)
{
    kp_nodeclaim claim = claim_with(
        "ice", TYPES("\"large\"") "," REQ("topology.kubernetes.io/zone", "In", "\"zone-c\""));
    kp_cloud_instance in;
    cr_assert_eq(cp->ops->create(cp, &claim, arena, &in), KP_EINSUFFICIENT_CAPACITY);
    cr_expect(strstr(kp_error_last(), "ice") != NULL, "the message names the claim: %s",
              kp_error_last());
    cr_expect_eq(fake_api_count(fa, "POST", "/api/v1/nodes"), 0);
}

Test(kwok, arch_and_os_follow_the_claim)
{
    kp_nodeclaim claim =
        claim_with("win", TYPES("\"large\"") "," REQ("kubernetes.io/os", "In", "\"windows\""));
    kp_cloud_instance in;
    cr_assert_eq(cp->ops->create(cp, &claim, arena, &in), 0, "%s", kp_error_last());
    cr_expect_str_eq(kp_labels_get(&in.labels, "kubernetes.io/os"), "windows");
    cr_expect_str_eq(kp_labels_get(&in.labels, "kubernetes.io/arch"), "arm64");
    cJSON *node = stored_node("win");
    cr_expect_str_eq(path_str(node, "status", "nodeInfo", "operatingSystem"), "windows");
    cr_expect_str_eq(path_str(node, "status", "nodeInfo", "architecture"), "arm64");
    cJSON_Delete(node);
}

Test(kwok, arch_and_os_default_to_an_allowed_value)
{
    kp_nodeclaim claim =
        claim_with("bare", TYPES("\"bare\"") "," REQ("kubernetes.io/arch", "NotIn", "\"amd64\""));
    kp_cloud_instance in;
    cr_assert_eq(cp->ops->create(cp, &claim, arena, &in), 0, "%s", kp_error_last());
    cr_expect_str_eq(kp_labels_get(&in.labels, "kubernetes.io/arch"), "arm64");
    cr_expect_str_eq(kp_labels_get(&in.labels, "kubernetes.io/os"), "linux");
    cr_expect_str_eq(kp_labels_get(&in.labels, "node.kubernetes.io/instance-type"), "bare");
    cr_expect_str_eq(kp_labels_get(&in.labels, "topology.kubernetes.io/zone"), "zone-a");
    claim = claim_with("bare-s390", TYPES("\"bare\"") "," REQ("kubernetes.io/arch", "In",
                                                              "\"s390x\",\"ppc64le\""));
    cr_assert_eq(cp->ops->create(cp, &claim, arena, &in), 0, "%s", kp_error_last());
    const char *arch = kp_labels_get(&in.labels, "kubernetes.io/arch");
    cr_expect(arch && (strcmp(arch, "s390x") == 0 || strcmp(arch, "ppc64le") == 0), "%s",
              arch ? arch : "(none)");
}

Test(kwok, malformed_requirement_is_invalid)
{
    kp_nodeclaim claim =
        claim_with("bad", TYPES("\"small\"") "," REQ("example.com/size", "Gt", "\"big\""));
    kp_cloud_instance in;
    cr_assert_eq(cp->ops->create(cp, &claim, arena, &in), KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "bad") != NULL, "%s", kp_error_last());
    cr_expect_eq(fake_api_count(fa, "POST", "/api/v1/nodes"), 0);
}

Test(kwok, nameless_claim_is_invalid)
{
    kp_nodeclaim claim = claim_with("x", TYPES("\"small\""));
    claim.meta.name = "";
    kp_cloud_instance in;
    cr_assert_eq(cp->ops->create(cp, &claim, arena, &in), KP_EINVALID);
}

Test(kwok, retried_create_answers_with_the_node_it_made)
{
    kp_nodeclaim claim = claim_with("again", TYPES("\"small\""));
    kp_cloud_instance first, second;
    cr_assert_eq(cp->ops->create(cp, &claim, arena, &first), 0, "%s", kp_error_last());
    cr_assert_eq(cp->ops->create(cp, &claim, arena, &second), 0, "%s", kp_error_last());
    cr_expect_str_eq(second.provider_id, first.provider_id);
    cr_expect_str_eq(second.instance_type, "small");
    cr_expect_eq(fake_api_count(fa, "POST", "/api/v1/nodes"), 2);

    fake_api_put(fa, "/api/v1/nodes", "{\"metadata\":{\"name\":\"taken\"},\"spec\":{}}");
    kp_nodeclaim other = claim_with("taken", TYPES("\"small\""));
    cr_expect_eq(cp->ops->create(cp, &other, arena, &first), KP_ECONFLICT,
                 "a non-kwok node of that name");
}

static void put_node(const char *name, const char *provider_id, bool terminating)
{
    char json[512];
    snprintf(json, sizeof(json),
             "{\"metadata\":{\"name\":\"%s\",\"uid\":\"uid-%s\",%s\"labels\":{"
             "\"node.kubernetes.io/instance-type\":\"small\"}},\"spec\":{\"providerID\":\"%s\"},"
             "\"status\":{\"capacity\":{\"cpu\":\"2\"}}}",
             name, name, terminating ? "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"," : "",
             provider_id);
    cr_assert_gt(fake_api_put(fa, "/api/v1/nodes", json), 0);
}

Test(kwok, get_reads_a_live_kwok_node)
{
    put_node("n1", "kwok://n1", false);
    put_node("dying", "kwok://dying", true);
    put_node("aws", "aws:///zone-a/i-0abc", false);
    kp_cloud_instance in;
    cr_assert_eq(cp->ops->get(cp, "kwok://n1", arena, &in), 0, "%s", kp_error_last());
    cr_expect_str_eq(in.provider_id, "kwok://n1");
    cr_expect_str_eq(in.instance_type, "small");
    cr_expect_eq(kp_resource_list_milli(&in.capacity, "cpu"), 2000);
    cr_expect_eq(cp->ops->get(cp, "kwok://missing", arena, &in), KP_ENOTFOUND);
    cr_expect_eq(cp->ops->get(cp, "kwok://dying", arena, &in), KP_ENOTFOUND,
                 "terminating counts as gone");
    cr_expect_eq(cp->ops->get(cp, "aws:///zone-a/i-0abc", arena, &in), KP_ENOTFOUND);
    cr_expect_eq(cp->ops->get(cp, "kwok://", arena, &in), KP_ENOTFOUND);
    cr_expect_eq(fake_api_count(fa, "GET", "/api/v1/nodes/aws"), 0, "not a kwok ID: no request");
}

Test(kwok, list_reports_every_kwok_node)
{
    put_node("n1", "kwok://n1", false);
    put_node("dying", "kwok://dying", true);
    put_node("aws", "aws:///zone-a/i-0abc", false);
    fake_api_put(fa, "/api/v1/nodes", "{\"metadata\":{\"name\":\"bare\"}}");
    kp_cloud_instance *all = NULL;
    uint32_t n = 0;
    cr_assert_eq(cp->ops->list(cp, arena, &all, &n), 0, "%s", kp_error_last());
    cr_assert_eq(n, 2);
    bool seen_dying = false, seen_n1 = false;
    for (uint32_t i = 0; i < n; i++) {
        if (strcmp(all[i].provider_id, "kwok://dying") == 0) seen_dying = all[i].terminating;
        if (strcmp(all[i].provider_id, "kwok://n1") == 0) seen_n1 = !all[i].terminating;
    }
    cr_expect(seen_dying, "the terminating node is listed, flagged");
    cr_expect(seen_n1);
}

Test(kwok, delete_removes_the_node_then_reports_it_gone)
{
    kp_nodeclaim claim = claim_with("doomed", TYPES("\"small\""));
    kp_cloud_instance in;
    cr_assert_eq(cp->ops->create(cp, &claim, arena, &in), 0, "%s", kp_error_last());
    claim.provider_id = in.provider_id;
    cr_assert_eq(cp->ops->delete_instance(cp, &claim), 0, "%s", kp_error_last());
    cJSON *node = stored_node("doomed");
    cr_expect_null(node);
    cJSON_Delete(node);
    fake_logged del;
    cr_assert(fake_api_find(fa, "DELETE", "/api/v1/nodes/doomed", 0, &del));
    cr_expect(strstr(del.body, "\"uid\"") != NULL, "a uid precondition: %s", del.body);
    cr_expect_eq(cp->ops->delete_instance(cp, &claim), KP_ENOTFOUND);
}

Test(kwok, delete_without_provider_id_uses_the_claim_name)
{
    put_node("lost", "kwok://lost", false);
    kp_nodeclaim claim = claim_with("lost", TYPES("\"small\""));
    claim.provider_id = "";
    cr_assert_eq(cp->ops->delete_instance(cp, &claim), 0, "%s", kp_error_last());
    cr_expect_eq(fake_api_count(fa, "DELETE", "/api/v1/nodes/lost"), 1);
}

Test(kwok, delete_of_a_terminating_node_is_done)
{
    put_node("dying", "kwok://dying", true);
    kp_nodeclaim claim = claim_with("dying", TYPES("\"small\""));
    claim.provider_id = "kwok://dying";
    cr_expect_eq(cp->ops->delete_instance(cp, &claim), KP_ENOTFOUND);
    cr_expect_eq(fake_api_count(fa, "DELETE", NULL), 0, "nothing more to ask for");
    claim.provider_id = "aws:///zone-a/i-0abc";
    cr_expect_eq(cp->ops->delete_instance(cp, &claim), KP_ENOTFOUND, "another provider's instance");
}

Test(kwok, server_errors_pass_through)
{
    kp_kube_config cfg = {0};
    cfg.server = "http://127.0.0.1:1";
    kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
    o.qps = 0;
    kp_kube_client *dead = NULL;
    cr_assert_eq(kp_kube_client_new(&dead, &cfg, &o), 0);
    kp_kwok_opts ko = KP_KWOK_OPTS_INIT;
    ko.catalog = catalog;
    kp_cloud_provider *p = NULL;
    cr_assert_eq(kp_kwok_provider_new(dead, &ko, &p), 0);
    kp_nodeclaim claim = claim_with("unreachable", TYPES("\"small\""));
    kp_cloud_instance in;
    int err = p->ops->create(p, &claim, arena, &in);
    cr_expect(err == KP_ERETRY || err == KP_EIO || err == KP_ETIMEOUT, "%d %s", err,
              kp_error_last());
    cr_expect(strstr(kp_error_last(), "unreachable") != NULL, "%s", kp_error_last());
    kp_cloud_instance *all = NULL;
    uint32_t n = 0;
    cr_expect_lt(p->ops->list(p, arena, &all, &n), 0);
    kp_cloud_free(p);
    kp_kube_client_free(dead);
}

Test(kwok, catalog_name_and_drift)
{
    const kp_catalog *c = NULL;
    cr_assert_eq(cp->ops->instance_types(cp, NULL, &c), 0);
    cr_expect_eq(c, catalog);
    cr_expect_str_eq(kp_cloud_name(cp), "kwok");
    kp_nodeclaim claim = claim_with("drift", TYPES("\"small\""));
    const char *reason = "unset";
    cr_assert_eq(cp->ops->is_drifted(cp, &claim, arena, &reason), 0);
    cr_expect_null(reason);
}

Test(kwok, default_catalog_is_the_builtin_one)
{
    kp_cloud_provider *p = NULL;
    KP_ASSERT_OK(kp_kwok_provider_new(client, NULL, &p));
    const kp_catalog *c = NULL;
    cr_assert_eq(p->ops->instance_types(p, NULL, &c), 0);
    cr_expect_gt(c->count, 100);
    kp_nodeclaim claim =
        claim_with("builtin", TYPES("\"m5.large\"") "," REQ("karpenter.sh/capacity-type", "In",
                                                            "\"on-demand\""));
    kp_cloud_instance in;
    cr_assert_eq(p->ops->create(p, &claim, arena, &in), 0, "%s", kp_error_last());
    cr_expect_str_eq(in.instance_type, "m5.large");
    cr_expect_eq(kp_resource_list_milli(&in.capacity, "cpu"), 2000);
    cr_expect_lt(kp_resource_list_milli(&in.allocatable, "memory"),
                 kp_resource_list_milli(&in.capacity, "memory"));
    kp_cloud_free(p);
}

/* With NodeOverlays, create() launches from the catalog as the scheduler
 * priced it: the hook hands it the overlaid catalog. */
static kp_catalog *overlaid_hook(void *ctx, const kp_nodeclaim *claim, const kp_catalog *base)
{
    (void)claim;
    kp_catalog *c = NULL;
    cr_assert_eq(kp_overlay_store_apply(ctx, "default", base, &c), 0, "%s", kp_error_last());
    return c;
}

Test(kwok, launches_at_the_prices_nodeoverlays_set)
{
    cJSON *ov = cJSON_Parse("{\"metadata\":{\"name\":\"cheap-large\"},\"spec\":{\"price\":\"0.001\","
                            "\"requirements\":[{\"key\":\"node.kubernetes.io/instance-type\",\"operator\":\"In\","
                            "\"values\":[\"large\"]}]}}");
    cJSON *np = cJSON_Parse("{\"metadata\":{\"name\":\"default\"},\"spec\":{\"template\":{\"spec\":{}}}}");
    kp_nodeoverlay overlay;
    kp_nodepool pool;
    cr_assert_eq(kp_nodeoverlay_from_json(arena, ov, &overlay), 0, "%s", kp_error_last());
    cr_assert_eq(kp_decode_nodepool(arena, np, &pool), 0, "%s", kp_error_last());
    const kp_nodeoverlay *overlays[] = {&overlay};
    kp_overlay_pool pools[] = {{&pool, catalog}};
    kp_overlay_store *store = NULL;
    cr_assert_eq(kp_overlay_evaluate(overlays, 1, pools, 1, &store), 0, "%s", kp_error_last());

    kp_kwok_opts ko = KP_KWOK_OPTS_INIT;
    ko.catalog = catalog, ko.clock = &clk.base, ko.overlaid = overlaid_hook, ko.overlaid_ctx = store;
    kp_cloud_provider *overlaid = NULL;
    cr_assert_eq(kp_kwok_provider_new(client, &ko, &overlaid), 0, "%s", kp_error_last());
    kp_cloud_instance in;
    kp_nodeclaim c = claim_full("plain", "", TYPES("\"large\",\"small\""), "");
    cr_assert_eq(cp->ops->create(cp, &c, arena, &in), 0, "%s", kp_error_last());
    cr_expect_str_eq(in.instance_type, "small", "without overlays: the catalog's cheapest");
    c = claim_full("overlaid", "", TYPES("\"large\",\"small\""), "");
    cr_assert_eq(overlaid->ops->create(overlaid, &c, arena, &in), 0, "%s", kp_error_last());
    cr_expect_str_eq(in.instance_type, "large", "at the overlaid price large is the cheaper");
    kp_cloud_free(overlaid);
    kp_overlay_store_unref(store);
    cJSON_Delete(ov);
    cJSON_Delete(np);
}

/* As Karpenter's kwok provider, a node offers what its claim asked for that
 * the type lacks (the extended resources a NodeOverlay promised). */
Test(kwok, requested_extended_resources_are_offered)
{
    kp_cloud_instance in;
    kp_nodeclaim c = claim_full("fuse", "", TYPES("\"small\""), "\"cpu\":\"1\",\"example.com/fuse\":\"2\"");
    cr_assert_eq(cp->ops->create(cp, &c, arena, &in), 0, "%s", kp_error_last());
    cJSON *node = stored_node("fuse");
    cr_assert_not_null(node);
    cr_expect_str_eq(path_str(node, "status", "capacity", "example.com/fuse"), "2");
    cr_expect_str_eq(path_str(node, "status", "allocatable", "example.com/fuse"), "2");
    cr_expect_str_eq(path_str(node, "status", "capacity", "cpu"), "2", "the type's own resources stay");
    cJSON_Delete(node);
}
