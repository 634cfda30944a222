/* Objects as JSON (see objutil.h). */
#include "kube/objutil.h"

#include "api/wellknown.h"
#include "base/clock.h"
#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const cJSON *kp_obj_get(const cJSON *obj, const char *path)
{
    char field[256];
    while (obj && *path) {
        size_t len = strcspn(path, ".");
        if (len >= sizeof(field)) return NULL;
        memcpy(field, path, len);
        field[len] = '\0';
        obj = cJSON_GetObjectItemCaseSensitive(obj, field);
        path += len + (path[len] == '.');
    }
    return obj;
}

const char *kp_obj_str(const cJSON *obj, const char *path)
{
    return cJSON_GetStringValue(kp_obj_get(obj, path));
}

const cJSON *kp_obj_condition_get(const cJSON *obj, const char *type)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, kp_obj_get(obj, "status.conditions"))
    {
        const char *t = kp_obj_str(c, "type");
        if (t && strcmp(t, type) == 0) return c;
    }
    return NULL;
}

const char *kp_obj_condition(const cJSON *obj, const char *type)
{
    return kp_obj_str(kp_obj_condition_get(obj, type), "status");
}

bool kp_obj_condition_is_true(const cJSON *obj, const char *type)
{
    const char *status = kp_obj_condition(obj, type);
    return status && strcmp(status, "True") == 0;
}

int64_t kp_obj_condition_since(const cJSON *obj, const char *type)
{
    const char *t = kp_obj_str(kp_obj_condition_get(obj, type), "lastTransitionTime");
    int64_t ns = 0;
    if (t && kp_time_parse_rfc3339(t, &ns) < 0) ns = 0;
    return ns;
}

bool kp_node_is_ready(const cJSON *node)
{
    return kp_obj_condition_is_true(node, "Ready");
}

/* ------------------------------------------------------------------ nodes */

static bool is_disrupted_taint(const cJSON *taint)
{
    const char *k = kp_obj_str(taint, "key"), *e = kp_obj_str(taint, "effect");
    return k && e && strcmp(k, KP_TAINT_DISRUPTED) == 0 && strcmp(e, "NoSchedule") == 0;
}

bool kp_node_has_disrupted_taint(const cJSON *node)
{
    const cJSON *taint;
    cJSON_ArrayForEach(taint, kp_obj_get(node, "spec.taints"))
    {
        if (is_disrupted_taint(taint)) return true;
    }
    return false;
}

bool kp_node_set_disrupted_taint(cJSON *node, bool on)
{
    if (kp_node_has_disrupted_taint(node) == on) return false;
    cJSON *spec = kp_obj_ensure(node, "spec");
    cJSON *list = cJSON_GetObjectItemCaseSensitive(spec, "taints");
    if (!on) {
        for (cJSON *t = list->child, *next; t; t = next) {
            next = t->next;
            if (is_disrupted_taint(t)) cJSON_Delete(cJSON_DetachItemViaPointer(list, t));
        }
        return true;
    }
    if (!cJSON_IsArray(list)) {
        cJSON_DeleteItemFromObjectCaseSensitive(spec, "taints");
        list = cJSON_AddArrayToObject(spec, "taints");
    }
    cJSON *taint = cJSON_CreateObject();
    cJSON_AddStringToObject(taint, "key", KP_TAINT_DISRUPTED);
    cJSON_AddStringToObject(taint, "effect", "NoSchedule");
    cJSON_AddItemToArray(list, taint);
    return true;
}

cJSON *kp_obj_ensure(cJSON *obj, const char *path)
{
    char buf[256];
    size_t len = strlen(path);
    if (len >= sizeof(buf)) return NULL;
    memcpy(buf, path, len + 1);
    cJSON *cur = obj;
    for (char *save = NULL, *tok = strtok_r(buf, ".", &save); tok && cur;
         tok = strtok_r(NULL, ".", &save)) {
        cJSON *next = cJSON_GetObjectItemCaseSensitive(cur, tok);
        if (!cJSON_IsObject(next)) {
            cJSON_DeleteItemFromObjectCaseSensitive(cur, tok);
            next = cJSON_AddObjectToObject(cur, tok);
        }
        cur = next;
    }
    return cur;
}

/* ------------------------------------------------------------ conditions */

/* The condition to edit: `obj` is the caller's to change. */
static cJSON *find_condition(cJSON *obj, const char *type)
{
    return (cJSON *)kp_obj_condition_get(obj, type);
}

