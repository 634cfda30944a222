/*
 * Solver scenarios: instance selection. The launch uses the
 * cheapest offering the constraints allow (spot before on-demand when both
 * are allowed), every option a NodeClaim carries satisfies the pod and the
 * NodePool, unavailable offerings do not count, at most max_instance_types
 * options are kept, and the built-in AWS catalog gives realistic answers.
 * Cases follow Karpenter's instance selection tests.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"

#include "solver_scenarios.h"

/* ---------- the cheapest offering among many types ---------- */

/* Karpenter's assorted catalog: every combination of 7 CPU sizes, 8 memory
 * sizes, 3 zones, 2 capacity types, 2 operating systems and 2 architectures,
 * one offering each, priced 0.1 per core and per GB. Built as inline JSON. */
static char *assorted_catalog(double *min_price)
{
    static const int cpus[] = {1, 2, 4, 8, 16, 32, 64}, mems[] = {1, 2, 4, 8, 16, 32, 64, 128};
    static const char *const zones[] = {"test-zone-1", "test-zone-2", "test-zone-3"};
    static const char *const cts[] = {"spot", "on-demand"}, *const oses[] = {"linux", "windows"};
    static const char *const arches[] = {"amd64", "arm64"};
    size_t cap = 1 << 20, len = 0;
    char *out = malloc(cap);
    len += (size_t)snprintf(out, cap, "json:[");
    *min_price = -1;
    for (size_t c = 0; c < 7; c++)
        for (size_t m = 0; m < 8; m++)
            for (size_t z = 0; z < 3; z++)
                for (size_t t = 0; t < 2; t++)
                    for (size_t o = 0; o < 2; o++)
                        for (size_t a = 0; a < 2; a++) {
                            double price = 0.1 * cpus[c] + 0.1 * (double)mems[m] * 1073741824.0 / 1e9;
                            if (*min_price < 0 || price < *min_price)
                                *min_price = price;
                            if (cap - len < 1024) {
                                cap *= 2;
                                out = realloc(out, cap);
                            }
                            len += (size_t)snprintf(
                                out + len, cap - len,
                                "%s{\"name\":\"%d-cpu-%d-mem-%s-%s-%s-%s\",\"capacity\":{\"cpu\":\"%d\",\"memory\":"
                                "\"%dGi\",\"pods\":\"5\"}," FAKE_OVERHEAD ",\"labels\":{\"kubernetes.io/arch\":\"%s\"},"
                                "\"operatingSystems\":[\"%s\"],\"offerings\":[{\"zone\":\"%s\",\"capacityType\":\"%s\","
                                "\"price\":%.10f}]}",
                                len > 6 ? "," : "", cpus[c], mems[m], arches[a], oses[o], zones[z], cts[t], cpus[c],
                                mems[m], arches[a], oses[o], zones[z], cts[t], price);
                        }
    snprintf(out + len, cap - len, "]");
    return out;
}

#define CT_BOTH "{key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand]}"
#define ARCH_BOTH "{key: kubernetes.io/arch, operator: In, values: [arm64, amd64]}"
#define REQ(key, op, vals) "{key: " key ", operator: " op ", values: [" vals "]}"
#define AFF(exprs)                                                                                            \
    "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [" \
    exprs "]}]}}}"
#define ARCH "kubernetes.io/arch"
#define OS "kubernetes.io/os"
#define ZONE "topology.kubernetes.io/zone"
#define CT "karpenter.sh/capacity-type"

typedef struct selection_case {
    const char *name;
    const char *pool_reqs; /* NULL: capacity types and architectures both open */
    const char *pod_spec;
    const char *labels[4][2]; /* every option must offer these */
} selection_case;

