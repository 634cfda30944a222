/*
 * Solver scenarios: NodePool requirements and labels. Every
 * operator (In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte) on custom and
 * well-known keys, template labels pods select, labels no NodePool defines,
 * and NodePools whose requirements leave no instance type. Cases follow
 * Karpenter's scheduling suite.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"

#include "solver_scenarios.h"

/* ---------- a NodePool's requirements and labels against a pod's ---------- */

#define CT_ALL "{key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand, reserved]}"
#define NODE_AFFINITY(terms)                                                                                  \
    "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [" \
    terms "]}]}}}"

typedef struct placement_case {
    const char *name;
    const char *pool_reqs;  /* inside the NodePool's requirements list */
    const char *pool_meta;  /* NodePool template metadata fields */
    const char *pod_spec;   /* pod spec fields */
    bool schedulable;
    const char *label_key;  /* when schedulable: a label the NodeClaim must (or, with NULL value, must not) carry */
    const char *label;
    const char *reason;     /* when not: a part of the reason */
} placement_case;

static void run_placement_cases(const placement_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const placement_case *tc = &cases[i];
        yb y = {0};
        kp_scenario s;
        pool(&y, "default", tc->pool_reqs ? tc->pool_reqs : CT_ALL, NULL, tc->pool_meta, NULL);
        pod(&y, "p", NULL, tc->pod_spec);
        run(&s, &y, FAKE_CATALOG);
        int c = kp_scenario_claim_of(&s, "p");
        if (!tc->schedulable) {
            cr_assert_eq(c, -1, "%s: placed", tc->name);
            cr_assert_eq(s.plan->n_claims, 0, "%s", tc->name);
            if (tc->reason)
                cr_assert(strstr(kp_scenario_error_of(&s, "p"), tc->reason), "%s: \"%s\" lacks \"%s\"", tc->name,
                          kp_scenario_error_of(&s, "p"), tc->reason);
        } else {
            cr_assert_geq(c, 0, "%s: %s", tc->name, kp_scenario_error_of(&s, "p"));
            if (tc->label_key && tc->label)
                cr_assert_str_eq(json_claim_label(&s, c, tc->label_key), tc->label, "%s", tc->name);
            else if (tc->label_key)
                cr_assert_null(json_claim_label(&s, c, tc->label_key), "%s", tc->name);
        }
        kp_scenario_free(&s);
    }
}

#define TEST_KEY_LABEL "labels: {test-key: test-value}"
#define TEST_KEY_REQ CT_ALL ", {key: test-key, operator: In, values: [test-value]}"

