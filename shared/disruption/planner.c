/*
 * The disruption loop, repeated until it finds nothing: each loop computes
 * the node facts, tries the methods in order, and applies the first command
 * to the snapshot as if it had completed — candidates gone, replacements
 * running as new nodes, pods where the simulation put them.
 */
#include "disruption/disruption_internal.h"
#include "base/clock.h"
#include "base/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *kp_disrupt_reason(enum kp_disrupt_method m)
{
    static const char *const r[] = {"Expired", "Empty", "Drifted", "Underutilized", "Underutilized"};
    return r[m];
}

const char *kp_disrupt_method_name(enum kp_disrupt_method m)
{
    static const char *const r[] = {"expiration", "emptiness", "drift", "multi-node consolidation",
                                    "single-node consolidation"};
    return r[m];
}

kp_disruption_plan *kp_disruption_plan_free(kp_disruption_plan *plan)
{
    if (!plan)
        return NULL;
    for (uint32_t i = 0; i < plan->n_commands; i++)
        kp_plan_free(plan->commands[i].simulation);
    free(plan->commands);
    kp_arena_free(plan->arena);
    free(plan);
    return NULL;
}

static void index_instance_types(planner *p)
{
    p->it_of_node = kp_xrealloc(p->it_of_node, (p->snap->n_nodes ? p->snap->n_nodes : 1) * sizeof(int32_t));
    for (uint32_t i = 0; i < p->snap->n_nodes; i++) {
        const char *name = p->snap->nodes[i].instance_type;
        kp_sym s = name ? kp_sym_lookup(p->snap->symtab, name) : KP_SYM_NONE;
        p->it_of_node[i] = -1;
        for (uint32_t k = 0; s && k < p->snap->n_its && p->it_of_node[i] < 0; k++)
            if (p->snap->its[k].name == s)
                p->it_of_node[i] = (int32_t)k;
    }
}

/* Labels for a replacement node: its NodePool's, the claim's single values,
 * and the launch choice (instance type, zone, capacity type). */
static kp_symlabels replacement_labels(planner *p, const kp_plan_claim *c)
{
    const kp_snapshot *snap = p->snap;
    const kp_template *t = &snap->templates[c->template_index];
    const kp_sit *it = &snap->its[c->its[0]];
    uint32_t cap = t->labels.count + c->reqs.count + it->reqs.count + 3, n = 0;
    const char **keys = KP_ARENA_NEW(p->plan->arena, const char *, cap);
    const char **vals = KP_ARENA_NEW(p->plan->arena, const char *, cap);
#define ADD(k, v)                                                                                  \
    do {                                                                                           \
        bool dup_ = false;                                                                         \
        for (uint32_t j_ = 0; j_ < n && !dup_; j_++)                                               \
            dup_ = keys[j_] == kp_sym_str(snap->symtab, (k));                                       \
        if (!dup_ && (v))                                                                          \
            keys[n] = kp_sym_str(snap->symtab, (k)), vals[n++] = kp_sym_str(snap->symtab, (v));     \
    } while (0)
    ADD(KP_SYM_ZONE, c->zone);
    ADD(KP_SYM_CAPACITY_TYPE, c->capacity_type);
    for (uint32_t i = 0; i < t->labels.count; i++)
        ADD(t->labels.items[i].key, t->labels.items[i].value);
    for (uint32_t i = 0; i < it->reqs.count; i++)
        ADD(it->reqs.items[i].key, kp_requirement_single_value(&it->reqs.items[i]));
    for (uint32_t i = 0; i < c->reqs.count; i++)
        ADD(c->reqs.items[i].key, kp_requirement_single_value(&c->reqs.items[i]));
#undef ADD
    return kp_snapshot_labels(p->snap, keys, vals, n);
}

static uint32_t add_replacement(planner *p, const kp_plan_claim *c, uint32_t serial)
{
    kp_snapshot *snap = p->snap;
    const kp_sit *it = &snap->its[c->its[0]];
    kp_symlabels labels = replacement_labels(p, c);
    kp_snode *n = kp_snapshot_add_node(snap);
    n->name = kp_arena_printf(snap->arena, "%s-replacement-%u", snap->templates[c->template_index].name, serial);
    n->hostname = kp_sym_intern(snap->symtab, n->name);
    n->labels = labels;
    n->capacity = it->capacity;
    n->allocatable = it->allocatable;
    n->template_index = (int32_t)c->template_index;
    n->managed = n->initialized = true;
    n->instance_type = kp_sym_str(snap->symtab, it->name);
    n->created_ns = p->opts->now_ns;
    n->taints = snap->templates[c->template_index].taints;
    n->n_taints = snap->templates[c->template_index].n_taints;
    return snap->n_nodes - 1;
}

