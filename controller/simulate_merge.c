/* Live objects, -f objects over them, --without objects away (see simulate_merge.h). */
#include "controller/simulate_merge.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "kube/objutil.h"
#include "kube/resources.h"
#include "kube/strmap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------- --without */

/* The table's kind for `word`: a kind or a plural, any case. */
static const kp_kube_resource *resource_named(const char *word)
{
    for (int i = 0; i < KP_RES_COUNT; i++) {
        const kp_kube_resource *r = kp_kube_resource_get((enum kp_kube_res)i);
        if (!strcasecmp(r->kind, word) || !strcasecmp(r->plural, word))
            return r;
    }
    return NULL;
}

static int copy_part(char *dst, size_t size, const char *src, size_t len, const char *arg, const char *what)
{
    if (len == 0)
        return kp_error_set(KP_EINVALID, "--without %s: the %s is empty", arg, what);
    if (len >= size)
        return kp_error_set(KP_EINVALID, "--without %s: the %s is longer than %zu bytes", arg, what, size - 1);
    memcpy(dst, src, len);
    dst[len] = '\0';
    return 0;
}

int kp_sim_without_parse(const char *arg, kp_sim_without *out)
{
    memset(out, 0, sizeof(*out));
    out->arg = arg;
    const char *s1 = strchr(arg, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
    if (!s1 || (s2 && strchr(s2 + 1, '/')))
        return kp_error_set(KP_EINVALID, "--without %s: want KIND/NAME or KIND/NAMESPACE/NAME", arg);
    char kind[64];
    int err = copy_part(kind, sizeof(kind), arg, (size_t)(s1 - arg), arg, "kind");
    if (err < 0)
        return err;
    const kp_kube_resource *r = resource_named(kind);
    if (!r)
        return kp_error_set(KP_EINVALID, "--without %s: unknown kind %s", arg, kind);
    out->kind = r->kind;
    if (r->namespaced && !s2)
        return kp_error_set(KP_EINVALID, "--without %s: a %s is namespaced: write %s/NAMESPACE/NAME", arg, r->kind,
                            kind);
    if (!r->namespaced && s2)
        return kp_error_set(KP_EINVALID, "--without %s: a %s has no namespace: write %s/NAME", arg, r->kind, kind);
    if (s2 && (err = copy_part(out->ns, sizeof(out->ns), s1 + 1, (size_t)(s2 - s1 - 1), arg, "namespace")) < 0)
        return err;
    const char *name = s2 ? s2 + 1 : s1 + 1;
    return copy_part(out->name, sizeof(out->name), name, strlen(name), arg, "name");
}

/* ------------------------------------------------------------------ merge */

typedef struct entry {
    cJSON *obj;
    const char *file; /* the origin, borrowed from the list it came from */
    size_t doc;
    long item;
    const char *kind, *ns, *name; /* borrowed from obj; NULL when absent */
    bool removed;
} entry;

/* What one --without took away, for its note. */
typedef struct tally {
    size_t claims, nodes, pods, other;
} tally;

typedef struct merge {
    entry *e;
    size_t n, cap;
    kp_strmap index; /* "kind/ns/name" -> entry index + 1 */
    kp_sim_merge_report *rep;
    tally t;
} merge;

static const char *str_at(const cJSON *obj, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void identify(entry *e)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(e->obj, "metadata");
    e->kind = str_at(e->obj, "kind");
    e->name = str_at(meta, "name");
    e->ns = str_at(meta, "namespace");
    if (!e->ns)
        e->ns = "";
}

static char *key_of(const char *kind, const char *ns, const char *name, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s/%s", kind, ns, name);
    return buf;
}

static size_t push(merge *m, cJSON *obj, const kp_doc *origin)
{
    m->e = kp_xgrow(m->e, &m->cap, m->n + 1, sizeof(entry));
    entry *e = &m->e[m->n];
    *e = (entry){obj, origin->file, origin->doc, origin->item, NULL, NULL, NULL, false};
    identify(e);
    if (e->kind && e->name) {
        char key[800];
        kp_strmap_put(&m->index, key_of(e->kind, e->ns, e->name, key, sizeof(key)), (void *)(uintptr_t)(m->n + 1));
    }
    return m->n++;
}

static entry *find(merge *m, const char *kind, const char *ns, const char *name)
{
    char key[800];
    uintptr_t at = (uintptr_t)kp_strmap_get(&m->index, key_of(kind, ns, name, key, sizeof(key)));
    return at ? &m->e[at - 1] : NULL;
}

static void take_live(merge *m, kp_doc_list *live)
{
    for (size_t i = 0; i < kp_doc_list_count(live); i++) {
        const kp_doc *d = kp_doc_list_at(live, i);
        cJSON *obj = kp_doc_list_take(live, i);
        if (obj)
            push(m, obj, d);
    }
    m->rep->live = m->n;
}

/* A namespaced kind's object without a namespace goes where kubectl puts it. */
static void default_namespace(cJSON *obj, const char *kind, const char *ns)
{
    enum kp_kube_res res = kp_kube_resource_find(kind);
    if (res == KP_RES_COUNT || !kp_kube_resource_get(res)->namespaced)
        return;
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const char *have = str_at(meta, "namespace");
    if (!cJSON_IsObject(meta) || (have && *have))
        return;
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "namespace");
    cJSON_AddStringToObject(meta, "namespace", ns);
}

