/* CSI attach limits (see volume_limits.h): driver names, and the solver's checks. */
#include "scheduling/volume_limits.h"
#include "cloud/aws_ebs_limits.h"
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

/* The distinct claims of `driver` the pods of NodeClaim `c` and `p` mount. */
static uint32_t claim_volumes(solver *s, const claim *c, const kp_spod *p, kp_sym driver)
{
    uint32_t cap = pod_volumes(p, driver);
    if (!cap) return 0;
    for (uint32_t i = 0; i < c->n_pods; i++)
        cap += pod_volumes(&s->snap->pods[c->pods[i]], driver);
    kp_arena_mark m = kp_arena_mark_get(s->scratch);
    kp_sym *seen = KP_ARENA_NEW(s->scratch, kp_sym, cap);
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->n_pods; i++)
        count_claims(&s->snap->pods[c->pods[i]], driver, seen, &n);
    count_claims(p, driver, seen, &n);
    kp_arena_rewind(s->scratch, m);
    return n;
}

/* A new node has no CSINode yet: its instance type's estimate stands in
 * for the EBS driver's count (kp_instance_type.ebs_volume_limit; 0 means
 * unknown, so not limited). Other drivers' counts are not known before the
 * node registers. */
uint32_t volumes_keep_types(solver *s, const claim *c, const kp_spod *p, uint32_t *its, uint32_t n,
                            uint32_t *need)
{
    kp_sym ebs = p->n_csi_volumes ? kp_sym_lookup(s->symtab, KP_EBS_CSI_DRIVER) : KP_SYM_NONE;
    *need = ebs != KP_SYM_NONE ? claim_volumes(s, c, p, ebs) : 0;
    if (!*need) return n;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; i++) {
        const kp_instance_type *src = s->snap->its[its[i]].src;
        int32_t limit = src ? src->ebs_volume_limit : 0;
        if (limit <= 0 || *need <= (uint32_t)limit) its[kept++] = its[i];
    }
    return kept;
}
