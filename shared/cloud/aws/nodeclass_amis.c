/*
 * AMI resolution. An alias (family@version) is a set of SSM parameters per
 * architecture and variant (standard, nvidia, neuron) whose images carry the
 * variant's requirements; other terms are DescribeImages queries (ids and
 * SSM parameters share one image-id query; tags/name/owner terms one each).
 * For every distinct requirement set one image wins: not deprecated, then
 * the newest, then the greater name. The status lists them newest first.
 */
#include "cloud/aws/nodeclass_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/wellknown.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "cloud/aws/ssm.h"

#define LABEL_GPU_COUNT   "karpenter.k8s.aws/instance-gpu-count"
#define LABEL_ACCEL_COUNT "karpenter.k8s.aws/instance-accelerator-count"

enum variant { V_STANDARD = 1, V_NVIDIA = 2, V_NEURON = 4 };

typedef struct alias_path {
    const char *path;
    unsigned variants;
} alias_path;

/* Requirements as status JSON: [{"key","operator","values"}]. */
static void add_req(cJSON *reqs, const char *key, const char *op, const char *value)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "key", key);
    cJSON_AddStringToObject(r, "operator", op);
    if (value) {
        cJSON *v = cJSON_AddArrayToObject(r, "values");
        cJSON_AddItemToArray(v, cJSON_CreateString(value));
    }
    cJSON_AddItemToArray(reqs, r);
}

static const char *kube_arch(const char *ec2_arch)
{
    if (ec2_arch && strcmp(ec2_arch, "x86_64") == 0) return "amd64";
    if (ec2_arch && strcmp(ec2_arch, "arm64") == 0) return "arm64";
    return NULL;
}

/* ------------------------------------------------------------------ SSM */

/* The parameter's value, NULL when it does not exist. Cached, misses too. */
static int ssm_get(kp_aws_nc_resolver *r, kp_aws_client *ssm, kp_arena *a, const char *name,
                   int64_t ttl, const char **out)
{
    char *key = kp_arena_printf(a, "ssm|%s", name);
    cJSON *hit = kp_aws_cache_get(r->cache, key);
    *out = NULL;
    if (hit) {
        const char *v = cJSON_GetStringValue(hit);
        *out = v && *v ? kp_arena_strdup(a, v) : NULL;
        cJSON_Delete(hit);
        return 0;
    }
    kp_ssm_parameter p;
    int err = kp_ssm_get_parameter(ssm, a, name, &p);
    if (err == KP_ENOTFOUND) p.value = "", err = 0;
    if (err < 0) return kp_error_wrap(err, "resolving ssm parameter %s", name);
    cJSON *v = cJSON_CreateString(p.value ? p.value : "");
    kp_aws_cache_put(r->cache, key, v, ttl);
    cJSON_Delete(v);
    *out = p.value && *p.value ? p.value : NULL;
    return 0;
}

/* ---------------------------------------------------------------- aliases */

static size_t al2023_paths(kp_arena *a, bool latest, const char *version, const char *k8s,
                           alias_path *out)
{
    static const struct {
        const char *arch, *variant;
        unsigned v;
    } al[] = {{"x86_64", "standard", V_STANDARD},
              {"x86_64", "nvidia", V_NVIDIA},
              {"x86_64", "neuron", V_NEURON},
              {"arm64", "standard", V_STANDARD},
              {"arm64", "nvidia", V_NVIDIA}};
    size_t n = sizeof(al) / sizeof(al[0]);
    for (size_t i = 0; i < n; i++) {
        const char *leaf = latest ? "recommended"
                                  : kp_arena_printf(a, "amazon-eks-node-al2023-%s-%s-%s-%s",
                                                    al[i].arch, al[i].variant, k8s, version);
        out[i] = (alias_path){kp_arena_printf(a,
                                              "/aws/service/eks/optimized-ami/%s/"
                                              "amazon-linux-2023/%s/%s/%s/image_id",
                                              k8s, al[i].arch, al[i].variant, leaf),
                              al[i].v};
    }
    return n;
}

static size_t al2_paths(kp_arena *a, bool latest, const char *version, const char *k8s,
                        alias_path *out)
{
    static const struct {
        const char *dir, *node;
        unsigned v;
    } al[] = {{"", "", V_STANDARD},
              {"-arm64", "arm64-", V_STANDARD},
              {"-gpu", "gpu-", V_NVIDIA | V_NEURON}};
    for (size_t i = 0; i < 3; i++) {
        const char *leaf =
            latest ? "recommended"
                   : kp_arena_printf(a, "amazon-eks-%snode-%s-%s", al[i].node, k8s, version);
        out[i] = (alias_path){
            kp_arena_printf(a, "/aws/service/eks/optimized-ami/%s/amazon-linux-2%s/%s/image_id",
                            k8s, al[i].dir, leaf),
            al[i].v};
    }
    return 3;
}

