/* Disruption commands in flight (see disruption_exec.h). */
#include "controller/disruption_exec.h"
#include "api/nodepool_hash.h"
#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "controller/disruption_metrics.h"
#include "controller/eventq.h"
#include "controller/lifecycle.h"
#include "controller/metrics_ctrl.h"
#include "kube/objutil.h"
#include "controller/provisioner.h"
#include "kube/ops.h"
#include "kube/strmap.h"
#include "provisioning/nodeclaim_object.h"

#include <ctype.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "disruption"
#define REPLACEMENT_TIMEOUT_NS (15 * 60 * KP_NS_PER_SEC)
/* How long a finished command's candidates stay marked at most, should the
 * cache never show their NodeClaims deleting. */
#define FINISHED_MARK_NS (60 * KP_NS_PER_SEC)

typedef struct names {
    char **v;
    size_t n;
} names;

typedef struct command {
    char reason[32];             /* "Drifted", "Underutilized", ... */
    char consolidation_type[16];
    enum kp_disrupt_decision decision;
    names nodes;        /* candidates with a Node: tainted */
    names claims;       /* the candidates' NodeClaims */
    names replacements; /* NodeClaims created for it */
    int64_t started;
    int64_t finished; /* when its candidates' NodeClaims were deleted */
} command;

/* Commands in flight, and finished ones whose candidates stay marked until
 * the cache shows their NodeClaims deleting: the plan that follows a command
 * at once reads that cache, and would otherwise take the candidates it just
 * deleted for live nodes (Karpenter keeps them MarkedForDeletion). */
struct kp_disrupt_queue {
    pthread_mutex_t mu; /* guards cmds and done for kp_disrupt_queue_has from other threads */
    command **cmds;
    size_t n, cap;
    command **done;
    size_t n_done, cap_done;
    /* NodeClaims of finished commands whose instances are not terminating
     * yet: they count against budgets until then (Karpenter's arithmetic),
     * so the next plan is made as soon as the last of them is. */
    names releasing;
};

static void names_add(names *n, const char *s)
{
    n->v = kp_xrealloc(n->v, (n->n + 1) * sizeof(char *));
    n->v[n->n++] = kp_xstrdup(s);
}

static void names_clear(names *n)
{
    for (size_t i = 0; i < n->n; i++)
        free(n->v[i]);
    free(n->v);
    n->v = NULL, n->n = 0;
}

static bool names_has(const names *n, const char *s)
{
    for (size_t i = 0; s && i < n->n; i++)
        if (!strcmp(n->v[i], s))
            return true;
    return false;
}

static void command_free(command *cmd)
{
    names_clear(&cmd->nodes), names_clear(&cmd->claims), names_clear(&cmd->replacements);
    free(cmd);
}

kp_disrupt_queue *kp_disrupt_queue_new(void)
{
    kp_disrupt_queue *q = kp_xcalloc(1, sizeof(*q));
    pthread_mutex_init(&q->mu, NULL);
    return q;
}

kp_disrupt_queue *kp_disrupt_queue_free(kp_disrupt_queue *q)
{
    if (!q)
        return NULL;
    for (size_t i = 0; i < q->n; i++)
        command_free(q->cmds[i]);
    for (size_t i = 0; i < q->n_done; i++)
        command_free(q->done[i]);
    free(q->cmds);
    free(q->done);
    names_clear(&q->releasing);
    pthread_mutex_destroy(&q->mu);
    free(q);
    return NULL;
}

size_t kp_disrupt_queue_len(const kp_disrupt_queue *q)
{
    return q->n;
}

bool kp_disrupt_queue_has(const kp_disrupt_queue *q, const char *node, const char *claim)
{
    pthread_mutex_lock((pthread_mutex_t *)&q->mu);
    bool found = false;
    for (size_t i = 0; i < q->n && !found; i++)
        found = names_has(&q->cmds[i]->nodes, node) || names_has(&q->cmds[i]->claims, claim);
    for (size_t i = 0; i < q->n_done && !found; i++)
        found = names_has(&q->done[i]->nodes, node) || names_has(&q->done[i]->claims, claim);
    pthread_mutex_unlock((pthread_mutex_t *)&q->mu);
    return found;
}

/* ----------------------------------------------------------- the objects */