static const selection_case selection_cases[] = {
    {"unconstrained", NULL, NULL, {{NULL, NULL}}},
    {"pod arch amd64", NULL, AFF(REQ(ARCH, "In", "amd64")), {{ARCH, "amd64"}}},
    {"pod arch arm64", NULL, AFF(REQ(ARCH, "In", "arm64")), {{ARCH, "arm64"}}},
    {"pool arch amd64", REQ(ARCH, "In", "amd64"), NULL, {{ARCH, "amd64"}}},
    {"pool arch arm64", REQ(ARCH, "In", "arm64"), NULL, {{ARCH, "arm64"}}},
    {"pool os windows", CT_BOTH ", " ARCH_BOTH ", " REQ(OS, "In", "windows"), NULL, {{OS, "windows"}}},
    {"pod os windows", NULL, AFF(REQ(OS, "In", "windows")), {{OS, "windows"}}},
    {"pod os linux", NULL, AFF(REQ(OS, "In", "linux")), {{OS, "linux"}}},
    {"pool zone test-zone-2", CT_BOTH ", " ARCH_BOTH ", " REQ(ZONE, "In", "test-zone-2"), NULL, {{ZONE, "test-zone-2"}}},
    {"pod zone test-zone-2", NULL, AFF(REQ(ZONE, "In", "test-zone-2")), {{ZONE, "test-zone-2"}}},
    {"pool spot", REQ(CT, "In", "spot"), NULL, {{CT, "spot"}}},
    {"pod spot", NULL, AFF(REQ(CT, "In", "spot")), {{CT, "spot"}}},
    {"pool on-demand in test-zone-1", REQ(CT, "In", "on-demand") ", " REQ(ZONE, "In", "test-zone-1"), NULL,
     {{CT, "on-demand"}, {ZONE, "test-zone-1"}}},
    {"pod spot in test-zone-1", NULL, AFF(REQ(CT, "In", "spot") ", " REQ(ZONE, "In", "test-zone-1")),
     {{CT, "spot"}, {ZONE, "test-zone-1"}}},
    {"pool spot, pod test-zone-2", REQ(CT, "In", "spot"), AFF(REQ(ZONE, "In", "test-zone-2")),
     {{CT, "spot"}, {ZONE, "test-zone-2"}}},
    {"pool on-demand/test-zone-1/arm64/windows",
     REQ(CT, "In", "on-demand") ", " REQ(ZONE, "In", "test-zone-1") ", " REQ(ARCH, "In", "arm64") ", "
         REQ(OS, "In", "windows"),
     NULL,
     {{CT, "on-demand"}, {ZONE, "test-zone-1"}, {ARCH, "arm64"}, {OS, "windows"}}},
    {"pool spot/test-zone-2, pod amd64/linux", REQ(CT, "In", "spot") ", " REQ(ZONE, "In", "test-zone-2"),
     AFF(REQ(ARCH, "In", "amd64") ", " REQ(OS, "In", "linux")),
     {{CT, "spot"}, {ZONE, "test-zone-2"}, {ARCH, "amd64"}, {OS, "linux"}}},
    {"pod spot/test-zone-2/amd64/linux", NULL,
     AFF(REQ(CT, "In", "spot") ", " REQ(ZONE, "In", "test-zone-2") ", " REQ(ARCH, "In", "amd64") ", "
         REQ(OS, "In", "linux")),
     {{CT, "spot"}, {ZONE, "test-zone-2"}, {ARCH, "amd64"}, {OS, "linux"}}},
};

Test(solver_basic_selection, cheapest_type_and_only_valid_options)
{
    double min_price;
    char *catalog = assorted_catalog(&min_price);
    for (size_t i = 0; i < sizeof(selection_cases) / sizeof(selection_cases[0]); i++) {
        const selection_case *tc = &selection_cases[i];
        yb y = {0};
        kp_scenario s;
        pool(&y, "default", tc->pool_reqs ? tc->pool_reqs : CT_BOTH ", " ARCH_BOTH, NULL, NULL, NULL);
        pod(&y, "p", NULL, tc->pod_spec);
        run(&s, &y, catalog);
        int c = kp_scenario_claim_of(&s, "p");
        cr_assert_geq(c, 0, "%s: %s", tc->name, kp_scenario_error_of(&s, "p"));
        cr_assert_float_eq(s.plan->claims[c].price, min_price, 1e-6, "%s: %f", tc->name, s.plan->claims[c].price);
        cr_assert_leq(claim_n_its(&s, c), 60, "%s", tc->name);
        for (size_t l = 0; l < 4 && tc->labels[l][0]; l++)
            cr_assert(claim_all_its(&s, c, tc->labels[l][0], tc->labels[l][1]), "%s: an option lacks %s=%s", tc->name,
                      tc->labels[l][0], tc->labels[l][1]);
        /* The launch offering honours the same constraints. */
        for (size_t l = 0; l < 4 && tc->labels[l][0]; l++) {
            if (strcmp(tc->labels[l][0], ZONE) == 0)
                cr_assert_str_eq(claim_zone(&s, c), tc->labels[l][1], "%s", tc->name);
            if (strcmp(tc->labels[l][0], CT) == 0)
                cr_assert_str_eq(claim_ct(&s, c), tc->labels[l][1], "%s", tc->name);
        }
        kp_scenario_free(&s);
    }
    free(catalog);
}

