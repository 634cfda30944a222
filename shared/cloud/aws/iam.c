/* IAM instance profiles over AWS Query (see iam.h). */
#include "cloud/aws/iam.h"

#include <stdint.h>
#include <string.h>

#include "base/error.h"
#include "cloud/aws/aws_xml.h"

enum { IAM_FORM_MAX = 1 << 20, IAM_MAX_PAGES = 100 };

/* Send `action` with `params` (already form-encoded, may be empty) and hand
 * the parsed answer's root to `fn` (NULL: ignore the body). */
typedef int (*iam_fn)(void *ctx, kp_arena *arena, xmlNode *root);

static int call(kp_aws_client *c, kp_arena *arena, const char *action, const kp_buf *params,
                iam_fn fn, void *ctx)
{
    kp_buf form = KP_BUF_INIT(IAM_FORM_MAX), answer = KP_BUF_INIT(SIZE_MAX / 2);
    int err = kp_aws_form_add(&form, "Action", action);
    if (err == 0) err = kp_aws_form_add(&form, "Version", KP_IAM_API_VERSION);
    if (err == 0 && params && params->len) err = kp_buf_printf(&form, "&%s", kp_buf_cstr(params));
    kp_aws_request req = {"iam", action, KP_AWS_QUERY, NULL, form.data, form.len, NULL, 0, NULL, NULL};
    if (err == 0) err = kp_aws_client_send(c, &req, &answer);
    xmlDoc *doc = NULL;
    if (err == 0 && fn && (err = kp_aws_xml_parse(&doc, answer.data, answer.len)) < 0)
        kp_error_wrap(err, "iam %s", action);
    if (err == 0 && fn) err = fn(ctx, arena, xmlDocGetRootElement(doc));
    if (doc) xmlFreeDoc(doc);
    kp_buf_free(&answer);
    kp_buf_free(&form);
    return err;
}

static xmlNode *first_member(const xmlNode *node, const char *path)
{
    xmlNode *list = kp_aws_xml_path(node, path);
    return list ? kp_aws_xml_child(list, "member") : NULL;
}

static void parse_profile(kp_arena *a, const xmlNode *p, kp_iam_instance_profile *out)
{
    memset(out, 0, sizeof(*out));
    out->name = kp_aws_xml_text(a, p, "InstanceProfileName");
    out->id = kp_aws_xml_text(a, p, "InstanceProfileId");
    out->arn = kp_aws_xml_text(a, p, "Arn");
    out->path = kp_aws_xml_text(a, p, "Path");
    xmlNode *first = first_member(p, "Roles");
    out->n_roles = kp_aws_xml_count(first);
    out->roles = KP_ARENA_NEW(a, const char *, out->n_roles + 1);
    size_t i = 0;
    for (xmlNode *m = first; m; m = kp_aws_xml_next(m))
        out->roles[i++] = kp_aws_xml_text(a, m, "RoleName");
    first = first_member(p, "Tags");
    out->n_tags = kp_aws_xml_count(first);
    out->tags = KP_ARENA_NEW(a, kp_iam_tag, out->n_tags + 1);
    i = 0;
    for (xmlNode *m = first; m; m = kp_aws_xml_next(m), i++) {
        out->tags[i].key = kp_aws_xml_text(a, m, "Key");
        out->tags[i].value = kp_aws_xml_text(a, m, "Value");
    }
}

static int one_profile(void *ctx, kp_arena *arena, xmlNode *root)
{
    xmlNode *result = kp_aws_xml_child(root, "GetInstanceProfileResult");
    if (!result) result = kp_aws_xml_child(root, "CreateInstanceProfileResult");
    xmlNode *p = result ? kp_aws_xml_child(result, "InstanceProfile") : NULL;
    if (!p) return kp_error_set(KP_EINVALID, "iam: the answer has no InstanceProfile");
    parse_profile(arena, p, ctx);
    return 0;
}

int kp_iam_get_instance_profile(kp_aws_client *client, kp_arena *arena, const char *name,
                                kp_iam_instance_profile *out)
{
    kp_buf form = KP_BUF_INIT(IAM_FORM_MAX);
    kp_iam_instance_profile p;
    int err = kp_aws_form_add(&form, "InstanceProfileName", name);
    if (err == 0) err = call(client, arena, "GetInstanceProfile", &form, one_profile, &p);
    kp_buf_free(&form);
    if (err == 0) *out = p;
    return err;
}

