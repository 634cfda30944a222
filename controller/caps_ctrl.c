/* The caps' headroom gauge (see caps_ctrl.h). */
#include "controller/caps_ctrl.h"
#include "api/caps.h"
#include "base/xalloc.h"
#include "controller/metrics_ctrl.h"
#include "kube/objutil.h"
#include "controller/view.h"
#include "scheduling/caps.h"

#include <stdlib.h>

struct kp_caps_ctrl {
    kp_metric *headroom; /* cap, nodepool */
};

int kp_caps_ctrl_new(kp_ctrl *c, kp_caps_ctrl **out)
{
    kp_caps_ctrl *cc = kp_xcalloc(1, sizeof(*cc));
    cc->headroom = c->m ? c->m->caps_headroom : NULL; /* registered with the others, from start-up */
    *out = cc;
    return 0;
}

kp_caps_ctrl *kp_caps_ctrl_free(kp_caps_ctrl *cc)
{
    free(cc);
    return NULL;
}

static void pool_annotated(void *ctx, const char *key, const cJSON *obj)
{
    (void)key;
    *(bool *)ctx |= kp_obj_annotation(obj, KP_ANNOTATION_MAX_HOURLY_COST) != NULL;
}

static bool in_force(kp_ctrl *c)
{
    bool any = kp_caps_any(&c->opts.caps);
    if (!any && c->informers[KP_CK_NODEPOOL])
        kp_informer_foreach(c->informers[KP_CK_NODEPOOL], pool_annotated, &any);
    return any;
}

static void set(kp_caps_ctrl *cc, const char *cap, const char *pool, double value)
{
    kp_ctrl_set(cc->headroom, (const char *const[]){cap, pool}, value);
}

static void cluster_wide(kp_caps_ctrl *cc, const kp_caps *caps, const kp_caps_usage *u)
{
    if (caps->max_nodes >= 0)
        set(cc, "max-nodes-total", "", (double)(caps->max_nodes - u->nodes));
    if (caps->has_cores)
        set(cc, "cores-total", "", (double)(caps->cores - u->cores) / 1000.0);
    if (caps->has_memory)
        set(cc, "memory-total", "", (double)(caps->memory - u->memory) / 1000.0);
    if (caps->max_hourly_cost >= 0)
        set(cc, "max-hourly-cost", "", caps->max_hourly_cost - u->hourly_cost);
}

int kp_caps_headroom_pass(kp_ctrl *c, void *state)
{
    kp_caps_ctrl *cc = state;
    if (!cc->headroom)
        return 0;
    kp_metric_reset(cc->headroom);
    if (!in_force(c) || !c->cloud)
        return 0;
    kp_ctrl_view *view = NULL;
    int err = kp_ctrl_view_build_cloud(c, &view);
    if (err < 0)
        return err;
    kp_caps_usage u;
    double *pool_cost = kp_xcalloc(view->snap->n_templates + 1, sizeof(double));
    kp_caps_measure(view->snap, &u, pool_cost);
    cluster_wide(cc, &c->opts.caps, &u);
    for (uint32_t t = 0; t < view->snap->n_templates; t++) {
        const kp_nodepool *np = view->snap->templates[t].src;
        double cap = -1;
        if (np && kp_caps_nodepool_cost(np, &cap) == 0 && cap >= 0)
            set(cc, "max-hourly-cost", np->meta.name, cap - pool_cost[t]);
    }
    free(pool_cost);
    kp_ctrl_view_free(view);
    return 0;
}