static const struct no_match_case {
    const char *name;
    const char *pool_reqs;
    const char *pod_spec;
} no_match_cases[] = {
    {"pod arch arm", NULL, AFF(REQ(ARCH, "In", "arm"))},
    {"pod arch arm in test-zone-2", NULL, AFF(REQ(ARCH, "In", "arm") ", " REQ(ZONE, "In", "test-zone-2"))},
    {"pool arch arm, pod test-zone-2", REQ(ARCH, "In", "arm"), AFF(REQ(ZONE, "In", "test-zone-2"))},
};

Test(solver_basic_selection, no_type_matches)
{
    double min_price;
    char *catalog = assorted_catalog(&min_price);
    for (size_t i = 0; i < sizeof(no_match_cases) / sizeof(no_match_cases[0]); i++) {
        yb y = {0};
        kp_scenario s;
        pool(&y, "default", no_match_cases[i].pool_reqs ? no_match_cases[i].pool_reqs : CT_BOTH ", " ARCH_BOTH, NULL,
             NULL, NULL);
        pod(&y, "p", NULL, no_match_cases[i].pod_spec);
        run(&s, &y, catalog);
        cr_assert_eq(s.plan->n_claims, 0, "%s", no_match_cases[i].name);
        cr_assert_not_null(kp_scenario_error_of(&s, "p"), "%s", no_match_cases[i].name);
        kp_scenario_free(&s);
    }
    free(catalog);
}

Test(solver_basic_selection, options_have_room_for_three_pods_and_overhead)
{
    static const char *const cpus[] = {"0.1", "1", "2", "2.5", "4", "8", "16"};
    static const char *const mems[] = {"0.1Gi", "1Gi", "2Gi", "4Gi", "8Gi", "16Gi", "32Gi"};
    double min_price;
    char *catalog = assorted_catalog(&min_price);
    for (size_t c = 0; c < 7; c++) {
        for (size_t m = 0; m < 7; m++) {
            yb y = {0};
            kp_scenario s;
            char req[64];
            snprintf(req, sizeof(req), "cpu: '%s', memory: %s", cpus[c], mems[m]);
            pool(&y, "default", CT_BOTH ", " ARCH_BOTH, NULL, NULL, NULL);
            deploy(&y, "trio", 3, req, NULL);
            run(&s, &y, catalog);
            cr_assert_eq(s.plan->n_claims, 1, "%s", req);
            cr_assert_eq(kp_scenario_claim_pods(&s, 0), 3, "%s", req);
            const kp_plan_claim *pc = &s.plan->claims[0];
            for (uint32_t i = 0; i < pc->n_its; i++) {
                const kp_sit *it = &s.snap->its[pc->its[i]];
                /* pods plus the type's own overhead stay below its capacity */
                cr_assert_leq(pc->requests.v[KP_RES_CPU] + 100, it->capacity.v[KP_RES_CPU], "%s", req);
                cr_assert_leq(pc->requests.v[KP_RES_MEMORY] + INT64_C(10) * 1024 * 1024 * 1000,
                              it->capacity.v[KP_RES_MEMORY], "%s", req);
            }
            kp_scenario_free(&s);
        }
    }
    free(catalog);
}

/* ---------- offerings: capacity types, zones, availability ---------- */

#define OFFER(zone, ct, price, avail)                                                                         \
    "{\"zone\":\"" zone "\",\"capacityType\":\"" ct "\",\"price\":" price ",\"available\":" avail "}"
#define TYPE1(name, offers)                                                                                   \
    "{\"name\":\"" name "\",\"capacity\":{\"cpu\":\"1\",\"memory\":\"1Gi\",\"pods\":\"5\"},\"offerings\":[" offers "]}"