int kp_iam_create_instance_profile(kp_aws_client *client, kp_arena *arena, const char *name,
                                   const char *path, const kp_iam_tag *tags, size_t n_tags,
                                   kp_iam_instance_profile *out)
{
    kp_buf form = KP_BUF_INIT(IAM_FORM_MAX);
    kp_iam_instance_profile p;
    int err = kp_aws_form_add(&form, "InstanceProfileName", name);
    if (err == 0) err = kp_aws_form_add(&form, "Path", path ? path : "/");
    for (size_t i = 0; i < n_tags && err == 0; i++) {
        err = kp_aws_form_addf(&form, tags[i].key, "Tags.member.%zu.Key", i + 1);
        if (err == 0)
            err = kp_aws_form_addf(&form, tags[i].value ? tags[i].value : "",
                                   "Tags.member.%zu.Value", i + 1);
    }
    if (err == 0) err = call(client, arena, "CreateInstanceProfile", &form, one_profile, &p);
    kp_buf_free(&form);
    if (err == 0) *out = p;
    return err;
}

static int role_call(kp_aws_client *client, const char *action, const char *profile,
                     const char *role)
{
    kp_buf form = KP_BUF_INIT(IAM_FORM_MAX);
    int err = kp_aws_form_add(&form, "InstanceProfileName", profile);
    if (err == 0 && role) err = kp_aws_form_add(&form, "RoleName", role);
    if (err == 0) err = call(client, NULL, action, &form, NULL, NULL);
    kp_buf_free(&form);
    return err;
}

int kp_iam_add_role_to_instance_profile(kp_aws_client *client, const char *profile,
                                        const char *role)
{
    return role_call(client, "AddRoleToInstanceProfile", profile, role);
}

int kp_iam_remove_role_from_instance_profile(kp_aws_client *client, const char *profile,
                                             const char *role)
{
    return role_call(client, "RemoveRoleFromInstanceProfile", profile, role);
}

int kp_iam_delete_instance_profile(kp_aws_client *client, const char *name)
{
    return role_call(client, "DeleteInstanceProfile", name, NULL);
}

typedef struct list_page {
    kp_iam_instance_profile_list *out;
    char *marker;
} list_page;

static int profiles_page(void *ctx, kp_arena *arena, xmlNode *root)
{
    list_page *lp = ctx;
    xmlNode *result = kp_aws_xml_child(root, "ListInstanceProfilesResult");
    xmlNode *first = result ? first_member(result, "InstanceProfiles") : NULL;
    size_t add = kp_aws_xml_count(first), n = lp->out->n;
    lp->out->items =
        kp_arena_grow(arena, lp->out->items, n, n + add, sizeof(kp_iam_instance_profile));
    for (xmlNode *m = first; m; m = kp_aws_xml_next(m))
        parse_profile(arena, m, &lp->out->items[lp->out->n++]);
    lp->marker = NULL;
    if (result && kp_aws_xml_bool(result, "IsTruncated", false))
        lp->marker = kp_aws_xml_text(arena, result, "Marker");
    return 0;
}

int kp_iam_list_instance_profiles(kp_aws_client *client, kp_arena *arena, const char *path_prefix,
                                  kp_iam_instance_profile_list *out)
{
    kp_iam_instance_profile_list all = {0};
    list_page lp = {&all, NULL};
    int err = 0;
    for (int page = 0; page < IAM_MAX_PAGES; page++) {
        kp_buf form = KP_BUF_INIT(IAM_FORM_MAX);
        if (path_prefix) err = kp_aws_form_add(&form, "PathPrefix", path_prefix);
        if (err == 0 && lp.marker) err = kp_aws_form_add(&form, "Marker", lp.marker);
        if (err == 0) err = call(client, arena, "ListInstanceProfiles", &form, profiles_page, &lp);
        kp_buf_free(&form);
        if (err < 0) return err;
        if (!lp.marker || !*lp.marker) {
            *out = all;
            return 0;
        }
    }
    return kp_error_set(KP_ETOOLARGE, "iam ListInstanceProfiles: more than %d pages",
                        IAM_MAX_PAGES);
}
