/*
 * Consolidation, part two: what keeps a node's pods from moving, and what
 * lets them (Karpenter's consolidation_test.go "TTL", "Topology
 * Consideration", "Preferences", the PDB and do-not-disrupt tables of
 * "Replace", and suite_test.go "Simulate Scheduling"): consolidateAfter on
 * the destination, the NodePool policy of the destination, required node and
 * pod (anti-)affinity and topology spread, DaemonSet overhead on the
 * replacement, PodDisruptionBudgets and do-not-disrupt, local volumes, and
 * preferences with and without PreferencePolicy=Ignore.
 *
 * The catalog is test_disruption_consolidation_1.c's: five sizes doubling in
 * CPU, memory and price, on-demand and spot (40%) in three zones.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "helpers/scenario.h"
#include "disruption_scenarios.h"

/* ---------- the catalog ---------- */

static const char *replacement_zone(const kp_scenario *s, uint32_t i)
{
    return kp_sym_str(s->snap->symtab, replacement(s, i)->zone);
}

#define LATE "2026-11-21T11:50:00Z" /* ten minutes before NOW */
#define HOUR_1H                                                                                    \
    "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 1h, budgets: [{nodes: "      \
    "'100%'}]"
#define NEVER                                                                                      \
    "consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: Never, budgets: [{nodes: "   \
    "'100%'}]"
#define WHEN_EMPTY                                                                                 \
    "consolidationPolicy: WhenEmpty, consolidateAfter: 0s, budgets: [{nodes: '100%'}]"

/* Two small nodes: "a" with two half-CPU pods, "b" with one; deleting b is
 * the only consolidation (neither has a cheaper type). */
static void two_small_nodes(sc *c, nopt a, nopt b)
{
    a.type = b.type = "small";
    node(c, "a", a);
    node(c, "b", b);
    pod(c, "p0", "a", "500m");
    pod(c, "p1", "a", "500m");
    pod(c, "p2", "b", "500m");
}

/* ---------- consolidateAfter and policy on the destination ---------- */

Test(consolidation_destination, within_consolidate_after_it_receives_no_moved_pods)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, HOUR_1H);
    two_small_nodes(&c, N(.pod_event = LATE), N(.pod_event = OLD));
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    cr_expect_eq(kp_scenario_disrupted_by(s, "b"), -1,
                 "b's pod was moved onto a node still settling");
    expect_kept(s, "a", "consolidateAfter");
    sc_free(&c);
}

Test(consolidation_destination, after_consolidate_after_it_does)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, HOUR_1H);
    two_small_nodes(&c, N(.pod_event = "2026-11-21T10:30:00Z"), N(.pod_event = OLD));
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "b", 0);
    sc_free(&c);
}

Test(consolidation_destination, consolidate_after_never_still_receives_pods)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    pool(&c, "keep", OD_ONLY, NEVER);
    two_small_nodes(&c, N(.pool = "keep"), N(0));
    kp_scenario *s = plan_opts(&c, NULL);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "b", 0);
    expect_kept(s, "a", "Never");
    sc_free(&c);
}

Test(consolidation_destination, when_empty_nodepool_still_receives_pods)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    pool(&c, "quiet", OD_ONLY, WHEN_EMPTY);
    two_small_nodes(&c, N(.pool = "quiet"), N(0));
    kp_scenario *s = plan_opts(&c, NULL);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "b", 0);
    expect_kept(s, "a", "WhenEmpty");
    sc_free(&c);
}

Test(consolidation_destination, do_not_disrupt_node_still_receives_pods)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    two_small_nodes(&c, N(.meta = ", annotations: {karpenter.sh/do-not-disrupt: 'true'}"), N(0));
    kp_scenario *s = plan_opts(&c, NULL);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "b", 0);
    expect_kept(s, "a", "do-not-disrupt");
    sc_free(&c);
}

Test(consolidation_destination, node_with_a_blocking_pdb_still_receives_pods)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "small"));
    node(&c, "b", N(.type = "small"));
    pod_full(&c, "p0", "a", "500m", "app: db", NULL, NULL);
    pod_full(&c, "p1", "a", "500m", "app: db", NULL, NULL);
    pod(&c, "p2", "b", "500m");
    add(&c, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db, "
            "namespace: default}\n"
            "spec: {maxUnavailable: 0, selector: {matchLabels: {app: db}}}\nstatus: "
            "{disruptionsAllowed: 0}\n");
    kp_scenario *s = plan_opts(&c, NULL);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "b", 0);
    expect_kept(s, "a", "PodDisruptionBudget default/db");
    sc_free(&c);
}