Test(solver_basic_selection, cheapest_in_the_allowed_capacity_type)
{
    /* test-instance2 is cheaper on spot, test-instance1 on on-demand, which is all the NodePool allows. */
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", REQ(CT, "In", "on-demand"), NULL, NULL, NULL);
    pod(&y, "p", NULL, NULL);
    run(&s, &y,
        "json:[" TYPE1("test-instance1", OFFER("test-zone-1a", "on-demand", "1.0", "true") ","
                                             OFFER("test-zone-1a", "spot", "0.2", "true")) ","
        TYPE1("test-instance2", OFFER("test-zone-1a", "on-demand", "1.3", "true") ","
                                    OFFER("test-zone-1a", "spot", "0.1", "true")) "]");
    cr_assert_str_eq(kp_scenario_claim_type(&s, 0), "test-instance1");
    cr_assert_str_eq(claim_ct(&s, 0), "on-demand");
    cr_assert_float_eq(s.plan->claims[0].price, 1.0, 1e-9);
    cr_assert_str_eq(kp_scenario_claim_req(&s, 0, CT), "In [on-demand]");
    kp_scenario_free(&s);
}

#define SPOT_DEARER                                                                                           \
    "json:[" TYPE1("only", OFFER("test-zone-1", "spot", "0.5", "true") "," OFFER("test-zone-1", "on-demand", "0.3", "true")) "]"

Test(solver_basic_selection, spot_launches_before_on_demand)
{
    /* With both allowed the launch uses spot, even where spot costs more. */
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", CT_BOTH, NULL, NULL, NULL);
    pod(&y, "p", NULL, NULL);
    run(&s, &y, SPOT_DEARER);
    cr_assert_str_eq(claim_ct(&s, 0), "spot");
    cr_assert_float_eq(s.plan->claims[0].price, 0.5, 1e-9);
    cr_assert_str_eq(kp_scenario_claim_req(&s, 0, CT), "In [on-demand spot]");
    kp_scenario_free(&s);
}

Test(solver_basic_selection, pod_requiring_on_demand)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", CT_BOTH, NULL, NULL, NULL);
    pod(&y, "p", NULL, "nodeSelector: {karpenter.sh/capacity-type: on-demand}");
    run(&s, &y, SPOT_DEARER);
    cr_assert_str_eq(claim_ct(&s, 0), "on-demand");
    cr_assert_float_eq(s.plan->claims[0].price, 0.3, 1e-9);
    cr_assert_str_eq(kp_scenario_claim_req(&s, 0, CT), "In [on-demand]");
    kp_scenario_free(&s);
}

Test(solver_basic_selection, default_pool_without_capacity_type_requirement)
{
    /* No capacity-type requirement at all: every offering counts, spot launches first. */
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", NULL, NULL, NULL, NULL);
    pod(&y, "p", NULL, NULL);
    run(&s, &y, SPOT_DEARER);
    cr_assert_str_eq(claim_ct(&s, 0), "spot");
    kp_scenario_free(&s);
}

#define ZONAL                                                                                                 \
    "json:[" TYPE1("a", OFFER("test-zone-1", "on-demand", "0.1", "true") "," OFFER("test-zone-2", "on-demand", "0.9", "true")) \
    "," TYPE1("b", OFFER("test-zone-1", "on-demand", "0.5", "true") "," OFFER("test-zone-2", "on-demand", "0.5", "true")) "]"

Test(solver_basic_selection, only_offerings_in_allowed_zones_count)
{
    /* "a" is cheapest in test-zone-1 only: confined to test-zone-2, "b" is cheaper. */
    static const struct {
        const char *where;
        const char *pool_reqs;
        const char *pod_spec;
    } cases[] = {
        {"pool", REQ(ZONE, "In", "test-zone-2"), NULL},
        {"pod", NULL, "nodeSelector: {topology.kubernetes.io/zone: test-zone-2}"},
    };
    for (size_t i = 0; i < 2; i++) {
        yb y = {0};
        kp_scenario s;
        pool(&y, "default", cases[i].pool_reqs, NULL, NULL, NULL);
        pod(&y, "p", NULL, cases[i].pod_spec);
        run(&s, &y, ZONAL);
        cr_assert_str_eq(kp_scenario_claim_type(&s, 0), "b", "%s", cases[i].where);
        cr_assert_str_eq(claim_zone(&s, 0), "test-zone-2", "%s", cases[i].where);
        cr_assert_float_eq(s.plan->claims[0].price, 0.5, 1e-9, "%s", cases[i].where);
        cr_assert_str_eq(claim_it(&s, 0, 1), "a", "%s", cases[i].where);
        kp_scenario_free(&s);
    }
    /* Unconstrained, "a" in test-zone-1 wins. */
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", NULL, NULL, NULL, NULL);
    pod(&y, "p", NULL, NULL);
    run(&s, &y, ZONAL);
    cr_assert_str_eq(kp_scenario_claim_type(&s, 0), "a");
    cr_assert_str_eq(claim_zone(&s, 0), "test-zone-1");
    kp_scenario_free(&s);
}