/* kubectl apply leaves the status alone: the replacement keeps the live one. */
static void replace(merge *m, entry *old, cJSON *obj, const kp_doc *origin)
{
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(old->obj, "status");
    if (status && !cJSON_HasObjectItem(obj, "status"))
        cJSON_AddItemToObject(obj, "status", cJSON_Duplicate(status, 1));
    /* The file's name in full, and room for ": document N, items[M]". */
    size_t size = strlen(origin->file) + 64;
    char *where = kp_xmalloc(size);
    kp_sim_note(&m->rep->notes, "%s %s%s%s: replaced by %s", old->kind, old->ns,
                *old->ns ? "/" : "", old->name, kp_doc_origin(origin, where, size));
    free(where);
    cJSON_Delete(old->obj);
    old->obj = obj;
    old->file = origin->file, old->doc = origin->doc, old->item = origin->item;
    identify(old);
    m->rep->replaced++;
}

static void lay_files(merge *m, kp_doc_list *files, const char *ns)
{
    for (size_t i = 0; i < kp_doc_list_count(files); i++) {
        const kp_doc *d = kp_doc_list_at(files, i);
        cJSON *obj = kp_doc_list_take(files, i);
        if (!obj)
            continue;
        const char *kind = str_at(obj, "kind");
        if (kind)
            default_namespace(obj, kind, ns);
        const char *name = str_at(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "name");
        const char *obj_ns = str_at(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "namespace");
        entry *old = kind && name ? find(m, kind, obj_ns ? obj_ns : "", name) : NULL;
        if (old && !old->removed) {
            replace(m, old, obj, d);
        } else {
            push(m, obj, d);
            m->rep->added++;
        }
    }
}

/* ---------------------------------------------------------- cascades */

static bool is(const entry *e, const char *kind)
{
    return !e->removed && e->kind && !strcmp(e->kind, kind);
}

static bool same(const char *a, const char *b)
{
    return a && b && *a && !strcmp(a, b);
}

static void drop(merge *m, entry *e, size_t *count)
{
    if (e->removed)
        return;
    e->removed = true;
    m->rep->removed++;
    if (count)
        (*count)++;
}

static const cJSON *controller_of(const cJSON *pod)
{
    const cJSON *refs = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pod, "metadata"),
                                                         "ownerReferences");
    const cJSON *ref;
    cJSON_ArrayForEach(ref, refs)
    {
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")))
            return ref;
    }
    return NULL;
}

/* The pod of a node that goes: made again by its controller (pending), or gone. */
static void evict(merge *m, entry *p)
{
    const char *phase = kp_obj_str(p->obj, "status.phase");
    const cJSON *ref = controller_of(p->obj);
    const char *ref_kind = ref ? str_at(ref, "kind") : NULL;
    bool terminal = phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
    if (terminal || kp_obj_annotation(p->obj, "kubernetes.io/config.mirror") || (ref_kind && !strcmp(ref_kind, "DaemonSet"))) {
        drop(m, p, &m->t.pods);
        return;
    }
    if (!ref) {
        drop(m, p, &m->t.pods);
        m->rep->lost++;
        return;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(p->obj, "spec"), "nodeName");
    cJSON_DeleteItemFromObjectCaseSensitive(p->obj, "status");
    cJSON *status = cJSON_AddObjectToObject(p->obj, "status");
    cJSON_AddStringToObject(status, "phase", "Pending");
    m->rep->rescheduled++;
}

