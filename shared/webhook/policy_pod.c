/*
 * Pod mutation: default requests for containers that ask for nothing (so
 * Karpenter sizes nodes from real numbers), recorded in the annotation
 * karpenter.sh/defaulted-requests as {"container":{"cpu":"100m"},...}, and
 * karpenter.sh/do-not-disrupt: "true" on Pods a selector term matches.
 *
 * A resource is defaulted only when the container has neither a request nor
 * a limit for it (with a limit, the API server has already set the request
 * to it). An annotation the Pod already carries is left as the user wrote it.
 */
#include "webhook/policy_internal.h"

#include "api/wellknown.h"
#include "base/buf.h"

#include <string.h>

static const cJSON *get(const cJSON *obj, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(obj, name);
}

static bool has_entries(const cJSON *map)
{
    return cJSON_IsObject(map) && map->child;
}

/* JSON Pointer segment: '~' -> "~0", '/' -> "~1" (RFC 6901). */
static int put_pointer_segment(kp_buf *b, const char *s)
{
    int err = 0;
    for (; err == 0 && *s; s++) {
        if (*s == '~')
            err = kp_buf_puts(b, "~0");
        else if (*s == '/')
            err = kp_buf_puts(b, "~1");
        else
            err = kp_buf_putc(b, *s);
    }
    return err;
}

static void patch_op(cJSON *patch, const char *verb, const char *path, cJSON *value)
{
    cJSON *op = cJSON_CreateObject();
    cJSON_AddStringToObject(op, "op", verb);
    cJSON_AddStringToObject(op, "path", path);
    cJSON_AddItemToObject(op, "value", value);
    cJSON_AddItemToArray(patch, op);
}

static void patch_add(cJSON *patch, const char *path, cJSON *value)
{
    patch_op(patch, "add", path, value);
}

/* The requests this container lacks, as {"cpu":"100m",...}, or NULL. */
static cJSON *missing_requests(const kp_policy *p, const cJSON *container)
{
    const cJSON *resources = get(container, "resources");
    const cJSON *requests = get(resources, "requests"), *limits = get(resources, "limits");
    cJSON *missing = NULL;
    for (size_t i = 0; i < p->pods.n_default_requests; i++) {
        const kp_policy_quantity *d = &p->pods.default_requests[i];
        if (get(requests, d->resource) || get(limits, d->resource)) continue;
        if (!missing) missing = cJSON_CreateObject();
        cJSON_AddStringToObject(missing, d->resource, d->text);
    }
    return missing;
}

/* Add `missing` at the shallowest path that does not exist yet. Takes
 * `missing`. KP_ETOOLARGE when a path passes PATH_MAX_BYTES: a path cut
 * short would patch another member. */
enum { PATH_MAX_BYTES = 4096 };

static int patch_requests(cJSON *patch, const char *list, size_t index, const cJSON *container,
                          cJSON *missing)
{
    const cJSON *resources = get(container, "resources");
    const cJSON *requests = get(resources, "requests");
    kp_buf path = KP_BUF_INIT(PATH_MAX_BYTES);
    int err = kp_buf_printf(&path, "/spec/%s/%zu/resources", list, index);
    if (err == 0 && !cJSON_IsObject(resources)) {
        cJSON *value = cJSON_CreateObject();
        cJSON_AddItemToObject(value, "requests", missing);
        patch_add(patch, kp_buf_cstr(&path), value);
        missing = NULL;
    } else if (err == 0 && !cJSON_IsObject(requests)) {
        err = kp_buf_puts(&path, "/requests");
        if (err == 0) {
            patch_add(patch, kp_buf_cstr(&path), missing);
            missing = NULL;
        }
    } else if (err == 0) {
        err = kp_buf_puts(&path, "/requests/");
        size_t base = path.len;
        for (cJSON *m = missing->child; err == 0 && m; m = m->next) {
            path.len = base;
            path.data[base] = '\0';
            err = put_pointer_segment(&path, m->string);
            if (err == 0) patch_add(patch, kp_buf_cstr(&path), cJSON_CreateString(m->valuestring));
        }
    }
    cJSON_Delete(missing);
    kp_buf_free(&path);
    return err;
}

static void warn_no_requests(const kp_policy *p, kp_admission_result *res, const char *name,
                             const cJSON *added)
{
    if (!p->pods.warn_missing_requests) return;
    if (!added) {
        kp_admission_warn(res,
                          "container %s has no resource requests: Karpenter sizes nodes from "
                          "requests, so this Pod may land on a node too small for it",
                          name);
        return;
    }
    const char *list = ""; /* in the arena, as long as its parts: nothing is cut */
    for (const cJSON *m = added->child; m; m = m->next)
        list = kp_arena_printf(res->errors.arena, "%s%s%s=%s", list, m == added->child ? "" : ", ",
                               m->string, m->valuestring);
    kp_admission_warn(res,
                      "container %s has no resource requests: the policy's defaults (%s) were "
                      "applied; set requests that fit the workload",
                      name, list);
}

