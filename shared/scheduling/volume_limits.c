/* CSI attach limits (see volume_limits.h): driver names, and the solver's check. */
#include "scheduling/volume_limits.h"
#include "scheduling/solver_internal.h"

#include <string.h>

const char *kp_csi_driver_name(const char *provisioner)
{
    static const struct {
        const char *in_tree, *csi;
    } plugins[] = {
        {"kubernetes.io/aws-ebs", "ebs.csi.aws.com"},
        {"kubernetes.io/gce-pd", "pd.csi.storage.gke.io"},
        {"kubernetes.io/azure-disk", "disk.csi.azure.com"},
        {"kubernetes.io/azure-file", "file.csi.azure.com"},
        {"kubernetes.io/cinder", "cinder.csi.openstack.org"},
        {"kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com"},
        {"kubernetes.io/portworx-volume", "pxd.portworx.com"},
    };
    for (size_t i = 0; provisioner && i < sizeof(plugins) / sizeof(*plugins); i++)
        if (strcmp(provisioner, plugins[i].in_tree) == 0) return plugins[i].csi;
    return provisioner;
}

/* Add the claims of `p` attached by `driver` to `seen` (distinct). */
static void count_claims(const kp_spod *p, kp_sym driver, kp_sym *seen, uint32_t *n)
{
    for (uint32_t v = 0; v < p->n_csi_volumes; v++) {
        if (p->csi_volumes[v].driver != driver) continue;
        uint32_t k = 0;
        while (k < *n && seen[k] != p->csi_volumes[v].claim)
            k++;
        if (k == *n) seen[(*n)++] = p->csi_volumes[v].claim;
    }
}

static uint32_t pod_volumes(const kp_spod *p, kp_sym driver)
{
    uint32_t n = 0;
    for (uint32_t v = 0; v < p->n_csi_volumes; v++)
        n += p->csi_volumes[v].driver == driver;
    return n;
}

/* The claims of `driver` on the node (pods staying and pods planned there)
 * and the pod's own, counted once each, within the limit? */
static bool driver_fits(solver *s, const enode *e, const kp_spod *p, const kp_csi_limit *limit)
{
    uint32_t cap = pod_volumes(p, limit->driver);
    if (!cap) return true;
    for (uint32_t i = 0; i < e->n_bound; i++)
        cap += pod_volumes(&s->snap->pods[e->bound[i]], limit->driver);
    for (uint32_t i = 0; i < e->n_pods; i++)
        cap += pod_volumes(&s->snap->pods[e->pods[i]], limit->driver);
    kp_sym *seen = KP_ARENA_NEW(s->scratch, kp_sym, cap);
    uint32_t n = 0;
    for (uint32_t i = 0; i < e->n_bound; i++)
        if (s->ps_of_pod[e->bound[i]] < 0) /* a pod moving elsewhere takes its claims along */
            count_claims(&s->snap->pods[e->bound[i]], limit->driver, seen, &n);
    for (uint32_t i = 0; i < e->n_pods; i++)
        count_claims(&s->snap->pods[e->pods[i]], limit->driver, seen, &n);
    count_claims(p, limit->driver, seen, &n);
    return n <= (uint32_t)limit->count;
}

bool volumes_fit(solver *s, const enode *e, const kp_spod *p)
{
    const kp_snode *n = e->sn;
    if (!p->n_csi_volumes || !n->n_csi_limits) return true;
    kp_arena_mark m = kp_arena_mark_get(s->scratch);
    bool ok = true;
    for (uint32_t i = 0; i < n->n_csi_limits && ok; i++)
        ok = driver_fits(s, e, p, &n->csi_limits[i]);
    kp_arena_rewind(s->scratch, m);
    return ok;
}