#define AVAILABILITY                                                                                          \
    "json:[" TYPE1("gone", OFFER("test-zone-1", "spot", "0.01", "false") "," OFFER("test-zone-2", "spot", "0.01", "false")) \
    "," TYPE1("partly", OFFER("test-zone-1", "spot", "0.02", "false") "," OFFER("test-zone-2", "spot", "0.4", "true")) \
    "," TYPE1("steady", OFFER("test-zone-1", "spot", "0.3", "true") "," OFFER("test-zone-2", "spot", "0.3", "true")) "]"

Test(solver_basic_selection, unavailable_offerings_are_skipped)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", NULL, NULL, NULL, NULL);
    pod(&y, "p", NULL, NULL);
    pod(&y, "zone1", "cpu: 10m", "nodeSelector: {topology.kubernetes.io/zone: test-zone-1}");
    run(&s, &y, AVAILABILITY);
    /* A type whose every offering is unavailable is no option at all. */
    for (uint32_t c = 0; c < s.plan->n_claims; c++)
        cr_assert(!claim_has_it(&s, (int)c, "gone"));
    /* "partly" only counts at its available price, so "steady" is cheaper. */
    int p = kp_scenario_claim_of(&s, "p");
    cr_assert_geq(p, 0);
    cr_assert_float_eq(s.plan->claims[p].price, 0.3, 1e-9);
    cr_assert_str_eq(kp_scenario_claim_type(&s, p), "steady");
    /* In test-zone-1 "partly" has nothing available: only "steady" remains. */
    int z = kp_scenario_claim_of(&s, "zone1");
    cr_assert_geq(z, 0);
    cr_assert_str_eq(claim_zone(&s, z), "test-zone-1");
    cr_assert(!claim_has_it(&s, z, "partly"));
    kp_scenario_free(&s);
}

Test(solver_basic_selection, nothing_available_is_explained)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", NULL, NULL, NULL, NULL);
    pod(&y, "p", NULL, "nodeSelector: {node.kubernetes.io/instance-type: gone}");
    run(&s, &y, AVAILABILITY);
    cr_assert_eq(s.plan->n_claims, 0);
    cr_assert_not_null(kp_scenario_error_of(&s, "p"));
    kp_scenario_free(&s);
}

/* ---------- how many types a NodeClaim carries ---------- */

Test(solver_basic_selection, at_most_max_instance_types_cheapest_first)
{
    static const uint32_t limits[] = {60, 10, 1};
    for (size_t i = 0; i < 3; i++) {
        yb y = {0};
        kp_scenario s;
        kp_solve_opts opts = KP_SOLVE_OPTS_INIT;
        opts.max_instance_types = limits[i];
        pool(&y, "default", NULL, NULL, NULL, NULL);
        pod(&y, "p", "cpu: 100m", NULL);
        run_opts(&s, &y, "synthetic:100", &opts);
        cr_assert_eq(claim_n_its(&s, 0), limits[i]);
        /* synthetic prices grow with size: the smallest types are kept, in order */
        for (uint32_t k = 0; k < limits[i]; k++) {
            char want[32];
            snprintf(want, sizeof(want), "fake-it-%u", k);
            cr_assert_str_eq(claim_it(&s, 0, k), want);
        }
        /* the NodeClaim's instance-type requirement lists exactly the kept types */
        const cJSON *its = cJSON_GetObjectItemCaseSensitive(json_claim(&s, 0), "instanceTypes");
        cr_assert_eq(cJSON_GetArraySize(its), (int)limits[i]);
        kp_scenario_free(&s);
    }
}

/* ---------- the built-in AWS catalog ---------- */

static int64_t label_int(const kp_scenario *s, uint32_t it, const char *key)
{
    kp_sym k = kp_sym_lookup(s->snap->symtab, key);
    const kp_requirement *r = k ? kp_requirements_get(&s->snap->its[it].reqs, k) : NULL;
    kp_sym v = r ? kp_requirement_single_value(r) : KP_SYM_NONE;
    cr_assert_neq(v, KP_SYM_NONE, "type %s has no single %s", sym(s, s->snap->its[it].name), key);
    char *end;
    long long n = strtoll(sym(s, v), &end, 10);
    cr_assert_eq(*end, '\0', "%s=%s is not an integer", key, sym(s, v));
    return n;
}