static size_t bottlerocket_paths(kp_arena *a, const char *version, const char *k8s, alias_path *out)
{
    const char *v = version[0] == 'v' ? version + 1 : version;
    static const struct {
        const char *flavour, *arch;
        unsigned v;
    } br[] = {{"", "x86_64", V_STANDARD | V_NEURON},
              {"", "arm64", V_STANDARD},
              {"-nvidia", "x86_64", V_NVIDIA},
              {"-nvidia", "arm64", V_NVIDIA}};
    for (size_t i = 0; i < 4; i++)
        out[i] =
            (alias_path){kp_arena_printf(a, "/aws/service/bottlerocket/aws-k8s-%s%s/%s/%s/image_id",
                                         k8s, br[i].flavour, br[i].arch, v),
                         br[i].v};
    return 4;
}

/* The SSM parameters of an alias, at most 8. */
static size_t alias_paths(kp_arena *a, const char *family, const char *version, const char *k8s,
                          alias_path *out)
{
    bool latest = strcmp(version, "latest") == 0;
    if (strcmp(family, "al2023") == 0) return al2023_paths(a, latest, version, k8s, out);
    if (strcmp(family, "al2") == 0) return al2_paths(a, latest, version, k8s, out);
    if (strcmp(family, "bottlerocket") == 0) return bottlerocket_paths(a, version, k8s, out);
    if (strncmp(family, "windows", 7) != 0) return 0;
    out[0] = (alias_path){kp_arena_printf(a,
                                          "/aws/service/ami-windows-latest/Windows_Server-%s-"
                                          "English-Core-EKS_Optimized-%s/image_id",
                                          family + 7, k8s),
                          V_STANDARD};
    return 1;
}

static const char *windows_build(const char *family)
{
    if (strcmp(family, "windows2019") == 0) return "10.0.17763";
    if (strcmp(family, "windows2022") == 0) return "10.0.20348";
    return "10.0.26100";
}

static void variant_reqs(cJSON *reqs, unsigned v)
{
    if (v == V_STANDARD) {
        add_req(reqs, LABEL_ACCEL_COUNT, "DoesNotExist", NULL);
        add_req(reqs, LABEL_GPU_COUNT, "DoesNotExist", NULL);
    } else if (v == V_NVIDIA) {
        add_req(reqs, LABEL_GPU_COUNT, "Exists", NULL);
    } else if (v == V_NEURON) {
        add_req(reqs, LABEL_ACCEL_COUNT, "Exists", NULL);
    }
}

/* -------------------------------------------------------------- images */

typedef struct query {
    kp_ncr_filters filters;
    const char **owners;
    size_t n_owners;
} query;

static cJSON *images_json(const kp_ec2_image_list *l)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < l->n; i++) {
        const kp_ec2_image *im = &l->items[i];
        if (!im->id || !*im->id) continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", im->id);
        cJSON_AddStringToObject(o, "name", im->name ? im->name : "");
        cJSON_AddStringToObject(o, "architecture", im->architecture ? im->architecture : "");
        cJSON_AddStringToObject(o, "creationDate", im->creation_date ? im->creation_date : "");
        if (im->deprecation_time)
            cJSON_AddStringToObject(o, "deprecationTime", im->deprecation_time);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static int describe(kp_aws_nc_resolver *r, kp_aws_client *ec2, kp_arena *a, const query *q,
                    cJSON **out)
{
    kp_ncr_filters f = q->filters;
    kp_ncr_filter_add(a, &f, "state", "available");
    char *key = kp_ncr_filters_key(a, "images", &f);
    for (size_t i = 0; i < q->n_owners; i++)
        key = kp_arena_printf(a, "%s|owner=%s", key, q->owners[i]);
    if ((*out = kp_aws_cache_get(r->cache, key))) return 0;
    kp_ec2_describe_images_input in = {0};
    in.owners = q->owners;
    in.n_owners = q->n_owners;
    in.filters = f.items;
    in.n_filters = f.n;
    in.include_deprecated = true;
    in.max_results = 1000;
    kp_ec2_image_list l = {0};
    int err = kp_ec2_describe_images(ec2, a, &in, &l);
    if (err < 0) return kp_error_wrap(err, "describing images");
    *out = images_json(&l);
    kp_aws_cache_put(r->cache, key, *out, r->ami_ttl_ns);
    return 0;
}

static const char *jstr(const cJSON *o, const char *key)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
    return s ? s : "";
}