static const placement_case custom_label_cases[] = {
    {"template label, unconstrained pod", NULL, TEST_KEY_LABEL, NULL, true, "test-key", "test-value", NULL},
    {"template label, conflicting nodeSelector", NULL, TEST_KEY_LABEL, "nodeSelector: {test-key: different-value}",
     false, NULL, NULL, "test-key"},
    {"undefined label in nodeSelector", NULL, NULL, "nodeSelector: {test-key: test-value}", false, NULL, NULL,
     "label \"test-key\" does not have known values"},
    {"template label, matching In", NULL, TEST_KEY_LABEL,
     NODE_AFFINITY("{key: test-key, operator: In, values: [test-value, another-value]}"), true, "test-key",
     "test-value", NULL},
    {"template label, conflicting In", NULL, TEST_KEY_LABEL,
     NODE_AFFINITY("{key: test-key, operator: In, values: [another-value]}"), false, NULL, NULL, "test-key"},
    {"undefined key, In", NULL, NULL, NODE_AFFINITY("{key: test-key, operator: In, values: [test-value]}"), false, NULL,
     NULL, "does not have known values"},
    /* Karpenter labels the NodeClaim with a value outside the set (Requirement.Any()). */
    {"undefined key, NotIn", NULL, NULL, NODE_AFFINITY("{key: test-key, operator: NotIn, values: [test-value]}"), true,
     "test-key", "0", NULL},
    {"undefined key, Exists", NULL, NULL, NODE_AFFINITY("{key: test-key, operator: Exists}"), false, NULL, NULL,
     "does not have known values"},
    {"undefined key, DoesNotExist", NULL, NULL, NODE_AFFINITY("{key: test-key, operator: DoesNotExist}"), true,
     "test-key", NULL, NULL},
    {"requirement, unconstrained pod", TEST_KEY_REQ, NULL, NULL, true, "test-key", "test-value", NULL},
    {"requirement, matching In", TEST_KEY_REQ, NULL,
     NODE_AFFINITY("{key: test-key, operator: In, values: [test-value]}"), true, "test-key", "test-value", NULL},
    {"requirement, matching value NotIn", TEST_KEY_REQ, NULL,
     NODE_AFFINITY("{key: test-key, operator: NotIn, values: [test-value]}"), false, NULL, NULL, "test-key"},
    {"requirement, Exists", TEST_KEY_REQ, NULL, NODE_AFFINITY("{key: test-key, operator: Exists}"), true, "test-key",
     "test-value", NULL},
    {"requirement, DoesNotExist", TEST_KEY_REQ, NULL, NODE_AFFINITY("{key: test-key, operator: DoesNotExist}"), false,
     NULL, NULL, "test-key"},
    {"requirement, other value In", TEST_KEY_REQ, NULL,
     NODE_AFFINITY("{key: test-key, operator: In, values: [another-value]}"), false, NULL, NULL, "another-value"},
    {"requirement, other value NotIn", TEST_KEY_REQ, NULL,
     NODE_AFFINITY("{key: test-key, operator: NotIn, values: [another-value]}"), true, "test-key", "test-value", NULL},
    {"kubernetes.io domain requirement becomes a label",
     CT_ALL ", {key: kubernetes.io/test, operator: In, values: [test-value]}", NULL, NULL, true, "kubernetes.io/test",
     "test-value", NULL},
    {"k8s.io subdomain requirement becomes a label",
     CT_ALL ", {key: subdomain.k8s.io/test, operator: In, values: [test-value]}", NULL, NULL, true,
     "subdomain.k8s.io/test", "test-value", NULL},
    {"hostname selector", NULL, NULL, "nodeSelector: {kubernetes.io/hostname: red-node}", false, NULL, NULL, NULL},
    {"restricted karpenter.sh label", NULL, NULL,
     NODE_AFFINITY("{key: karpenter.sh/test, operator: In, values: [test]}"), false, NULL, NULL, NULL},
    {"restricted karpenter.k8s.aws label", NULL, NULL,
     NODE_AFFINITY("{key: karpenter.k8s.aws/test, operator: In, values: [test]}"), false, NULL, NULL, NULL},
    {"Exists does not widen an In on the same key", NULL, NULL,
     NODE_AFFINITY("{key: topology.kubernetes.io/zone, operator: In, values: [non-existent-zone]},"
                   " {key: topology.kubernetes.io/zone, operator: Exists}"),
     false, NULL, NULL, "non-existent-zone"},
};

Test(solver_basic_template, custom_labels_and_operators)
{
    run_placement_cases(custom_label_cases, sizeof(custom_label_cases) / sizeof(custom_label_cases[0]));
}

/* Well-known labels need no definition in the NodePool; the instance types supply their values. */
static const placement_case well_known_cases[] = {
    {"zone", NULL, NULL, "nodeSelector: {topology.kubernetes.io/zone: test-zone-1}", true, NULL, NULL, NULL},
    {"instance type", NULL, NULL, "nodeSelector: {node.kubernetes.io/instance-type: default-instance-type}", true,
     NULL, NULL, NULL},
    {"legacy instance type key", NULL, NULL, "nodeSelector: {beta.kubernetes.io/instance-type: small-instance-type}",
     true, NULL, NULL, NULL},
    {"architecture", NULL, NULL, "nodeSelector: {kubernetes.io/arch: arm64}", true, NULL, NULL, NULL},
    {"operating system", NULL, NULL, "nodeSelector: {kubernetes.io/os: linux}", true, NULL, NULL, NULL},
    {"capacity type", NULL, NULL, "nodeSelector: {karpenter.sh/capacity-type: spot}", true, NULL, NULL, NULL},
    {"aws instance size", NULL, NULL, "nodeSelector: {karpenter.k8s.aws/instance-size: large}", true, NULL, NULL, NULL},
    {"value no type has", NULL, NULL, "nodeSelector: {kubernetes.io/arch: s390x}", false, NULL, NULL, NULL},
};

