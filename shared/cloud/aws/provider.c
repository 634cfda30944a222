/*
 * The AWS provider's life cycle and the work outside the cloud-provider
 * table (see provider.h): construction, the client pool, node-class status,
 * refreshes, launch-template upkeep, interruption, provider IDs.
 */
#include "cloud/aws/provider_state.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/xalloc.h"
#include "cloud/aws/eks.h"
#include "cloud/aws/instancestatus.h"
#include "cloud/aws/interruption.h"

/* ----------------------------------------------------------------- clients */

static int client(kp_awsp *p, kp_aws_client **out)
{
    int err = kp_aws_client_new(out, &p->client_opts);
    return err < 0 ? kp_error_wrap(err, "aws provider: creating a client") : 0;
}

static kp_awsp_clients *clients_free(kp_awsp_clients *c)
{
    if (!c) return NULL;
    kp_aws_client_free(c->c.ec2);
    kp_aws_client_free(c->c.ssm);
    kp_aws_client_free(c->c.iam);
    free(c);
    return NULL;
}

int kp_awsp_clients_take(kp_awsp *p, kp_awsp_clients **out)
{
    pthread_mutex_lock(&p->pool_lock);
    kp_awsp_clients *c = p->pool;
    if (c) p->pool = c->next;
    pthread_mutex_unlock(&p->pool_lock);
    if (!c) {
        c = kp_xcalloc(1, sizeof(*c));
        int err = client(p, &c->c.ec2);
        if (err == 0) err = client(p, &c->c.ssm);
        if (err == 0) err = client(p, &c->c.iam);
        if (err < 0) {
            clients_free(c);
            return err;
        }
    }
    c->next = NULL;
    *out = c;
    return 0;
}

void kp_awsp_clients_give(kp_awsp *p, kp_awsp_clients *c)
{
    pthread_mutex_lock(&p->pool_lock);
    c->next = p->pool;
    p->pool = c;
    pthread_mutex_unlock(&p->pool_lock);
}

int kp_awsp_lookup(kp_awsp *p, const char *name, kp_arena *arena, const kp_ec2nodeclass **out)
{
    if (!name || !*name) return kp_error_set(KP_ENOTFOUND, "no ec2nodeclass named");
    int err = p->lookup(p->lookup_ctx, name, arena, out);
    if (err == KP_ENOTFOUND) return kp_error_set(err, "ec2nodeclass %s not found", name);
    return err < 0 ? kp_error_wrap(err, "looking up ec2nodeclass %s", name) : 0;
}

/* ------------------------------------------------------------ construction */

static void copy_client_opts(kp_awsp *p, const kp_aws_provider_opts *o)
{
    p->endpoint_url = o->endpoint_url ? kp_xstrdup(o->endpoint_url) : NULL;
    p->n_endpoints = o->n_endpoints;
    p->endpoints = kp_xcalloc(o->n_endpoints + 1, sizeof(*p->endpoints));
    for (size_t i = 0; i < o->n_endpoints; i++)
        p->endpoints[i] =
            (kp_aws_endpoint){kp_xstrdup(o->endpoints[i].service), kp_xstrdup(o->endpoints[i].url)};
    kp_aws_client_options *c = &p->client_opts;
    c->region = p->region;
    c->endpoint_url = p->endpoint_url;
    c->endpoints = p->endpoints;
    c->n_endpoints = p->n_endpoints;
    c->credentials = o->credentials ? o->credentials : p->owned_credentials;
    c->max_attempts = o->max_attempts;
    c->clock = o->clock;
}

/* The region: the option, else what a client finds in the environment. */
static int settle_region(kp_awsp *p, const kp_aws_provider_opts *o)
{
    if (o->region && *o->region) {
        p->region = kp_xstrdup(o->region);
        p->client_opts.region = p->region;
        return 0;
    }
    kp_aws_client *c = NULL;
    int err = client(p, &c);
    if (err == 0) {
        p->region = kp_xstrdup(kp_aws_client_region(c));
        p->client_opts.region = p->region;
    }
    kp_aws_client_free(c);
    return err;
}

