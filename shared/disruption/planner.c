/*
 * The disruption loops, repeated until one finds nothing: each loop computes
 * the node facts and the budgets, runs the methods in order, and applies each
 * command to the snapshot as it is found — candidates gone, replacements
 * running as new nodes (closed to moved pods until the next loop), pods where
 * the simulation put them — so the next command of the same loop is proved
 * against the cluster the earlier ones leave.
 */
#include "disruption/disruption_internal.h"
#include "api/capacitybuffer.h"
#include "base/clock.h"
#include "base/xalloc.h"

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

const char *kp_disrupt_decision_name(enum kp_disrupt_decision d)
{
    return d == KP_DISRUPT_REPLACE ? "replace" : "delete";
}

const char *kp_disrupt_consolidation_type(enum kp_disrupt_method m)
{
    static const char *const r[] = {"", "empty", "", "multi", "single"};
    return r[m];
}

kp_disruption_plan *kp_disruption_plan_free(kp_disruption_plan *plan)
{
    if (!plan)
        return NULL;
    for (uint32_t i = 0; i < plan->n_commands; i++)
        kp_plan_free(plan->commands[i].simulation);
    free(plan->commands);
    free(plan->moves);
    kp_arena_free(plan->arena);
    free(plan);
    return NULL;
}

/* A node's instance type as its NodePool sees it (a NodeOverlay may price
 * the pool's types differently from the provider's catalog), else the first
 * of that name. */
static int32_t instance_type_index(const kp_snapshot *snap, const kp_snode *node)
{
    const char *name = node->instance_type;
    kp_sym s = name ? kp_sym_lookup(snap->symtab, name) : KP_SYM_NONE;
    const kp_template *t = node->template_index >= 0 ? &snap->templates[node->template_index] : NULL;
    for (uint32_t k = 0; s && t && k < t->n_its; k++)
        if (snap->its[t->its[k]].name == s)
            return (int32_t)t->its[k];
    for (uint32_t k = 0; s && k < snap->n_its; k++)
        if (snap->its[k].name == s)
            return (int32_t)k;
    return -1;
}