Test(solver_basic_template, well_known_labels_need_no_definition)
{
    run_placement_cases(well_known_cases, sizeof(well_known_cases) / sizeof(well_known_cases[0]));
}

/* ---------- well-known requirements narrow the claim ---------- */

typedef struct narrowing_case {
    const char *name;
    const char *pool_reqs;
    const char *pod_spec;
    const char *key;   /* the claim's requirement on this key */
    const char *want;  /* as our requirements print it (Gt 8 is ">=9"), NULL: unschedulable */
    const char *launch_type;
    const char *launch_zone;
} narrowing_case;

#define ZONE_REQ(values) "{key: topology.kubernetes.io/zone, operator: In, values: [" values "]}"
#define ZONE "topology.kubernetes.io/zone"
#define CPU_KEY "karpenter.k8s.aws/instance-cpu"

static const narrowing_case narrowing_cases[] = {
    {"pool zone", ZONE_REQ("test-zone-2"), NULL, ZONE, "In [test-zone-2]", "small-instance-type", "test-zone-2"},
    {"pod selector within pool zones", ZONE_REQ("test-zone-1, test-zone-2"),
     "nodeSelector: {topology.kubernetes.io/zone: test-zone-2}", ZONE, "In [test-zone-2]", NULL, "test-zone-2"},
    {"pod selector on an unknown zone", ZONE_REQ("test-zone-1"), "nodeSelector: {topology.kubernetes.io/zone: unknown}",
     ZONE, NULL, NULL, NULL},
    {"pod selector outside pool zones", ZONE_REQ("test-zone-1"),
     "nodeSelector: {topology.kubernetes.io/zone: test-zone-2}", ZONE, NULL, NULL, NULL},
    {"pod In", CT_ALL, NODE_AFFINITY("{key: topology.kubernetes.io/zone, operator: In, values: [test-zone-3]}"), ZONE,
     "In [test-zone-3]", NULL, "test-zone-3"},
    {"pod In unknown", CT_ALL, NODE_AFFINITY("{key: topology.kubernetes.io/zone, operator: In, values: [unknown]}"),
     ZONE, NULL, NULL, NULL},
    {"pod NotIn", CT_ALL,
     NODE_AFFINITY("{key: topology.kubernetes.io/zone, operator: NotIn, values: [test-zone-1, test-zone-2, unknown]}"),
     ZONE, "NotIn [test-zone-1 test-zone-2 unknown]", NULL, "test-zone-3"},
    {"selector, requirement and preference agree", CT_ALL,
     "nodeSelector: {topology.kubernetes.io/zone: test-zone-3}, affinity: {nodeAffinity: {"
     "requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: ["
     "{key: topology.kubernetes.io/zone, operator: In, values: [test-zone-1, test-zone-2, test-zone-3]}]}]},"
     " preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: {matchExpressions: ["
     "{key: topology.kubernetes.io/zone, operator: In, values: [test-zone-1, test-zone-2, test-zone-3]}]}}]}}",
     ZONE, "In [test-zone-3]", NULL, "test-zone-3"},
    {"several keys combined", CT_ALL,
     "nodeSelector: {topology.kubernetes.io/zone: test-zone-3, node.kubernetes.io/instance-type: arm-instance-type},"
     " affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{"
     "matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [test-zone-1, test-zone-3]},"
     " {key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type, arm-instance-type]}]}]},"
     " preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: {matchExpressions: ["
     "{key: topology.kubernetes.io/zone, operator: NotIn, values: [unknown]},"
     " {key: node.kubernetes.io/instance-type, operator: NotIn, values: [unknown]}]}}]}}",
     ZONE, "In [test-zone-3]", "arm-instance-type", "test-zone-3"},
    {"pool Gt", "{key: " CPU_KEY ", operator: Gt, values: ['8']}", NULL, CPU_KEY, "Exists >=9", "arm-instance-type", NULL},
    {"pool Lt", "{key: " CPU_KEY ", operator: Lt, values: ['8']}", NULL, CPU_KEY, "Exists <=7", "small-instance-type", NULL},
    {"pool Gte", "{key: " CPU_KEY ", operator: Gte, values: ['16']}", NULL, CPU_KEY, "Exists >=16", "arm-instance-type", NULL},
    {"pool Lte", "{key: " CPU_KEY ", operator: Lte, values: ['2']}", NULL, CPU_KEY, "Exists <=2", "small-instance-type", NULL},
    {"pod Gt", CT_ALL, NODE_AFFINITY("{key: " CPU_KEY ", operator: Gt, values: ['8']}"), CPU_KEY, "Exists >=9",
     "arm-instance-type", NULL},
    {"pool Gt and pod Lt leave nothing", "{key: " CPU_KEY ", operator: Gt, values: ['4']}",
     NODE_AFFINITY("{key: " CPU_KEY ", operator: Lt, values: ['4']}"), CPU_KEY, NULL, NULL, NULL},
    {"pool DoesNotExist on a label every type has", "{key: kubernetes.io/arch, operator: DoesNotExist}", NULL,
     "kubernetes.io/arch", NULL, NULL, NULL},
    {"pool Exists", "{key: kubernetes.io/arch, operator: Exists}", NULL, "kubernetes.io/arch", "Exists",
     "small-instance-type", NULL},
    {"pool NotIn", "{key: kubernetes.io/arch, operator: NotIn, values: [amd64]}", NULL, "kubernetes.io/arch",
     "NotIn [amd64]", "arm-instance-type", NULL},
};

