/*
 * Launch templates in EC2: the cache of templates known to exist, ensuring
 * one (describe, then create), and the deletions (expired entries, a node
 * class's templates). Rendering: launchtemplate_data.c.
 */
#include "cloud/aws/launchtemplate_internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/xalloc.h"

static char *dup_or_null(const char *s)
{
    return s && *s ? kp_xstrdup(s) : NULL;
}

int kp_aws_lts_new(kp_aws_lts **out, const kp_aws_lt_opts *o)
{
    if (!o->cluster_name || !*o->cluster_name)
        return kp_error_set(KP_EINVALID, "launch templates: a cluster name is required");
    kp_aws_lts *l = kp_xcalloc(1, sizeof(*l));
    l->cluster_name = kp_xstrdup(o->cluster_name);
    l->cluster_endpoint = dup_or_null(o->cluster_endpoint);
    l->ca_bundle = dup_or_null(o->ca_bundle);
    l->cluster_cidr = dup_or_null(o->cluster_cidr);
    l->kube_dns_ip = dup_or_null(o->kube_dns_ip);
    l->region = dup_or_null(o->region);
    l->clock = o->clock ? o->clock : kp_clock_system();
    l->reserved_capacity_disabled = o->reserved_capacity_disabled;
    pthread_mutex_init(&l->lock, NULL);
    *out = l;
    return 0;
}

static void replace(char **field, const char *value)
{
    if (!value) return;
    free(*field);
    *field = dup_or_null(value);
}

void kp_aws_lts_set_cluster(kp_aws_lts *l, const char *endpoint, const char *ca_bundle,
                            const char *cluster_cidr)
{
    pthread_mutex_lock(&l->lock);
    replace(&l->cluster_endpoint, endpoint);
    replace(&l->ca_bundle, ca_bundle);
    replace(&l->cluster_cidr, cluster_cidr);
    pthread_mutex_unlock(&l->lock);
}

static void drop(kp_aws_lts *l, size_t i)
{
    free(l->entries[i].name);
    free(l->entries[i].id);
    l->entries[i] = l->entries[--l->n];
}

kp_aws_lts *kp_aws_lts_free(kp_aws_lts *l)
{
    if (!l) return NULL;
    while (l->n)
        drop(l, l->n - 1);
    free(l->entries);
    pthread_mutex_destroy(&l->lock);
    free(l->cluster_name);
    free(l->cluster_endpoint);
    free(l->ca_bundle);
    free(l->cluster_cidr);
    free(l->kube_dns_ip);
    free(l->region);
    free(l);
    return NULL;
}

/* ------------------------------------------------------------------ cache */

static int64_t now(const kp_aws_lts *l)
{
    return l->clock->monotonic(l->clock);
}

/* Under the lock. */
static kp_lt_entry *find(kp_aws_lts *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->entries[i].name, name) == 0) return &l->entries[i];
    return NULL;
}

/* A live entry for `name` is re-armed and its id copied into `arena`. */
static bool touch(kp_aws_lts *l, kp_arena *arena, const char *name, const char **id)
{
    pthread_mutex_lock(&l->lock);
    kp_lt_entry *e = find(l, name);
    bool live = e && now(l) - e->last_used_ns < KP_AWS_LT_TTL_NS;
    if (live) {
        e->last_used_ns = now(l);
        *id = e->id ? kp_arena_strdup(arena, e->id) : NULL;
    }
    pthread_mutex_unlock(&l->lock);
    return live;
}

static void remember_at(kp_aws_lts *l, const char *name, const char *id, int64_t when)
{
    pthread_mutex_lock(&l->lock);
    kp_lt_entry *e = find(l, name);
    if (!e) {
        l->entries = kp_xgrow(l->entries, &l->cap, l->n + 1, sizeof(*l->entries));
        e = &l->entries[l->n++];
        *e = (kp_lt_entry){kp_xstrdup(name), NULL, 0};
    }
    if (id && *id) {
        free(e->id);
        e->id = kp_xstrdup(id);
    }
    e->last_used_ns = when;
    pthread_mutex_unlock(&l->lock);
}

void kp_aws_lt_invalidate(kp_aws_lts *l, const char *name)
{
    pthread_mutex_lock(&l->lock);
    kp_lt_entry *e = find(l, name);
    if (e) drop(l, (size_t)(e - l->entries));
    pthread_mutex_unlock(&l->lock);
}

size_t kp_aws_lt_cached(kp_aws_lts *l)
{
    pthread_mutex_lock(&l->lock);
    size_t n = l->n;
    pthread_mutex_unlock(&l->lock);
    return n;
}

/* ----------------------------------------------------------------- ensure */

static int describe_one(kp_aws_client *ec2, kp_arena *a, const char *name,
                        kp_ec2_launch_template *out)
{
    kp_ec2_launch_template_list list = {0};
    int err = kp_ec2_describe_launch_templates(ec2, a, &name, 1, NULL, 0, &list);
    if (err < 0) return err;
    if (list.n != 1)
        return kp_error_set(KP_ERROR, "expected to find one launch template %s, found %zu", name,
                            list.n);
    *out = list.items[0];
    return 0;
}