/* Node arrays follow the snapshot as replacements are added (zeroed). */
static void fit_arrays(planner *p)
{
    uint32_t n = p->snap->n_nodes, old = p->cap;
    if (n <= old)
        return;
    p->gone = kp_xrealloc(p->gone, n * sizeof(bool));
    p->touched = kp_xrealloc(p->touched, n * sizeof(bool));
    p->fresh = kp_xrealloc(p->fresh, n * sizeof(bool));
    p->why = kp_xrealloc(p->why, n * sizeof(*p->why));
    p->facts = kp_xrealloc(p->facts, n * sizeof(node_facts));
    p->tried = kp_xrealloc(p->tried, n * sizeof(uint32_t));
    p->why_tried = kp_xrealloc(p->why_tried, n * sizeof(*p->why_tried));
    p->split_tried = kp_xrealloc(p->split_tried, n * sizeof(bool));
    p->it_of_node = kp_xrealloc(p->it_of_node, n * sizeof(int32_t));
    p->used = kp_xrealloc(p->used, n * sizeof(*p->used));
    memset(p->used + old, 0, (n - old) * sizeof(*p->used));
    memset(p->gone + old, 0, (n - old) * sizeof(bool));
    memset(p->touched + old, 0, (n - old) * sizeof(bool));
    memset(p->fresh + old, 0, (n - old) * sizeof(bool));
    memset(p->why + old, 0, (n - old) * sizeof(*p->why));
    memset(p->facts + old, 0, (n - old) * sizeof(node_facts));
    memset(p->tried + old, 0, (n - old) * sizeof(uint32_t));
    memset(p->why_tried + old, 0, (n - old) * sizeof(*p->why_tried));
    memset(p->split_tried + old, 0, (n - old) * sizeof(bool));
    for (uint32_t i = old; i < n; i++)
        p->it_of_node[i] = instance_type_index(p->snap, &p->snap->nodes[i]);
    if (p->nominated) {
        p->nominated = kp_xrealloc(p->nominated, n * sizeof(int32_t));
        for (uint32_t i = old; i < n; i++)
            p->nominated[i] = -1;
    }
    if (p->buffer_pods) {
        p->buffer_pods = kp_xrealloc(p->buffer_pods, n * sizeof(uint32_t));
        memset(p->buffer_pods + old, 0, (n - old) * sizeof(uint32_t));
    }
    p->cap = n;
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

static uint32_t add_replacement(planner *p, const kp_plan_claim *c)
{
    kp_snapshot *snap = p->snap;
    const kp_sit *it = &snap->its[c->its[0]];
    kp_symlabels labels = replacement_labels(p, c);
    kp_snode *n = kp_snapshot_add_node(snap);
    n->name = kp_arena_printf(snap->arena, "%s-replacement-%u", snap->templates[c->template_index].name, ++p->serial);
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
    uint32_t node = snap->n_nodes - 1;
    fit_arrays(p);
    p->fresh[node] = p->touched[node] = true;
    return node;
}

static void account(planner *p, const kp_spod *s, int32_t node, int sign)
{
    if (node < 0 || s->terminal)
        return;
    for (int r = 0; r < 3; r++)
        p->used[node].v[r] += sign * s->requests.v[r];
}

static void move_pods(planner *p, const uint32_t *pods, uint32_t n, uint32_t node)
{
    p->base_stale = p->base_stale || n > 0;
    for (uint32_t i = 0; i < n; i++) {
        kp_spod *s = &p->snap->pods[pods[i]];
        account(p, s, s->node, -1);
        s->node = (int32_t)node;
        s->scheduled = true;
        account(p, s, s->node, 1);
    }
}

/* A replacement with room for another pod is capacity a node that found no
 * consolidation before could use — from the next loop on, once it is up. */
static void note_capacity(planner *p, const kp_plan_claim *c)
{
    const kp_sit *it = &p->snap->its[c->its[0]];
    if (it->allocatable.v[KP_RES_CPU] > c->requests.v[KP_RES_CPU] &&
        it->allocatable.v[KP_RES_MEMORY] > c->requests.v[KP_RES_MEMORY])
        p->capacity_added = true;
}

static void apply(planner *p, const kp_disrupt_command *cmd)
{
    for (uint32_t i = 0; i < cmd->n_candidates; i++)
        p->gone[cmd->candidates[i]] = p->touched[cmd->candidates[i]] = true;
    const kp_plan *sim = cmd->simulation;
    const kp_disrupt_blocked *in_plan = NULL;
    for (uint32_t i = 0; sim && i < sim->n_nodes; i++) {
        move_pods(p, sim->nodes[i].pods, sim->nodes[i].n_pods, sim->nodes[i].node);
        p->touched[sim->nodes[i].node] = true;
        if (!in_plan)
            in_plan = why_new(p, KP_BLOCK_IN_PLAN, NULL, "it receives pods moved by another command of this loop",
                              NULL);
        note_why(p, sim->nodes[i].node, in_plan); /* unless the loop looked at it before */
        p->tried[sim->nodes[i].node] = 0; /* its pods changed */
        p->split_tried[sim->nodes[i].node] = false;
    }
    for (uint32_t i = 0; sim && i < sim->n_claims; i++) {
        if (!sim->claims[i].n_its)
            continue;
        move_pods(p, sim->claims[i].pods, sim->claims[i].n_pods, add_replacement(p, &sim->claims[i]));
        note_capacity(p, &sim->claims[i]);
    }
    for (uint32_t i = 0; sim && i < sim->n_errors; i++) {
        kp_spod *s = &p->snap->pods[sim->errors[i].pod];
        if (s->node >= 0 && p->gone[s->node]) { /* forced out with nowhere to go: pending */
            p->base_stale = true;
            account(p, s, s->node, -1);
            s->node = -1, s->scheduled = false;
        }
    }
}

bool loop_full(const planner *p)
{
    uint32_t max = p->opts->max_commands_per_loop;
    return max && p->loop_commands >= max;
}

bool available(const planner *p, uint32_t node)
{
    return !p->gone[node] && !p->touched[node];
}

const char *pool_name(const planner *p, uint32_t node)
{
    const kp_template *t = &p->snap->templates[p->snap->nodes[node].template_index];
    return t->src ? t->src->meta.name : t->name;
}

bool plan_add(planner *p, enum kp_disrupt_method m, const uint32_t *nodes, uint32_t n, kp_plan *sim,
              const kp_disrupt_score *scores, uint32_t n_scores)
{
    kp_disruption_plan *plan = p->plan;
    size_t cap = p->cmd_cap;
    plan->commands = kp_xgrow(plan->commands, &cap, plan->n_commands + 1, sizeof(kp_disrupt_command));
    p->cmd_cap = (uint32_t)cap;
    kp_disrupt_command *cmd = &plan->commands[plan->n_commands++];
    double price = 0;
    memset(cmd, 0, sizeof(*cmd));
    for (uint32_t i = 0; i < n; i++)
        price += p->facts[nodes[i]].price;
    cmd->method = m;
    cmd->reason = kp_disrupt_reason(m);
    cmd->drift_reason = m == KP_DISRUPT_DRIFT ? p->facts[nodes[0]].drift_reason : NULL;
    cmd->consolidation_type = kp_disrupt_consolidation_type(m);
    cmd->decision = sim && sim->n_claims ? KP_DISRUPT_REPLACE : KP_DISRUPT_DELETE;
    cmd->forceful = m == KP_DISRUPT_EXPIRATION;
    cmd->loop = p->loop;
    cmd->candidates = kp_arena_memdup(plan->arena, nodes, n * sizeof(uint32_t));
    cmd->n_candidates = n;
    cmd->simulation = simulation_keep(sim);
    cmd->savings_hourly = price - plan_claims_price(cmd->simulation);
    cmd->scores = scores;
    cmd->n_scores = n_scores;
    p->loop_commands++;
    if (p->record_only)
        return false;
    budget_take(p, nodes, n);
    apply(p, cmd);
    return !loop_full(p);
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
        const kp_disrupt_blocked *why = f->blocked ? f->blocked : p->why[i];
        if (!why && f->empty && !f->consolidatable)
            why = f->not_consolidatable;
        if (!why)
            why = why_new(p, KP_BLOCK_NOTHING_TO_DO, NULL, "no cheaper way to run its pods was found", NULL);
        plan->blocked[plan->n_blocked] = *why;
        plan->blocked[plan->n_blocked].replacement = i >= p->n_initial;
        plan->blocked[plan->n_blocked++].node = i;
    }
}