static void move_pods(planner *p, const uint32_t *pods, uint32_t n, uint32_t node)
{
    for (uint32_t i = 0; i < n; i++) {
        p->snap->pods[pods[i]].node = (int32_t)node;
        p->snap->pods[pods[i]].scheduled = true;
    }
}

static void apply(planner *p, const kp_disrupt_command *cmd, uint32_t *serial)
{
    for (uint32_t i = 0; i < cmd->n_candidates; i++)
        p->gone[cmd->candidates[i]] = true;
    const kp_plan *sim = cmd->simulation;
    for (uint32_t i = 0; sim && i < sim->n_nodes; i++)
        move_pods(p, sim->nodes[i].pods, sim->nodes[i].n_pods, sim->nodes[i].node);
    for (uint32_t i = 0; sim && i < sim->n_claims; i++)
        if (sim->claims[i].n_its)
            move_pods(p, sim->claims[i].pods, sim->claims[i].n_pods, add_replacement(p, &sim->claims[i], ++*serial));
    for (uint32_t i = 0; sim && i < sim->n_errors; i++) {
        kp_spod *s = &p->snap->pods[sim->errors[i].pod];
        if (s->node >= 0 && p->gone[s->node])
            s->node = -1, s->scheduled = false; /* forced out with nowhere to go: pending */
    }
}

/* Node arrays follow the snapshot as replacements are added. */
static void fit_arrays(planner *p, uint32_t *cap)
{
    uint32_t n = p->snap->n_nodes;
    if (n <= *cap)
        return;
    p->gone = kp_xrealloc(p->gone, n * sizeof(bool));
    p->why = kp_xrealloc(p->why, n * sizeof(const char *));
    p->facts = kp_xrealloc(p->facts, n * sizeof(node_facts));
    memset(p->gone + *cap, 0, (n - *cap) * sizeof(bool));
    memset(p->why + *cap, 0, (n - *cap) * sizeof(const char *));
    if (p->nominated) {
        p->nominated = kp_xrealloc(p->nominated, n * sizeof(int32_t));
        for (uint32_t i = *cap; i < n; i++)
            p->nominated[i] = -1;
    }
    *cap = n;
    index_instance_types(p);
}

typedef int (*method_fn)(planner *, kp_disrupt_command *);

static const method_fn methods[] = {method_expiration, method_emptiness, method_drift, method_multi_node,
                                    method_single_node};

/* One disruption loop: the first method that finds a command wins. */
static int one_loop(planner *p, kp_disrupt_command *cmd)
{
    facts_compute(p);
    for (size_t m = 0; m < sizeof(methods) / sizeof(methods[0]); m++) {
        kp_arena_mark mark = kp_arena_mark_get(p->scratch);
        int found = methods[m](p, cmd);
        kp_arena_rewind(p->scratch, mark);
        if (found != 0)
            return found;
    }
    return 0;
}

static void push_command(kp_disruption_plan *plan, const kp_disrupt_command *cmd, uint32_t *cap)
{
    size_t c = *cap;
    plan->commands = kp_xgrow(plan->commands, &c, plan->n_commands + 1, sizeof(*cmd));
    *cap = (uint32_t)c;
    plan->commands[plan->n_commands++] = *cmd;
}

static double managed_cost(const planner *p)
{
    double sum = 0;
    for (uint32_t i = 0; i < p->snap->n_nodes; i++)
        if (!p->gone[i] && p->facts[i].managed)
            sum += p->facts[i].price;
    return sum;
}

/* Every managed node still standing gets the most specific reason we have. */
static void explain(planner *p)
{
    kp_disruption_plan *plan = p->plan;
    plan->blocked = KP_ARENA_NEW(plan->arena, kp_disrupt_blocked, p->snap->n_nodes ? p->snap->n_nodes : 1);
    for (uint32_t i = 0; i < p->snap->n_nodes; i++) {
        const node_facts *f = &p->facts[i];
        if (p->gone[i] || !p->snap->nodes[i].managed)
            continue;
        const char *why = f->blocked ? f->blocked : p->why[i];
        if (!why && f->empty && !f->consolidatable)
            why = f->not_consolidatable;
        if (!why)
            why = "no cheaper way to run its pods was found";
        plan->blocked[plan->n_blocked++] = (kp_disrupt_blocked){i, why};
    }
}

/* Nodes the provisioner would place pending pods on are nominated, and a
 * nominated node is not disrupted (Karpenter's cluster state remembers the
 * nomination until the pod binds). */
