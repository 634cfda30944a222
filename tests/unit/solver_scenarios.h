/*
 * Shared by the solver suites on resources, DaemonSet overhead, NodePool
 * requirements and bounds, instance selection, existing capacity and
 * regressions: a YAML builder for manifests
 * (NodePools, Pods, Deployments, DaemonSets, Nodes, NodeClaims) in flow style,
 * and Karpenter's fake instance-type catalog as inline JSON. Static inline, so
 * each test program compiles its own copy and tests/unit/helpers/ stays generic.
 */
#ifndef KP_TEST_SOLVER_SCENARIOS_H
#define KP_TEST_SOLVER_SCENARIOS_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers/scenario.h"
#include "helpers/assert.h"

/* ---- manifests: YAML documents appended one by one (helpers/scenario.h) ---- */

typedef kp_yaml yb;
#define yb_add kp_yaml_doc

#define SEP(x) ((x) && *(x) ? ", " : ""), ((x) ? (x) : "")
#define NODECLASS "nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}"

/* A NodePool: `reqs` is the inside of the requirements list, `tspec` more
 * template spec fields, `tmeta` template metadata fields, `spec` more spec fields. */
static inline void pool(yb *y, const char *name, const char *reqs, const char *tspec, const char *tmeta,
                        const char *spec)
{
    kp_yaml_nodepool(y, &(kp_yaml_pool){.name = name,
                                        .requirements = reqs,
                                        .template_meta = tmeta,
                                        .template_spec = tspec,
                                        .spec = spec});
}

/* A pending pod: `requests` is the inside of the container's requests map,
 * `spec` more pod spec fields, `meta` more metadata fields. */
static inline void podm(yb *y, const char *name, const char *meta, const char *requests, const char *spec)
{
    yb_add(y,
           "apiVersion: v1\nkind: Pod\nmetadata: {name: %s%s%s}\n"
           "spec: {containers: [{name: c, resources: {requests: {%s}}}]%s%s}\n",
           name, SEP(meta), requests ? requests : "", SEP(spec));
}

static inline void pod(yb *y, const char *name, const char *requests, const char *spec)
{
    podm(y, name, NULL, requests, spec);
}

/* `n` identical pods NAME-0 .. NAME-(n-1) (a Deployment). */
static inline void deploy(yb *y, const char *name, int n, const char *requests, const char *spec)
{
    yb_add(y,
           "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s}\n"
           "spec: {replicas: %d, selector: {matchLabels: {app: %s}}, template: {metadata: {labels: {app: %s}}, "
           "spec: {containers: [{name: c, resources: {requests: {%s}}}]%s%s}}}\n",
           name, n, name, name, requests ? requests : "", SEP(spec));
}

/* Extra container fields for every DaemonSet pod (none today; a host port here
 * once worked around a solver bug, so tests may still append to it). */
#define DS_PORT ""

static inline void daemonset(yb *y, const char *name, const char *requests, const char *spec)
{
    yb_add(y,
           "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: %s}\n"
           "spec: {selector: {matchLabels: {ds: %s}}, template: {metadata: {labels: {ds: %s}}, "
           "spec: {containers: [{name: c, resources: {requests: {%s}}" DS_PORT "}]%s%s}}}\n",
           name, name, name, requests ? requests : "", SEP(spec));
}

/* A Node: `labels` inside the labels map, `spec` inside spec, `alloc` its allocatable (also capacity). */
static inline void node(yb *y, const char *name, const char *labels, const char *spec, const char *alloc)
{
    yb_add(y,
           "apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {%s}}\nspec: {%s}\n"
           "status: {capacity: {%s}, allocatable: {%s}}\n",
           name, labels ? labels : "", spec ? spec : "", alloc, alloc);
}

