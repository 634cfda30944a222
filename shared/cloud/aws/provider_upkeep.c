/*
 * The AWS provider's share of Karpenter's AWS-side controllers (see
 * provider.h): tagging a registered node's instance, which capacity blocks
 * are expiring, orphaned instance profiles, SSM answers of deprecated AMIs,
 * the memory registered nodes report, and the schedule the controller's
 * upkeep loop runs them on.
 */
#include "cloud/aws/provider_state.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/xalloc.h"
#include "cloud/aws/capacityreservation.h"

/* Run `fn` with the calling thread's clients. */
typedef int (*with_fn)(kp_awsp *p, kp_awsp_clients *c, kp_arena *a, void *arg);

static int with_clients(kp_awsp *p, with_fn fn, void *arg)
{
    kp_awsp_clients *c = NULL;
    int err = kp_awsp_clients_take(p, &c);
    if (err < 0) return err;
    kp_arena *a = kp_arena_new();
    err = fn(p, c, a, arg);
    kp_arena_free(a);
    kp_awsp_clients_give(p, c);
    return err;
}

/* ------------------------------------------------------------------ tagging */

typedef struct tag_args {
    const char *provider_id, *node_name, *claim_name;
} tag_args;

static int tag(kp_awsp *p, kp_awsp_clients *c, kp_arena *a, void *arg)
{
    const tag_args *t = arg;
    const char *zone = NULL, *id = NULL;
    int err = kp_aws_parse_provider_id(a, t->provider_id, &zone, &id);
    if (err < 0) return err;
    kp_ec2_instance_list l = {0};
    err = kp_ec2_describe_instances(c->c.ec2, a, &id, 1, NULL, 0, &l);
    if (err == 0 && l.n == 0) err = kp_error_set(KP_ENOTFOUND, "instance %s not found", id);
    if (err < 0) return kp_error_wrap(err, "tagging %s", id);
    const kp_ec2_tag want[] = {{"Name", t->node_name},
                               {KP_AWS_TAG_NODECLAIM, t->claim_name},
                               {KP_AWS_TAG_CLUSTER, p->cluster_name}};
    kp_ec2_tag lack[3];
    size_t n = 0;
    for (size_t i = 0; i < 3; i++) /* Karpenter leaves tags already there alone */
        if (!kp_ec2_tag_get(l.items[0].tags, l.items[0].n_tags, want[i].key)) lack[n++] = want[i];
    if (n == 0) return 0;
    err = kp_ec2_create_tags(c->c.ec2, &id, 1, lack, n);
    return err < 0 ? kp_error_wrap(err, "tagging %s", id) : 1;
}

int kp_aws_provider_tag_instance(kp_cloud_provider *cp, const char *provider_id,
                                 const char *node_name, const char *claim_name)
{
    if (!node_name || !*node_name || !claim_name)
        return kp_error_set(KP_EINVALID, "tagging: a node and a claim name are needed");
    tag_args t = {provider_id, node_name, claim_name};
    return with_clients((kp_awsp *)cp, tag, &t);
}

/* ------------------------------------------------- expiring capacity blocks */

int kp_aws_provider_expiring_reservations(kp_cloud_provider *cp, const char *const *ids, size_t n,
                                          bool *expiring)
{
    kp_awsp *p = (kp_awsp *)cp;
    memset(expiring, 0, n * sizeof(*expiring));
    if (!p->crs || n == 0) return 0;
    kp_awsp_clients *c = NULL;
    int err = kp_awsp_clients_take(p, &c);
    if (err < 0) return err;
    kp_ec2_selector_term *terms = kp_xcalloc(n, sizeof(*terms));
    for (size_t i = 0; i < n; i++)
        terms[i].id = ids[i];
    cJSON *st = NULL;
    err = kp_aws_crs_list(p->crs, c->c.ec2, terms, n, &st);
    kp_awsp_clients_give(p, c);
    free(terms);
    const cJSON *e;
    cJSON_ArrayForEach(e, st)
    {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "id"));
        const char *state = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "state"));
        for (size_t i = 0; id && state && i < n; i++)
            if (!strcmp(ids[i], id) && !strcmp(state, "expiring")) expiring[i] = true;
    }
    cJSON_Delete(st);
    return err;
}

