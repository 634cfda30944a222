/* NodeOverlays in a plan made from manifests (see overlay_plan.h). */
#include "scheduling/overlay_plan.h"

#include "base/xalloc.h"

#include <stdlib.h>

int kp_overlay_plan(kp_cluster *cluster, const kp_nodeoverlay *const *overlays, size_t n_overlays,
                    kp_overlay_catalogs **out)
{
    *out = NULL;
    if (!n_overlays) return 0;
    size_t n = cluster->n_nodepools;
    kp_overlay_pool *pools = kp_xmalloc((n ? n : 1) * sizeof(*pools));
    for (size_t i = 0; i < n; i++)
        pools[i] = (kp_overlay_pool){cluster->nodepools[i], cluster->catalog};
    kp_overlay_store *store = NULL;
    int err = kp_overlay_evaluate(overlays, n_overlays, pools, n, &store);
    free(pools);
    if (err < 0) return err;
    *out = kp_overlay_catalogs_new(store, cluster->catalog);
    kp_overlay_store_unref(store);
    cluster->catalog_for = kp_overlay_catalogs_cluster_fn;
    cluster->catalog_ctx = *out;
    return 0;
}