Test(consolidation_destination, room_a_pending_pod_is_nominated_to_is_taken)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    /* w (6 CPUs, pending) will go to b: b is nominated, and the simulation
     * for a places w first, leaving b too little room for a's pod. */
    node(&c, "a", N(.type = "small"));
    node(&c, "b", N(.type = "large"));
    pod(&c, "pa", "a", "1500m");
    pod(&c, "pb", "b", "1");
    pod_full(&c, "w", NULL, "6", "app: w", NULL, NULL);
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    expect_kept(s, "b", "nominated for pending pod default/w");
    expect_kept(s, "a", "no cheaper replacement");
    sc_free(&c);
}

Test(consolidation_destination, without_the_pending_pod_the_room_is_used)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "small"));
    node(&c, "b", N(.type = "large"));
    pod(&c, "pa", "a", "1500m");
    pod(&c, "pb", "b", "1");
    kp_scenario *s = plan_opts(&c, NULL);
    /* Nothing is nominated; a goes (with b, into one medium node). */
    cr_expect_geq(kp_scenario_disrupted_by(s, "a"), 0);
    cr_expect_geq(kp_scenario_disrupted_by(s, "b"), 0);
    sc_free(&c);
}

/* ---------- pods that cannot be evicted ---------- */

Test(consolidation_protected, blocking_pdb_prevents_a_cheaper_replacement)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    pod_full(&c, "p", "a", "1", "app: db", NULL, NULL);
    add(&c, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db, "
            "namespace: default}\n"
            "spec: {minAvailable: 1, selector: {matchLabels: {app: db}}}\nstatus: "
            "{disruptionsAllowed: 0}\n");
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    expect_kept(s, "a", "allows 0 disruptions");
    sc_free(&c);
}

Test(consolidation_protected, pdb_allowing_a_disruption_lets_it_be_replaced)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    pod_full(&c, "p", "a", "1", "app: db", NULL, NULL);
    add(&c, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db, "
            "namespace: default}\n"
            "spec: {maxUnavailable: 1, selector: {matchLabels: {app: db}}}\nstatus: "
            "{disruptionsAllowed: 1}\n");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "small");
    sc_free(&c);
}

Test(consolidation_protected, do_not_disrupt_pod_prevents_a_cheaper_replacement)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    pod_full(&c, "p", "a", "1", NULL, ", annotations: {karpenter.sh/do-not-disrupt: 'true'}", NULL);
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    expect_kept(s, "a", "default/p");
    sc_free(&c);
}

/* ---------- scheduling constraints ---------- */

#define ANTI_HOST                                                                                  \
    ", affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "              \
    "[{labelSelector: "                                                                            \
    "{matchLabels: {app: test}}, topologyKey: kubernetes.io/hostname}]}}"

Test(consolidation_constraints, without_anti_affinity_the_pods_pack)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "small"));
    node(&c, "b", N(.type = "small", .zone = "test-zone-1b"));
    node(&c, "c", N(.type = "small", .zone = "test-zone-1c"));
    pod(&c, "p0", "a", "500m");
    pod(&c, "p1", "b", "500m");
    pod(&c, "p2", "c", "500m");
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_geq(kp_scenario_n_commands(s), 1);
    cr_expect_eq(s->disruption->n_blocked, 1, "three half-CPU pods fit on one small node");
    sc_free(&c);
}

Test(consolidation_constraints, required_anti_affinity_keeps_every_node)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "small"));
    node(&c, "b", N(.type = "small", .zone = "test-zone-1b"));
    node(&c, "c", N(.type = "small", .zone = "test-zone-1c"));
    pod_full(&c, "p0", "a", "500m", NULL, NULL, ANTI_HOST);
    pod_full(&c, "p1", "b", "500m", NULL, NULL, ANTI_HOST);
    pod_full(&c, "p2", "c", "500m", NULL, NULL, ANTI_HOST);
    kp_scenario *s = plan_opts(&c, NULL);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    expect_kept(s, "a", "no cheaper replacement");
    expect_kept(s, "b", "no cheaper replacement");
    expect_kept(s, "c", "no cheaper replacement");
    sc_free(&c);
}

Test(consolidation_constraints, anti_affine_pods_still_get_smaller_nodes)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "medium"));
    node(&c, "b", N(.type = "medium"));
    pod_full(&c, "p0", "a", "500m", NULL, NULL, ANTI_HOST);
    pod_full(&c, "p1", "b", "500m", NULL, NULL, ANTI_HOST);
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_str_eq(kp_scenario_command_method(s, 0), "single-node consolidation");
    cr_expect_eq(kp_scenario_command_replacements(s, 0), 1);
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "small");
    sc_free(&c);
}