static int64_t jtime(const cJSON *o, const char *key, int64_t dflt)
{
    int64_t ns;
    return kp_time_parse_rfc3339(jstr(o, key), &ns) == 0 ? ns : dflt;
}

/* Whether `cand` beats `cur` for the same requirements. */
static bool better(const cJSON *cur, const cJSON *cand)
{
    bool dc = cJSON_IsTrue(cJSON_GetObjectItem(cur, "deprecated"));
    bool dn = cJSON_IsTrue(cJSON_GetObjectItem(cand, "deprecated"));
    if (dc != dn) return dc;
    int64_t tc = jtime(cur, "creationDate", 0), tn = jtime(cand, "creationDate", 0);
    if (tc != tn) return tn > tc;
    return strcmp(jstr(cand, "name"), jstr(cur, "name")) > 0;
}

/* The alias's context for an image: its variants and family. */
typedef struct alias_ctx {
    const char *family; /* NULL: not an alias */
    const char **ids;
    unsigned *variants;
    size_t n;
} alias_ctx;

static unsigned image_variants(const alias_ctx *ac, const char *id)
{
    for (size_t i = 0; ac->family && i < ac->n; i++)
        if (strcmp(ac->ids[i], id) == 0) return ac->variants[i];
    return 0;
}

/* Karpenter lists an AMI's requirements by key length, then key. */
static int req_cmp(const void *a, const void *b)
{
    const char *x = jstr(*(const cJSON *const *)a, "key"),
               *y = jstr(*(const cJSON *const *)b, "key");
    size_t lx = strlen(x), ly = strlen(y);
    if (lx != ly) return lx < ly ? -1 : 1;
    return strcmp(x, y);
}

/* Offer each requirement set of `image` to `best` (an object keyed by the
 * requirements' text). */
static void consider(cJSON *best, const cJSON *image, const alias_ctx *ac, int64_t now)
{
    const char *arch = kube_arch(jstr(image, "architecture"));
    if (!arch) return;
    unsigned vs = image_variants(ac, jstr(image, "id"));
    for (unsigned v = 1; v <= V_NEURON; v <<= 1) {
        if (ac->family && !(vs & v)) continue;
        if (!ac->family && v != V_STANDARD) break;
        cJSON *e = cJSON_CreateObject(), *reqs = cJSON_CreateArray();
        cJSON_AddStringToObject(e, "id", jstr(image, "id"));
        cJSON_AddStringToObject(e, "name", jstr(image, "name"));
        cJSON_AddStringToObject(e, "creationDate", jstr(image, "creationDate"));
        if (jtime(image, "deprecationTime", INT64_MAX) <= now)
            cJSON_AddTrueToObject(e, "deprecated");
        add_req(reqs, KP_LABEL_ARCH, "In", arch);
        bool windows = ac->family && strncmp(ac->family, "windows", 7) == 0;
        if (ac->family && !windows) variant_reqs(reqs, v);
        if (windows) {
            add_req(reqs, KP_LABEL_OS, "In", "windows");
            add_req(reqs, KP_LABEL_WINDOWS_BUILD, "In", windows_build(ac->family));
        }
        kp_ncr_sort_array(reqs, req_cmp);
        cJSON_AddItemToObject(e, "requirements", reqs);
        char *key = cJSON_PrintUnformatted(reqs);
        cJSON *cur = cJSON_GetObjectItemCaseSensitive(best, key);
        if (!cur || better(cur, e)) {
            cJSON_DeleteItemFromObjectCaseSensitive(best, key);
            cJSON_AddItemToObject(best, key, e);
        } else {
            cJSON_Delete(e);
        }
        free(key);
    }
}

static int newest_first(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    int64_t tx = jtime(x, "creationDate", 0), ty = jtime(y, "creationDate", 0);
    if (tx != ty) return tx > ty ? -1 : 1;
    return strcmp(jstr(x, "id"), jstr(y, "id"));
}