static int nominate(planner *p)
{
    uint32_t *pending, n = kp_snapshot_pending_pods(p->snap, &pending, p->scratch);
    if (n == 0)
        return 0;
    kp_solve_opts o = KP_SOLVE_OPTS_INIT;
    o.improve = false, o.skip_lower_bound = true, o.ignore_preferences = p->opts->ignore_preferences;
    kp_plan *plan;
    int err = kp_solve(p->snap, &o, pending, n, &plan);
    if (err < 0)
        return err;
    p->nominated = kp_xcalloc(p->snap->n_nodes ? p->snap->n_nodes : 1, sizeof(int32_t));
    for (uint32_t i = 0; i < p->snap->n_nodes; i++)
        p->nominated[i] = -1;
    for (uint32_t i = 0; i < plan->n_nodes; i++)
        if (plan->nodes[i].n_pods)
            p->nominated[plan->nodes[i].node] = (int32_t)plan->nodes[i].pods[0];
    kp_plan_free(plan);
    return 0;
}

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * KP_NS_PER_SEC + ts.tv_nsec;
}

/* Every method over every candidate, once, recording what each would do. */
static int every_method(planner *p, uint32_t *cmd_cap)
{
    facts_compute(p);
    for (size_t m = 0; m < sizeof(methods) / sizeof(methods[0]); m++) {
        kp_disrupt_command cmd;
        memset(&cmd, 0, sizeof(cmd));
        kp_arena_mark mark = kp_arena_mark_get(p->scratch);
        int found = methods[m](p, &cmd);
        kp_arena_rewind(p->scratch, mark);
        if (found < 0)
            return found;
        if (found)
            push_command(p->plan, &cmd, cmd_cap);
    }
    return 0;
}

/* The budgets as they stand before any command of this plan. */
static void record_allowances(planner *p)
{
    static const char *const reasons[] = {"Empty", "Drifted", "Underutilized"};
    const kp_snapshot *snap = p->snap;
    uint32_t n = snap->n_templates * 3;
    kp_disruption_plan *plan = p->plan;
    plan->allowances = n ? KP_ARENA_NEW(plan->arena, kp_disrupt_allowance, n) : NULL;
    int64_t *allowed = KP_ARENA_NEW(p->scratch, int64_t, snap->n_templates ? snap->n_templates : 1);
    for (uint32_t r = 0; r < 3; r++) {
        budgets_compute(p, reasons[r], allowed);
        for (uint32_t t = 0; t < snap->n_templates; t++)
            plan->allowances[plan->n_allowances++] = (kp_disrupt_allowance){t, reasons[r], allowed[t]};
    }
    for (uint32_t i = 0; i < p->n_facts; i++) {
        const node_facts *f = &p->facts[i];
        plan->eligible_drifted += f->drifted && (f->eligible || f->eligible_forced);
        if (!f->eligible || !f->consolidatable)
            continue;
        plan->eligible_empty += f->empty;
        plan->eligible_underutilized += !f->empty;
    }
}

int kp_disruption_plan_compute(kp_snapshot *snap, const kp_disrupt_opts *opts, kp_disruption_plan **out)
{
    int64_t start = monotonic_ns();
    kp_disruption_plan *plan = kp_xcalloc(1, sizeof(*plan));
    planner p;
    memset(&p, 0, sizeof(p));
    plan->arena = kp_arena_new();
    p.snap = snap, p.opts = opts, p.plan = plan, p.scratch = kp_arena_new();
    uint32_t cap = 0, cmd_cap = 0, serial = 0, limit = opts->max_loops ? opts->max_loops : snap->n_nodes + 8;
    fit_arrays(&p, &cap);
    int err = nominate(&p);
    facts_compute(&p);
    record_allowances(&p);
    plan->cost_before = managed_cost(&p);
    if (!err && opts->all_methods_once)
        err = every_method(&p, &cmd_cap), limit = 0;
    for (p.loop = 0; p.loop < limit && err >= 0; p.loop++) {
        kp_disrupt_command cmd;
        memset(&cmd, 0, sizeof(cmd));
        if (cap)
            memset(p.why, 0, cap * sizeof(const char *));
        err = one_loop(&p, &cmd);
        if (err <= 0)
            break;
        push_command(plan, &cmd, &cmd_cap);
        apply(&p, &cmd, &serial);
        fit_arrays(&p, &cap);
    }
    if (err >= 0) {
        facts_compute(&p);
        plan->cost_after = managed_cost(&p);
        explain(&p);
    }
    free(p.gone), free(p.why), free(p.facts), free(p.it_of_node), free(p.nominated);
    kp_arena_free(p.scratch);
    if (err < 0) {
        kp_disruption_plan_free(plan);
        return err;
    }
    plan->compute_ns = monotonic_ns() - start;
    *out = plan;
    return 0;
}