Test(solver_basic_template, requirement_operators_narrow_the_claim)
{
    for (size_t i = 0; i < sizeof(narrowing_cases) / sizeof(narrowing_cases[0]); i++) {
        const narrowing_case *tc = &narrowing_cases[i];
        yb y = {0};
        kp_scenario s;
        pool(&y, "default", tc->pool_reqs, NULL, NULL, NULL);
        pod(&y, "p", NULL, tc->pod_spec);
        run(&s, &y, FAKE_CATALOG);
        int c = kp_scenario_claim_of(&s, "p");
        if (!tc->want) {
            cr_assert_eq(c, -1, "%s: placed", tc->name);
            cr_assert_not_null(kp_scenario_error_of(&s, "p"), "%s", tc->name);
            kp_scenario_free(&s);
            continue;
        }
        cr_assert_geq(c, 0, "%s: %s", tc->name, kp_scenario_error_of(&s, "p"));
        cr_assert_str_eq(kp_scenario_claim_req(&s, c, tc->key), tc->want, "%s", tc->name);
        if (tc->launch_type)
            cr_assert_str_eq(kp_scenario_claim_type(&s, c), tc->launch_type, "%s", tc->name);
        if (tc->launch_zone)
            cr_assert_str_eq(claim_zone(&s, c), tc->launch_zone, "%s", tc->name);
        kp_scenario_free(&s);
    }
}

Test(solver_basic_template, zone_without_spot_launches_on_demand)
{
    /* test-zone-3 has only on-demand offerings. */
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", CT_ALL, NULL, NULL, NULL);
    pod(&y, "p", NULL, "nodeSelector: {topology.kubernetes.io/zone: test-zone-3}");
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(claim_zone(&s, 0), "test-zone-3");
    cr_assert_str_eq(claim_ct(&s, 0), "on-demand");
    cr_assert_str_eq(kp_scenario_claim_req(&s, 0, "karpenter.sh/capacity-type"), "In [on-demand]");
    kp_scenario_free(&s);
}

Test(solver_basic_template, outside_the_pool_is_explained_with_pool_and_key)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "zonal", ZONE_REQ("test-zone-1"), NULL, NULL, NULL);
    pod(&y, "p", NULL, "nodeSelector: {topology.kubernetes.io/zone: test-zone-2}");
    run(&s, &y, FAKE_CATALOG);
    expect_error(&s, "p", "nodepool \"zonal\"");
    expect_error(&s, "p", "topology.kubernetes.io/zone");
    expect_error(&s, "p", "test-zone-2");
    kp_scenario_free(&s);
}