/* Nodes the provisioner would place pending pods on are nominated, and a
 * nominated node is not disrupted (Karpenter's cluster state remembers the
 * nomination until the pod binds). A CapacityBuffer's virtual pods nominate
 * nothing (they would never bind, and would hold the node for good): the
 * node hosts buffer pods, which only keeps emptiness away (Karpenter's
 * HasBufferPods). */
static int nominate(planner *p)
{
    uint32_t *pending, n = kp_snapshot_pending_pods(p->snap, &pending, p->scratch);
    if (n == 0)
        return 0;
    kp_solve_opts o = KP_SOLVE_OPTS_INIT;
    o.improve = false, o.skip_lower_bound = true, o.ignore_preferences = p->opts->ignore_preferences;
    o.caps = p->opts->caps;
    kp_plan *plan;
    int err = kp_solve(p->snap, &o, pending, n, &plan);
    if (err < 0)
        return err;
    p->nominated = kp_xcalloc(p->snap->n_nodes ? p->snap->n_nodes : 1, sizeof(int32_t));
    for (uint32_t i = 0; i < p->snap->n_nodes; i++)
        p->nominated[i] = -1;
    p->buffer_pods = kp_xcalloc(p->snap->n_nodes ? p->snap->n_nodes : 1, sizeof(uint32_t));
    for (uint32_t i = 0; i < plan->n_nodes; i++) {
        const kp_plan_node *pn = &plan->nodes[i];
        for (uint32_t k = pn->n_pods; k-- > 0;) {
            if (kp_pod_is_buffer_virtual(p->snap->pods[pn->pods[k]].src, NULL, NULL))
                p->buffer_pods[pn->node]++;
            else
                p->nominated[pn->node] = (int32_t)pn->pods[k];
        }
    }
    kp_plan_free(plan);
    return 0;
}

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * KP_NS_PER_SEC + ts.tv_nsec;
}