/* Default every container of `list` ("containers", "initContainers"). */
static int default_list(const kp_policy *p, const cJSON *spec, const char *list, cJSON *record,
                        cJSON *patch, kp_admission_result *res)
{
    const cJSON *containers = get(spec, list);
    size_t index = 0;
    int err = 0;
    for (const cJSON *c = cJSON_IsArray(containers) ? containers->child : NULL; err == 0 && c;
         c = c->next, index++) {
        const cJSON *name = get(c, "name");
        const char *cname = cJSON_IsString(name) ? name->valuestring : "";
        const cJSON *resources = get(c, "resources");
        bool none =
            !has_entries(get(resources, "requests")) && !has_entries(get(resources, "limits"));
        cJSON *missing = missing_requests(p, c);
        if (none) warn_no_requests(p, res, cname, missing);
        if (!missing) continue;
        cJSON_AddItemToObject(record, cname, cJSON_Duplicate(missing, 1));
        err = patch_requests(patch, list, index, c, missing);
    }
    return err;
}

static bool labels_match(const kp_policy_selector *sel, const cJSON *labels)
{
    for (size_t i = 0; i < sel->n_labels; i++) {
        const cJSON *v = get(labels, sel->label_keys[i]);
        if (!cJSON_IsString(v) || strcmp(v->valuestring, sel->label_values[i]) != 0) return false;
    }
    return true;
}

static bool owner_matches(const kp_policy_selector *sel, const cJSON *owners)
{
    for (const cJSON *o = cJSON_IsArray(owners) ? owners->child : NULL; o; o = o->next) {
        const cJSON *kind = get(o, "kind");
        if (cJSON_IsString(kind) && kp_policy_list_has(&sel->owner_kinds, kind->valuestring))
            return true;
    }
    return false;
}

static bool list_uses_resource(const kp_policy_selector *sel, const cJSON *containers)
{
    for (const cJSON *c = cJSON_IsArray(containers) ? containers->child : NULL; c; c = c->next) {
        const cJSON *resources = get(c, "resources");
        for (size_t i = 0; i < sel->resources.count; i++) {
            const char *r = sel->resources.items[i];
            if (get(get(resources, "requests"), r) || get(get(resources, "limits"), r)) return true;
        }
    }
    return false;
}

static bool selector_matches(const kp_policy_selector *sel, const cJSON *pod, const char *ns)
{
    const cJSON *meta = get(pod, "metadata"), *spec = get(pod, "spec");
    if (!labels_match(sel, get(meta, "labels"))) return false;
    if (sel->owner_kinds.set && !owner_matches(sel, get(meta, "ownerReferences"))) return false;
    if (sel->resources.set && !list_uses_resource(sel, get(spec, "containers")) &&
        !list_uses_resource(sel, get(spec, "initContainers")))
        return false;
    if (sel->namespaces.set && !kp_policy_list_has(&sel->namespaces, ns)) return false;
    return true;
}

static bool wants_do_not_disrupt(const kp_policy *p, const cJSON *pod, const char *ns)
{
    for (size_t i = 0; i < p->pods.n_do_not_disrupt; i++)
        if (selector_matches(&p->pods.do_not_disrupt[i], pod, ns)) return true;
    return false;
}

/* Add each of `add`'s annotations the Pod does not have yet; the record of
 * defaulted requests describes this admission, so it replaces any earlier
 * one (copied from a template, say). Takes `add`. */
static int patch_annotations(cJSON *patch, const cJSON *pod, cJSON *add)
{
    const cJSON *meta = get(pod, "metadata");
    const cJSON *annotations = get(meta, "annotations");
    if (!cJSON_IsObject(meta)) {
        cJSON *value = cJSON_CreateObject();
        cJSON_AddItemToObject(value, "annotations", add);
        patch_add(patch, "/metadata", value);
        return 0;
    }
    if (!cJSON_IsObject(annotations)) {
        patch_add(patch, "/metadata/annotations", add);
        return 0;
    }
    kp_buf path = KP_BUF_INIT(PATH_MAX_BYTES);
    int err = 0;
    for (cJSON *a = add->child; err == 0 && a; a = a->next) {
        const char *verb = "add";
        if (get(annotations, a->string)) {
            if (strcmp(a->string, KP_ANNOTATION_DEFAULTED_REQUESTS) != 0) continue;
            verb = "replace";
        }
        kp_buf_reset(&path);
        err = kp_buf_puts(&path, "/metadata/annotations/");
        if (err == 0) err = put_pointer_segment(&path, a->string);
        if (err == 0) patch_op(patch, verb, kp_buf_cstr(&path), cJSON_CreateString(a->valuestring));
    }
    kp_buf_free(&path);
    cJSON_Delete(add);
    return err;
}

int kp_policy_mutate_pod(const kp_policy *policy, const cJSON *pod, const char *ns, cJSON *patch,
                         kp_admission_result *res)
{
    const cJSON *spec = get(pod, "spec");
    const cJSON *meta_ns = get(get(pod, "metadata"), "namespace");
    if ((!ns || !*ns) && cJSON_IsString(meta_ns)) ns = meta_ns->valuestring;
    cJSON *record = cJSON_CreateObject();
    int err = default_list(policy, spec, "initContainers", record, patch, res);
    if (err == 0) err = default_list(policy, spec, "containers", record, patch, res);
    if (err < 0) {
        cJSON_Delete(record);
        return err;
    }
    cJSON *add = cJSON_CreateObject();
    if (record->child) {
        char *text = cJSON_PrintUnformatted(record);
        cJSON_AddStringToObject(add, KP_ANNOTATION_DEFAULTED_REQUESTS, text);
        cJSON_free(text);
    }
    cJSON_Delete(record);
    if (wants_do_not_disrupt(policy, pod, ns))
        cJSON_AddStringToObject(add, KP_ANNOTATION_DO_NOT_DISRUPT, "true");
    if (add->child) return patch_annotations(patch, pod, add);
    cJSON_Delete(add);
    return 0;
}
