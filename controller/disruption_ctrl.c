/* The disruption controller: plan, validate, execute (see disruption_ctrl.h). */
#include "controller/disruption_ctrl.h"
#include "api/nodepool_hash.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "controller/eventq.h"
#include "controller/lifecycle.h"
#include "controller/metrics_ctrl.h"
#include "controller/objutil.h"
#include "controller/ownership.h"
#include "controller/provisioner.h"
#include "controller/view.h"
#include "disruption/disruption.h"
#include "kube/ops.h"
#include "provisioning/nodeclaim_object.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "disruption"
#define REPLACEMENT_TIMEOUT_NS (15 * 60 * KP_NS_PER_SEC)

typedef struct names {
    char **v;
    size_t n;
} names;

struct kp_disruption_ctrl {
    bool cleaned;
    /* A consolidation waiting for validation. */
    char *pending_key;
    int64_t pending_since;
    /* The command being carried out. */
    bool busy;
    names nodes, claims, replacements;
    int64_t started;
    char *reason;
};

static void names_add(names *n, const char *s)
{
    n->v = realloc(n->v, (n->n + 1) * sizeof(char *));
    n->v[n->n++] = kp_xstrdup(s);
}

static void names_clear(names *n)
{
    for (size_t i = 0; i < n->n; i++)
        free(n->v[i]);
    free(n->v);
    n->v = NULL, n->n = 0;
}

kp_disruption_ctrl *kp_disruption_ctrl_new(void)
{
    return kp_xcalloc(1, sizeof(kp_disruption_ctrl));
}

static void finish_command(kp_disruption_ctrl *d)
{
    names_clear(&d->nodes), names_clear(&d->claims), names_clear(&d->replacements);
    free(d->reason);
    d->reason = NULL, d->busy = false;
}

kp_disruption_ctrl *kp_disruption_ctrl_free(kp_disruption_ctrl *d)
{
    if (!d)
        return NULL;
    finish_command(d);
    free(d->pending_key);
    free(d);
    return NULL;
}

/* ----------------------------------------------------------------- taints */

/* Add (or remove) karpenter.sh/disrupted:NoSchedule on a node. */
static int set_disrupted(kp_ctrl *c, const char *node, bool on)
{
    cJSON *obj = kp_ctrl_get(c, KP_CK_NODE, node);
    if (!obj)
        return 0;
    cJSON *want = cJSON_Duplicate(obj, 1);
    cJSON *spec = kp_obj_ensure(want, "spec");
    cJSON *list = cJSON_GetObjectItemCaseSensitive(spec, "taints");
    int idx = -1, i = 0;
    for (cJSON *t = list ? list->child : NULL; t; t = t->next, i++) {
        const char *k = kp_obj_str(t, "key");
        if (k && !strcmp(k, KP_TAINT_DISRUPTED))
            idx = i;
    }
    if (on && idx < 0) {
        if (!cJSON_IsArray(list)) {
            cJSON_DeleteItemFromObjectCaseSensitive(spec, "taints");
            list = cJSON_AddArrayToObject(spec, "taints");
        }
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "key", KP_TAINT_DISRUPTED);
        cJSON_AddStringToObject(t, "effect", "NoSchedule");
        cJSON_AddItemToArray(list, t);
    } else if (!on && idx >= 0) {
        cJSON_DeleteItemFromArray(list, idx);
    }
    int err = kp_obj_patch(c->kube, KP_RES_NODE, obj, want, KP_OBJ_LOCK);
    cJSON_Delete(want);
    cJSON_Delete(obj);
    return err == KP_ENOTFOUND || err == KP_KUBE_UNCHANGED ? 0 : err;
}

typedef struct untaint_ctx {
    kp_ctrl *c;
    names left;
} untaint_ctx;

static void find_leftover(void *ctx, const char *key, const cJSON *node)
{
    untaint_ctx *u = ctx;
    if (kp_obj_str(node, "metadata.deletionTimestamp") || !kp_ctrl_owns_node(u->c, node))
        return;
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "spec"), "taints"))
    {
        const char *k = kp_obj_str(t, "key");
        if (k && !strcmp(k, KP_TAINT_DISRUPTED)) {
            names_add(&u->left, key);
            return;
        }
    }
}

