/*
 * Solver scenarios: what limits the domains a pod
 * spreads over — its nodeSelector and required node affinity (preferences do
 * not), its namespace (only pods of the constraint's namespace count), the
 * zones the instance types are offered in, and NodeClaims in flight. Cases
 * follow Karpenter's topology suite ("Combined ... and Node Affinity").
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "helpers/scenario.h"

#include "solver_spread.h"

#define CT_EXISTS "{key: " CT ", operator: Exists}"
#define CTS(v) "{key: " CT ", operator: In, values: [" v "]}"
#define ZONES(v) "{key: " ZONE ", operator: In, values: [" v "]}"
#define SMALL "cpu: 100m, memory: 1Gi, pods: '110'"
#define CPU1 "cpu: '1'"
#define REQUIRED(expr) \
    "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [" expr "]}]}}}"
#define PREFERRED(expr) \
    "affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: {matchExpressions: [" expr "]}}]}}"

static void default_pool(yb *y)
{
    pool(y, "default", CT_EXISTS, NULL, NULL, NULL);
}

static bool any_claim_in(kp_scenario *s, const char *key, const char *domain)
{
    for (uint32_t c = 0; c < s->plan->n_claims; c++)
        if (strcmp(claim_domain(s, (int)c, key), domain) == 0)
            return true;
    return false;
}

/* ---------- zonal spread and node affinity ---------- */

Test(spread_node_affinity, node_selectors_make_one_domain_per_group)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "one", 5, NULL, SPREAD(HARD(ZONE, 1)) ", nodeSelector: {" ZONE ": test-zone-1}");
    pods(&y, "two", 10, NULL, SPREAD(HARD(ZONE, 1)) ", nodeSelector: {" ZONE ": test-zone-2}");
    run(&s, &y, "synthetic:10", NULL);
    /* Each pod only sees the zone it selects, so the skew over it is never above one domain's count. */
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, ZONE), "10,5");
    kp_scenario_free(&s);
}

Test(spread_node_affinity, node_selector_to_one_zone_puts_every_pod_there)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 3, NULL, SPREAD(HARD(ZONE, 1)) ", nodeSelector: {" ZONE ": test-zone-3}");
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, ZONE), "3");
    cr_assert_str_eq(kp_scenario_claim_req(&s, 0, ZONE), "In [test-zone-3]");
    kp_scenario_free(&s);
}

Test(spread_node_affinity, required_affinity_to_two_zones_balances_over_them)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 10, NULL, SPREAD(HARD(ZONE, 1)) ", " REQUIRED(ZONES("test-zone-1, test-zone-2")));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "5,5");
    cr_assert_not(any_claim_in(&s, ZONE, "test-zone-3"));
    kp_scenario_free(&s);
}

Test(spread_node_affinity, six_pods_over_two_allowed_zones)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 6, NULL, SPREAD(HARD(ZONE, 1)) ", " REQUIRED(ZONES("test-zone-1, test-zone-2")));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "3,3");
    kp_scenario_free(&s);
}

/* Zones 1 and 2 hold three pods each on full nodes (the state the previous case leaves). */
static void three_and_three(yb *y)
{
    pool(y, "default", ZONES("test-zone-1, test-zone-2, test-zone-3"), NULL, NULL, NULL);
    node(y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    node(y, "n2", ZONE ": test-zone-2", NULL, SMALL);
    bound(y, "a", 3, "n1");
    bound(y, "b", 3, "n2");
}

Test(spread_node_affinity, empty_allowed_zone_is_taken_though_skew_stays_above_max)
{
    yb y = {0};
    kp_scenario s;
    three_and_three(&y);
    pods(&y, "p", 1, CPU1, SPREAD(HARD(ZONE, 1)) ", " REQUIRED(ZONES("test-zone-2, test-zone-3")));
    run(&s, &y, "synthetic:10", NULL);
    /* Zone 3 is the minimum: a pod there lowers the skew, so it is allowed. */
    cr_assert_str_eq(skew(&s, ZONE), "3,3,1");
    int c = kp_scenario_claim_of(&s, "p-0");
    cr_assert_geq(c, 0);
    cr_assert_str_eq(claim_domain(&s, c, ZONE), "test-zone-3");
    kp_scenario_free(&s);
}

Test(spread_node_affinity, unconstrained_pods_then_even_out_the_zones)
{
    yb y = {0};
    kp_scenario s;
    three_and_three(&y);
    node(&y, "n3", ZONE ": test-zone-3", NULL, SMALL);
    bound(&y, "c", 1, "n3");
    pods(&y, "p", 5, CPU1, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, ZONE), "4,4,4");
    kp_scenario_free(&s);
}

