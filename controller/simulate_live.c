/* Reading the cluster for a live what-if (see simulate_live.h). */
#include "controller/simulate_live.h"
#include "api/decode.h"
#include "base/arena.h"
#include "base/error.h"
#include "kube/ops.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct kind_spec {
    enum kp_kube_res res;
    bool optional; /* a Karpenter CRD: absent means none, not an error */
} kind_spec;

static const kind_spec kinds[] = {
    {KP_RES_NODEPOOL, true},   {KP_RES_NODECLAIM, true}, {KP_RES_NODE, false},
    {KP_RES_POD, false},       {KP_RES_DAEMONSET, false}, {KP_RES_PDB, false},
    {KP_RES_PVC, false},       {KP_RES_PV, false},        {KP_RES_STORAGECLASS, false},
    {KP_RES_NAMESPACE, false}, {KP_RES_EC2NODECLASS, true},
};

/* ------------------------------------------------------------ the deadline */

typedef struct watchdog {
    kp_kube_cancel *fire; /* what the requests watch */
    kp_kube_cancel *done; /* wakes the watchdog when the read is over */
    int64_t ms;
    pthread_t thread;
    bool running;
} watchdog;

static void *watch(void *arg)
{
    watchdog *w = arg;
    if (!kp_kube_cancel_sleep(w->done, w->ms))
        kp_kube_cancel_fire(w->fire);
    return NULL;
}

static void watchdog_start(watchdog *w, int64_t ms)
{
    w->fire = kp_kube_cancel_new();
    w->done = kp_kube_cancel_new();
    w->ms = ms;
    w->running = ms > 0 && pthread_create(&w->thread, NULL, watch, w) == 0;
}

static void watchdog_stop(watchdog *w)
{
    kp_kube_cancel_fire(w->done);
    if (w->running)
        pthread_join(w->thread, NULL);
    kp_kube_cancel_free(w->fire);
    kp_kube_cancel_free(w->done);
}

/* ------------------------------------------------------------- one kind */

static void add_note(kp_sim_live_stats *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(kp_sim_live_stats *st, const char *fmt, ...)
{
    if (st->n_notes >= KP_SIM_LIVE_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->notes[st->n_notes++], sizeof(st->notes[0]), fmt, ap);
    va_end(ap);
}

/* Whether the object decodes as the planner will decode it. Namespaces are
 * read for their labels only. */
static bool decodes(const cJSON *obj, kp_arena *scratch)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
    if (cJSON_IsString(kind) && !strcmp(kind->valuestring, "Namespace")) {
        kp_object_meta meta;
        return kp_decode_meta(scratch, obj, &meta) == 0;
    }
    kp_object o;
    return kp_decode_object(scratch, obj, &o) == 0;
}

/* Items of a list lack apiVersion and kind; a file would have them. */
static void set_type(cJSON *item, const char *api_version, const char *kind)
{
    cJSON_DeleteItemFromObjectCaseSensitive(item, "apiVersion");
    cJSON_DeleteItemFromObjectCaseSensitive(item, "kind");
    cJSON_AddStringToObject(item, "apiVersion", api_version);
    cJSON_AddStringToObject(item, "kind", kind);
}

static int keep_items(cJSON *list, const kp_kube_resource *r, kp_doc_list *out, kp_sim_live_kind *k,
                      kp_sim_live_stats *st)
{
    const cJSON *av = cJSON_GetObjectItemCaseSensitive(list, "apiVersion");
    const char *api_version = cJSON_IsString(av) ? av->valuestring : r->api_version;
    cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items");
    char origin[64];
    snprintf(origin, sizeof(origin), "cluster %s", r->plural);
    kp_arena *scratch = kp_arena_new();
    int err = 0;
    for (long i = 0; cJSON_IsArray(items) && items->child && !err; i++) {
        cJSON *item = cJSON_DetachItemViaPointer(items, items->child);
        set_type(item, api_version, r->kind);
        kp_arena_mark mark = kp_arena_mark_get(scratch);
        if (!decodes(item, scratch)) {
            const char *ns = kp_kube_meta(item, "namespace"), *name = kp_kube_meta(item, "name");
            add_note(st, "left out %s %s%s%s: %s", r->kind, ns ? ns : "", ns ? "/" : "", name ? name : "?",
                     kp_error_last());
            k->skipped++;
            cJSON_Delete(item);
        } else if ((err = kp_doc_list_append(out, item, origin, 0, i)) == 0) {
            k->objects++;
        }
        kp_arena_rewind(scratch, mark);
    }
    kp_arena_free(scratch);
    return err;
}

static int list_error(int err, const kp_kube_resource *r, kp_kube_client *c, const watchdog *w)
{
    const char *server = kp_kube_client_server(c);
    if (kp_kube_cancel_fired(w->fire))
        return kp_error_set(KP_ETIMEOUT, "reading %s from %s: the whole read took longer than %lld ms", r->plural,
                            server, (long long)w->ms);
    if (err == KP_EFORBIDDEN || err == KP_EUNAUTHORIZED)
        return kp_error_wrap(err, "listing %s from %s (simulate needs list on what it reads: bind the "
                                  "ClusterRole karpenter-c-simulate-reader of deploy/simulate-reader)", r->plural, server);
    return kp_error_wrap(err, "listing %s from %s", r->plural, server);
}

static int read_kind(kp_kube_client *c, const kind_spec *spec, int page_size, const watchdog *w,
                     kp_doc_list *out, kp_sim_live_stats *st)
{
    const kp_kube_resource *r = kp_kube_resource_get(spec->res);
    kp_sim_live_kind *k = &st->kinds[st->n_kinds++];
    *k = (kp_sim_live_kind){r->plural, 0, 0, true};
    kp_kube_list_opts lo = KP_KUBE_LIST_OPTS_INIT;
    lo.limit = page_size;
    lo.cancel = w->fire;
    cJSON *list = NULL;
    int err = kp_kube_list(c, spec->res, &lo, &list);
    if (err == KP_ENOTFOUND && spec->optional) {
        k->served = false;
        add_note(st, "the server has no %s (%s CRD not installed): read as none", r->plural, r->group);
        return 0;
    }
    if (err < 0)
        return list_error(err, r, c, w);
    err = keep_items(list, r, out, k, st);
    cJSON_Delete(list);
    st->objects += k->objects;
    st->skipped += k->skipped;
    return err;
}

int kp_sim_live_read(kp_kube_client *client, const kp_sim_live_opts *opts, kp_doc_list *out,
                     kp_sim_live_stats *stats)
{
    static const kp_sim_live_opts defaults = KP_SIM_LIVE_OPTS_INIT;
    const kp_sim_live_opts *o = opts ? opts : &defaults;
    memset(stats, 0, sizeof(*stats));
    watchdog w;
    watchdog_start(&w, o->deadline_ms);
    int err = 0;
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]) && !err; i++) {
        if (kinds[i].res == KP_RES_EC2NODECLASS && !o->node_classes)
            continue;
        err = read_kind(client, &kinds[i], o->page_size, &w, out, stats);
    }
    watchdog_stop(&w);
    return err;
}