typedef int (*method_fn)(planner *);

/* In order; `counted_as` is the method whose time and runs it adds to
 * (static NodePools' drift is drift). */
static const struct {
    method_fn fn;
    enum kp_disrupt_method counted_as;
} methods[] = {
    {method_expiration, KP_DISRUPT_EXPIRATION},   {method_emptiness, KP_DISRUPT_EMPTINESS},
    {method_static_drift, KP_DISRUPT_DRIFT},      {method_drift, KP_DISRUPT_DRIFT},
    {method_multi_node, KP_DISRUPT_MULTI_NODE},   {method_single_node, KP_DISRUPT_SINGLE_NODE},
};

static void start_loop(planner *p)
{
    kp_arena_rewind(p->loop_arena, p->loop_mark);
    if (p->cap) { /* no node: the arrays are NULL, and memset(NULL, 0, 0) is undefined */
        memset(p->touched, 0, p->cap * sizeof(bool));
        memset(p->fresh, 0, p->cap * sizeof(bool));
        memset(p->why, 0, p->cap * sizeof(*p->why));
    }
    p->loop_commands = 0;
    if (p->capacity_added)
        p->epoch++, p->capacity_added = false;
    facts_compute(p);
    budgets_start_loop(p);
    balanced_start_loop(p);
    hosts_start_loop(p);
}

/* One disruption loop: every method in order, each adding what it finds. */
static int one_loop(planner *p)
{
    start_loop(p);
    for (size_t m = 0; m < sizeof(methods) / sizeof(methods[0]) && !loop_full(p); m++) {
        kp_arena_mark mark = kp_arena_mark_get(p->scratch);
        int64_t start = monotonic_ns();
        int err = methods[m].fn(p);
        p->plan->method_ns[methods[m].counted_as] += monotonic_ns() - start;
        if (m == 0 || methods[m - 1].counted_as != methods[m].counted_as) /* one run per loop */
            p->plan->method_runs[methods[m].counted_as]++;
        kp_arena_rewind(p->scratch, mark);
        if (err < 0)
            return err;
        if (p->record_only)
            p->loop_commands = 0; /* every method gets its turn */
    }
    return (int)p->loop_commands;
}

/* The budgets as they stand before any command of this plan. */
static void record_allowances(planner *p)
{
    const kp_snapshot *snap = p->snap;
    kp_disruption_plan *plan = p->plan;
    uint32_t n = snap->n_templates * N_REASONS;
    plan->allowances = n ? KP_ARENA_NEW(plan->arena, kp_disrupt_allowance, n) : NULL;
    for (int r = 0; r < N_REASONS; r++) {
        for (uint32_t t = 0; t < snap->n_templates; t++) {
            kp_disrupt_allowance *a = &plan->allowances[plan->n_allowances++];
            *a = (kp_disrupt_allowance){t, budget_reason_name(r), budget_left(p, (int32_t)t, r), budget_of(p, t, r),
                                        p->disrupting[t], NULL};
            if (a->budget == 0 && p->node_count[t] > 0)
                a->blocked_message = kp_arena_printf(
                    plan->arena, "No allowed disruptions for disruption reason %s due to blocking budget", a->reason);
        }
    }
    for (uint32_t i = 0; i < p->snap->n_nodes; i++) {
        const node_facts *f = &p->facts[i];
        plan->eligible_drifted += f->drifted && (f->eligible || f->eligible_forced);
        if (!f->eligible || !f->consolidatable)
            continue;
        plan->eligible_empty += f->empty;
        plan->eligible_underutilized += !f->empty;
    }
}

bool pod_constrained(const kp_spod *s, bool required_only)
{
    if (required_only) {
        for (uint32_t i = 0; i < s->n_spreads; i++)
            if (s->spreads[i].do_not_schedule)
                return true;
        return s->n_affinity || s->n_anti;
    }
    return s->n_spreads || s->n_affinity || s->n_affinity_pref || s->n_anti || s->n_anti_pref;
}