static int make_parts(kp_awsp *p, const kp_aws_provider_opts *o)
{
    int err = client(p, &p->refresh_ec2);
    if (err == 0) err = client(p, &p->pricing);
    if (err < 0) return err;
    p->ice = kp_aws_ice_cache_new(p->clock);
    kp_aws_prices_opts po = {p->region, p->refresh_ec2, p->pricing, o->isolated_vpc, p->clock};
    err = kp_aws_prices_new(&p->prices, &po);
    if (err == 0)
        err = kp_aws_instancetypes_new(&p->it, p->refresh_ec2, p->prices, p->ice, p->clock);
    kp_aws_instancetypes_opts io = KP_AWS_INSTANCETYPES_OPTS_INIT;
    if (o->vm_memory_overhead_percent >= 0)
        io.vm_memory_overhead_percent = o->vm_memory_overhead_percent;
    io.reserved_enis = o->reserved_enis;
    io.region = p->region;
    if (err == 0) err = kp_aws_instancetypes_set_opts(p->it, &io);
    p->crs = o->reserved_capacity_disabled ? NULL : kp_aws_reservations_new(p->clock);
    p->validations = kp_aws_cache_new(p->clock);
    if (err == 0) kp_aws_instancetypes_set_reservations(p->it, p->crs);
    kp_aws_nc_resolver_opts ro = {p->region,
                                  p->cluster_name,
                                  o->kubernetes_version,
                                  p->clock,
                                  p->crs,
                                  o->subnet_refresh_interval_ns,
                                  o->ami_refresh_interval_ns};
    if (err == 0) err = kp_aws_nc_resolver_new(&p->resolver, &ro);
    if (err == 0) kp_aws_nc_resolver_set_validator(p->resolver, kp_awsp_validate, p);
    kp_aws_lt_opts lo = {p->cluster_name,   o->cluster_endpoint, o->cluster_ca_bundle,
                         o->cluster_cidr,   o->cluster_dns_ip,   p->region,
                         p->clock,          o->reserved_capacity_disabled};
    if (err == 0) err = kp_aws_lts_new(&p->lts, &lo);
    kp_aws_launcher_opts la = {p->cluster_name, p->lts, p->resolver, p->ice, p->clock, p->crs};
    if (err == 0) err = kp_aws_launcher_new(&p->launcher, &la);
    return err;
}

void kp_awsp_free(kp_cloud_provider *cp)
{
    kp_awsp *p = (kp_awsp *)cp;
    kp_aws_launcher_free(p->launcher);
    kp_aws_cache_free(p->validations);
    kp_aws_lts_free(p->lts);
    kp_aws_nc_resolver_free(p->resolver);
    kp_aws_instancetypes_free(p->it);
    kp_aws_prices_free(p->prices);
    kp_aws_ice_cache_free(p->ice);
    kp_aws_reservations_free(p->crs);
    while (p->pool) {
        kp_awsp_clients *next = p->pool->next;
        clients_free(p->pool);
        p->pool = next;
    }
    kp_aws_client_free(p->refresh_ec2);
    kp_aws_client_free(p->pricing);
    kp_aws_client_free(p->sqs);
    kp_aws_credentials_free(p->owned_credentials);
    for (size_t i = 0; i < p->n_endpoints; i++) {
        free((char *)p->endpoints[i].service);
        free((char *)p->endpoints[i].url);
    }
    free(p->endpoints);
    free(p->endpoint_url);
    free(p->region);
    free(p->cluster_name);
    free(p->queue);
    pthread_mutex_destroy(&p->pool_lock);
    pthread_mutex_destroy(&p->refresh_lock);
    pthread_mutex_destroy(&p->catalog_lock);
    free(p);
}