/* The winners, newest first, without the fields only used for choosing. */
static cJSON *status_list(cJSON *best)
{
    int n = cJSON_GetArraySize(best);
    cJSON **items = kp_xcalloc((size_t)n + 1, sizeof(*items));
    int k = 0;
    while (best->child)
        items[k++] = cJSON_DetachItemViaPointer(best, best->child);
    qsort(items, (size_t)k, sizeof(*items), newest_first);
    cJSON *out = cJSON_CreateArray();
    for (int i = 0; i < k; i++) {
        cJSON_DeleteItemFromObjectCaseSensitive(items[i], "creationDate");
        cJSON_AddItemToArray(out, items[i]);
    }
    free(items);
    return out;
}

/* ---------------------------------------------------------------- queries */

static int k8s_minor(const char *version)
{
    const char *dot = version ? strchr(version, '.') : NULL;
    return dot ? (int)strtol(dot + 1, NULL, 10) : -1;
}

/* An alias becomes one image-id query over the SSM answers. */
static int alias_query(kp_aws_nc_resolver *r, kp_aws_client *ssm, kp_arena *a, const char *alias,
                       query *q, alias_ctx *ac, kp_ncr_why *why)
{
    const char *at = strchr(alias, '@');
    const char *family = at ? kp_arena_strndup(a, alias, (size_t)(at - alias)) : alias;
    const char *version = at ? at + 1 : "latest";
    const char *k8s = kp_ncr_kubernetes_version(r, a);
    if (!k8s || !*k8s) {
        why->message = "resolving an AMI alias needs the cluster's Kubernetes version";
        return 0;
    }
    if (strcmp(family, "al2") == 0 && k8s_minor(k8s) >= 33) {
        *why = (kp_ncr_why){"UnsupportedAlias",
                            "AL2 aliases are no longer supported on EKS 1.33+ (see "
                            "https://docs.aws.amazon.com/eks/latest/userguide/"
                            "kubernetes-versions-standard.html#kubernetes-1-33)"};
        return 0;
    }
    if (strcmp(family, "windows2025") == 0 && k8s_minor(k8s) < 35) {
        *why = (kp_ncr_why){"UnsupportedAlias",
                            kp_arena_printf(a,
                                            "Windows Server 2025 requires EKS version 1.35 or "
                                            "higher, current version: %s",
                                            k8s)};
        return 0;
    }
    alias_path paths[8];
    size_t n = alias_paths(a, family, version, k8s, paths);
    ac->family = family;
    ac->ids = KP_ARENA_NEW(a, const char *, n + 1);
    ac->variants = KP_ARENA_NEW(a, unsigned, n + 1);
    for (size_t i = 0; i < n; i++) {
        const char *id = NULL;
        int err = ssm_get(r, ssm, a, paths[i].path, KP_NC_SSM_ALIAS_TTL_NS, &id);
        if (err < 0) return err;
        if (!id) continue;
        ac->ids[ac->n] = id;
        ac->variants[ac->n++] = paths[i].variants;
        kp_ncr_filter_add(a, &q->filters, "image-id", id);
    }
    if (ac->n == 0)
        why->message = kp_arena_printf(a, "failed to discover any AMIs for alias %s", alias);
    return 0;
}

/* Collapse the single-valued image-id filters into one filter with many values. */
static void merge_id_filters(kp_arena *a, kp_ncr_filters *f)
{
    if (f->n < 2) return;
    const char **values = KP_ARENA_NEW(a, const char *, f->n);
    for (size_t i = 0; i < f->n; i++)
        values[i] = f->items[i].values[0];
    f->items[0].values = values;
    f->items[0].n_values = f->n;
    f->n = 1;
}

static int term_queries(kp_aws_nc_resolver *r, kp_aws_client *ssm, kp_arena *a,
                        const kp_ec2nodeclass *nc, query *q, size_t *nq)
{
    query ids = {0};
    size_t k = 0;
    for (size_t i = 0; i < nc->n_ami_selector_terms; i++) {
        const kp_ami_selector_term *t = &nc->ami_selector_terms[i];
        if (t->id && *t->id) {
            kp_ncr_filter_add(a, &ids.filters, "image-id", t->id);
        } else if (t->ssm_parameter && *t->ssm_parameter) {
            const char *id = NULL;
            int err = ssm_get(r, ssm, a, t->ssm_parameter, KP_NC_SSM_TTL_NS, &id);
            if (err < 0) return err;
            if (id && strncmp(id, "ami-", 4) == 0)
                kp_ncr_filter_add(a, &ids.filters, "image-id", id);
        } else {
            query *cur = &q[k++];
            *cur = (query){0};
            bool named = t->name && *t->name;
            if (t->owner && *t->owner) {
                cur->owners = KP_ARENA_NEW(a, const char *, 1);
                cur->owners[cur->n_owners++] = t->owner;
            } else if (named) {
                static const char *self_amazon[] = {"self", "amazon"};
                cur->owners = self_amazon;
                cur->n_owners = 2;
            }
            if (named) kp_ncr_filter_add(a, &cur->filters, "name", t->name);
            kp_ncr_filter_tags(a, &cur->filters, &t->tags);
        }
    }
    if (ids.filters.n) {
        merge_id_filters(a, &ids.filters);
        q[k++] = ids;
    }
    *nq = k;
    return 0;
}

