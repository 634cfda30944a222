/*
 * The instance profile of a node class: spec.instanceProfile as given, or the
 * profile Karpenter manages for spec.role — named "<cluster>_<hash>" (a new
 * name when the role changes), under /karpenter/<region>/<cluster>/<uid>/,
 * created when missing, holding exactly that role.
 */
#include "cloud/aws/nodeclass_internal.h"

#include <inttypes.h>
#include <string.h>

#include "base/error.h"
#include "cloud/aws/iam.h"

/* "arn:aws:iam::1:role/path/name" and "path/name" name the role "name". */
static const char *role_name(const char *role)
{
    const char *slash = strrchr(role, '/');
    return slash ? slash + 1 : role;
}

static const char *profile_name(kp_aws_nc_resolver *r, const kp_ec2nodeclass *nc, kp_arena *a)
{
    uint64_t h = KP_AWS_FNV_OFFSET;
    const char *parts[] = {r->region, "/", nc->role, "/", nc->meta.uid};
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        h = kp_aws_fnv1a(h, parts[i], strlen(parts[i]));
    return kp_arena_printf(a, "%s_%" PRIu64, r->cluster_name, h);
}

/* The IAM path of every profile made for the class with this uid. */
static const char *profile_path(const kp_aws_nc_resolver *r, const char *uid, kp_arena *a)
{
    return kp_arena_printf(a, "/karpenter/%s/%s/%s/", r->region, r->cluster_name, uid);
}

/* The cache entry saying `profile` holds `role`. */
static const char *profile_key(const char *profile, const char *role, kp_arena *a)
{
    return kp_arena_printf(a, "profile|%s|%s", profile, role);
}

static kp_iam_tag *profile_tags(kp_aws_nc_resolver *r, const kp_ec2nodeclass *nc, kp_arena *a,
                                size_t *n)
{
    kp_iam_tag *t = KP_ARENA_NEW(a, kp_iam_tag, nc->tags.count + 4);
    size_t k = 0;
    for (size_t i = 0; i < nc->tags.count; i++)
        t[k++] = (kp_iam_tag){nc->tags.items[i].key, nc->tags.items[i].value};
    t[k++] = (kp_iam_tag){kp_arena_printf(a, "kubernetes.io/cluster/%s", r->cluster_name), "owned"};
    t[k++] = (kp_iam_tag){"eks:eks-cluster-name", r->cluster_name};
    t[k++] = (kp_iam_tag){"karpenter.k8s.aws/ec2nodeclass", nc->meta.name};
    t[k++] = (kp_iam_tag){"topology.kubernetes.io/region", r->region};
    *n = k;
    return t;
}

/* Make `name` exist holding `role` and nothing else. */
static int ensure_profile(kp_aws_nc_resolver *r, kp_aws_client *iam, const kp_ec2nodeclass *nc,
                          kp_arena *a, const char *name, const char *role)
{
    kp_iam_instance_profile p;
    int err = kp_iam_get_instance_profile(iam, a, name, &p);
    if (err == KP_ENOTFOUND) {
        size_t n_tags;
        kp_iam_tag *tags = profile_tags(r, nc, a, &n_tags);
        err = kp_iam_create_instance_profile(iam, a, name, profile_path(r, nc->meta.uid, a), tags,
                                             n_tags, &p);
    }
    if (err < 0) return kp_error_wrap(err, "instance profile %s", name);
    bool has = false;
    for (size_t i = 0; i < p.n_roles && err == 0; i++) {
        if (strcmp(p.roles[i], role) == 0)
            has = true;
        else
            err = kp_iam_remove_role_from_instance_profile(iam, name, p.roles[i]);
    }
    if (err == 0 && !has) err = kp_iam_add_role_to_instance_profile(iam, name, role);
    return err < 0 ? kp_error_wrap(err, "instance profile %s, role %s", name, role) : 0;
}

int kp_ncr_instance_profile(kp_aws_nc_resolver *r, kp_aws_client *iam, const kp_ec2nodeclass *nc,
                            kp_arena *arena, const char **out, const char **why)
{
    *out = NULL;
    if (nc->instance_profile && *nc->instance_profile) {
        *out = nc->instance_profile;
        return 0;
    }
    if (!nc->role || !*nc->role) {
        *why = "neither spec.role nor spec.instanceProfile is set";
        return 0;
    }
    if (!iam) return kp_error_set(KP_EINVALID, "instance profile: no IAM client");
    const char *name = profile_name(r, nc, arena), *role = role_name(nc->role);
    const char *key = profile_key(name, role, arena);
    cJSON *hit = kp_aws_cache_get(r->cache, key);
    int err = 0;
    if (!hit) {
        err = ensure_profile(r, iam, nc, arena, name, role);
        if (err == 0) {
            cJSON *mark = cJSON_CreateTrue();
            kp_aws_cache_put(r->cache, key, mark, KP_NC_PROFILE_TTL_NS);
            cJSON_Delete(mark);
        }
    }
    cJSON_Delete(hit);
    if (err == 0) *out = name;
    return err;
}