#define ZONE_SPREAD                                                                                \
    ", topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, "        \
    "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: spread}}}]"

Test(consolidation_constraints, replacement_keeps_the_zonal_spread)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "small", .zone = "test-zone-1a"));
    node(&c, "b", N(.type = "xlarge", .zone = "test-zone-1b"));
    node(&c, "c", N(.type = "small", .zone = "test-zone-1c"));
    pod_full(&c, "p0", "a", "1", "app: spread", NULL, ZONE_SPREAD);
    pod_full(&c, "p1", "b", "1", "app: spread", NULL, ZONE_SPREAD);
    pod_full(&c, "p2", "c", "1", "app: spread", NULL, ZONE_SPREAD);
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "b", 1);
    /* Anywhere but zone 1b would make one zone hold two and another none. */
    cr_expect_str_eq(replacement_zone(s, 0), "test-zone-1b");
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "small");
    sc_free(&c);
}

Test(consolidation_constraints, required_zone_affinity_is_kept_by_the_replacement)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge", .zone = "test-zone-1c"));
    pod_full(&c, "p", "a", "1", NULL, NULL,
             ", nodeSelector: {topology.kubernetes.io/zone: test-zone-1c}");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    cr_expect_str_eq(replacement_zone(s, 0), "test-zone-1c");
    sc_free(&c);
}

Test(consolidation_constraints, hostname_spread_across_new_nodes_needs_several_claims)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    /* Three replicas spread by hostname, all on one node (scheduled when it
     * was the only one): moving them takes three nodes, and Karpenter's
     * consolidation never turns one node into several (split consolidation,
     * test_disruption_split.c, is off here). */
    node(&c, "a", N(.type = "xlarge"));
    const char *spread =
        ", topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, "
        "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: test}}}]";
    pod_full(&c, "p0", "a", "1", NULL, NULL, spread);
    pod_full(&c, "p1", "a", "1", NULL, NULL, spread);
    pod_full(&c, "p2", "a", "1", NULL, NULL, spread);
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.split_max = 1;
    kp_scenario *s = plan_opts(&c, &o);
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    expect_kept(s, "a", "new NodeClaims");
    sc_free(&c);
}

#define WITH_DB                                                                                    \
    ", affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: " \
    "{matchLabels: {app: db}}, topologyKey: kubernetes.io/hostname}]}}"

Test(consolidation_constraints, pod_affinity_moves_the_pod_to_its_peer)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "large"));
    node(&c, "b", N(.type = "small"));
    pod_full(&c, "db", "a", "5", "app: db", NULL, NULL); /* a has no cheaper type */
    pod_full(&c, "web", "b", "1", "app: web", NULL, WITH_DB);
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    /* b's pod must be next to the db pod: a has room, so b goes. */
    expect_command(s, 0, "single-node consolidation", "b", 0);
    sc_free(&c);
}

Test(consolidation_constraints, pod_affinity_without_room_at_the_peer_keeps_the_node)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "large"));
    node(&c, "b", N(.type = "medium"));
    pod_full(&c, "db", "a", "7500m", "app: db", NULL, NULL);
    pod_full(&c, "web", "b", "1", "app: web", NULL, WITH_DB);
    kp_scenario *s = plan_opts(&c, NULL);
    /* A small replacement would be cheaper, but it would not hold a db pod. */
    cr_expect_eq(kp_scenario_disrupted_by(s, "b"), -1);
    expect_kept(s, "b", "default/web");
    sc_free(&c);
}

/* ---------- DaemonSets ---------- */

static void daemonset(sc *c, const char *cpu, const char *node_selector)
{
    add(c,
        "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: default}\n"
        "spec: {selector: {matchLabels: {app: agent}}, template: {metadata: {labels: {app: "
        "agent}}, spec: {%s"
        "containers: [{name: a, resources: {requests: {cpu: '%s', memory: 512Mi}}}]}}}\n",
        node_selector ? node_selector : "", cpu);
}