/* Whether pods without topology or affinity terms of their own (or, with
 * `required_only`, without required ones) can be placed by room alone: no
 * NodePool limits, no pod anywhere whose anti-affinity keeps others away, no
 * pending pod placed by its terms in every simulation. */
static bool is_simple(const kp_snapshot *snap, bool required_only)
{
    for (uint32_t t = 0; t < snap->n_templates; t++)
        if (snap->templates[t].has_limits || snap->templates[t].limit_nodes)
            return false;
    for (uint32_t i = 0; i < snap->n_pods; i++) {
        const kp_spod *s = &snap->pods[i];
        if (s->n_anti || (!required_only && s->n_anti_pref) || (!s->scheduled && pod_constrained(s, required_only)))
            return false;
    }
    return true;
}

static void planner_free(planner *p)
{
    free(p->gone), free(p->touched), free(p->fresh), free(p->why), free(p->facts);
    free(p->it_of_node), free(p->nominated), free(p->buffer_pods), free(p->tried), free(p->used), free(p->why_tried);
    free(p->split_tried), free(p->moved), free(p->budget_why), free(p->pool_prices);
    kp_arena_free(p->scratch);
    kp_arena_free(p->loop_arena);
    kp_arena_free(p->base_arena);
}

static int run_loops(planner *p)
{
    const kp_disrupt_opts *opts = p->opts;
    uint32_t limit = opts->max_loops ? opts->max_loops : p->snap->n_nodes + 8;
    if (opts->all_methods_once) {
        p->record_only = true;
        limit = 1;
    }
    int found = 1;
    for (p->loop = 0; p->loop < limit && found > 0; p->loop++) {
        found = one_loop(p);
        if (found > 0 && !p->record_only)
            p->plan->n_loops++;
    }
    if (found < 0)
        return found;
    if (found > 0 && !p->record_only)
        facts_compute(p); /* the loops ran out: the facts as the last one leaves the cluster */
    return 0;
}

int kp_disruption_plan_compute(kp_snapshot *snap, const kp_disrupt_opts *opts, kp_disruption_plan **out)
{
    int64_t start = monotonic_ns();
    kp_disruption_plan *plan = kp_xcalloc(1, sizeof(*plan));
    planner p;
    memset(&p, 0, sizeof(p));
    plan->arena = kp_arena_new();
    p.snap = snap, p.opts = opts, p.plan = plan;
    p.scratch = kp_arena_new(), p.loop_arena = kp_arena_new();
    p.loop_mark = kp_arena_mark_get(p.loop_arena);
    p.n_initial = snap->n_nodes;
    p.epoch = 1;
    p.base_stale = true;
    p.moved = kp_xcalloc(snap->n_pods ? snap->n_pods : 1, sizeof(bool));
    p.budget_why = kp_xcalloc(snap->n_templates ? snap->n_templates * N_REASONS : 1, sizeof(*p.budget_why));
    size_t n_prices = (size_t)snap->n_templates * snap->n_its;
    p.pool_prices = kp_xcalloc(n_prices ? n_prices : 1, sizeof(double));
    for (size_t i = 0; i < n_prices; i++)
        p.pool_prices[i] = POOL_PRICE_UNKNOWN;
    fit_arrays(&p);
    p.simple = is_simple(snap, false);
    p.feasible_by_room = is_simple(snap, true);
    for (uint32_t i = 0; i < snap->n_pods; i++)
        account(&p, &snap->pods[i], snap->pods[i].node, 1);
    int err = nominate(&p);
    if (!err) {
        start_loop(&p);
        record_allowances(&p);
        plan->cost_before = managed_cost(&p);
        err = run_loops(&p);
    }
    if (!err) {
        plan->cost_after = managed_cost(&p);
        explain(&p);
    }
    planner_free(&p);
    if (err < 0) {
        kp_disruption_plan_free(plan);
        return err;
    }
    plan->compute_ns = monotonic_ns() - start;
    *out = plan;
    return 0;
}
