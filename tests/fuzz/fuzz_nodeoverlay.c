/*
 * libFuzzer target for NodeOverlays: the input is a YAML or JSON stream of
 * documents; every NodeOverlay in it is decoded and validated
 * (kp_nodeoverlay_from_json), every NodePool decoded, and all of them
 * evaluated together against a small catalog and applied (cloud/overlay.h).
 * Anything must be refused with a message or evaluated; never a crash, a leak
 * or a price below zero.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "api/nodeoverlay.h"
#include "cloud/overlay.h"
#include "format/yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_OBJECTS = 32 };

typedef struct input {
    kp_arena *arena;
    const kp_nodeoverlay *overlays[MAX_OBJECTS];
    size_t n_overlays;
    kp_overlay_pool pools[MAX_OBJECTS];
    size_t n_pools;
    const kp_catalog *catalog;
} input;

static int take(void *ctx, cJSON *root, const kp_yaml_doc_info *info)
{
    input *in = ctx;
    (void)info;
    kp_object o;
    if (kp_decode_object(in->arena, root, &o) == 0) {
        if (o.kind == KP_KIND_NODEOVERLAY && in->n_overlays < MAX_OBJECTS) {
            kp_nodeoverlay *ov = kp_arena_memdup(in->arena, &o.u.nodeoverlay, sizeof(*ov));
            if (kp_nodeoverlay_from_json(in->arena, root, ov) == 0) in->overlays[in->n_overlays++] = ov;
        } else if (o.kind == KP_KIND_NODEPOOL && in->n_pools < MAX_OBJECTS) {
            kp_nodepool *np = kp_arena_memdup(in->arena, &o.u.nodepool, sizeof(*np));
            const kp_catalog *cat = in->n_pools % 3 == 2 ? NULL : in->catalog; /* some await evaluation */
            in->pools[in->n_pools++] = (kp_overlay_pool){np, cat};
        }
    }
    cJSON_Delete(root);
    return 0;
}

static void check(const kp_overlay_store *store, const input *in)
{
    for (size_t i = 0; i < in->n_pools; i++) {
        kp_catalog *c = NULL;
        if (kp_overlay_store_apply(store, in->pools[i].pool->meta.name, in->catalog, &c) < 0 || !c) continue;
        for (size_t t = 0; t < c->count; t++)
            for (uint32_t k = 0; k < c->types[t].n_offerings; k++)
                if (!(c->types[t].offerings[k].price >= 0)) abort();
        kp_catalog_free(c);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static kp_catalog *catalog;
    if (!catalog && kp_catalog_synthetic(8, &catalog) < 0) return 0;
    static const kp_yaml_limits limits = {1 << 20, 64, 20000, 2000};
    input in = {kp_arena_new(), {0}, 0, {{0}}, 0, catalog};
    kp_yaml_parse_stream((const char *)data, size, "fuzz", &limits, take, &in);
    kp_overlay_store *store = NULL;
    if (kp_overlay_evaluate(in.overlays, in.n_overlays, in.pools, in.n_pools, &store) == 0) {
        const kp_overlay_verdict *v;
        char line[512];
        for (size_t i = 0, n = kp_overlay_store_verdicts(store, &v); i < n; i++)
            kp_overlay_verdict_text(&v[i], line, sizeof(line));
        check(store, &in);
        kp_overlay_store_unref(store);
    }
    kp_arena_free(in.arena);
    return 0;
}