static void remove_node(merge *m, entry *node)
{
    drop(m, node, &m->t.nodes);
    const char *pid = kp_obj_str(node->obj, "spec.providerID");
    for (size_t j = 0; j < m->n; j++) {
        entry *e = &m->e[j];
        if (is(e, "NodeClaim") && (same(kp_obj_str(e->obj, "status.nodeName"), node->name) ||
                                   same(kp_obj_str(e->obj, "status.providerID"), pid)))
            drop(m, e, &m->t.claims);
        else if (is(e, "Pod") && same(kp_obj_str(e->obj, "spec.nodeName"), node->name))
            evict(m, e);
    }
}

static void remove_claim(merge *m, entry *claim)
{
    drop(m, claim, &m->t.claims);
    const char *node = kp_obj_str(claim->obj, "status.nodeName");
    const char *pid = kp_obj_str(claim->obj, "status.providerID");
    for (size_t j = 0; j < m->n; j++) {
        entry *e = &m->e[j];
        if (is(e, "Node") && (same(e->name, node) || same(kp_obj_str(e->obj, "spec.providerID"), pid)))
            remove_node(m, e);
    }
}

static void remove_pool(merge *m, entry *pool)
{
    drop(m, pool, NULL);
    for (size_t j = 0; j < m->n; j++) {
        entry *e = &m->e[j];
        if (!same(kp_obj_label(e->obj, KP_LABEL_NODEPOOL), pool->name))
            continue;
        if (is(e, "NodeClaim"))
            remove_claim(m, e);
        else if (is(e, "Node"))
            remove_node(m, e);
    }
}

static void remove_namespace(merge *m, entry *ns)
{
    drop(m, ns, NULL);
    for (size_t j = 0; j < m->n; j++)
        if (!m->e[j].removed && same(m->e[j].ns, ns->name))
            drop(m, &m->e[j], m->e[j].kind && !strcmp(m->e[j].kind, "Pod") ? &m->t.pods : &m->t.other);
}

static void remove_one(merge *m, entry *e)
{
    if (!strcmp(e->kind, "NodePool"))
        remove_pool(m, e);
    else if (!strcmp(e->kind, "NodeClaim"))
        remove_claim(m, e);
    else if (!strcmp(e->kind, "Node"))
        remove_node(m, e);
    else if (!strcmp(e->kind, "Namespace"))
        remove_namespace(m, e);
    else
        drop(m, e, NULL);
}

static int apply_without(merge *m, const kp_sim_without *w)
{
    entry *e = find(m, w->kind, w->ns, w->name);
    if (!e || e->removed)
        return kp_error_set(KP_ENOTFOUND, "--without %s: there is no %s %s%s%s in the cluster or the -f files",
                            w->arg, w->kind, w->ns, *w->ns ? "/" : "", w->name);
    size_t rescheduled = m->rep->rescheduled, lost = m->rep->lost;
    m->t = (tally){0, 0, 0, 0};
    remove_one(m, e);
    kp_sim_note(
        &m->rep->notes,
        "--without %s: removed %s %s%s%s with %zu NodeClaim(s), %zu Node(s), %zu other object(s); "
        "%zu pod(s) of removed nodes are pending again, %zu with no controller are gone, "
        "%zu pod(s) removed",
        w->arg, w->kind, w->ns, *w->ns ? "/" : "", w->name, m->t.claims, m->t.nodes, m->t.other,
        m->rep->rescheduled - rescheduled, m->rep->lost - lost, m->t.pods);
    return 0;
}

static int emit(merge *m, kp_doc_list *out)
{
    int err = 0;
    for (size_t i = 0; i < m->n; i++) {
        entry *e = &m->e[i];
        cJSON *obj = e->obj;
        e->obj = NULL;
        if (e->removed || err < 0)
            cJSON_Delete(obj);
        else
            err = kp_doc_list_append(out, obj, e->file, e->doc, e->item);
    }
    return err;
}

int kp_sim_merge(kp_doc_list *live, kp_doc_list *files, const kp_sim_merge_opts *opts, kp_doc_list *out,
                 kp_sim_merge_report *report)
{
    merge m = {NULL, 0, 0, KP_STRMAP_INIT, report, {0, 0, 0, 0}};
    memset(report, 0, sizeof(*report));
    take_live(&m, live);
    lay_files(&m, files, opts->default_namespace ? opts->default_namespace : "default");
    int err = 0;
    for (size_t i = 0; i < opts->n_without && !err; i++)
        err = apply_without(&m, &opts->without[i]);
    int emitted = emit(&m, out);
    kp_strmap_clear(&m.index, NULL);
    free(m.e);
    return err < 0 ? err : emitted;
}

void kp_sim_merge_report_clear(kp_sim_merge_report *report)
{
    kp_sim_notes_free(&report->notes);
    memset(report, 0, sizeof(*report));
}