/* Add (or remove) karpenter.sh/disrupted:NoSchedule on a node. */
int kp_disruption_taint(kp_ctrl *c, const char *node, bool on)
{
    cJSON *obj = kp_ctrl_get(c, KP_CK_NODE, node);
    if (!obj)
        return 0;
    cJSON *want = cJSON_Duplicate(obj, 1);
    kp_node_set_disrupted_taint(want, on);
    int err = kp_obj_patch(c->kube, KP_RES_NODE, obj, want, KP_OBJ_LOCK);
    cJSON_Delete(want);
    cJSON_Delete(obj);
    return err == KP_ENOTFOUND || err == KP_KUBE_UNCHANGED ? 0 : err;
}

/* Karpenter's DisruptionReason condition on a candidate's NodeClaim (set when
 * it is marked, cleared when the command is abandoned). */
/* Other controllers write the claim's conditions too (Drifted, often at
 * the same moment): a conflict is tried again on the server's version,
 * rather than abandoning the command. */
static int claim_reason(kp_ctrl *c, const char *claim, const char *reason)
{
    cJSON *obj = kp_ctrl_get(c, KP_CK_NODECLAIM, claim);
    int err = 0;
    for (int attempt = 0; obj && attempt < 3; attempt++) {
        cJSON *want = cJSON_Duplicate(obj, 1);
        if (reason)
            kp_obj_set_condition(want, "DisruptionReason", "True", reason, reason, c->clock->now(c->clock));
        else
            kp_obj_clear_condition(want, "DisruptionReason");
        err = kp_obj_patch(c->kube, KP_RES_NODECLAIM, obj, want, KP_KUBE_STATUS | KP_OBJ_LOCK);
        cJSON_Delete(want);
        cJSON_Delete(obj);
        obj = NULL;
        if (err == KP_ECONFLICT && kp_kube_get(c->kube, KP_RES_NODECLAIM, NULL, claim, &obj) < 0)
            obj = NULL;
    }
    cJSON_Delete(obj);
    return err == KP_ENOTFOUND || err == KP_KUBE_UNCHANGED ? 0 : err;
}

static void claim_event(kp_ctrl *c, const char *claim, const char *reason, const char *message)
{
    cJSON *obj = kp_ctrl_get(c, KP_CK_NODECLAIM, claim);
    if (obj)
        kp_eventq_post(c->events, KP_RES_NODECLAIM, obj, "Normal", reason, message);
    cJSON_Delete(obj);
}

static void node_event(kp_ctrl *c, const char *node, const char *reason, const char *message)
{
    cJSON *obj = kp_ctrl_get(c, KP_CK_NODE, node);
    if (obj)
        kp_eventq_post(c->events, KP_RES_NODE, obj, "Normal", reason, message);
    cJSON_Delete(obj);
}

/* ----------------------------------------------------------- the steps */

static void abandon(kp_ctrl *c, command *cmd, const char *why)
{
    KP_LOG(KP_LOG_WARN, LOGGER, "abandoning disruption; keeping its nodes", "reason", cmd->reason, "why", why,
           "nodes", cmd->nodes.n ? cmd->nodes.v[0] : "");
    for (size_t i = 0; i < cmd->nodes.n; i++)
        kp_disruption_taint(c, cmd->nodes.v[i], false);
    for (size_t i = 0; i < cmd->claims.n; i++)
        claim_reason(c, cmd->claims.v[i], NULL);
    for (size_t i = 0; i < cmd->replacements.n; i++)
        kp_kube_delete(c->kube, KP_RES_NODECLAIM, NULL, cmd->replacements.v[i], NULL);
    kp_ctrl_count(c->m ? c->m->disruption_queue_failures : NULL,
                  (const char *const[]){kp_disrupt_decision_name(cmd->decision), cmd->reason, cmd->consolidation_type});
}

/* `announce`: DisruptionTerminating on each, as Karpenter's orchestration
 * queue writes; its expiration controller deletes without a word. */
