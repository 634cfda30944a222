/* The disruption controller: plan, validate, start, progress (see disruption_ctrl.h). */
#include "controller/disruption_ctrl.h"
#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "controller/disruption_exec.h"
#include "controller/disruption_metrics.h"
#include "controller/eventq.h"
#include "controller/metrics_ctrl.h"
#include "kube/objutil.h"
#include "controller/ownership.h"
#include "controller/view.h"
#include "disruption/disruption.h"
#include "kube/strmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "disruption"

struct kp_disruption_ctrl {
    bool cleaned;
    int64_t last_plan; /* monotonic ns of the last plan */
    kp_disrupt_queue *queue;
    /* Consolidation commands found and waiting out the validation period:
     * command key -> (pending_cmd *). Rebuilt every pass. */
    kp_strmap pending;
};

typedef struct pending_cmd {
    int64_t since; /* when first found */
    enum kp_disrupt_method method;
    uint32_t n_candidates;
    kp_consolidation_ref *ref; /* for its events; NULL for emptiness */
} pending_cmd;

static void pending_free(void *p)
{
    pending_cmd *pc = p;
    if (pc)
        kp_consolidation_ref_free(pc->ref);
    free(pc);
}

kp_disruption_ctrl *kp_disruption_ctrl_new(void)
{
    kp_disruption_ctrl *d = kp_xcalloc(1, sizeof(*d));
    d->queue = kp_disrupt_queue_new();
    return d;
}

kp_disruption_ctrl *kp_disruption_ctrl_free(kp_disruption_ctrl *d)
{
    if (!d)
        return NULL;
    kp_strmap_clear(&d->pending, pending_free);
    d->queue = kp_disrupt_queue_free(d->queue);
    free(d);
    return NULL;
}

size_t kp_disruption_ctrl_in_flight(const kp_disruption_ctrl *d)
{
    return kp_disrupt_queue_len(d->queue);
}

/* ------------------------------------------------------------- leftovers */

typedef struct untaint_ctx {
    kp_ctrl *c;
    char **left;
    size_t n, cap;
} untaint_ctx;

static void find_leftover(void *ctx, const char *key, const cJSON *node)
{
    untaint_ctx *u = ctx;
    if (kp_obj_str(node, "metadata.deletionTimestamp") || !kp_ctrl_owns_node(u->c, node))
        return;
    if (kp_node_has_disrupted_taint(node)) {
        u->left = kp_xgrow(u->left, &u->cap, u->n + 1, sizeof(char *));
        u->left[u->n++] = kp_xstrdup(key);
    }
}

/* Taints an earlier process left behind on nodes it did not get to delete:
 * its commands died with it. */
static void clean_leftovers(kp_ctrl *c)
{
    untaint_ctx u = {c, NULL, 0, 0};
    kp_informer_foreach(c->informers[KP_CK_NODE], find_leftover, &u);
    for (size_t i = 0; i < u.n; i++) {
        KP_LOG(KP_LOG_INFO, LOGGER, "removing a disruption taint left by an earlier run", "Node", u.left[i]);
        kp_disruption_taint(c, u.left[i], false);
        free(u.left[i]);
    }
    free(u.left);
}

/* ------------------------------------------------------------- validation */

static bool is_consolidation(enum kp_disrupt_method m)
{
    return m == KP_DISRUPT_EMPTINESS || m == KP_DISRUPT_MULTI_NODE || m == KP_DISRUPT_SINGLE_NODE;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* What identifies a decision across passes: method, candidates, and the
 * replacements' cheapest types. NULL when it would pass 1 MiB (thousands of
 * candidates): a key cut short could be another command's. */
static char *command_key(const kp_snapshot *snap, const kp_disrupt_command *cmd)
{
    const char **v = kp_xcalloc(cmd->n_candidates + 1, sizeof(char *));
    for (uint32_t i = 0; i < cmd->n_candidates; i++)
        v[i] = snap->nodes[cmd->candidates[i]].name;
    qsort(v, cmd->n_candidates, sizeof(char *), cmp_str);
    kp_buf b = KP_BUF_INIT(1 << 20);
    int err = kp_buf_printf(&b, "%d", (int)cmd->method);
    for (uint32_t i = 0; err == 0 && i < cmd->n_candidates; i++)
        err = kp_buf_printf(&b, ",%s", v[i]);
    for (uint32_t i = 0; err == 0 && cmd->simulation && i < cmd->simulation->n_claims; i++) {
        const kp_plan_claim *pc = &cmd->simulation->claims[i];
        err = kp_buf_printf(&b, "+%s", pc->n_its ? kp_sym_str(snap->symtab, snap->its[pc->its[0]].name) : "?");
    }
    char *key = err == 0 ? kp_buf_detach(&b) : NULL;
    kp_buf_free(&b);
    free(v);
    return key;
}

/* Karpenter validates a consolidation by finding it again after the
 * validation period (pods and prices move): true when `cmd` was already
 * found that long ago. Every command found goes into `seen` (the next pass's
 * pending set). */