static void daemon_pod(sc *c, const char *name, const char *node_name, const char *cpu)
{
    add(c,
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: default, labels: {app: "
        "agent}, "
        "ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: u2, "
        "controller: true}]}\n"
        "spec: {nodeName: %s, containers: [{name: a, resources: {requests: {cpu: '%s', memory: "
        "512Mi}}}]}\n"
        "status: {phase: Running}\n",
        name, node_name, cpu);
}

Test(consolidation_daemonsets, overhead_sizes_the_replacement)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    daemonset(&c, "1", NULL);
    node(&c, "a", N(.type = "xlarge"));
    daemon_pod(&c, "agent-a", "a", "1");
    pod(&c, "p", "a", "1500m");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    /* 1.5 CPUs of pod and 1 of agent: more than small's 2. */
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "medium");
    cr_expect_eq(replacement(s, 0)->n_pods, 1, "the agent is not moved, it comes with the node");
    sc_free(&c);
}

Test(consolidation_daemonsets, without_the_daemonset_the_replacement_is_smaller)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    pod(&c, "p", "a", "1500m");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "small");
    sc_free(&c);
}

Test(consolidation_daemonsets, daemonset_that_would_not_run_there_adds_nothing)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    daemonset(&c, "1", "nodeSelector: {gpu: 'true'}, ");
    node(&c, "a", N(.type = "xlarge"));
    pod(&c, "p", "a", "1500m");
    kp_scenario *s = plan1(&c, false);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "small");
    sc_free(&c);
}

/* ---------- preferences ---------- */

#define PREFER_XLARGE                                                                              \
    ", affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, "   \
    "preference: {matchExpressions: [{key: node.kubernetes.io/instance-type, operator: In, "       \
    "values: "                                                                                     \
    "[xlarge]}]}}]}}"

Test(consolidation_preferences, preferred_type_is_honoured)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    pod_full(&c, "p", "a", "1", NULL, NULL, PREFER_XLARGE);
    kp_scenario *s = plan_opts(&c, NULL);
    /* The simulation keeps the preference: the replacement would be an
     * xlarge again, which is not cheaper. */
    cr_expect_eq(kp_scenario_n_commands(s), 0);
    expect_kept(s, "a", "no cheaper replacement");
    sc_free(&c);
}

Test(consolidation_preferences, ignored_preferences_allow_a_replacement)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    pod_full(&c, "p", "a", "1", NULL, NULL, PREFER_XLARGE);
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.ignore_preferences = true;
    kp_scenario *s = plan_opts(&c, &o);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    cr_expect_str_eq(kp_scenario_command_replacement_type(s, 0, 0), "small");
    sc_free(&c);
}

Test(consolidation_preferences, ignored_anti_affinity_preference_allows_a_delete)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    const char *prefer_apart = ", affinity: {podAntiAffinity: "
                               "{preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, "
                               "podAffinityTerm: {labelSelector: {matchLabels: {app: test}}, "
                               "topologyKey: kubernetes.io/hostname}}]}}";
    node(&c, "a", N(.type = "small"));
    node(&c, "b", N(.type = "small"));
    pod_full(&c, "p0", "a", "500m", NULL, NULL, prefer_apart);
    pod_full(&c, "p1", "a", "500m", NULL, NULL, prefer_apart);
    pod_full(&c, "p2", "b", "500m", NULL, NULL, prefer_apart);
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.ignore_preferences = true;
    o.max_loops = 1;
    kp_scenario *s = plan_opts(&c, &o);
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "b", 0);
    sc_free(&c);
}

/* ---------- volumes ---------- */

Test(consolidation_volumes, local_volume_pinned_to_the_node_does_not_pin_the_pod)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", OD_ONLY, NULL);
    node(&c, "a", N(.type = "xlarge"));
    add(&c, "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: local-path}\n"
            "provisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer\n"
            "---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-a}\n"
            "spec: {capacity: {storage: 10Gi}, accessModes: [ReadWriteOnce], storageClassName: "
            "local-path, "
            "local: {path: /mnt/disk}, nodeAffinity: {required: {nodeSelectorTerms: "
            "[{matchExpressions: "
            "[{key: kubernetes.io/hostname, operator: In, values: [a]}]}]}}}\n"
            "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: "
            "default}\n"
            "spec: {accessModes: [ReadWriteOnce], storageClassName: local-path, volumeName: pv-a, "
            "resources: {requests: {storage: 10Gi}}}\n");
    pod_full(&c, "p", "a", "1", NULL, NULL,
             ", volumes: [{name: d, persistentVolumeClaim: {claimName: data}}]");
    kp_scenario *s = plan1(&c, false);
    /* Karpenter: the hostname affinity of a local volume dies with the node,
     * so it does not hold the pod to it. */
    cr_assert_eq(kp_scenario_n_commands(s), 1);
    expect_command(s, 0, "single-node consolidation", "a", 1);
    sc_free(&c);
}