static int delete_candidates(kp_ctrl *c, command *cmd, bool announce)
{
    int first_err = 0;
    char msg[96];
    for (size_t i = 0; i < cmd->nodes.n && announce; i++) {
        snprintf(msg, sizeof(msg), "Disrupting Node: %s", cmd->reason);
        node_event(c, cmd->nodes.v[i], "DisruptionTerminating", msg);
    }
    for (size_t i = 0; i < cmd->claims.n; i++) {
        snprintf(msg, sizeof(msg), "Disrupting NodeClaim: %s", cmd->reason);
        if (announce)
            claim_event(c, cmd->claims.v[i], "DisruptionTerminating", msg);
        int err = kp_kube_delete(c->kube, KP_RES_NODECLAIM, NULL, cmd->claims.v[i], NULL);
        if (err < 0 && err != KP_ENOTFOUND && !first_err)
            first_err = err;
    }
    KP_LOG(KP_LOG_INFO, LOGGER, "deleting disrupted nodeclaims", "reason", cmd->reason, "nodeclaims",
           cmd->claims.n ? cmd->claims.v[0] : "");
    return first_err;
}

static bool claim_initialized(kp_ctrl *c, const char *name, bool *gone)
{
    cJSON *obj = kp_ctrl_get(c, KP_CK_NODECLAIM, name);
    *gone = !obj || kp_obj_str(obj, "metadata.deletionTimestamp");
    bool ok = kp_obj_condition_is_true(obj, "Initialized");
    cJSON_Delete(obj);
    return ok;
}

/* 1: done (candidates deleted), 0: waiting, -1: abandoned. */
static int advance(kp_ctrl *c, command *cmd)
{
    bool all = true;
    for (size_t i = 0; i < cmd->replacements.n; i++) {
        bool gone;
        all &= claim_initialized(c, cmd->replacements.v[i], &gone);
        if (gone) {
            abandon(c, cmd, "a replacement nodeclaim was deleted before it initialized");
            return -1;
        }
    }
    if (!all) {
        if (c->clock->now(c->clock) - cmd->started > REPLACEMENT_TIMEOUT_NS) {
            abandon(c, cmd, "replacements did not initialize within 15 minutes");
            return -1;
        }
        return 0;
    }
    int err = delete_candidates(c, cmd, true);
    if (err < 0)
        kp_ctrl_log_error(LOGGER, "deleting disrupted nodeclaims", cmd->claims.n ? cmd->claims.v[0] : NULL, err);
    return 1;
}

/* Whether the cache shows every NodeClaim of a finished command deleting or gone. */
static bool deletion_seen(kp_ctrl *c, const command *cmd)
{
    for (size_t i = 0; i < cmd->claims.n; i++) {
        cJSON *obj = kp_ctrl_get(c, KP_CK_NODECLAIM, cmd->claims.v[i]);
        bool seen = !obj || kp_obj_str(obj, "metadata.deletionTimestamp");
        cJSON_Delete(obj);
        if (!seen)
            return false;
    }
    return true;
}

static void forget_finished(kp_disrupt_queue *q, kp_ctrl *c)
{
    int64_t now = c->clock->now(c->clock);
    for (size_t i = 0; i < q->n_done;) {
        command *cmd = q->done[i];
        if (now - cmd->finished < FINISHED_MARK_NS && !deletion_seen(c, cmd)) {
            i++;
            continue;
        }
        pthread_mutex_lock(&q->mu);
        q->done[i] = q->done[--q->n_done];
        pthread_mutex_unlock(&q->mu);
        for (size_t k = 0; k < cmd->claims.n && now - cmd->finished < FINISHED_MARK_NS; k++)
            names_add(&q->releasing, cmd->claims.v[k]);
        command_free(cmd);
    }
}

int kp_disrupt_queue_released(kp_disrupt_queue *q, kp_ctrl *c)
{
    int n = 0;
    for (size_t i = 0; i < q->releasing.n;) {
        cJSON *obj = kp_ctrl_get(c, KP_CK_NODECLAIM, q->releasing.v[i]);
        bool gone = !obj || kp_obj_condition_is_true(obj, "InstanceTerminating");
        cJSON_Delete(obj);
        if (!gone) {
            i++;
            continue;
        }
        free(q->releasing.v[i]);
        q->releasing.v[i] = q->releasing.v[--q->releasing.n];
        n++;
    }
    return n;
}