Test(spread_node_affinity, preferred_affinity_does_not_limit_the_domains)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 6, NULL, SPREAD(HARD(ZONE, 1)) ", " PREFERRED(ZONES("test-zone-1, test-zone-2")));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, ZONE), "2,2,2");
    kp_scenario_free(&s);
}

Test(spread_node_affinity, node_selector_limits_the_minimum_to_its_zones)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "n3", ZONE ": test-zone-3", NULL, SMALL);
    pods(&y, "p", 4, CPU1, SPREAD(HARD(ZONE, 1)) ", " REQUIRED(ZONES("test-zone-1, test-zone-2")));
    run(&s, &y, "synthetic:10", NULL);
    /* Zone 3 is known and empty, but not one of the pods' zones: it does not hold them back. */
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, ZONE), "2,2");
    kp_scenario_free(&s);
}

/* ---------- capacity-type spread and node affinity ---------- */

Test(spread_node_affinity, capacity_type_node_selectors_schedule_anyway)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "spot", 5, NULL, SPREAD(SOFT(CT, 1)) ", nodeSelector: {" CT ": spot}");
    pods(&y, "od", 5, NULL, SPREAD(SOFT(CT, 1)) ", nodeSelector: {" CT ": on-demand}");
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, CT), "5,5");
    kp_scenario_free(&s);
}

Test(spread_node_affinity, spot_only_pods_count_only_spot)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 3, NULL, SPREAD(HARD(CT, 1)) ", " REQUIRED(CTS("spot")));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, CT), "3");
    kp_scenario_free(&s);
}

/* Three spot pods run on a full node. */
static void three_on_spot(yb *y)
{
    default_pool(y);
    node(y, "spot1", CT ": spot", NULL, SMALL);
    bound(y, "s", 3, "spot1");
}

Test(spread_node_affinity, empty_capacity_type_is_taken_though_skew_stays_above_max)
{
    yb y = {0};
    kp_scenario s;
    three_on_spot(&y);
    pods(&y, "p", 1, CPU1, SPREAD(HARD(CT, 1)) ", " REQUIRED(CTS("on-demand, spot")));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, CT), "3,1");
    cr_assert_str_eq(claim_domain(&s, kp_scenario_claim_of(&s, "p-0"), CT), "on-demand");
    kp_scenario_free(&s);
}

Test(spread_node_affinity, capacity_types_then_even_out)
{
    yb y = {0};
    kp_scenario s;
    three_on_spot(&y);
    node(&y, "od1", CT ": on-demand", NULL, SMALL);
    bound(&y, "o", 1, "od1");
    pods(&y, "p", 5, CPU1, SPREAD(HARD(CT, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, CT), "5,4");
    kp_scenario_free(&s);
}

/* ---------- namespaces ---------- */

Test(spread_namespaces, pods_of_another_namespace_are_not_counted)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    bound_ns(&y, "other", 3, "n1", "other", NULL, NULL);
    pods(&y, "p", 3, CPU1, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "1,1,1");
    cr_assert_str_eq(skew_ns(&s, ZONE, "other"), "3");
    cr_assert(any_claim_in(&s, ZONE, "test-zone-1"));
    kp_scenario_free(&s);
}

Test(spread_namespaces, spread_in_a_namespace_ignores_default_pods)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    bound(&y, "old", 3, "n1");
    pods_ns(&y, "p", 3, "team", "test: test", CPU1, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew_ns(&s, ZONE, "team"), "1,1,1");
    kp_scenario_free(&s);
}

Test(spread_namespaces, two_namespaces_spread_independently)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods_ns(&y, "a", 3, "ns-a", "test: test", NULL, SPREAD(HARD(ZONE, 1)));
    pods_ns(&y, "b", 3, "ns-b", "test: test", NULL, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew_ns(&s, ZONE, "ns-a"), "1,1,1");
    cr_assert_str_eq(skew_ns(&s, ZONE, "ns-b"), "1,1,1");
    /* Same zones, same requirements: the two sets share the three NodeClaims. */
    cr_assert_eq(s.plan->n_claims, 3);
    kp_scenario_free(&s);
}

Test(spread_namespaces, same_namespace_other_labels_do_not_count)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    bound_ns(&y, "other", 4, "n1", NULL, "test: other", NULL);
    pods(&y, "p", 3, CPU1, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_str_eq(skew(&s, ZONE), "1,1,1");
    cr_assert(any_claim_in(&s, ZONE, "test-zone-1"));
    kp_scenario_free(&s);
}

/* ---------- zones the instance types are offered in ---------- */

