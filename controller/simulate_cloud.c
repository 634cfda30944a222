/* Instance types and ownership for `simulate` (see simulate_cloud.h). */
#include "controller/simulate_cloud.h"
#include "api/decode.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "cloud/aws/provider.h"
#include "cloud/kwok/kwok.h"
#include "cloud/ownership.h"
#include "controller/cloud_aws.h"
#include "controller/sim_notes.h"
#include "kube/objutil.h"
#include "kube/strmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kp_sim_cloud {
    kp_catalog *catalog;      /* no provider, kwok */
    kp_cloud_provider *cloud; /* NULL: no provider */
    const kp_catalog *default_catalog;
    const cJSON **classes; /* EC2NodeClasses, borrowed from the documents */
    size_t n_classes, cap_classes;
    kp_strmap foreign_pools;  /* names of NodePools left out */
    kp_strmap foreign_claims; /* provider IDs of NodeClaims left out */
    kp_strmap pools_noted;    /* NodePools whose missing instance types were noted */
    kp_sim_notes notes;
};

/* ------------------------------------------------------------ providers */

/* The aws provider's look-up: an EC2NodeClass among the documents. */
static int lookup_class(void *ctx, const char *name, kp_arena *arena, const kp_ec2nodeclass **out)
{
    kp_sim_cloud *c = ctx;
    for (size_t i = 0; i < c->n_classes; i++) {
        const char *n = kp_obj_str(c->classes[i], "metadata.name");
        if (!n || strcmp(n, name) != 0)
            continue;
        kp_ec2nodeclass *nc = kp_arena_calloc(arena, 1, sizeof(*nc));
        int err = kp_decode_ec2nodeclass(arena, c->classes[i], nc);
        if (err < 0)
            return err;
        *out = nc;
        return 0;
    }
    return kp_error_set(KP_ENOTFOUND, "EC2NodeClass %s not found", name);
}

/* `run`'s mapping of its settings, so the two read the account alike. */
static int aws_new(kp_sim_cloud *c, const kp_sim_cloud_opts *o)
{
    kp_ctrl_opts co;
    kp_ctrl_opts_init(&co);
    co.cloud_provider = "aws";
    co.cluster_name = o->cluster_name;
    co.aws_region = o->region;
    co.aws_endpoint_url = o->endpoint_url;
    if (o->vm_memory_overhead_percent >= 0)
        co.vm_memory_overhead_percent = o->vm_memory_overhead_percent;
    co.reserved_enis = o->reserved_enis;
    co.isolated_vpc = o->isolated_vpc;
    if (!co.cluster_name || !*co.cluster_name)
        return kp_error_set(KP_EINVALID, "--cloud-provider aws needs --cluster-name (or CLUSTER_NAME)");
    kp_aws_provider_opts ao;
    kp_cloud_aws_opts(&co, &ao);
    ao.lookup = lookup_class, ao.lookup_ctx = c;
    int err = kp_aws_provider_new(&ao, &c->cloud);
    if (err < 0)
        return kp_error_wrap(err, "the AWS provider");
    if ((err = kp_aws_provider_refresh(c->cloud)) < 0)
        return kp_error_wrap(err, "reading instance types and prices from AWS");
    return c->cloud->ops->instance_types(c->cloud, NULL, &c->default_catalog);
}

int kp_sim_cloud_new(const kp_sim_cloud_opts *o, kp_sim_cloud **out)
{
    kp_sim_cloud *c = kp_xcalloc(1, sizeof(*c));
    int err = 0;
    if (o->provider && !strcmp(o->provider, "aws")) {
        err = aws_new(c, o);
    } else if (o->provider && strcmp(o->provider, "kwok") != 0) {
        err = kp_error_set(KP_EINVALID, "--cloud-provider %s: want aws or kwok", o->provider);
    } else if ((err = kp_catalog_open(o->instance_types, &c->catalog)) < 0) {
        err = kp_error_wrap(err, "--instance-types %s", o->instance_types);
    } else if (o->provider) {
        kp_kwok_opts ko = KP_KWOK_OPTS_INIT;
        ko.catalog = c->catalog;
        err = kp_kwok_provider_new(NULL, &ko, &c->cloud); /* never launches: no client */
    }
    if (!c->default_catalog)
        c->default_catalog = c->catalog;
    if (err < 0) {
        kp_sim_cloud_free(c);
        return err;
    }
    *out = c;
    return 0;
}

kp_sim_cloud *kp_sim_cloud_free(kp_sim_cloud *c)
{
    if (!c)
        return NULL;
    kp_cloud_free(c->cloud);
    kp_catalog_free(c->catalog);
    free(c->classes);
    kp_strmap_clear(&c->foreign_pools, NULL);
    kp_strmap_clear(&c->foreign_claims, NULL);
    kp_strmap_clear(&c->pools_noted, NULL);
    kp_sim_notes_free(&c->notes);
    free(c);
    return NULL;
}