/* ---------- pods together or apart ---------- */

static const struct pair_case {
    const char *name;
    const char *first, *second; /* pod specs */
    bool together;
} pair_cases[] = {
    {"compatible custom requirements",
     NODE_AFFINITY("{key: test-key, operator: In, values: [test-value]}"),
     NODE_AFFINITY("{key: test-key, operator: NotIn, values: [another-value]}"), true},
    {"incompatible custom requirements",
     NODE_AFFINITY("{key: test-key, operator: In, values: [test-value]}"),
     NODE_AFFINITY("{key: test-key, operator: In, values: [another-value]}"), false},
    {"different architectures", "nodeSelector: {kubernetes.io/arch: amd64}", "nodeSelector: {kubernetes.io/arch: arm64}",
     false},
    {"different operating systems", "nodeSelector: {kubernetes.io/os: linux}", "nodeSelector: {kubernetes.io/os: windows}",
     false},
    {"different instance types (one by the legacy key)",
     "nodeSelector: {beta.kubernetes.io/instance-type: small-instance-type}",
     "nodeSelector: {node.kubernetes.io/instance-type: default-instance-type}", false},
    {"different zones", "nodeSelector: {topology.kubernetes.io/zone: test-zone-1}",
     "nodeSelector: {topology.kubernetes.io/zone: test-zone-2}", false},
    {"same zone", "nodeSelector: {topology.kubernetes.io/zone: test-zone-1}",
     NODE_AFFINITY("{key: topology.kubernetes.io/zone, operator: In, values: [test-zone-1, test-zone-3]}"), true},
};

Test(solver_basic_template, pods_share_a_claim_only_when_compatible)
{
    for (size_t i = 0; i < sizeof(pair_cases) / sizeof(pair_cases[0]); i++) {
        const struct pair_case *tc = &pair_cases[i];
        yb y = {0};
        kp_scenario s;
        pool(&y, "default",
             CT_ALL ", {key: kubernetes.io/arch, operator: In, values: [arm64, amd64]},"
                    " {key: test-key, operator: In, values: [test-value, another-value]}",
             NULL, NULL, NULL);
        pod(&y, "a", NULL, tc->first);
        pod(&y, "b", NULL, tc->second);
        run(&s, &y, FAKE_CATALOG);
        int a = kp_scenario_claim_of(&s, "a"), b = kp_scenario_claim_of(&s, "b");
        cr_assert(a >= 0 && b >= 0, "%s: %s %s", tc->name, kp_scenario_error_of(&s, "a"), kp_scenario_error_of(&s, "b"));
        cr_assert_eq(a == b, tc->together, "%s", tc->name);
        cr_assert_eq(s.plan->n_claims, tc->together ? 1 : 2, "%s", tc->name);
        kp_scenario_free(&s);
    }
}

Test(solver_basic_template, custom_requirement_with_several_values_labels_each_claim)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", CT_ALL ", {key: test-key, operator: In, values: [test-value, another-value]}", NULL, NULL,
         NULL);
    pod(&y, "a", NULL, NODE_AFFINITY("{key: test-key, operator: In, values: [test-value]}"));
    pod(&y, "b", NULL, NODE_AFFINITY("{key: test-key, operator: In, values: [another-value]}"));
    run(&s, &y, FAKE_CATALOG);
    cr_assert_str_eq(json_claim_label(&s, kp_scenario_claim_of(&s, "a"), "test-key"), "test-value");
    cr_assert_str_eq(json_claim_label(&s, kp_scenario_claim_of(&s, "b"), "test-key"), "another-value");
    kp_scenario_free(&s);
}

/* ---------- NodePools whose requirements leave no instance type ---------- */

