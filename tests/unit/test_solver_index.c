/*
 * The place index (shared/scheduling/place_index.c) only skips places that
 * would have refused a pod, so the indexed solver must give exactly the plan
 * of the plain scan that tries every place in turn. Here both solve the same
 * few thousand random pods — every kind of constraint the index looks at
 * (resources, NodePool taints, zone and capacity-type pins, zone and hostname
 * spread, affinity and anti-affinity, existing nodes with pods that repel) and
 * some it does not (host ports, preferences that relax) — and the plans,
 * printed as `simulate -o json` prints them, must be equal.
 */
#include "base/error.h"

#include "solver_scenarios.h"

static const char *const cpus[] = {"100m", "250m", "500m", "1", "1500m", "3"};
static const char *const mems[] = {"100Mi", "256Mi", "512Mi", "1Gi", "2Gi", "6Gi"};
static const char *const zones[] = {"test-zone-1", "test-zone-2", "test-zone-3"};

static void requests(rng *r, char *out, size_t size)
{
    snprintf(out, size, "cpu: %s, memory: %s", cpus[rnd(r, 6)], mems[rnd(r, 6)]);
}

static void pools(yb *y)
{
    pool(y, "general", "{key: kubernetes.io/arch, operator: In, values: [amd64]}", NULL, NULL,
         "weight: 10, limits: {cpu: \"400\"}");
    pool(y, "ml", "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}",
         "taints: [{key: team, value: ml, effect: NoSchedule}]", "labels: {team: ml}", NULL);
    pool(y, "spare", NULL, NULL, NULL, NULL);
    daemonset(y, "agent", "cpu: 100m, memory: 64Mi", NULL);
}

/* Existing nodes, some with pods that carry required anti-affinity. */
static void nodes(yb *y, rng *r)
{
    for (int i = 0; i < 24; i++) {
        char name[32], labels[256], podname[32], meta[160];
        snprintf(name, sizeof(name), "node-%02d", i);
        snprintf(labels, sizeof(labels),
                 "kubernetes.io/hostname: %s, topology.kubernetes.io/zone: %s, karpenter.sh/capacity-type: %s, "
                 "kubernetes.io/arch: amd64",
                 name, zones[i % 3], i % 2 ? "spot" : "on-demand");
        node(y, name, labels, i % 5 == 4 ? "taints: [{key: team, value: ml, effect: NoSchedule}]" : NULL,
             i % 4 ? "cpu: \"4\", memory: 8Gi, pods: \"20\"" : "cpu: \"16\", memory: 32Gi, pods: \"40\"");
        for (int k = 0; k < (int)rnd(r, 4); k++) {
            snprintf(podname, sizeof(podname), "run-%02d-%d", i, k);
            snprintf(meta, sizeof(meta), "labels: {app: g%u}", rnd(r, 6));
            bound(y, podname, name, meta, "cpu: 500m, memory: 512Mi");
        }
    }
}

static const char *const affinity_kinds[] = {"podAffinity", "podAntiAffinity"};

