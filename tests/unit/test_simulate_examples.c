/*
 * The examples/ scenarios planned against the built-in AWS catalog, as
 * `karpenter-controller simulate -f examples/NAME` plans them.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"

static void run_example(kp_scenario *s, const char *name, bool improve)
{
    char path[512];
    kp_solve_opts opts = KP_SOLVE_OPTS_INIT;
    opts.improve = improve;
    snprintf(path, sizeof(path), "%s/examples/%s", KP_SOURCE_DIR, name);
    cr_assert_eq(kp_scenario_run_path(s, path, "builtin", &opts), 0, "%s: %s", name, kp_error_last());
    cr_assert_eq(s->plan->n_errors, 0, "%s: %s", name, s->plan->n_errors ? s->plan->errors[0].reason : "");
}

/* The capacity of the largest option a claim launches with (what limits count). */
static int64_t claim_cpu_capacity(const kp_scenario *s, int claim)
{
    const kp_plan_claim *c = &s->plan->claims[claim];
    int64_t max = 0;
    for (uint32_t i = 0; i < c->n_its; i++)
        if (s->snap->its[c->its[i]].capacity.v[KP_RES_CPU] > max)
            max = s->snap->its[c->its[i]].capacity.v[KP_RES_CPU];
    return max;
}

Test(simulate_examples, nginx_ten_half_cores_on_one_node_like_karpenter)
{
    kp_scenario s;
    run_example(&s, "nginx", false);
    cr_assert_eq(s.plan->n_scheduled, 10);
    cr_assert_eq(s.plan->n_claims, 1);
    cr_assert_geq(s.plan->claims[0].requests.v[KP_RES_CPU], 5000);
    cr_assert_str_eq(kp_scenario_claim_req(&s, 0, "karpenter.sh/capacity-type"), "In [on-demand spot]");
    cr_assert_leq(s.plan->claims[0].n_its, 60);
    double karpenter = s.plan->hourly_cost;
    kp_scenario_free(&s);

    run_example(&s, "nginx", true);
    cr_assert_eq(s.plan->n_scheduled, 10);
    cr_assert_leq(s.plan->hourly_cost, karpenter, "repacking must never cost more");
    kp_scenario_free(&s);
}

Test(simulate_examples, spot_first_until_its_limit_then_on_demand)
{
    kp_scenario s;
    run_example(&s, "spot-fallback", false);
    int64_t spot_cpu = 0;
    uint32_t on_demand_pods = 0;
    for (uint32_t c = 0; c < s.plan->n_claims; c++) {
        if (strcmp(kp_scenario_claim_pool(&s, (int)c), "spot") == 0) {
            spot_cpu += claim_cpu_capacity(&s, (int)c);
            cr_assert_str_eq(kp_scenario_claim_req(&s, (int)c, "karpenter.sh/capacity-type"), "In [spot]");
        } else {
            on_demand_pods += kp_scenario_claim_pods(&s, (int)c);
        }
    }
    cr_assert_gt(spot_cpu, 0, "the heavier spot pool is tried first");
    cr_assert_leq(spot_cpu, 32000, "the spot pool's limit of 32 vCPU holds");
    cr_assert_gt(on_demand_pods, 0, "the rest falls back to on-demand");
    cr_assert_eq(s.plan->n_scheduled, 40);
    kp_scenario_free(&s);
}

Test(simulate_examples, gpu_pods_get_gpus_and_web_pods_avoid_the_gpu_pool)
{
    kp_scenario s;
    run_example(&s, "gpu", true);
    for (int i = 0; i < 2; i++) {
        char pod[16];
        snprintf(pod, sizeof(pod), "train-%d", i);
        int c = kp_scenario_claim_of(&s, pod);
        cr_assert_geq(c, 0);
        cr_assert_str_eq(kp_scenario_claim_pool(&s, c), "gpu");
        cr_assert_geq(s.plan->claims[c].requests.v[kp_restab_find(&s.snap->restab, "nvidia.com/gpu")], 1000);
    }
    for (int i = 0; i < 4; i++) {
        char pod[16];
        snprintf(pod, sizeof(pod), "web-%d", i);
        cr_assert_str_eq(kp_scenario_claim_pool(&s, kp_scenario_claim_of(&s, pod)), "general");
    }
    kp_scenario_free(&s);
}

Test(simulate_examples, zone_spread_puts_three_pods_in_each_zone)
{
    kp_scenario s;
    run_example(&s, "zone-spread", false);
    const char *zones[] = {"us-east-1a", "us-east-1b", "us-east-1c"};
    int per_zone[3] = {0, 0, 0};
    for (int i = 0; i < 9; i++) {
        char pod[16];
        snprintf(pod, sizeof(pod), "frontend-%d", i);
        const char *z = kp_scenario_claim_req(&s, kp_scenario_claim_of(&s, pod), "topology.kubernetes.io/zone");
        cr_assert_not_null(z);
        for (int k = 0; k < 3; k++) {
            char want[32];
            snprintf(want, sizeof(want), "In [%s]", zones[k]);
            per_zone[k] += strcmp(z, want) == 0;
        }
    }
    cr_assert(per_zone[0] == 3 && per_zone[1] == 3 && per_zone[2] == 3, "%d %d %d", per_zone[0], per_zone[1],
              per_zone[2]);
    kp_scenario_free(&s);
}
