/*
 * Solver scenarios, basics part 2: DaemonSet overhead. Only DaemonSets whose
 * pod template tolerates a NodePool's taints and matches its requirements and
 * an instance type count on that type; the overhead changes which types can
 * hold the pods and is added once to a NodeClaim's requests. Cases follow
 * Karpenter's provisioning suite.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"

/* The helpers up to the first test are the same in every test_solver_basic_*.c:
 * each test file is its own program and tests/unit/helpers/ stays generic. */

/* ---- manifests: YAML documents appended one by one (flow style keeps them short) ---- */

typedef struct yb {
    char *s;
    size_t len, cap;
} yb;

static void yb_add(yb *y, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void yb_add(yb *y, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    cr_assert_geq(n, 0);
    size_t need = y->len + (size_t)n + 8;
    if (need > y->cap) {
        y->cap = need * 2;
        y->s = realloc(y->s, y->cap);
    }
    if (y->len) {
        memcpy(y->s + y->len, "---\n", 4);
        y->len += 4;
    }
    va_start(ap, fmt);
    vsnprintf(y->s + y->len, y->cap - y->len, fmt, ap);
    va_end(ap);
    y->len += (size_t)n;
}

#define SEP(x) ((x) && *(x) ? ", " : ""), ((x) ? (x) : "")
#define NODECLASS "nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}"

/* A NodePool: `reqs` is the inside of the requirements list, `tspec` more
 * template spec fields, `tmeta` template metadata fields, `spec` more spec fields. */
static inline void pool(yb *y, const char *name, const char *reqs, const char *tspec, const char *tmeta,
                        const char *spec)
{
    yb_add(y,
           "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: %s}\n"
           "spec: {template: {metadata: {%s}, spec: {" NODECLASS ", requirements: [%s]%s%s}}%s%s}\n",
           name, tmeta ? tmeta : "", reqs ? reqs : "", SEP(tspec), SEP(spec));
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

/* Every DaemonSet here declares a host port no pod uses: DaemonSets without
 * host ports make the solver copy from a NULL pointer (undefined behaviour the
 * sanitizers abort on; see test_solver_basic_bugs.c). Make this "" once fixed. */
#define DS_PORT ", ports: [{containerPort: 65001, hostPort: 65001}]"

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

/* ---- running and reading the plan ---- */

static inline void run_opts(kp_scenario *s, yb *y, const char *catalog, const kp_solve_opts *opts)
{
    int err = kp_scenario_run(s, y->s ? y->s : "", catalog, opts);
    free(y->s);
    memset(y, 0, sizeof(*y));
    cr_assert_eq(err, 0, "%s", kp_error_last());
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

/* ---------- DaemonSet overhead on new NodeClaims ---------- */

/* The pod every case places: 1 core, 1Gi. The 2-core type holds it alone
 * (1.9 cores allocatable), the 4-core type also holds a 2-core DaemonSet. */
#define APP "cpu: '1', memory: 1Gi"
#define DS_2 "cpu: '2', memory: 2Gi"

static void pool_with(yb *y, const char *tspec, const char *tmeta)
{
    pool(y, "default", NULL, tspec, tmeta, NULL);
}

/* Which type the pod's NodeClaim launches with. */
static const char *launched(kp_scenario *s, const char *pod_name)
{
    int c = kp_scenario_claim_of(s, pod_name);
    cr_assert_geq(c, 0, "%s: %s", pod_name, kp_scenario_error_of(s, pod_name));
    return kp_scenario_claim_type(s, c);
}

static const struct ds_case {
    const char *name;
    const char *tspec; /* NodePool template spec fields */
    const char *tmeta; /* NodePool template metadata fields */
    const char *ds_requests;
    const char *ds_spec;
    const char *pod_spec;
    const char *want; /* default-instance-type: counted; small-instance-type: ignored */
} ds_cases[] = {
    {"plain daemonset counts", NULL, NULL, DS_2, NULL, NULL, "default-instance-type"},
    {"startup taints do not keep daemons away", "startupTaints: [{key: foo.com/taint, effect: NoSchedule}]", NULL,
     DS_2, NULL, NULL, "default-instance-type"},
    {"intolerant daemonset is ignored", "taints: [{key: foo, value: bar, effect: NoSchedule}]", NULL, DS_2, NULL,
     "tolerations: [{operator: Exists}]", "small-instance-type"},
    {"tolerant daemonset counts", "taints: [{key: foo, value: bar, effect: NoSchedule}]", NULL, DS_2,
     "tolerations: [{key: foo, operator: Exists}]", "tolerations: [{operator: Exists}]", "default-instance-type"},
    {"PreferNoSchedule taints do not keep daemons away", "taints: [{key: test, effect: PreferNoSchedule}]", NULL,
     DS_2, NULL, NULL, "default-instance-type"},
    {"selector on an unknown label is ignored", NULL, NULL, DS_2, "nodeSelector: {node: invalid}", NULL,
     "small-instance-type"},
    {"selector on a template label counts", NULL, "labels: {purpose: monitoring}", DS_2,
     "nodeSelector: {purpose: monitoring}", NULL, "default-instance-type"},
    {"selector on another template label value is ignored", NULL, "labels: {purpose: monitoring}", DS_2,
     "nodeSelector: {purpose: logging}", NULL, "small-instance-type"},
    {"required type no type has is ignored", NULL, NULL, DS_2,
     "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions:"
     " [{key: node.kubernetes.io/instance-type, operator: In, values: [non-existent-instance-type]}]}]}}}",
     NULL, "small-instance-type"},
    {"NotIn on an undefined key counts", NULL, NULL, DS_2,
     "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions:"
     " [{key: foo, operator: NotIn, values: [bar]}]}]}}}",
     "nodeSelector: {topology.kubernetes.io/zone: test-zone-2}", "default-instance-type"},
    {"second of two required terms matches", NULL, "labels: {foo: bar}", DS_2,
     "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: ["
     "{matchExpressions: [{key: foo, operator: In, values: [voo]}]},"
     " {matchExpressions: [{key: foo, operator: In, values: [bar]}]}]}}}",
     NULL, "default-instance-type"},
    {"no required term matches", NULL, "labels: {foo: bar}", DS_2,
     "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: ["
     "{matchExpressions: [{key: foo, operator: In, values: [voo]}]},"
     " {matchExpressions: [{key: foo, operator: In, values: [zoo]}]}]}}}",
     NULL, "small-instance-type"},
    {"incompatible preference does not matter", NULL, NULL, DS_2,
     "affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference:"
     " {matchExpressions: [{key: node, operator: In, values: [invalid]}]}}]}}",
     NULL, "default-instance-type"},
    {"daemon on the pool's karpenter labels counts", NULL, NULL, DS_2,
     "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions:"
     " [{key: karpenter.sh/initialized, operator: In, values: ['true']},"
     " {key: karpenter.sh/registered, operator: Exists}, {key: karpenter.sh/nodepool, operator: In, values: [default]}]}]}}}",
     NULL, "default-instance-type"},
    {"daemon for another nodepool is ignored", NULL, NULL, DS_2, "nodeSelector: {karpenter.sh/nodepool: other}", NULL,
     "small-instance-type"},
    {"daemonset without requests fits anywhere", NULL, NULL, "", NULL, NULL, "small-instance-type"},
};

Test(solver_basic_daemons, which_daemonsets_count_towards_overhead)
{
    for (size_t i = 0; i < sizeof(ds_cases) / sizeof(ds_cases[0]); i++) {
        const struct ds_case *tc = &ds_cases[i];
        yb y = {0};
        kp_scenario s;
        pool_with(&y, tc->tspec, tc->tmeta);
        daemonset(&y, "ds", tc->ds_requests, tc->ds_spec);
        pod(&y, "p", APP, tc->pod_spec);
        run(&s, &y, FAKE_CATALOG);
        cr_assert_str_eq(launched(&s, "p"), tc->want, "%s", tc->name);
        kp_scenario_free(&s);
    }
}

Test(solver_basic_daemons, no_daemonset_means_the_smallest_type)
{
    /* The baseline the table compares against. */
    yb y = {0};
    kp_scenario s;
    pool_with(&y, NULL, NULL);
    pod(&y, "p", APP, NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(launched(&s, "p"), "small-instance-type");
    kp_scenario_free(&s);
}

Test(solver_basic_daemons, daemonset_filtered_by_instance_type_labels)
{
    /* The 10-core daemon only targets large types, the 1-core one small types:
     * on the 2-core type 1 + 1 cores do not fit (1.9 allocatable). */
    yb y = {0};
    kp_scenario s;
    pool_with(&y, NULL, NULL);
    daemonset(&y, "small-ds", "cpu: '1'", "nodeSelector: {karpenter.k8s.aws/instance-size: small}");
    daemonset(&y, "large-ds", "cpu: '10'", "nodeSelector: {karpenter.k8s.aws/instance-size: large}");
    pod(&y, "p", APP, NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(launched(&s, "p"), "default-instance-type");
    /* arm-instance-type (16 cores, large) carries only the 10-core daemon and stays an option. */
    cr_assert(claim_has_it(&s, 0, "arm-instance-type"));
    kp_scenario_free(&s);
}

Test(solver_basic_daemons, daemonset_too_big_for_every_type)
{
    yb y = {0};
    kp_scenario s;
    pool_with(&y, NULL, NULL);
    daemonset(&y, "ds", "cpu: '10000', memory: 10000Gi", NULL);
    pod(&y, "p", NULL, NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 0);
    cr_assert_not_null(kp_scenario_error_of(&s, "p"));
    kp_scenario_free(&s);
}

/* DaemonSet pod templates as the API server would not default them: requests
 * come from limits where missing, init containers count. */
static const struct ds_resources_case {
    const char *name;
    const char *containers; /* spec fields of the template */
    bool schedulable;
} ds_resources_cases[] = {
    {"limits stand in for a missing memory request",
     "containers: [{name: c, resources: {requests: {cpu: '1'}, limits: {cpu: '10000', memory: 10000Gi}}" DS_PORT "}]",
     false},
    {"init container too big",
     "initContainers: [{name: i, resources: {requests: {cpu: '10000', memory: 10000Gi}}}],"
     " containers: [{name: c" DS_PORT "}]",
     false},
    {"init container limits too big",
     "initContainers: [{name: i, resources: {requests: {cpu: '1'}, limits: {cpu: '10000', memory: 10000Gi}}}],"
     " containers: [{name: c, resources: {requests: {cpu: '1'}, limits: {cpu: '10000', memory: 1Gi}}" DS_PORT "}]",
     false},
    {"no requests and no limits", "containers: [{name: c" DS_PORT "}]", true},
};

Test(solver_basic_daemons, daemonset_requests_from_limits_and_init_containers)
{
    for (size_t i = 0; i < sizeof(ds_resources_cases) / sizeof(ds_resources_cases[0]); i++) {
        const struct ds_resources_case *tc = &ds_resources_cases[i];
        yb y = {0};
        kp_scenario s;
        pool_with(&y, NULL, NULL);
        yb_add(&y,
               "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\n"
               "spec: {selector: {matchLabels: {ds: ds}}, template: {metadata: {labels: {ds: ds}}, spec: {%s}}}\n",
               tc->containers);
        pod(&y, "p", NULL, NULL);
        run(&s, &y, FAKE_CATALOG);
        cr_assert_eq(kp_scenario_claim_of(&s, "p") >= 0, tc->schedulable, "%s: %s", tc->name,
                     kp_scenario_error_of(&s, "p"));
        kp_scenario_free(&s);
    }
}

Test(solver_basic_daemons, daemonset_init_container_maximum)
{
    /* max(1, 3) cores and max(1Gi, 3Gi) from limits: only the 4-core, 4Gi types hold the daemon. */
    yb y = {0};
    kp_scenario s;
    pool_with(&y, NULL, NULL);
    yb_add(&y, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\n"
               "spec: {selector: {matchLabels: {ds: ds}}, template: {metadata: {labels: {ds: ds}}, spec: {"
               "initContainers: [{name: i, resources: {requests: {cpu: '3'}, limits: {cpu: '10000', memory: 3Gi}}}],"
               " containers: [{name: c, resources: {requests: {cpu: '1'}, limits: {cpu: '10000', memory: 1Gi}}" DS_PORT
               "}]}}}\n");
    pod(&y, "p", NULL, NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(launched(&s, "p"), "default-instance-type");
    cr_assert(!claim_has_it(&s, 0, "small-instance-type"));
    kp_scenario_free(&s);
}

Test(solver_basic_daemons, daemonset_host_port_blocks_the_pod)
{
    yb y = {0};
    kp_scenario s;
    pool_with(&y, NULL, NULL);
    yb_add(&y, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds}\n"
               "spec: {selector: {matchLabels: {ds: ds}}, template: {metadata: {labels: {ds: ds}}, spec: {"
               "containers: [{name: c, resources: {requests: {" DS_2 "}}, ports: [{containerPort: 8080, hostPort: 8080}]}]}}}\n");
    yb_add(&y, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
               "spec: {containers: [{name: c, resources: {requests: {" APP "}},"
               " ports: [{containerPort: 8080, hostPort: 8080}]}]}\n");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 0);
    cr_assert_not_null(kp_scenario_error_of(&s, "p"));
    kp_scenario_free(&s);
}

Test(solver_basic_daemons, daemonset_host_port_only_where_the_daemon_runs)
{
    /* The daemon holding port 8080 only runs on large types; the pod wants a
     * small type, so the port is free there (and the 2-core small daemon counts). */
    yb y = {0};
    kp_scenario s;
    pool_with(&y, NULL, NULL);
    yb_add(&y, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: large-ds}\n"
               "spec: {selector: {matchLabels: {ds: l}}, template: {metadata: {labels: {ds: l}}, spec: {"
               "nodeSelector: {karpenter.k8s.aws/instance-size: large}, containers: [{name: c,"
               " resources: {requests: {cpu: '4', memory: 4Gi}}, ports: [{containerPort: 8080, hostPort: 8080}]}]}}}\n");
    yb_add(&y, "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: small-ds}\n"
               "spec: {selector: {matchLabels: {ds: s}}, template: {metadata: {labels: {ds: s}}, spec: {"
               "nodeSelector: {karpenter.k8s.aws/instance-size: small}, containers: [{name: c,"
               " resources: {requests: {" DS_2 "}}, ports: [{containerPort: 8081, hostPort: 8081}]}]}}}\n");
    yb_add(&y, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
               "spec: {nodeSelector: {karpenter.k8s.aws/instance-size: small}, containers: [{name: c,"
               " resources: {requests: {" APP "}}, ports: [{containerPort: 8080, hostPort: 8080}]}]}\n");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(launched(&s, "p"), "default-instance-type");
    cr_assert_str_eq(kp_scenario_claim_req(&s, 0, "karpenter.k8s.aws/instance-size"), "In [small]");
    kp_scenario_free(&s);
}

Test(solver_basic_daemons, nodeclaim_requests_include_daemon_overhead_once)
{
    for (int pods = 1; pods <= 2; pods++) {
        yb y = {0};
        kp_scenario s;
        pool_with(&y, NULL, NULL);
        daemonset(&y, "ds", "cpu: '1', memory: 1Mi", NULL);
        deploy(&y, "app", pods, "cpu: '1', memory: 1Mi", NULL);
        run(&s, &y, FAKE_CATALOG);
        cr_assert_eq(s.plan->n_claims, 1);
        cr_assert_eq(claim_request(&s, 0, "cpu"), (pods + 1) * 1000);
        cr_assert_eq(claim_request(&s, 0, "memory"), (int64_t)(pods + 1) * 1024 * 1024 * 1000);
        cr_assert_eq(claim_request(&s, 0, "pods"), (pods + 1) * 1000);
        kp_scenario_free(&s);
    }
}

Test(solver_basic_daemons, daemon_overhead_differs_by_type)
{
    /* A 3-core daemon only on arm64 types: amd64 types carry nothing, so the
     * amd64 claim asks for its pod alone and the arm64 one for pod and daemon. */
    yb y = {0};
    kp_scenario s;
    pool_with(&y, NULL, NULL);
    daemonset(&y, "arm-only", "cpu: '3'", "nodeSelector: {kubernetes.io/arch: arm64}");
    pod(&y, "amd", APP, "nodeSelector: {kubernetes.io/arch: amd64}");
    pod(&y, "arm", APP, "nodeSelector: {kubernetes.io/arch: arm64}");
    run(&s, &y, FAKE_CATALOG);
    int amd = kp_scenario_claim_of(&s, "amd"), arm = kp_scenario_claim_of(&s, "arm");
    cr_assert(amd >= 0 && arm >= 0 && amd != arm);
    cr_assert_str_eq(kp_scenario_claim_type(&s, amd), "small-instance-type");
    cr_assert_eq(claim_request(&s, amd, "cpu"), 1000);
    cr_assert_str_eq(kp_scenario_claim_type(&s, arm), "arm-instance-type");
    cr_assert_eq(claim_request(&s, arm, "cpu"), 4000);
    kp_scenario_free(&s);
}

Test(solver_basic_daemons, unconstrained_pods_share_a_claim_across_daemon_groups)
{
    /* The second pod narrows the first pod's claim to arm64 rather than opening
     * a new one: the arm type holds both pods and its 3-core daemon. */
    yb y = {0};
    kp_scenario s;
    pool_with(&y, NULL, NULL);
    daemonset(&y, "arm-only", "cpu: '3'", "nodeSelector: {kubernetes.io/arch: arm64}");
    pod(&y, "any", APP, NULL);
    pod(&y, "arm", APP, "nodeSelector: {kubernetes.io/arch: arm64}");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_claims, 1);
    cr_assert_str_eq(kp_scenario_claim_type(&s, 0), "arm-instance-type");
    cr_assert_eq(claim_request(&s, 0, "cpu"), 5000);
    kp_scenario_free(&s);
}

Test(solver_basic_daemons, overhead_fills_a_node_sooner)
{
    /* 4-core types hold three 1-core pods alone, two beside a 1-core daemon. */
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", "{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type]}", NULL,
         NULL, NULL);
    daemonset(&y, "ds", "cpu: '1'", NULL);
    deploy(&y, "app", 6, "cpu: '1'", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_eq(s.plan->n_scheduled, 6);
    cr_assert_eq(s.plan->n_claims, 3);
    for (int c = 0; c < 3; c++)
        cr_assert_eq(kp_scenario_claim_pods(&s, c), 2);
    kp_scenario_free(&s);
}

Test(solver_basic_daemons, registered_and_initialized_are_for_daemons_only)
{
    /* Two daemons that select karpenter.sh/initialized and karpenter.sh/registered
     * count (3 cores with the 1-core pod no longer fit 2-core types), but those
     * labels are not requirements of the NodeClaim. */
    yb y = {0};
    kp_scenario s;
    pool_with(&y, NULL, NULL);
    daemonset(&y, "ds1", "cpu: '1'", "nodeSelector: {karpenter.sh/initialized: 'true'}");
    daemonset(&y, "ds2", "cpu: '1'", "nodeSelector: {karpenter.sh/registered: 'true'}");
    pod(&y, "p", "cpu: '1'", NULL);
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(launched(&s, "p"), "default-instance-type");
    cr_assert_eq(claim_request(&s, 0, "cpu"), 3000);
    cr_assert(!json_claim_has_req(&s, 0, "karpenter.sh/registered"));
    cr_assert(!json_claim_has_req(&s, 0, "karpenter.sh/initialized"));
    cr_assert(json_claim_has_req(&s, 0, "karpenter.sh/nodepool"));
    cr_assert_null(json_claim_label(&s, 0, "karpenter.sh/initialized"));
    kp_scenario_free(&s);
}