#define OFFER(zone, ct, avail) "{\"zone\":\"" zone "\",\"capacityType\":\"" ct "\",\"price\":0.1,\"available\":" avail "}"
#define ITYPE(name, cpu, offers)                                                                               \
    "{\"name\":\"" name "\",\"capacity\":{\"cpu\":\"" cpu "\",\"memory\":\"8Gi\",\"pods\":\"110\"},"            \
    "\"labels\":{\"kubernetes.io/arch\":\"amd64\"},\"operatingSystems\":[\"linux\"],\"offerings\":[" offers "]}"
#define TWO_ZONES OFFER("test-zone-1", "on-demand", "true") "," OFFER("test-zone-2", "on-demand", "true")

Test(spread_offerings, zone_no_instance_type_is_offered_in_is_no_domain)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 4, NULL, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "json:[" ITYPE("a", "4", TWO_ZONES) "]", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, ZONE), "2,2");
    kp_scenario_free(&s);
}

Test(spread_offerings, unavailable_offering_adds_no_domain)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 4, NULL, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "json:[" ITYPE("a", "4", TWO_ZONES "," OFFER("test-zone-3", "on-demand", "false")) "]", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, ZONE), "2,2");
    kp_scenario_free(&s);
}

Test(spread_offerings, zone_offered_by_one_type_only_is_launched_with_it)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 3, NULL, SPREAD(HARD(ZONE, 1)));
    run(&s, &y,
        "json:[" ITYPE("two-zones", "4", TWO_ZONES) "," ITYPE("zone-three", "8", OFFER("test-zone-3", "on-demand", "true")) "]",
        NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, ZONE), "1,1,1");
    for (uint32_t c = 0; c < s.plan->n_claims; c++) {
        bool three = strcmp(claim_domain(&s, (int)c, ZONE), "test-zone-3") == 0;
        cr_expect_str_eq(kp_scenario_claim_type(&s, (int)c), three ? "zone-three" : "two-zones");
    }
    kp_scenario_free(&s);
}

Test(spread_offerings, zone_the_nodepool_names_counts_even_if_nothing_is_offered_there)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", ZONES("test-zone-2, test-zone-3"), NULL, NULL, NULL);
    pods(&y, "p", 3, NULL, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "json:[" ITYPE("a", "4", TWO_ZONES) "]", NULL);
    /* Karpenter adds a NodePool's own In values to the domains: zone 3 is an
     * empty domain no NodeClaim can reach, so zone 2 stops at one pod. The
     * others are sent to zone 3 and find no instance type there. */
    cr_assert_str_eq(skew(&s, ZONE), "1");
    cr_assert_eq(s.plan->n_errors, 2);
    cr_assert(strstr(s.plan->errors[0].reason, "test-zone-3"), "%s", s.plan->errors[0].reason);
    kp_scenario_free(&s);
}

Test(spread_offerings, zone_requirement_not_in_the_catalog_is_unschedulable_alone)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", ZONES("test-zone-3"), NULL, NULL, NULL);
    pods(&y, "p", 1, NULL, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "json:[" ITYPE("a", "4", TWO_ZONES) "]", NULL);
    cr_assert_eq(s.plan->n_claims, 0);
    cr_assert_not_null(kp_scenario_error_of(&s, "p-0"));
    kp_scenario_free(&s);
}

Test(spread_offerings, spot_only_nodepool_still_counts_zone_three)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", CTS("spot"), NULL, NULL, NULL);
    pods(&y, "p", 4, NULL, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    /* The synthetic types list zone 3 (offered on-demand there), so zone 3 is a
     * domain even for spot, as in Karpenter: it never gets a spot NodeClaim,
     * and zones 1 and 2 stop at one pod each. */
    cr_assert_str_eq(skew(&s, ZONE), "1,1");
    cr_assert_eq(s.plan->n_errors, 2);
    cr_assert_not(any_claim_in(&s, ZONE, "test-zone-3"));
    kp_scenario_free(&s);
}

Test(spread_offerings, spot_only_instance_types_make_two_domains)
{
    yb y = {0};
    kp_scenario s;
    pool(&y, "default", CTS("spot"), NULL, NULL, NULL);
    pods(&y, "p", 4, NULL, SPREAD(HARD(ZONE, 1)));
    run(&s, &y,
        "json:[" ITYPE("a", "4", OFFER("test-zone-1", "spot", "true") "," OFFER("test-zone-2", "spot", "true")) "]",
        NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, ZONE), "2,2");
    kp_scenario_free(&s);
}

/* ---------- NodeClaims in flight ---------- */