static bool set_string(cJSON *o, const char *key, const char *value)
{
    const cJSON *old = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsString(old) && strcmp(old->valuestring, value) == 0) return false;
    cJSON_DeleteItemFromObjectCaseSensitive(o, key);
    cJSON_AddStringToObject(o, key, value);
    return true;
}

bool kp_obj_set_condition(cJSON *obj, const char *type, const char *status, const char *reason,
                          const char *message, int64_t now_ns)
{
    cJSON *c = find_condition(obj, type);
    bool changed = false;
    if (!c) {
        cJSON *st = kp_obj_ensure(obj, "status");
        cJSON *list = cJSON_GetObjectItemCaseSensitive(st, "conditions");
        if (!cJSON_IsArray(list)) {
            cJSON_DeleteItemFromObjectCaseSensitive(st, "conditions");
            list = cJSON_AddArrayToObject(st, "conditions");
        }
        c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "type", type);
        cJSON_AddItemToArray(list, c);
        changed = true;
    }
    if (set_string(c, "status", status) ||
        !cJSON_GetObjectItemCaseSensitive(c, "lastTransitionTime")) {
        char when[32];
        kp_time_format_rfc3339(now_ns, when, sizeof(when));
        set_string(c, "lastTransitionTime", when);
        changed = true;
    }
    /* Karpenter's conditions always carry a reason; True ones use the type. */
    changed |= set_string(c, "reason", reason && *reason ? reason : type);
    changed |= set_string(c, "message", message ? message : "");
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "generation");
    if (cJSON_IsNumber(gen)) {
        const cJSON *og = cJSON_GetObjectItemCaseSensitive(c, "observedGeneration");
        if (!cJSON_IsNumber(og) || og->valuedouble != gen->valuedouble) {
            cJSON_DeleteItemFromObjectCaseSensitive(c, "observedGeneration");
            cJSON_AddNumberToObject(c, "observedGeneration", gen->valuedouble);
            changed = true;
        }
    }
    return changed;
}

bool kp_obj_set_root_condition(cJSON *obj, const char *root, const char *const *deps, size_t n,
                               int64_t now_ns)
{
    const char *pending[8];
    int64_t since[8];
    size_t m = 0;
    bool any_false = false;
    for (size_t i = 0; i < n && m < 8; i++) {
        const char *s = kp_obj_condition(obj, deps[i]);
        if (s && !strcmp(s, "True")) continue;
        any_false |= s && !strcmp(s, "False");
        size_t j = m++;
        int64_t t = kp_obj_condition_since(obj, deps[i]);
        for (; j > 0 && since[j - 1] < t; j--) /* newest first; ties keep their order */
            pending[j] = pending[j - 1], since[j] = since[j - 1];
        pending[j] = deps[i], since[j] = t;
    }
    if (!m) return kp_obj_set_condition(obj, root, "True", root, "", now_ns);
    char msg[512] = "";
    for (size_t i = 0, len = 0; i < m && len < sizeof(msg); i++, len = strlen(msg)) {
        const char *s = kp_obj_condition(obj, pending[i]);
        snprintf(msg + len, sizeof(msg) - len, "%s%s=%s", i ? ", " : "", pending[i],
                 s ? s : "Unknown");
    }
    return kp_obj_set_condition(obj, root, any_false ? "False" : "Unknown",
                                any_false ? "UnhealthyDependents" : "ReconcilingDependents", msg,
                                now_ns);
}

bool kp_obj_clear_condition(cJSON *obj, const char *type)
{
    cJSON *list = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "status"),
                                                   "conditions");
    int i = 0;
    for (cJSON *c = list ? list->child : NULL; c; c = c->next, i++) {
        const char *t = kp_obj_str(c, "type");
        if (t && !strcmp(t, type)) {
            cJSON_DeleteItemFromArray(list, i);
            return true;
        }
    }
    return false;
}

/* ------------------------------------------------------------ finalizers */

bool kp_obj_has_finalizer(const cJSON *obj, const char *finalizer)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(
                              cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "finalizers"))
    {
        if (cJSON_IsString(f) && strcmp(f->valuestring, finalizer) == 0) return true;
    }
    return false;
}