/* Taints an earlier process left behind on nodes it did not get to delete. */
static void clean_leftovers(kp_ctrl *c)
{
    untaint_ctx u = {c, {NULL, 0}};
    kp_informer_foreach(c->informers[KP_CK_NODE], find_leftover, &u);
    for (size_t i = 0; i < u.left.n; i++) {
        KP_LOG(KP_LOG_INFO, LOGGER, "removing a disruption taint left by an earlier run", "Node", u.left.v[i]);
        set_disrupted(c, u.left.v[i], false);
    }
    names_clear(&u.left);
}

/* ------------------------------------------------------------- progress */

static bool claim_initialized(kp_ctrl *c, const char *name, bool *gone)
{
    cJSON *obj = kp_ctrl_get(c, KP_CK_NODECLAIM, name);
    *gone = !obj || kp_obj_str(obj, "metadata.deletionTimestamp");
    const char *s = obj ? kp_obj_condition(obj, "Initialized") : NULL;
    bool ok = s && !strcmp(s, "True");
    cJSON_Delete(obj);
    return ok;
}

static int delete_candidates(kp_ctrl *c, kp_disruption_ctrl *d)
{
    int first_err = 0;
    for (size_t i = 0; i < d->claims.n; i++) {
        int err = kp_kube_delete(c->kube, KP_RES_NODECLAIM, NULL, d->claims.v[i], NULL);
        if (err < 0 && err != KP_ENOTFOUND && !first_err)
            first_err = err;
    }
    KP_LOG(KP_LOG_INFO, LOGGER, "deleting disrupted nodeclaims", "reason", d->reason ? d->reason : "");
    return first_err;
}

static void abort_command(kp_ctrl *c, kp_disruption_ctrl *d, const char *why)
{
    KP_LOG(KP_LOG_WARN, LOGGER, "abandoning disruption; keeping its nodes", "reason", why);
    for (size_t i = 0; i < d->nodes.n; i++)
        set_disrupted(c, d->nodes.v[i], false);
    for (size_t i = 0; i < d->replacements.n; i++)
        kp_kube_delete(c->kube, KP_RES_NODECLAIM, NULL, d->replacements.v[i], NULL);
    finish_command(d);
}

/* Replacements first: the candidates go only once every replacement is up. */
static int progress(kp_ctrl *c, kp_disruption_ctrl *d)
{
    bool all = true;
    for (size_t i = 0; i < d->replacements.n; i++) {
        bool gone;
        all &= claim_initialized(c, d->replacements.v[i], &gone);
        if (gone) {
            abort_command(c, d, "a replacement nodeclaim was deleted before it initialized");
            return 0;
        }
    }
    if (!all) {
        if (c->clock->now(c->clock) - d->started > REPLACEMENT_TIMEOUT_NS)
            abort_command(c, d, "replacements did not initialize within 15 minutes");
        return 0;
    }
    int err = delete_candidates(c, d);
    finish_command(d);
    return err;
}

/* -------------------------------------------------------------- execute */