/* One random constraint (or none) for a pending pod: its spec fields. */
static void constraint(rng *r, uint32_t i, char *spec, size_t size, char *labels, size_t lsize)
{
    uint32_t g = rnd(r, 6), kind = rnd(r, 13);
    const char *key = rnd(r, 2) ? "topology.kubernetes.io/zone" : "kubernetes.io/hostname";
    snprintf(labels, lsize, "labels: {app: g%u}", g);
    spec[0] = 0;
    switch (kind) {
    case 1:
    case 2:
        snprintf(spec, size,
                 "topologySpreadConstraints: [{maxSkew: %u, topologyKey: %s, whenUnsatisfiable: %s, "
                 "labelSelector: {matchLabels: {app: g%u}}}]",
                 1 + rnd(r, 3), key, kind == 1 ? "DoNotSchedule" : "ScheduleAnyway", rnd(r, 6));
        break;
    case 3:
    case 4:
        snprintf(spec, size,
                 "affinity: {%s: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: %s, "
                 "labelSelector: {matchLabels: {app: g%u}}}]}}",
                 affinity_kinds[kind - 3], key, kind == 3 ? g : rnd(r, 6));
        break;
    case 5:
        snprintf(labels, lsize, "labels: {app: solo%u}", i % 7);
        snprintf(spec, size,
                 "affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: "
                 "kubernetes.io/hostname, labelSelector: {matchLabels: {app: solo%u}}}]}}",
                 i % 7);
        break;
    case 6:
        snprintf(spec, size,
                 "affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 5, "
                 "podAffinityTerm: {topologyKey: %s, labelSelector: {matchLabels: {app: g%u}}}}]}}",
                 key, g);
        break;
    case 7:
        snprintf(spec, size, "nodeSelector: {topology.kubernetes.io/zone: %s}", zones[rnd(r, 3)]);
        break;
    case 8:
        snprintf(spec, size, "nodeSelector: {karpenter.sh/capacity-type: %s}", rnd(r, 2) ? "spot" : "on-demand");
        break;
    case 9:
        snprintf(spec, size,
                 "nodeSelector: {team: ml}, tolerations: [{key: team, operator: Equal, value: ml, effect: NoSchedule}]");
        break;
    case 10:
        snprintf(spec, size, "tolerations: [{operator: Exists}]");
        break;
    case 11:
        snprintf(spec, size,
                 "affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 10, "
                 "preference: {matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [%s]}]}}]}}",
                 zones[rnd(r, 3)]);
        break;
    default:
        break;
    }
}

static void pending(yb *y, rng *r, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        char name[32], req[96], spec[512], labels[64];
        snprintf(name, sizeof(name), "p-%05u", i);
        requests(r, req, sizeof(req));
        constraint(r, i, spec, sizeof(spec), labels, sizeof(labels));
        if (rnd(r, 40) == 0) /* a host port: not indexed, checked by the full test */
            yb_add(y,
                   "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, %s}\n"
                   "spec: {containers: [{name: c, ports: [{containerPort: 80, hostPort: 8080}], "
                   "resources: {requests: {%s}}}]}\n",
                   name, labels, req);
        else
            podm(y, name, labels, req, spec);
    }
}

static char *plan_text(uint64_t seed, uint32_t n, const char *catalog, bool plain)
{
    yb y = {0};
    rng r = {seed};
    pools(&y);
    nodes(&y, &r);
    pending(&y, &r, n);
    kp_solve_opts opts = KP_SOLVE_OPTS_INIT;
    opts.improve = false;
    opts.plain_scan = plain;
    kp_scenario s;
    run_opts(&s, &y, catalog, &opts);
    cr_assert_gt(s.plan->n_claims, 10, "the case should need many NodeClaims");
    cr_assert_gt(s.plan->n_nodes, 0, "the case should use existing nodes");
    cr_assert_gt(s.plan->n_errors, 0, "the case should leave some pods pending (anti-affinity, limits)");
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(s.json, "summary"), "solveMillis");
    char *text = cJSON_PrintUnformatted(s.json);
    kp_scenario_free(&s);
    return text;
}

static void same_plan(uint64_t seed, uint32_t n, const char *catalog)
{
    char *plain = plan_text(seed, n, catalog, true);
    char *indexed = plan_text(seed, n, catalog, false);
    size_t at = 0;
    while (plain[at] && plain[at] == indexed[at])
        at++;
    cr_assert(plain[at] == indexed[at], "plans differ at byte %zu:\nplain:   %.160s\nindexed: %.160s", at,
              plain + (at > 40 ? at - 40 : 0), indexed + (at > 40 ? at - 40 : 0));
    free(plain);
    free(indexed);
}

Test(solver_index, same_plan_as_plain_scan_synthetic)
{
    same_plan(1, 3000, "synthetic:60");
}

Test(solver_index, same_plan_as_plain_scan_other_seed)
{
    same_plan(2024, 2500, "synthetic:30");
}

Test(solver_index, same_plan_as_plain_scan_builtin_catalog)
{
    same_plan(7, 1500, "builtin");
}