Test(spread_in_flight, nodeclaim_in_flight_takes_its_zone_pod)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    yb_add(&y, "apiVersion: karpenter.sh/v1\nkind: NodeClaim\n"
               "metadata: {name: nc1, labels: {karpenter.sh/nodepool: default, " ZONE ": test-zone-1}}\n"
               "spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}, requirements: []}\n"
               "status: {capacity: {cpu: '4', memory: 8Gi, pods: '110'}, allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n");
    pods(&y, "p", 3, CPU1, SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, ZONE), "1,1,1");
    cr_assert_eq(s.plan->n_claims, 2);
    cr_assert_eq(s.plan->n_nodes, 1);
    cr_assert_not(any_claim_in(&s, ZONE, "test-zone-1"));
    kp_scenario_free(&s);
}

/* ---------- volume zones ---------- */

/* A PersistentVolume in zone 1 bound to claim "data". */
static void volume_in_zone_one(yb *y)
{
    yb_add(y, "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv}\n"
              "spec: {capacity: {storage: 1Gi}, accessModes: [ReadWriteOnce], csi: {driver: ebs.csi.aws.com, volumeHandle: v}, "
              "claimRef: {namespace: default, name: data}, nodeAffinity: {required: {nodeSelectorTerms: "
              "[{matchExpressions: [{key: " ZONE ", operator: In, values: [test-zone-1]}]}]}}}\n"
              "status: {phase: Bound}\n");
    yb_add(y, "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: default, "
               "annotations: {pv.kubernetes.io/bind-completed: 'yes'}}\n"
              "spec: {accessModes: [ReadWriteOnce], volumeName: pv, resources: {requests: {storage: 1Gi}}}\n"
              "status: {phase: Bound}\n");
}

#define WITH_VOLUME "volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]"

Test(spread_volumes, volume_zone_over_max_skew_is_unschedulable)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    volume_in_zone_one(&y);
    node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    bound(&y, "old", 1, "n1");
    pods(&y, "p", 1, CPU1, SPREAD(HARD(ZONE, 1)) ", " WITH_VOLUME);
    run(&s, &y, "synthetic:10", NULL);
    /* The volume narrows where the NodeClaim goes, not the domains the
     * skew is measured over: zone 1 would be 2 against empty zones. */
    cr_assert_eq(s.plan->n_claims, 0);
    cr_assert_not_null(kp_scenario_error_of(&s, "p-0"));
    kp_scenario_free(&s);
}

Test(spread_volumes, volume_zone_over_max_skew_with_schedule_anyway_goes_there)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    volume_in_zone_one(&y);
    node(&y, "n1", ZONE ": test-zone-1", NULL, SMALL);
    bound(&y, "old", 1, "n1");
    pods(&y, "p", 1, CPU1, SPREAD(SOFT(ZONE, 1)) ", " WITH_VOLUME);
    run(&s, &y, "synthetic:10", NULL);
    int c = kp_scenario_claim_of(&s, "p-0");
    cr_assert_geq(c, 0, "%s", kp_scenario_error_of(&s, "p-0"));
    cr_assert_str_eq(claim_domain(&s, c, ZONE), "test-zone-1");
    kp_scenario_free(&s);
}

Test(spread_volumes, volume_zone_within_max_skew_is_used)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    volume_in_zone_one(&y);
    node(&y, "n2", ZONE ": test-zone-2", NULL, SMALL);
    bound(&y, "old", 1, "n2");
    pods(&y, "p", 1, CPU1, SPREAD(HARD(ZONE, 1)) ", " WITH_VOLUME);
    run(&s, &y, "synthetic:10", NULL);
    int c = kp_scenario_claim_of(&s, "p-0");
    cr_assert_geq(c, 0, "%s", kp_scenario_error_of(&s, "p-0"));
    cr_assert_str_eq(claim_domain(&s, c, ZONE), "test-zone-1");
    cr_assert_str_eq(skew(&s, ZONE), "1,1");
    kp_scenario_free(&s);
}

/* ---------- NotIn ---------- */

Test(spread_node_affinity, not_in_requirement_drops_the_zone_from_the_minimum)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    node(&y, "n3", ZONE ": test-zone-3", NULL, SMALL);
    pods(&y, "p", 4, CPU1,
         SPREAD(HARD(ZONE, 1)) ", " REQUIRED("{key: " ZONE ", operator: NotIn, values: [test-zone-3]}"));
    run(&s, &y, "synthetic:10", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, ZONE), "2,2");
    kp_scenario_free(&s);
}

Test(spread_zonal_scale, hundred_pods_over_three_zones)
{
    yb y = {0};
    kp_scenario s;
    default_pool(&y);
    pods(&y, "p", 100, "cpu: 500m", SPREAD(HARD(ZONE, 1)));
    run(&s, &y, "synthetic:20", NULL);
    cr_assert_eq(s.plan->n_errors, 0);
    cr_assert_str_eq(skew(&s, ZONE), "34,33,33");
    kp_scenario_free(&s);
}