int kp_ncr_amis(kp_aws_nc_resolver *r, const kp_aws_nc_clients *clients, const kp_ec2nodeclass *nc,
                kp_arena *a, cJSON **out, kp_ncr_why *why)
{
    query *q = KP_ARENA_NEW(a, query, nc->n_ami_selector_terms + 1);
    size_t nq = 0;
    alias_ctx ac = {0};
    const char *alias = nc->n_ami_selector_terms ? nc->ami_selector_terms[0].alias : NULL;
    int err = 0;
    *why = (kp_ncr_why){"AMINotFound", NULL};
    if (alias && *alias) {
        err = alias_query(r, clients->ssm, a, alias, &q[0], &ac, why);
        nq = ac.n ? 1 : 0;
        merge_id_filters(a, &q[0].filters);
    } else {
        err = term_queries(r, clients->ssm, a, nc, q, &nq);
    }
    cJSON *best = cJSON_CreateObject();
    int64_t now = r->clock->now(r->clock);
    for (size_t i = 0; i < nq && err == 0; i++) {
        cJSON *images = NULL;
        if ((err = describe(r, clients->ec2, a, &q[i], &images)) < 0) break;
        const cJSON *im;
        cJSON_ArrayForEach(im, images) consider(best, im, &ac, now);
        cJSON_Delete(images);
    }
    if (err == 0) *out = status_list(best);
    cJSON_Delete(best);
    return err;
}

/* ------------------------------------------------------- SSM invalidation */

/* Whether a parameter's value may change under us: an alias's latest or
 * recommended image, or any parameter of the user's own. */
static bool mutable_parameter(const char *name)
{
    return strstr(name, "/recommended/") || strstr(name, "/latest/") ||
           strstr(name, "/ami-windows-latest/") || strncmp(name, "/aws/service/", 13) != 0;
}

int kp_aws_nc_invalidate_ssm(kp_aws_nc_resolver *r, kp_aws_client *ec2)
{
    kp_arena *a = kp_arena_new();
    const char **keys = NULL;
    size_t n = kp_aws_cache_keys(r->cache, "ssm|", a, &keys), k = 0;
    const char **ids = KP_ARENA_NEW(a, const char *, n + 1), **of = KP_ARENA_NEW(a, const char *, n + 1);
    for (size_t i = 0; i < n; i++) {
        cJSON *v = mutable_parameter(keys[i] + 4) ? kp_aws_cache_get(r->cache, keys[i]) : NULL;
        const char *id = cJSON_GetStringValue(v);
        if (id && *id) ids[k] = kp_arena_strdup(a, id), of[k++] = keys[i];
        cJSON_Delete(v);
    }
    kp_ec2_image_list l = {0};
    kp_ec2_describe_images_input in = {.ids = ids, .n_ids = k, .include_deprecated = true};
    int err = k ? kp_ec2_describe_images(ec2, a, &in, &l) : 0, dropped = 0;
    if (err == KP_ENOTFOUND) { /* an image is gone altogether: ask SSM again for all */
        for (size_t j = 0; j < k; j++)
            kp_aws_cache_delete(r->cache, of[j]);
        kp_arena_free(a);
        return (int)k;
    }
    int64_t now = r->clock->now(r->clock);
    for (size_t i = 0; i < l.n && err == 0; i++) {
        int64_t t = 0;
        const char *dt = l.items[i].deprecation_time;
        if (!dt || kp_time_parse_rfc3339(dt, &t) < 0 || t > now) continue;
        for (size_t j = 0; j < k; j++)
            if (l.items[i].id && !strcmp(ids[j], l.items[i].id)) {
                kp_aws_cache_delete(r->cache, of[j]);
                dropped++;
            }
    }
    kp_arena_free(a);
    return err < 0 ? kp_error_wrap(err, "checking cached SSM parameters for deprecated AMIs") : dropped;
}