int kp_disrupt_queue_progress(kp_disrupt_queue *q, kp_ctrl *c)
{
    int done = 0;
    forget_finished(q, c);
    for (size_t i = 0; i < q->n;) {
        int r = advance(c, q->cmds[i]);
        if (r == 0) {
            i++;
            continue;
        }
        done += r > 0;
        command *cmd = q->cmds[i];
        pthread_mutex_lock(&q->mu);
        q->cmds[i] = q->cmds[--q->n];
        if (r > 0) {
            cmd->finished = c->clock->now(c->clock);
            q->done = kp_xgrow(q->done, &q->cap_done, q->n_done + 1, sizeof(*q->done));
            q->done[q->n_done++] = cmd;
        }
        pthread_mutex_unlock(&q->mu);
        if (r < 0)
            command_free(cmd);
    }
    return done;
}

/* ----------------------------------------------------------- starting */

static int create_replacements(kp_ctrl *c, command *cmd, const kp_snapshot *snap, const kp_plan *sim)
{
    char msg[96];
    snprintf(msg, sizeof(msg), "Launching NodeClaim: %s", cmd->reason);
    for (uint32_t i = 0; sim && i < sim->n_claims; i++) {
        const kp_template *t = &snap->templates[sim->claims[i].template_index];
        char hash[KP_NODEPOOL_HASH_LEN];
        cJSON *obj = kp_nodeclaim_object(sim, snap, i, t->src ? kp_ctrl_pool_hash(c, t->src, hash, sizeof(hash)) : NULL);
        cJSON *created = NULL;
        int err = obj ? kp_kube_create(c->kube, KP_RES_NODECLAIM, NULL, obj, &created) : KP_EINVALID;
        cJSON_Delete(obj);
        if (err < 0)
            return err;
        names_add(&cmd->replacements, kp_kube_meta(created, "name"));
        kp_eventq_post(c->events, KP_RES_NODECLAIM, created, "Normal", "DisruptionLaunching", msg);
        kp_eventq_post(c->events, KP_RES_NODECLAIM, created, "Normal", "DisruptionWaitingReadiness",
                       "Waiting on readiness to continue disruption");
        char lower[32];
        snprintf(lower, sizeof(lower), "%s", cmd->reason);
        for (char *p = lower; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        kp_ctrl_count(c->m ? c->m->nodeclaims_created : NULL, (const char *const[]){lower, t->name, "false"});
        cJSON_Delete(created);
    }
    return 0;
}

static command *command_of(const kp_snapshot *snap, const kp_disrupt_command *k, int64_t now)
{
    command *cmd = kp_xcalloc(1, sizeof(*cmd));
    snprintf(cmd->reason, sizeof(cmd->reason), "%s", k->reason ? k->reason : kp_disrupt_reason(k->method));
    snprintf(cmd->consolidation_type, sizeof(cmd->consolidation_type), "%s",
             k->consolidation_type ? k->consolidation_type : "");
    cmd->decision = k->decision;
    cmd->started = now;
    for (uint32_t i = 0; i < k->n_candidates; i++) {
        const kp_snode *n = &snap->nodes[k->candidates[i]];
        if (!n->in_flight)
            names_add(&cmd->nodes, n->name);
        if (n->nodeclaim)
            names_add(&cmd->claims, n->nodeclaim);
    }
    return cmd;
}

int kp_disrupt_queue_start(kp_disrupt_queue *q, kp_ctrl *c, const kp_snapshot *snap, const kp_disrupt_command *k)
{
    command *cmd = command_of(snap, k, c->clock->now(c->clock));
    char savings[32], replacements[16];
    snprintf(savings, sizeof(savings), "%.4f", k->savings_hourly);
    snprintf(replacements, sizeof(replacements), "%u",
             k->decision == KP_DISRUPT_REPLACE && k->simulation ? k->simulation->n_claims : 0);
    KP_LOG(KP_LOG_INFO, LOGGER, "disrupting node(s)", "method", kp_disrupt_method_name(k->method), "reason",
           cmd->reason, "decision", kp_disrupt_decision_name(k->decision), "nodes", cmd->nodes.n ? cmd->nodes.v[0] : "",
           "replacements", replacements, "savingsHourly", savings, "forceful", k->forceful ? "true" : "false");
    kp_disruption_metrics_decision(c, snap, k);
    int err = 0;
    if (k->forceful) { /* expiration: no budget, no replacement to wait for */
        err = delete_candidates(c, cmd, false);
        command_free(cmd);
        return err;
    }
    for (size_t i = 0; i < cmd->nodes.n && !err; i++)
        err = kp_disruption_taint(c, cmd->nodes.v[i], true);
    for (size_t i = 0; i < cmd->claims.n && !err; i++)
        err = claim_reason(c, cmd->claims.v[i], cmd->reason);
    if (!err)
        err = create_replacements(c, cmd, snap, k->simulation);
    if (err < 0) {
        abandon(c, cmd, kp_error_last());
        command_free(cmd);
        return err;
    }
    pthread_mutex_lock(&q->mu);
    q->cmds = kp_xgrow(q->cmds, &q->cap, q->n + 1, sizeof(*q->cmds));
    q->cmds[q->n++] = cmd;
    pthread_mutex_unlock(&q->mu);
    return 0;
}

/* ------------------------------------------------------------- placing */

static int32_t lookup(const kp_strmap *m, const char *key)
{
    return (int32_t)(uintptr_t)kp_strmap_get(m, key) - 1;
}

/* Each candidate node of a command in flight -> the command's index (-1: none). */
static int32_t *owners(const kp_disrupt_queue *q, const kp_snapshot *snap, kp_strmap *by_claim)
{
    kp_strmap by_name = KP_STRMAP_INIT;
    int32_t *owner = kp_xcalloc(snap->n_nodes ? snap->n_nodes : 1, sizeof(*owner));
    for (uint32_t i = 0; i < snap->n_nodes; i++) {
        owner[i] = -1;
        kp_strmap_put(&by_name, snap->nodes[i].name, (void *)(uintptr_t)(i + 1));
        if (snap->nodes[i].nodeclaim)
            kp_strmap_put(by_claim, snap->nodes[i].nodeclaim, (void *)(uintptr_t)(i + 1));
    }
    for (size_t c = 0; c < q->n; c++)
        for (size_t k = 0; k < q->cmds[c]->nodes.n; k++) {
            int32_t n = lookup(&by_name, q->cmds[c]->nodes.v[k]);
            if (n >= 0)
                owner[n] = (int32_t)c;
        }
    kp_strmap_clear(&by_name, NULL);
    return owner;
}

/* What is left of each node's allocatable after the pods on it. */
static kp_resvec *rooms(const kp_snapshot *snap, uint32_t n_res)
{
    kp_resvec *room = kp_xcalloc(snap->n_nodes ? snap->n_nodes : 1, sizeof(*room));
    for (uint32_t i = 0; i < snap->n_nodes; i++)
        room[i] = snap->nodes[i].allocatable;
    for (uint32_t i = 0; i < snap->n_pods; i++)
        if (snap->pods[i].node >= 0 && !snap->pods[i].terminal)
            kp_resvec_sub(&room[snap->pods[i].node], &snap->pods[i].requests, n_res);
    return room;
}

void kp_disrupt_queue_place(kp_disrupt_queue *q, kp_snapshot *snap)
{
    pthread_mutex_lock(&q->mu);
    if (!q->n) {
        pthread_mutex_unlock(&q->mu);
        return;
    }
    kp_strmap by_claim = KP_STRMAP_INIT;
    uint32_t n_res = (uint32_t)snap->restab.count;
    int32_t *owner = owners(q, snap, &by_claim);
    kp_resvec *room = rooms(snap, n_res);
    for (uint32_t i = 0; i < snap->n_pods; i++) {
        kp_spod *s = &snap->pods[i];
        if (s->node < 0 || owner[s->node] < 0 || s->daemon || s->terminal || s->terminating)
            continue;
        const names *to = &q->cmds[owner[s->node]]->replacements;
        for (size_t k = 0; k < to->n; k++) { /* first fit, as the replacements were sized */
            int32_t r = lookup(&by_claim, to->v[k]);
            if (r < 0 || snap->nodes[r].deleting || !kp_resvec_fits(&s->requests, &room[r], n_res))
                continue;
            kp_resvec_sub(&room[r], &s->requests, n_res);
            kp_resvec_add(&room[s->node], &s->requests, n_res);
            s->node = r;
            break;
        }
    }
    pthread_mutex_unlock(&q->mu);
    free(owner), free(room);
    kp_strmap_clear(&by_claim, NULL);
}