/* A pod bound to `node_name`. */
static inline void bound(yb *y, const char *name, const char *node_name, const char *meta, const char *requests)
{
    yb_add(y,
           "apiVersion: v1\nkind: Pod\nmetadata: {name: %s%s%s}\n"
           "spec: {nodeName: %s, containers: [{name: c, resources: {requests: {%s}}}]}\n"
           "status: {phase: Running}\n",
           name, SEP(meta), node_name, requests ? requests : "");
}

/* ---- a deterministic random source for generated scenarios (splitmix64) ---- */

typedef struct rng {
    uint64_t s;
} rng;

static inline uint32_t rnd(rng *r, uint32_t n)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (uint32_t)((z ^ (z >> 31)) % n);
}

/* ---- running and reading the plan ---- */

static inline void run_opts(kp_scenario *s, yb *y, const char *catalog, const kp_solve_opts *opts)
{
    int err = kp_scenario_run(s, kp_yaml_text(y), catalog, opts);
    kp_yaml_free(y);
    KP_ASSERT_OK(err);
}

static inline void run(kp_scenario *s, yb *y, const char *catalog)
{
    run_opts(s, y, catalog, NULL);
}

static inline const char *sym(const kp_scenario *s, kp_sym v)
{
    const char *t = v ? kp_sym_str(s->snap->symtab, v) : NULL;
    return t ? t : "";
}

static inline const char *claim_zone(const kp_scenario *s, int c)
{
    return sym(s, s->plan->claims[c].zone);
}

static inline const char *claim_ct(const kp_scenario *s, int c)
{
    return sym(s, s->plan->claims[c].capacity_type);
}

static inline uint32_t claim_n_its(const kp_scenario *s, int c)
{
    return s->plan->claims[c].n_its;
}

static inline const char *claim_it(const kp_scenario *s, int c, uint32_t i)
{
    return sym(s, s->snap->its[s->plan->claims[c].its[i]].name);
}

static inline bool claim_has_it(const kp_scenario *s, int c, const char *name)
{
    for (uint32_t i = 0; i < claim_n_its(s, c); i++)
        if (strcmp(claim_it(s, c, i), name) == 0)
            return true;
    return false;
}

/* Does instance type `it` (snapshot index) offer `key` = `value`? */
static inline bool it_has_label(const kp_scenario *s, uint32_t it, const char *key, const char *value)
{
    kp_sym k = kp_sym_lookup(s->snap->symtab, key), v = kp_sym_lookup(s->snap->symtab, value);
    const kp_requirement *r = k ? kp_requirements_get(&s->snap->its[it].reqs, k) : NULL;
    return r && v && kp_requirement_has(s->snap->symtab, r, v);
}

/* Every option of the claim offers `key` = `value`. */
static inline bool claim_all_its(const kp_scenario *s, int c, const char *key, const char *value)
{
    for (uint32_t i = 0; i < claim_n_its(s, c); i++)
        if (!it_has_label(s, s->plan->claims[c].its[i], key, value))
            return false;
    return claim_n_its(s, c) > 0;
}

/* The claim as `simulate -o json` prints it. */
static inline const cJSON *json_claim(const kp_scenario *s, int c)
{
    const cJSON *claims = cJSON_GetObjectItemCaseSensitive(s->json, "nodeClaims");
    const cJSON *claim = cJSON_GetArrayItem(claims, c);
    cr_assert_not_null(claim, "no claim %d in the JSON plan", c);
    return claim;
}

static inline bool json_claim_has_req(const kp_scenario *s, int c, const char *key)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(json_claim(s, c), "requirements"))
    {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(r, "key");
        if (cJSON_IsString(k) && strcmp(k->valuestring, key) == 0)
            return true;
    }
    return false;
}