bool kp_obj_add_finalizer(cJSON *obj, const char *finalizer)
{
    if (kp_obj_has_finalizer(obj, finalizer)) return false;
    cJSON *meta = kp_obj_ensure(obj, "metadata");
    cJSON *list = cJSON_GetObjectItemCaseSensitive(meta, "finalizers");
    if (!cJSON_IsArray(list)) {
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "finalizers");
        list = cJSON_AddArrayToObject(meta, "finalizers");
    }
    cJSON_AddItemToArray(list, cJSON_CreateString(finalizer));
    return true;
}

bool kp_obj_remove_finalizer(cJSON *obj, const char *finalizer)
{
    cJSON *list = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "finalizers");
    int i = 0;
    for (cJSON *f = list ? list->child : NULL; f; f = f->next, i++) {
        if (cJSON_IsString(f) && strcmp(f->valuestring, finalizer) == 0) {
            cJSON_DeleteItemFromArray(list, i);
            return true;
        }
    }
    return false;
}

/* ------------------------------------------------------ labels, annotations */

static const char *meta_map_get(const cJSON *obj, const char *map, const char *key)
{
    const cJSON *m =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), map);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *kp_obj_label(const cJSON *obj, const char *key)
{
    return meta_map_get(obj, "labels", key);
}

const char *kp_obj_annotation(const cJSON *obj, const char *key)
{
    return meta_map_get(obj, "annotations", key);
}

bool kp_obj_set_label(cJSON *obj, const char *key, const char *value)
{
    cJSON *meta = kp_obj_ensure(obj, "metadata");
    return set_string(kp_obj_ensure(meta, "labels"), key, value);
}

bool kp_obj_set_annotation(cJSON *obj, const char *key, const char *value)
{
    cJSON *meta = kp_obj_ensure(obj, "metadata");
    return set_string(kp_obj_ensure(meta, "annotations"), key, value);
}

/* ------------------------------------------------------------ merge patch */

/* RFC 7386 difference: what turns `a` into `b`. NULL when they are equal. */
static cJSON *merge_diff(const cJSON *a, const cJSON *b)
{
    if (!cJSON_IsObject(a) || !cJSON_IsObject(b))
        return cJSON_Compare(a, b, 1) ? NULL : cJSON_Duplicate(b, 1);
    cJSON *patch = NULL;
    for (const cJSON *kb = b->child; kb; kb = kb->next) {
        cJSON *d = merge_diff(cJSON_GetObjectItemCaseSensitive(a, kb->string), kb);
        if (!d) continue;
        if (!patch) patch = cJSON_CreateObject();
        cJSON_AddItemToObject(patch, kb->string, d);
    }
    for (const cJSON *ka = a->child; ka; ka = ka->next) {
        if (cJSON_GetObjectItemCaseSensitive(b, ka->string)) continue;
        if (!patch) patch = cJSON_CreateObject();
        cJSON_AddNullToObject(patch, ka->string);
    }
    return patch;
}

int kp_obj_patch(kp_kube_client *c, enum kp_kube_res res, const cJSON *before, const cJSON *after,
                 unsigned flags)
{
    return kp_obj_patch_out(c, res, before, after, flags, NULL);
}

int kp_obj_patch_out(kp_kube_client *c, enum kp_kube_res res, const cJSON *before,
                     const cJSON *after, unsigned flags, cJSON **out)
{
    if (out) *out = NULL;
    cJSON *patch = cJSON_CreateObject();
    for (const cJSON *k = after->child; k; k = k->next) {
        bool is_status = strcmp(k->string, "status") == 0;
        if (is_status != ((flags & KP_KUBE_STATUS) != 0)) continue;
        cJSON *d = merge_diff(cJSON_GetObjectItemCaseSensitive(before, k->string), k);
        if (d) cJSON_AddItemToObject(patch, k->string, d);
    }
    if (!patch->child) {
        cJSON_Delete(patch);
        return KP_KUBE_UNCHANGED;
    }
    const char *rv = kp_obj_str(before, "metadata.resourceVersion");
    if (rv && (flags & KP_OBJ_LOCK)) {
        cJSON *meta = kp_obj_ensure(patch, "metadata");
        cJSON_DeleteItemFromObjectCaseSensitive(meta, "resourceVersion");
        cJSON_AddStringToObject(meta, "resourceVersion", rv);
    }
    char *body = cJSON_PrintUnformatted(patch);
    cJSON_Delete(patch);
    const char *ns = kp_obj_str(before, "metadata.namespace");
    int err = kp_kube_patch(c, res, ns, kp_obj_str(before, "metadata.name"), KP_PATCH_MERGE, body,
                            flags & KP_KUBE_STATUS, out);
    free(body);
    return err;
}