static int create(kp_aws_client *ec2, kp_arena *a, const char *name,
                  const kp_ec2_launch_template_data *d, const kp_aws_lt_params *p,
                  kp_ec2_launch_template *out)
{
    int err = kp_ec2_create_launch_template(ec2, a, name, d, p->tags, p->n_tags, out);
    /* Another launch created it between our describe and create. */
    if (err < 0 && strcmp(kp_aws_client_error(ec2)->code,
                          "InvalidLaunchTemplateName.AlreadyExistsException") == 0)
        err = describe_one(ec2, a, name, out);
    return err < 0 ? kp_error_wrap(err, "creating launch template %s", name) : 0;
}

int kp_aws_lt_ensure(kp_aws_lts *l, kp_aws_client *ec2, kp_arena *a, const kp_aws_lt_params *p,
                     kp_aws_lt *out)
{
    const char *name = NULL, *id = NULL;
    kp_ec2_launch_template_data d;
    int err = kp_aws_lt_render(l, a, p, &name, &d);
    if (err < 0) return err;
    if (touch(l, a, name, &id)) {
        *out = (kp_aws_lt){name, id};
        return 0;
    }
    kp_ec2_launch_template lt = {0};
    err = describe_one(ec2, a, name, &lt);
    if (err == KP_ENOTFOUND)
        err = create(ec2, a, name, &d, p, &lt);
    else if (err < 0)
        err = kp_error_wrap(err, "describing launch template %s", name);
    if (err < 0) return err;
    remember_at(l, name, lt.id, now(l));
    *out = (kp_aws_lt){name, lt.id};
    return 0;
}

/* -------------------------------------------------------------- deletion */

static int cluster_templates(kp_aws_lts *l, kp_aws_client *ec2, kp_arena *a, const char *nodeclass,
                             kp_ec2_launch_template_list *out)
{
    const char *cluster[] = {l->cluster_name}, *nc[] = {nodeclass};
    kp_ec2_filter f[] = {{"tag:eks:eks-cluster-name", cluster, 1},
                         {"tag:karpenter.k8s.aws/ec2nodeclass", nc, 1}};
    return kp_ec2_describe_launch_templates(ec2, a, NULL, 0, f, nodeclass ? 2 : 1, out);
}

int kp_aws_lt_hydrate(kp_aws_lts *l, kp_aws_client *ec2)
{
    kp_arena *a = kp_arena_new();
    kp_ec2_launch_template_list list = {0};
    int err = cluster_templates(l, ec2, a, NULL, &list);
    for (size_t i = 0; err == 0 && i < list.n; i++)
        if (list.items[i].name) remember_at(l, list.items[i].name, list.items[i].id, now(l));
    kp_arena_free(a);
    return err < 0 ? kp_error_wrap(err, "hydrating the launch template cache") : 0;
}

static int delete_template(kp_aws_client *ec2, const char *id, const char *name)
{
    int err = kp_ec2_delete_launch_template(ec2, id, id ? NULL : name);
    if (err == KP_ENOTFOUND) err = 0;
    return err < 0 ? kp_error_wrap(err, "deleting launch template %s", name) : 0;
}

/* Take the expired entries out of the cache (the caller frees them). */
static kp_lt_entry *take_expired(kp_aws_lts *l, size_t *n)
{
    pthread_mutex_lock(&l->lock);
    kp_lt_entry *out = kp_xcalloc(l->n + 1, sizeof(*out));
    *n = 0;
    for (size_t i = l->n; i-- > 0;) {
        if (now(l) - l->entries[i].last_used_ns < KP_AWS_LT_TTL_NS) continue;
        out[(*n)++] = l->entries[i];
        l->entries[i] = l->entries[--l->n];
    }
    pthread_mutex_unlock(&l->lock);
    return out;
}

int kp_aws_lt_sweep(kp_aws_lts *l, kp_aws_client *ec2)
{
    size_t n = 0;
    kp_lt_entry *expired = take_expired(l, &n);
    int first = 0, deleted = 0;
    for (size_t i = 0; i < n; i++) {
        int err = delete_template(ec2, expired[i].id, expired[i].name);
        if (err == 0)
            deleted++;
        else if (first == 0)
            first = err;
        if (err < 0) remember_at(l, expired[i].name, expired[i].id, expired[i].last_used_ns);
        free(expired[i].name);
        free(expired[i].id);
    }
    free(expired);
    return first < 0 ? first : deleted;
}

int kp_aws_lt_delete_all(kp_aws_lts *l, kp_aws_client *ec2, const char *nodeclass)
{
    kp_arena *a = kp_arena_new();
    kp_ec2_launch_template_list list = {0};
    int err = cluster_templates(l, ec2, a, nodeclass, &list);
    if (err < 0) err = kp_error_wrap(err, "listing the launch templates of %s", nodeclass);
    /* every template gets its try; the first failure is reported */
    int first = err;
    for (size_t i = 0; err == 0 && i < list.n; i++) {
        if (!list.items[i].name) continue;
        kp_aws_lt_invalidate(l, list.items[i].name);
        int e = delete_template(ec2, NULL, list.items[i].name);
        if (e < 0 && first == 0) first = e;
    }
    kp_arena_free(a);
    return first;
}