static bool validated(kp_ctrl *c, kp_disruption_ctrl *d, kp_strmap *seen, const kp_snapshot *snap,
                      const kp_disrupt_command *cmd)
{
    if (!is_consolidation(cmd->method) || c->opts.consolidation_validation_ms <= 0)
        return true;
    char *key = command_key(snap, cmd);
    if (!key) { /* not validated: the command waits rather than act unproven */
        KP_LOG(KP_LOG_ERROR, LOGGER, "consolidation not validated", "error", kp_error_last());
        return false;
    }
    int64_t now = c->clock->now(c->clock);
    pending_cmd *pc = kp_strmap_remove(&d->pending, key);
    if (!pc) {
        pc = kp_xcalloc(1, sizeof(*pc));
        *pc = (pending_cmd){now, cmd->method, cmd->n_candidates, kp_consolidation_ref_new(snap, cmd)};
        KP_LOG(KP_LOG_DEBUG, LOGGER, "consolidation found; validating it after the wait", "command", key);
    }
    bool ok = now - pc->since >= c->opts.consolidation_validation_ms * KP_NS_PER_MS;
    if (ok)
        pending_free(pc);
    else
        pending_free(kp_strmap_put(seen, key, pc));
    free(key);
    return ok;
}

/* ------------------------------------------------------------- planning */

/* Candidates of commands in flight are "deleting" (Karpenter's
 * MarkedForDeletion): no candidates again, counted against budgets, and their
 * pods placed again in every simulation. */
static void mark_in_flight(kp_disruption_ctrl *d, kp_snapshot *snap)
{
    for (uint32_t i = 0; i < snap->n_nodes; i++) {
        kp_snode *n = &snap->nodes[i];
        if (kp_disrupt_queue_has(d->queue, n->name, n->nodeclaim))
            n->deleting = true;
    }
    kp_disrupt_queue_place(d->queue, snap);
}

typedef struct validation_ctx {
    kp_ctrl *c;
    const kp_snapshot *snap;
    const kp_disruption_plan *plan;
} validation_ctx;

/* A consolidation found before and not found again failed its validation. */
static void failed_validation(void *ctx, const char *key, void *value)
{
    validation_ctx *v = ctx;
    const pending_cmd *pc = value;
    (void)key;
    kp_disruption_metrics_failed_validation(v->c, pc->method, pc->n_candidates);
    kp_consolidation_rejected_events(v->c, pc->ref, v->snap, v->plan);
}

static int start_commands(kp_ctrl *c, kp_disruption_ctrl *d, const kp_snapshot *snap, const kp_disruption_plan *plan)
{
    kp_strmap seen = KP_STRMAP_INIT;
    int first_err = 0;
    for (uint32_t i = 0; i < plan->n_commands; i++) {
        const kp_disrupt_command *cmd = &plan->commands[i];
        if (cmd->loop != 0 || !validated(c, d, &seen, snap, cmd))
            continue;
        int err = kp_disrupt_queue_start(d->queue, c, snap, cmd);
        if (err < 0 && !first_err)
            first_err = err;
    }
    validation_ctx v = {c, snap, plan};
    kp_strmap_foreach(&d->pending, failed_validation, &v);
    kp_strmap_clear(&d->pending, pending_free); /* commands not found again are dropped */
    d->pending = seen;
    return first_err;
}

static int plan_and_start(kp_ctrl *c, kp_disruption_ctrl *d)
{
    kp_ctrl_view *view = NULL;
    int err = kp_ctrl_view_build_cloud(c, &view);
    if (err < 0)
        return err;
    mark_in_flight(d, view->snap);
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.now_ns = c->clock->now(c->clock);
    o.max_loops = 1;
    o.max_commands_per_loop = (uint32_t)c->opts.disruption_parallelism;
    o.split_max = (uint32_t)c->opts.consolidation_split_max;
    o.caps = &c->opts.caps;
    o.spot_to_spot = c->opts.spot_to_spot;
    o.ignore_preferences = c->opts.ignore_preferences;
    kp_disruption_plan *plan = NULL;
    err = kp_disruption_plan_compute(view->snap, &o, &plan);
    if (!err) {
        kp_disruption_explain(c, view->snap, plan);
        err = start_commands(c, d, view->snap, plan);
    }
    kp_disruption_plan_free(plan);
    kp_ctrl_view_free(view);
    return err;
}

/* Runs every second: commands in flight move on as soon as their
 * replacements are up, and a plan is made every poll interval, or at once
 * when a command has finished (its budget is free again). */
int kp_disruption_pass(kp_ctrl *c, void *state)
{
    kp_disruption_ctrl *d = state;
    if (!d->cleaned) {
        clean_leftovers(c);
        d->cleaned = true;
    }
    int done = kp_disrupt_queue_progress(d->queue, c);
    done += kp_disrupt_queue_released(d->queue, c); /* a budget freed */
    int64_t now = c->clock->monotonic(c->clock);
    bool due = !d->last_plan || now - d->last_plan >= c->opts.disruption_poll_ms * KP_NS_PER_MS || done > 0;
    /* One command at a time when asked to (--disruption-parallelism 1). */
    if (!due || (c->opts.disruption_parallelism == 1 && kp_disrupt_queue_len(d->queue) > 0))
        return 0;
    d->last_plan = now;
    return plan_and_start(c, d);
}