/* The label the NodeClaim would carry, or NULL. */
static inline const char *json_claim_label(const kp_scenario *s, int c, const char *key)
{
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(json_claim(s, c), "labels");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(labels, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The claim's requests of `resource`, in milli-units. */
static inline int64_t claim_request(const kp_scenario *s, int c, const char *resource)
{
    int r = kp_restab_find(&s->snap->restab, resource);
    return r < 0 ? 0 : s->plan->claims[c].requests.v[r];
}

static inline void expect_error(const kp_scenario *s, const char *pod_name, const char *needle)
{
    const char *why = kp_scenario_error_of(s, pod_name);
    cr_assert_not_null(why, "%s was placed", pod_name);
    cr_assert(strstr(why, needle), "%s: reason \"%s\" lacks \"%s\"", pod_name, why, needle);
}

/* The catalog of Karpenter's default fake cloud provider, with the GPU vendors
 * as nvidia.com/gpu and amd.com/gpu and the fake labels as well-known AWS
 * labels (instance-cpu for "integer", instance-size small/large for "size").
 * Prices follow its PriceFromResources (0.1 per core and per GB, +1 per GPU type);
 * single-pod-instance-type costs a cent more than default-instance-type so that
 * the cheapest choice between the two is not a tie. */
#define OFFERS5(price)                                                                                        \
    "[{\"zone\":\"test-zone-1\",\"capacityType\":\"spot\",\"price\":" price "},"                             \
    "{\"zone\":\"test-zone-2\",\"capacityType\":\"spot\",\"price\":" price "},"                              \
    "{\"zone\":\"test-zone-1\",\"capacityType\":\"on-demand\",\"price\":" price "},"                         \
    "{\"zone\":\"test-zone-2\",\"capacityType\":\"on-demand\",\"price\":" price "},"                         \
    "{\"zone\":\"test-zone-3\",\"capacityType\":\"on-demand\",\"price\":" price "}]"
#define FAKE_OVERHEAD "\"overhead\":{\"cpu\":\"100m\",\"memory\":\"10Mi\"}"
#define FAKE_OS "\"operatingSystems\":[\"linux\",\"windows\",\"darwin\"]"
#define FAKE_TYPE(name, cap, arch, cpu, size, os, price)                                                      \
    "{\"name\":\"" name "\",\"capacity\":{" cap "}," FAKE_OVERHEAD ",\"labels\":{\"kubernetes.io/arch\":\"" arch \
    "\",\"karpenter.k8s.aws/instance-cpu\":\"" cpu "\",\"karpenter.k8s.aws/instance-size\":\"" size "\"},"     \
    os ",\"offerings\":" OFFERS5(price) "}"
#define FAKE_CATALOG                                                                                          \
    "json:["                                                                                                  \
    FAKE_TYPE("default-instance-type", "\"cpu\":\"4\",\"memory\":\"4Gi\",\"pods\":\"5\"", "amd64", "4", "small", \
              FAKE_OS, "0.83") ","                                                                            \
    FAKE_TYPE("small-instance-type", "\"cpu\":\"2\",\"memory\":\"2Gi\",\"pods\":\"5\"", "amd64", "2", "small",   \
              FAKE_OS, "0.41") ","                                                                            \
    FAKE_TYPE("gpu-vendor-instance-type", "\"cpu\":\"4\",\"memory\":\"4Gi\",\"pods\":\"5\",\"nvidia.com/gpu\":\"2\"", \
              "amd64", "4", "small", FAKE_OS, "1.83") ","                                                     \
    FAKE_TYPE("gpu-vendor-b-instance-type", "\"cpu\":\"4\",\"memory\":\"4Gi\",\"pods\":\"5\",\"amd.com/gpu\":\"2\"", \
              "amd64", "4", "small", FAKE_OS, "1.83") ","                                                     \
    FAKE_TYPE("arm-instance-type", "\"cpu\":\"16\",\"memory\":\"128Gi\",\"pods\":\"5\"", "arm64", "16", "large",  \
              "\"operatingSystems\":[\"ios\",\"linux\",\"windows\",\"darwin\"]", "15.34") ","                  \
    FAKE_TYPE("single-pod-instance-type", "\"cpu\":\"4\",\"memory\":\"4Gi\",\"pods\":\"1\"", "amd64", "4", "small", \
              FAKE_OS, "0.84") "]"

#endif