/* Take every role out of profile `p`, then delete it; already gone is fine. */
static int delete_profile(kp_aws_nc_resolver *r, kp_aws_client *iam, kp_arena *arena,
                          const kp_iam_instance_profile *p)
{
    int err = 0;
    for (size_t i = 0; i < p->n_roles && err >= 0; i++) {
        err = kp_iam_remove_role_from_instance_profile(iam, p->name, p->roles[i]);
        if (err == KP_ENOTFOUND) err = 0;
        kp_aws_cache_delete(r->cache, profile_key(p->name, p->roles[i], arena));
    }
    if (err >= 0) err = kp_iam_delete_instance_profile(iam, p->name);
    if (err == KP_ENOTFOUND) err = 0;
    return err < 0 ? kp_error_wrap(err, "deleting instance profile %s", p->name) : 0;
}

int kp_aws_nc_delete_profiles(kp_aws_nc_resolver *r, kp_aws_client *iam, const char *uid)
{
    /* Without a uid (an object from before it was stored) there is no path to find them by. */
    if (!uid || !*uid) return 0;
    if (!iam) return kp_error_set(KP_EINVALID, "instance profiles: no IAM client");
    kp_arena *arena = kp_arena_new();
    /* Every profile this class ever had: a new role gave it a new name, same path. */
    const char *path = profile_path(r, uid, arena);
    kp_iam_instance_profile_list l = {0};
    int err = kp_iam_list_instance_profiles(iam, arena, path, &l);
    if (err < 0) err = kp_error_wrap(err, "listing instance profiles under %s", path);
    for (size_t i = 0; i < l.n && err >= 0; i++) {
        /* IAM filters by PathPrefix; an emulator that ignores it must not make us
         * delete another class's (or another tool's) profile. */
        const char *got = l.items[i].path ? l.items[i].path : "";
        if (strncmp(got, path, strlen(path)) == 0) err = delete_profile(r, iam, arena, &l.items[i]);
    }
    kp_arena_free(arena);
    return err < 0 ? err : 0;
}

static bool listed(const char *const *set, size_t n, const char *s)
{
    for (size_t i = 0; s && i < n; i++)
        if (set[i] && strcmp(set[i], s) == 0) return true;
    return false;
}

/* The uid segment of "/karpenter/<region>/<cluster>/<uid>/"; NULL otherwise. */
static const char *uid_of(kp_arena *a, const char *path, const char *prefix)
{
    size_t n = strlen(prefix);
    if (!path || strncmp(path, prefix, n) != 0) return NULL;
    const char *uid = path + n, *slash = strchr(uid, '/');
    if (!slash || slash == uid || slash[1]) return NULL;
    return kp_arena_strndup(a, uid, (size_t)(slash - uid));
}

int kp_aws_nc_gc_profiles(kp_aws_nc_resolver *r, kp_aws_client *iam, const char *const *live_uids,
                          size_t n_uids, const char *const *in_use, size_t n_in_use)
{
    if (!iam) return kp_error_set(KP_EINVALID, "instance profiles: no IAM client");
    kp_arena *a = kp_arena_new();
    const char *prefix = kp_arena_printf(a, "/karpenter/%s/%s/", r->region, r->cluster_name);
    kp_iam_instance_profile_list l = {0};
    int err = kp_iam_list_instance_profiles(iam, a, prefix, &l), deleted = 0;
    if (err < 0) err = kp_error_wrap(err, "listing instance profiles under %s", prefix);
    for (size_t i = 0; i < l.n && err >= 0; i++) {
        const char *uid = uid_of(a, l.items[i].path, prefix);
        /* another tool's profile, a class that still exists, or one an instance still wears */
        if (!uid || listed(live_uids, n_uids, uid) || listed(in_use, n_in_use, l.items[i].name))
            continue;
        if ((err = delete_profile(r, iam, a, &l.items[i])) == 0) deleted++;
    }
    kp_arena_free(a);
    return err < 0 ? err : deleted;
}