Test(solver_basic_selection, builtin_gpu_pod_gets_a_gpu_type)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", NULL, NULL, NULL, NULL);
    pod(&y, "train", "cpu: '2', memory: 8Gi, nvidia.com/gpu: '1'", NULL);
    run(&s, &y, "builtin");
    int c = kp_scenario_claim_of(&s, "train");
    cr_assert_geq(c, 0, "%s", kp_scenario_error_of(&s, "train"));
    const char *type = kp_scenario_claim_type(&s, c);
    cr_assert(type[0] == 'g' || type[0] == 'p', "launched %s", type);
    cr_assert(claim_all_its(&s, c, "karpenter.k8s.aws/instance-gpu-manufacturer", "nvidia"));
    for (uint32_t i = 0; i < claim_n_its(&s, c); i++)
        cr_assert_geq(label_int(&s, s.plan->claims[c].its[i], "karpenter.k8s.aws/instance-gpu-count"), 1);
    kp_scenario_free(&s);
}

Test(solver_basic_selection, builtin_family_requirement)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", REQ("karpenter.k8s.aws/instance-family", "In", "m5") ", " REQ(CT, "In", "on-demand"), NULL,
         NULL, NULL);
    pod(&y, "p", "cpu: '1', memory: 1Gi", NULL);
    run(&s, &y, "builtin");
    cr_assert(claim_all_its(&s, 0, "karpenter.k8s.aws/instance-family", "m5"));
    for (uint32_t i = 0; i < claim_n_its(&s, 0); i++)
        cr_assert(strncmp(claim_it(&s, 0, i), "m5.", 3) == 0, "%s", claim_it(&s, 0, i));
    cr_assert_str_eq(kp_scenario_claim_type(&s, 0), "m5.large");
    cr_assert_float_eq(s.plan->claims[0].price, 0.096, 1e-6);
    kp_scenario_free(&s);
}

Test(solver_basic_selection, builtin_cpu_greater_than)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", REQ("karpenter.k8s.aws/instance-cpu", "Gt", "'8'"), NULL, NULL, NULL);
    pod(&y, "p", "cpu: '1'", NULL);
    run(&s, &y, "builtin");
    cr_assert_gt(claim_n_its(&s, 0), 0);
    for (uint32_t i = 0; i < claim_n_its(&s, 0); i++)
        cr_assert_gt(label_int(&s, s.plan->claims[0].its[i], "karpenter.k8s.aws/instance-cpu"), 8, "%s",
                     claim_it(&s, 0, i));
    kp_scenario_free(&s);
}

Test(solver_basic_selection, builtin_arm64_pod_gets_graviton)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", NULL, NULL, NULL, NULL);
    pod(&y, "arm", "cpu: '1', memory: 2Gi", "nodeSelector: {kubernetes.io/arch: arm64}");
    pod(&y, "amd", "cpu: '1', memory: 2Gi", "nodeSelector: {kubernetes.io/arch: amd64}");
    run(&s, &y, "builtin");
    int arm = kp_scenario_claim_of(&s, "arm"), amd = kp_scenario_claim_of(&s, "amd");
    cr_assert(arm >= 0 && amd >= 0 && arm != amd);
    cr_assert(claim_all_its(&s, arm, ARCH, "arm64"));
    cr_assert(claim_all_its(&s, amd, ARCH, "amd64"));
    cr_assert(claim_all_its(&s, arm, "karpenter.k8s.aws/instance-cpu-manufacturer", "aws"));
    kp_scenario_free(&s);
}

Test(solver_basic_selection, builtin_gpu_less_pod_avoids_gpu_types_by_price)
{
    /* Nothing keeps a GPU-less pod off GPU types, but they are never the cheapest launch. */
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", NULL, NULL, NULL, NULL);
    pod(&y, "p", "cpu: '4', memory: 16Gi", NULL);
    run(&s, &y, "builtin");
    int c = kp_scenario_claim_of(&s, "p");
    cr_assert_geq(c, 0);
    kp_sym k = kp_sym_lookup(s.snap->symtab, "karpenter.k8s.aws/instance-gpu-count");
    const kp_requirement *r = kp_requirements_get(&s.snap->its[s.plan->claims[c].its[0]].reqs, k);
    cr_assert(r == NULL || kp_requirement_single_value(r) == KP_SYM_NONE, "launched %s",
              kp_scenario_claim_type(&s, c));
    kp_scenario_free(&s);
}