/* ------------------------------------------------------------ ownership */

/* Why a NodePool or NodeClaim is another provider's, or NULL. */
static const char *foreign(kp_sim_cloud *c, const cJSON *obj, const char *kind, char *buf, size_t size)
{
    if (!strcmp(kind, "NodePool"))
        return kp_cloud_pool_foreign(c->cloud, kp_obj_str(obj, "spec.template.spec.nodeClassRef.group"),
                                     kp_obj_str(obj, "spec.template.spec.nodeClassRef.kind"), buf, size);
    return kp_cloud_claim_foreign(c->cloud, kp_obj_str(obj, "spec.nodeClassRef.group"),
                                  kp_obj_str(obj, "spec.nodeClassRef.kind"), kp_obj_str(obj, "status.providerID"),
                                  buf, size);
}

/* Whether `obj` stays; notes and remembers what it leaves out. */
static bool keep(kp_sim_cloud *c, const cJSON *obj)
{
    const char *kind = kp_obj_str(obj, "kind"), *name = kp_obj_str(obj, "metadata.name");
    if (kind && !strcmp(kind, "EC2NodeClass")) {
        c->classes = kp_xgrow(c->classes, &c->cap_classes, c->n_classes + 1, sizeof(*c->classes));
        c->classes[c->n_classes++] = obj;
    }
    if (!c->cloud || !kind || !name || (strcmp(kind, "NodePool") != 0 && strcmp(kind, "NodeClaim") != 0))
        return true;
    char buf[320];
    const char *why = foreign(c, obj, kind, buf, sizeof(buf));
    if (!why)
        return true;
    kp_sim_note(&c->notes, "%s %s is left out: %s", kind, name, why);
    const char *pid = kp_obj_str(obj, "status.providerID");
    if (!strcmp(kind, "NodePool"))
        kp_strmap_put(&c->foreign_pools, name, (void *)1);
    else if (pid && *pid)
        kp_strmap_put(&c->foreign_claims, pid, (void *)1);
    return false;
}

int kp_sim_cloud_filter(kp_sim_cloud *c, kp_doc_list *docs, kp_doc_list *kept)
{
    int err = 0;
    for (size_t i = 0; i < kp_doc_list_count(docs) && !err; i++) {
        const kp_doc *d = kp_doc_list_at(docs, i);
        cJSON *obj = kp_doc_list_take(docs, i);
        if (!obj)
            continue;
        if (!keep(c, obj)) {
            cJSON_Delete(obj);
            continue;
        }
        err = kp_doc_list_append(kept, obj, d->file, d->doc, d->item); /* the same tree: classes stay valid */
    }
    return err;
}

/* ------------------------------------------------------------ wiring */

static const kp_catalog *pool_catalog(void *ctx, const kp_nodepool *np)
{
    kp_sim_cloud *c = ctx;
    const kp_catalog *cat = NULL;
    if (c->cloud->ops->instance_types(c->cloud, np, &cat) == 0)
        return cat;
    if (!kp_strmap_has(&c->pools_noted, np->meta.name)) {
        kp_strmap_put(&c->pools_noted, np->meta.name, (void *)1);
        kp_sim_note(&c->notes, "NodePool %s has no instance types: %s", np->meta.name, kp_error_last());
    }
    return NULL;
}

/* The controller's rule: our provider-ID scheme, and neither the claim
 * holding the ID nor the pool the Node is labelled with is another's. */
static bool node_owned(void *ctx, const kp_node *n)
{
    kp_sim_cloud *c = ctx;
    char buf[320];
    const char *pool = kp_labels_get(&n->meta.labels, KP_LABEL_NODEPOOL);
    if (kp_cloud_node_foreign(c->cloud, n->provider_id, buf, sizeof(buf)))
        return false;
    return !kp_strmap_has(&c->foreign_claims, n->provider_id) && !(pool && kp_strmap_has(&c->foreign_pools, pool));
}

void kp_sim_cloud_wire(kp_sim_cloud *c, kp_cluster *cluster)
{
    cluster->catalog = c->default_catalog;
    if (!c->cloud)
        return;
    if (!c->catalog) {
        cluster->catalog_for = pool_catalog;
        cluster->catalog_ctx = c;
    }
    cluster->node_owned = node_owned;
    cluster->node_owned_ctx = c;
}

size_t kp_sim_cloud_note_count(const kp_sim_cloud *c)
{
    return c->notes.count;
}

const char *kp_sim_cloud_note(const kp_sim_cloud *c, size_t i)
{
    return i < c->notes.count ? c->notes.items[i] : NULL;
}