static bool is_consolidation(enum kp_disrupt_method m)
{
    return m == KP_DISRUPT_EMPTINESS || m == KP_DISRUPT_MULTI_NODE || m == KP_DISRUPT_SINGLE_NODE;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* What identifies a decision across passes: method, candidates, and the
 * replacements' launch types. */
static char *command_key(const kp_snapshot *snap, const kp_disrupt_command *cmd)
{
    const char **v = kp_xcalloc(cmd->n_candidates + 1, sizeof(char *));
    for (uint32_t i = 0; i < cmd->n_candidates; i++)
        v[i] = snap->nodes[cmd->candidates[i]].name;
    qsort(v, cmd->n_candidates, sizeof(char *), cmp_str);
    kp_buf b = KP_BUF_INIT(1 << 20);
    kp_buf_printf(&b, "%d", (int)cmd->method);
    for (uint32_t i = 0; i < cmd->n_candidates; i++)
        kp_buf_printf(&b, ",%s", v[i]);
    for (uint32_t i = 0; cmd->simulation && i < cmd->simulation->n_claims; i++) {
        const kp_plan_claim *pc = &cmd->simulation->claims[i];
        kp_buf_printf(&b, "+%s", pc->n_its ? kp_sym_str(snap->symtab, snap->its[pc->its[0]].name) : "?");
    }
    char *key = kp_xstrdup(kp_buf_cstr(&b));
    kp_buf_free(&b);
    free(v);
    return key;
}

static int create_replacements(kp_ctrl *c, kp_disruption_ctrl *d, const kp_snapshot *snap, const kp_plan *sim)
{
    for (uint32_t i = 0; sim && i < sim->n_claims; i++) {
        const kp_template *t = &snap->templates[sim->claims[i].template_index];
        char hash[KP_NODEPOOL_HASH_LEN];
        cJSON *obj = kp_nodeclaim_object(sim, snap, i, t->src ? kp_ctrl_pool_hash(c, t->src, hash, sizeof(hash)) : NULL);
        cJSON *created = NULL;
        int err = obj ? kp_kube_create(c->kube, KP_RES_NODECLAIM, NULL, obj, &created) : KP_EINVALID;
        cJSON_Delete(obj);
        if (err < 0)
            return err;
        names_add(&d->replacements, kp_kube_meta(created, "name"));
        kp_ctrl_count(c->m ? c->m->nodeclaims_created : NULL, (const char *const[]){d->reason, t->name, "false"});
        cJSON_Delete(created);
    }
    return 0;
}

static const char *consolidation_type(enum kp_disrupt_method m)
{
    return m == KP_DISRUPT_EMPTINESS ? "empty" : m == KP_DISRUPT_MULTI_NODE ? "multi" : m == KP_DISRUPT_SINGLE_NODE ? "single" : "";
}

static void record(kp_ctrl *c, const kp_snapshot *snap, const kp_disrupt_command *cmd)
{
    bool replace = cmd->simulation && cmd->simulation->n_claims;
    const char *reason = kp_disrupt_reason(cmd->method);
    kp_ctrl_count(c->m ? c->m->disruption_decisions : NULL,
                  (const char *const[]){replace ? "replace" : "delete", reason, consolidation_type(cmd->method)});
    char msg[512];
    snprintf(msg, sizeof(msg), "Disrupting Node: %s/%s", kp_disrupt_method_name(cmd->method), reason);
    for (uint32_t i = 0; i < cmd->n_candidates; i++) {
        const kp_snode *n = &snap->nodes[cmd->candidates[i]];
        const kp_nodepool *np = n->template_index >= 0 ? snap->templates[n->template_index].src : NULL;
        kp_ctrl_count(c->m ? c->m->nodeclaims_disrupted : NULL,
                      (const char *const[]){reason, np ? np->meta.name : "", ""});
        if (n->src_node) {
            cJSON *obj = kp_ctrl_get(c, KP_CK_NODE, n->name);
            if (obj)
                kp_eventq_post(c->events, KP_RES_NODE, obj, "Normal", "DisruptionTerminating", msg);
            cJSON_Delete(obj);
        }
    }
}

static int execute(kp_ctrl *c, kp_disruption_ctrl *d, const kp_snapshot *snap, const kp_disrupt_command *cmd)
{
    d->busy = true;
    d->started = c->clock->now(c->clock);
    d->reason = kp_xstrdup(kp_disrupt_reason(cmd->method));
    for (uint32_t i = 0; i < cmd->n_candidates; i++) {
        const kp_snode *n = &snap->nodes[cmd->candidates[i]];
        if (!n->in_flight)
            names_add(&d->nodes, n->name);
        if (n->nodeclaim)
            names_add(&d->claims, n->nodeclaim);
    }
    char savings[32];
    snprintf(savings, sizeof(savings), "%.4f", cmd->savings_hourly);
    KP_LOG(KP_LOG_INFO, LOGGER, "disrupting node(s)", "method", kp_disrupt_method_name(cmd->method), "reason",
           d->reason, "nodes", d->nodes.n ? d->nodes.v[0] : "", "savingsHourly", savings);
    record(c, snap, cmd);
    int err = 0;
    for (size_t i = 0; i < d->nodes.n && !err; i++)
        err = set_disrupted(c, d->nodes.v[i], true);
    if (!err)
        err = create_replacements(c, d, snap, cmd->simulation);
    if (err < 0) {
        abort_command(c, d, kp_error_last());
        return err;
    }
    return d->replacements.n ? 0 : progress(c, d);
}

/* ----------------------------------------------------------------- pass */

static void export_plan_metrics(kp_ctrl *c, const kp_snapshot *snap, const kp_disruption_plan *plan)
{
    if (!c->m)
        return;
    for (uint32_t i = 0; i < plan->n_allowances; i++) {
        const kp_disrupt_allowance *a = &plan->allowances[i];
        kp_ctrl_set(c->m->allowed_disruptions, (const char *const[]){snap->templates[a->template_index].name, a->reason},
                    (double)a->allowed);
    }
    kp_ctrl_set(c->m->disruption_eligible, (const char *const[]){"Empty"}, plan->eligible_empty);
    kp_ctrl_set(c->m->disruption_eligible, (const char *const[]){"Drifted"}, plan->eligible_drifted);
    kp_ctrl_set(c->m->disruption_eligible, (const char *const[]){"Underutilized"}, plan->eligible_underutilized);
}

/* Decide whether `cmd` runs now: drift and expiration at once; consolidation
 * only when the same command was found validation_ms ago. */
static bool validated(kp_ctrl *c, kp_disruption_ctrl *d, const kp_snapshot *snap, const kp_disrupt_command *cmd)
{
    if (!is_consolidation(cmd->method) || c->opts.consolidation_validation_ms <= 0)
        return true;
    char *key = command_key(snap, cmd);
    int64_t now = c->clock->now(c->clock);
    if (!d->pending_key || strcmp(d->pending_key, key) != 0) {
        free(d->pending_key);
        d->pending_key = key;
        d->pending_since = now;
        KP_LOG(KP_LOG_DEBUG, LOGGER, "consolidation found; validating it after the wait", "command", key);
        return false;
    }
    free(key);
    return now - d->pending_since >= c->opts.consolidation_validation_ms * KP_NS_PER_MS;
}

static int plan_and_act(kp_ctrl *c, kp_disruption_ctrl *d)
{
    const kp_catalog *cat;
    kp_ctrl_view *view = NULL;
    int err = c->cloud->ops->instance_types(c->cloud, NULL, &cat);
    if (!err)
        err = kp_ctrl_view_build(c, cat, &view);
    if (err < 0)
        return err;
    kp_disrupt_opts o = KP_DISRUPT_OPTS_INIT;
    o.now_ns = c->clock->now(c->clock);
    o.max_loops = 1;
    o.spot_to_spot = c->opts.spot_to_spot;
    o.ignore_preferences = c->opts.ignore_preferences;
    kp_disruption_plan *plan = NULL;
    err = kp_disruption_plan_compute(view->snap, &o, &plan);
    if (!err) {
        export_plan_metrics(c, view->snap, plan);
        if (plan->n_commands == 0) {
            free(d->pending_key);
            d->pending_key = NULL;
        } else if (validated(c, d, view->snap, &plan->commands[0])) {
            free(d->pending_key);
            d->pending_key = NULL;
            err = execute(c, d, view->snap, &plan->commands[0]);
        }
    }
    kp_disruption_plan_free(plan);
    kp_ctrl_view_free(view);
    return err;
}

int kp_disruption_pass(kp_ctrl *c, void *state)
{
    kp_disruption_ctrl *d = state;
    if (!d->cleaned) {
        clean_leftovers(c);
        d->cleaned = true;
    }
    if (d->busy)
        return progress(c, d);
    return plan_and_act(c, d);
}