int kp_aws_provider_new(const kp_aws_provider_opts *o, kp_cloud_provider **out)
{
    if (!o->cluster_name || !*o->cluster_name || !o->lookup)
        return kp_error_set(KP_EINVALID, "aws provider: a cluster name and a node-class lookup "
                                         "are required");
    kp_awsp *p = kp_xcalloc(1, sizeof(*p));
    p->base.ops = &kp_awsp_ops;
    p->cluster_name = kp_xstrdup(o->cluster_name);
    p->queue =
        o->interruption_queue && *o->interruption_queue ? kp_xstrdup(o->interruption_queue) : NULL;
    p->lookup = o->lookup;
    p->lookup_ctx = o->lookup_ctx;
    p->disable_dry_run = o->disable_dry_run;
    p->eks_control_plane = o->eks_control_plane;
    p->want_endpoint = !o->cluster_endpoint || !*o->cluster_endpoint;
    p->want_ca = !o->cluster_ca_bundle || !*o->cluster_ca_bundle;
    p->want_cidr = !o->cluster_cidr || !*o->cluster_cidr;
    p->clock = o->clock ? o->clock : kp_clock_system();
    pthread_mutex_init(&p->pool_lock, NULL);
    pthread_mutex_init(&p->refresh_lock, NULL);
    pthread_mutex_init(&p->catalog_lock, NULL);
    int err = o->credentials ? 0 : kp_aws_credentials_new(&p->owned_credentials, NULL);
    if (err == 0) copy_client_opts(p, o);
    if (err == 0) err = settle_region(p, o);
    if (err == 0) err = make_parts(p, o);
    if (err < 0) {
        kp_awsp_free(&p->base);
        return kp_error_wrap(err, "aws provider");
    }
    *out = &p->base;
    return 0;
}

/* ------------------------------------------------------- beyond the table */

int kp_aws_provider_resolve_nodeclass(kp_cloud_provider *cp, const kp_ec2nodeclass *nc,
                                      kp_arena *arena, cJSON **status)
{
    (void)arena;
    kp_awsp *p = (kp_awsp *)cp;
    kp_awsp_clients *c = NULL;
    int err = kp_awsp_clients_take(p, &c);
    if (err < 0) return err;
    err = kp_aws_nc_resolve(p->resolver, &c->c, nc, status);
    kp_awsp_clients_give(p, c);
    return err;
}

int kp_aws_provider_refresh(kp_cloud_provider *cp)
{
    kp_awsp *p = (kp_awsp *)cp;
    pthread_mutex_lock(&p->refresh_lock);
    int first = kp_aws_prices_refresh(p->prices);
    int err = kp_aws_instancetypes_refresh(p->it);
    pthread_mutex_unlock(&p->refresh_lock);
    if (first == 0) first = err;
    return first;
}

/* Run `fn` with the calling thread's EC2 client. */
static int with_ec2(kp_awsp *p, int (*fn)(kp_awsp *, kp_aws_client *, const char *),
                    const char *arg)
{
    kp_awsp_clients *c = NULL;
    int err = kp_awsp_clients_take(p, &c);
    if (err < 0) return err;
    err = fn(p, c->c.ec2, arg);
    kp_awsp_clients_give(p, c);
    return err;
}

static int sweep(kp_awsp *p, kp_aws_client *ec2, const char *arg)
{
    (void)arg;
    return kp_aws_lt_sweep(p->lts, ec2);
}

static int hydrate(kp_awsp *p, kp_aws_client *ec2, const char *arg)
{
    (void)arg;
    return kp_aws_lt_hydrate(p->lts, ec2);
}

int kp_aws_provider_maintain(kp_cloud_provider *cp)
{
    return with_ec2((kp_awsp *)cp, sweep, NULL);
}

int kp_aws_provider_hydrate(kp_cloud_provider *cp)
{
    return with_ec2((kp_awsp *)cp, hydrate, NULL);
}

int kp_aws_provider_delete_nodeclass(kp_cloud_provider *cp, const char *name, const char *uid)
{
    kp_awsp *p = (kp_awsp *)cp;
    kp_awsp_clients *c = NULL;
    int err = kp_awsp_clients_take(p, &c);
    if (err < 0) return err;
    err = kp_aws_lt_delete_all(p->lts, c->c.ec2, name);
    if (err >= 0) err = kp_aws_nc_delete_profiles(p->resolver, c->c.iam, uid);
    kp_awsp_clients_give(p, c);
    return err;
}

int kp_aws_provider_interruption_source(kp_cloud_provider *cp, kp_interruption_source **out)
{
    kp_awsp *p = (kp_awsp *)cp;
    if (!p->queue) return kp_error_set(KP_ENOTFOUND, "aws provider: no interruption queue");
    pthread_mutex_lock(&p->refresh_lock);
    int err = p->sqs ? 0 : client(p, &p->sqs);
    pthread_mutex_unlock(&p->refresh_lock);
    if (err < 0) return err;
    kp_aws_interruption_opts o = KP_AWS_INTERRUPTION_OPTS_INIT;
    o.sqs = p->sqs;
    o.queue_name = p->queue;
    o.ice = p->ice;
    o.crs = p->crs;
    return kp_aws_interruption_source_new(&o, out);
}