/* -------------------------------------------------------- instance profiles */

typedef struct gc_args {
    const char *const *uids;
    size_t n;
} gc_args;

/* The names of the profiles the cluster's instances wear. */
static size_t profiles_in_use(kp_awsp *p, kp_awsp_clients *c, kp_arena *a, const char ***out,
                              int *err)
{
    static const char *const live[] = {"pending", "running", "stopping", "stopped",
                                       "shutting-down"};
    const char *cluster[] = {p->cluster_name};
    kp_ec2_filter f[] = {{"tag:" KP_AWS_TAG_CLUSTER, cluster, 1}, {"instance-state-name", live, 5}};
    kp_ec2_instance_list l = {0};
    *err = kp_ec2_describe_instances(c->c.ec2, a, NULL, 0, f, 2, &l);
    if (*err == KP_ENOTFOUND) *err = 0;
    const char **names = KP_ARENA_NEW(a, const char *, l.n + 1);
    size_t n = 0;
    for (size_t i = 0; *err == 0 && i < l.n; i++) {
        const char *arn = l.items[i].iam_instance_profile_arn, *slash = arn ? strrchr(arn, '/') : NULL;
        if (slash) names[n++] = slash + 1;
    }
    *out = names;
    return n;
}

static int gc(kp_awsp *p, kp_awsp_clients *c, kp_arena *a, void *arg)
{
    const gc_args *g = arg;
    const char **in_use = NULL;
    int err = 0;
    size_t n = profiles_in_use(p, c, a, &in_use, &err);
    if (err < 0) return kp_error_wrap(err, "listing the cluster's instances");
    return kp_aws_nc_gc_profiles(p->resolver, c->c.iam, g->uids, g->n, in_use, n);
}

int kp_aws_provider_gc_instance_profiles(kp_cloud_provider *cp, const char *const *live_uids,
                                         size_t n)
{
    gc_args g = {live_uids, n};
    return with_clients((kp_awsp *)cp, gc, &g);
}

/* ---------------------------------------------------------- SSM, capacity */

static int ssm(kp_awsp *p, kp_awsp_clients *c, kp_arena *a, void *arg)
{
    (void)a, (void)arg;
    return kp_aws_nc_invalidate_ssm(p->resolver, c->c.ec2);
}

int kp_aws_provider_invalidate_ssm(kp_cloud_provider *cp)
{
    return with_clients((kp_awsp *)cp, ssm, NULL);
}

int kp_aws_provider_observe_node(kp_cloud_provider *cp, const char *nodeclass, const char *type,
                                 int64_t memory_bytes)
{
    kp_awsp *p = (kp_awsp *)cp;
    kp_arena *a = kp_arena_new();
    const kp_ec2nodeclass *nc = NULL;
    int err = kp_awsp_lookup(p, nodeclass, a, &nc);
    if (err == 0) kp_aws_instancetypes_observe_memory(p->it, nc, type, memory_bytes);
    kp_arena_free(a);
    return err;
}

/* --------------------------------------------------------------- schedule */

bool kp_aws_provider_due(kp_cloud_provider *cp, enum kp_aws_task task, int64_t period_ns)
{
    kp_awsp *p = (kp_awsp *)cp;
    if (task < 0 || task >= KP_AWS_TASK_COUNT) return false;
    int64_t now = p->clock->now(p->clock);
    pthread_mutex_lock(&p->refresh_lock);
    bool due = now >= p->task_due_ns[task];
    if (due) p->task_due_ns[task] = now + period_ns;
    pthread_mutex_unlock(&p->refresh_lock);
    return due;
}