static const struct empty_pool_case {
    const char *name;
    const char *reqs;
} empty_pool_cases[] = {
    {"unknown instance type", "{key: node.kubernetes.io/instance-type, operator: In, values: [non-existent-instance-type]}"},
    {"unknown architecture", "{key: kubernetes.io/arch, operator: In, values: [non-existent-arch]}"},
    {"contradicting requirements",
     "{key: kubernetes.io/arch, operator: In, values: [amd64]}, {key: kubernetes.io/arch, operator: In, values: [arm64]}"},
    {"unknown zones", ZONE_REQ("non-existent-zone-1, non-existent-zone-2")},
};

Test(solver_basic_template, nodepool_without_instance_types_is_explained)
{
    for (size_t i = 0; i < sizeof(empty_pool_cases) / sizeof(empty_pool_cases[0]); i++) {
        yb y = {0};
        kp_scenario s;
        pool(&y, "filtered", empty_pool_cases[i].reqs, NULL, NULL, NULL);
        deploy(&y, "app", 3, "cpu: 100m", NULL);
        run(&s, &y, FAKE_CATALOG);
        cr_assert_eq(s.plan->n_claims, 0, "%s", empty_pool_cases[i].name);
        cr_assert_eq(s.plan->n_errors, 3, "%s", empty_pool_cases[i].name);
        for (int p = 0; p < 3; p++) {
            char name[32];
            snprintf(name, sizeof(name), "app-%d", p);
            expect_error(&s, name, "\"filtered\"");
            expect_error(&s, name, "instance types");
        }
        kp_scenario_free(&s);
    }
}

Test(solver_basic_template, pool_constraints_exclude_types_the_pod_needs)
{
    static const char *const pods[] = {
        /* the arm type is excluded by the pool's amd64 requirement */
        NODE_AFFINITY("{key: node.kubernetes.io/instance-type, operator: In, values: [arm-instance-type]}"),
        /* only the arm type runs ios */
        NODE_AFFINITY("{key: kubernetes.io/os, operator: In, values: [ios]}"),
        /* only the arm type has 14 cores */
        "containers: [{name: c, resources: {limits: {cpu: '14'}}}]",
    };
    for (size_t i = 0; i < 3; i++) {
        yb y = {0};
        kp_scenario s;
        pool(&y, "default", "{key: kubernetes.io/arch, operator: In, values: [amd64]}", NULL, NULL, NULL);
        if (i < 2)
            pod(&y, "p", NULL, pods[i]);
        else
            yb_add(&y, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {%s}\n", pods[i]);
        run(&s, &y, FAKE_CATALOG);
        cr_assert_eq(kp_scenario_claim_of(&s, "p"), -1, "case %zu", i);
        cr_assert_not_null(kp_scenario_error_of(&s, "p"));
        kp_scenario_free(&s);
    }
}

/* One reason per NodePool: past 64 KiB the text says it was cut, and it is
 * never cut without saying so. */
Test(solver_basic_template, many_pools_reasons_say_when_they_are_cut)
{
    static const size_t counts[] = {3, 700};
    for (size_t k = 0; k < 2; k++) {
        yb y = {0};
        kp_scenario s;
        for (size_t i = 0; i < counts[k]; i++) {
            char name[80];
            snprintf(name, sizeof(name), "a-nodepool-with-a-name-long-enough-to-fill-the-text-%04u", (unsigned)i);
            pool(&y, name, CT_ALL, NULL, NULL, NULL);
        }
        pod(&y, "p", NULL, "nodeSelector: {test-key: test-value}");
        run(&s, &y, FAKE_CATALOG);
        const char *why = kp_scenario_error_of(&s, "p");
        cr_assert_not_null(why);
        const char *cut = strstr(why, " ... (cut at 65536 bytes)");
        if (k == 0) {
            cr_expect_null(cut, "%s", why);
            cr_expect(strstr(why, "-0002\""), "every pool's reason is there: %s", why);
        } else {
            cr_assert_not_null(cut, "%.200s...", why);
            cr_expect_eq(cut[strlen(" ... (cut at 65536 bytes)")], '\0', "the mark ends the text");
            cr_expect_leq(strlen(why), 65536 + strlen(" ... (cut at 65536 bytes)"));
        }
        kp_scenario_free(&s);
    }
}