int kp_aws_provider_health_source(kp_cloud_provider *cp, kp_interruption_source **out)
{
    kp_awsp *p = (kp_awsp *)cp;
    kp_interruption_source *inner = NULL;
    int err = p->queue ? kp_aws_provider_interruption_source(cp, &inner) : 0;
    kp_aws_client *ec2 = NULL;
    if (err == 0) err = client(p, &ec2);
    if (err < 0) {
        kp_interruption_source_free(inner);
        return err;
    }
    return kp_aws_health_source_new(inner, ec2, p->clock, out);
}

int kp_aws_provider_discover(kp_cloud_provider *cp, kp_arena *a, kp_aws_cluster_info *out)
{
    kp_awsp *p = (kp_awsp *)cp;
    if (!p->eks_control_plane)
        return kp_error_set(KP_EINVALID, "aws provider: EKS_CONTROL_PLANE is off");
    kp_aws_client *eks = NULL;
    kp_eks_cluster c;
    int err = client(p, &eks);
    if (err == 0) err = kp_eks_describe_cluster(eks, a, p->cluster_name, &c);
    kp_aws_client_free(eks);
    if (err < 0) return kp_error_wrap(err, "discovering cluster %s from EKS", p->cluster_name);
    *out = (kp_aws_cluster_info){c.endpoint, c.ca_data, kp_eks_service_cidr(&c), c.version};
    kp_aws_lts_set_cluster(p->lts, p->want_endpoint ? c.endpoint : NULL,
                           p->want_ca ? c.ca_data : NULL,
                           p->want_cidr ? kp_eks_service_cidr(&c) : NULL);
    kp_aws_provider_set_kubernetes_version(cp, c.version);
    return 0;
}

void kp_aws_provider_set_kubernetes_version(kp_cloud_provider *cp, const char *version)
{
    kp_aws_nc_resolver_set_kubernetes_version(((kp_awsp *)cp)->resolver, version);
}

bool kp_aws_provider_eks_control_plane(kp_cloud_provider *cp)
{
    return ((kp_awsp *)cp)->eks_control_plane;
}

kp_aws_reservations *kp_aws_provider_reservations(kp_cloud_provider *cp)
{
    return ((kp_awsp *)cp)->crs;
}

kp_aws_ice_cache *kp_aws_provider_ice(kp_cloud_provider *cp)
{
    return ((kp_awsp *)cp)->ice;
}

kp_aws_instancetypes *kp_aws_provider_instancetypes(kp_cloud_provider *cp)
{
    return ((kp_awsp *)cp)->it;
}

kp_aws_prices *kp_aws_provider_prices(kp_cloud_provider *cp)
{
    return ((kp_awsp *)cp)->prices;
}

/* ------------------------------------------------------------ provider IDs */

const char *kp_aws_provider_id(kp_arena *arena, const char *zone, const char *instance_id)
{
    return kp_arena_printf(arena, KP_AWS_PROVIDER_ID_PREFIX "%s/%s", zone ? zone : "", instance_id);
}

int kp_aws_parse_provider_id(kp_arena *arena, const char *pid, const char **zone,
                             const char **instance_id)
{
    size_t plen = sizeof(KP_AWS_PROVIDER_ID_PREFIX) - 1;
    if (!pid || strncmp(pid, KP_AWS_PROVIDER_ID_PREFIX, plen) != 0)
        return kp_error_set(KP_EINVALID, "%s is not an aws provider ID", pid ? pid : "(none)");
    const char *z = pid + plen, *slash = strchr(z, '/');
    if (!slash || slash == z || !slash[1] || strchr(slash + 1, '/'))
        return kp_error_set(KP_EINVALID, "%s is not an aws provider ID", pid);
    *zone = kp_arena_strndup(arena, z, (size_t)(slash - z));
    *instance_id = kp_arena_strdup(arena, slash + 1);
    return 0;
}
