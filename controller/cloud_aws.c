/* Wiring the AWS provider into the controller, and its upkeep (see cloud_aws.h). */
#include "controller/cloud_aws.h"
#include "api/quantity.h"
#include "api/wellknown.h"
#include "base/error.h"
#include "base/log.h"
#include "cloud/aws/capacityreservation.h"
#include "cloud/aws/provider.h"
#include "controller/nodeclass_ctrl.h"
#include "kube/objutil.h"

#include <stdlib.h>
#include <string.h>

#define LOGGER "aws"
#define REFRESH_NS (12LL * 3600 * KP_NS_PER_SEC)
#define RETRY_NS (5LL * 60 * KP_NS_PER_SEC)
#define PROFILE_GC_NS (30LL * 60 * KP_NS_PER_SEC)
#define SSM_NS (30LL * 60 * KP_NS_PER_SEC)
#define EKS_NS (5LL * 60 * KP_NS_PER_SEC)

#define ANNOTATION_TAGGED "karpenter.k8s.aws/tagged"
#define ANNOTATION_CLUSTER_TAGGED "compatibility.karpenter.k8s.aws/cluster-name-tagged"

bool kp_cloud_is_aws(const kp_ctrl *c)
{
    return c->cloud && !strcmp(kp_cloud_name(c->cloud), "aws");
}

/* The interruption source: instance health always, with the SQS queue when
 * one is set. A directory of notices (tests) without a queue stays the
 * runtime's, and health checks are then off. */
static int interruption(kp_ctrl *c, kp_interruption_source **src)
{
    const kp_ctrl_opts *o = &c->opts;
    bool queue = o->interruption_queue && *o->interruption_queue;
    if (!queue && o->interruption_dir && *o->interruption_dir) return 0;
    int err = kp_aws_provider_health_source(c->cloud, src);
    return err < 0 && queue ? kp_error_wrap(err, "--interruption-queue %s", o->interruption_queue) : err;
}

/* EKS_CONTROL_PLANE: what nodes join comes from EKS before anything
 * launches; failing that is fatal at start-up, as in Karpenter. */
static int discover(kp_ctrl *c)
{
    if (!kp_aws_provider_eks_control_plane(c->cloud)) return 0;
    kp_arena *a = kp_arena_new();
    kp_aws_cluster_info info;
    int err = kp_aws_provider_discover(c->cloud, a, &info);
    if (err == 0)
        KP_LOG(KP_LOG_INFO, LOGGER, "discovered the cluster from EKS", "endpoint", info.endpoint,
               "service-cidr", info.service_cidr ? info.service_cidr : "", "version",
               info.kubernetes_version ? info.kubernetes_version : "");
    kp_arena_free(a);
    (void)kp_aws_provider_due(c->cloud, KP_AWS_TASK_EKS_DISCOVERY, EKS_NS); /* just done */
    return err < 0 ? kp_error_wrap(err, "EKS_CONTROL_PLANE") : 0;
}

void kp_cloud_aws_opts(const kp_ctrl_opts *o, kp_aws_provider_opts *out)
{
    kp_aws_provider_opts ao = KP_AWS_PROVIDER_OPTS_INIT;
    ao.region = o->aws_region, ao.cluster_name = o->cluster_name, ao.cluster_endpoint = o->cluster_endpoint;
    ao.cluster_ca_bundle = o->cluster_ca_bundle, ao.cluster_cidr = o->cluster_cidr;
    ao.kubernetes_version = o->kubernetes_version, ao.interruption_queue = o->interruption_queue;
    ao.endpoint_url = o->aws_endpoint_url, ao.vm_memory_overhead_percent = o->vm_memory_overhead_percent;
    ao.reserved_enis = o->reserved_enis, ao.isolated_vpc = o->isolated_vpc;
    ao.cluster_dns_ip = o->cluster_dns_ip;
    ao.disable_dry_run = o->disable_dry_run, ao.eks_control_plane = o->eks_control_plane;
    ao.ami_refresh_interval_ns = o->ami_refresh_ms * KP_NS_PER_MS;
    ao.subnet_refresh_interval_ns = o->subnet_refresh_ms * KP_NS_PER_MS;
    ao.reserved_capacity_disabled = !o->reserved_capacity;
    *out = ao;
}

int kp_cloud_aws_new(kp_ctrl *c, kp_interruption_source **src)
{
    const kp_ctrl_opts *o = &c->opts;
    kp_aws_provider_opts ao;
    kp_cloud_aws_opts(o, &ao);
    ao.lookup = kp_nodeclass_lookup, ao.lookup_ctx = c, ao.clock = c->clock;
    ao.metrics = c->metrics; /* the instance launch and termination failure counters */
    *src = NULL;
    if (!o->cluster_name || !*o->cluster_name)
        return kp_error_set(KP_EINVALID, "--cluster-name is required with --cloud-provider aws");
    int err = kp_aws_provider_new(&ao, &c->cloud);
    if (err < 0) return kp_error_wrap(err, "the AWS provider");
    if ((err = discover(c)) < 0) return err;
    if ((err = kp_aws_provider_refresh(c->cloud)) < 0)
        KP_LOG(KP_LOG_ERROR, LOGGER, "instance types or prices not fetched yet; retrying", "error", kp_error_last());
    return interruption(c, src);
}

/* ----------------------------------------------------------- whose claims */

/* A NodeClaim of this provider: an EC2NodeClass reference and, once
 * launched, an aws:/// provider ID. Other claims are never touched. */
static bool ours(const cJSON *claim)
{
    const char *kind = kp_obj_str(claim, "spec.nodeClassRef.kind");
    const char *group = kp_obj_str(claim, "spec.nodeClassRef.group");
    const char *pid = kp_obj_str(claim, "status.providerID");
    return (!kind || !strcmp(kind, "EC2NodeClass")) && (!group || !strcmp(group, "karpenter.k8s.aws")) &&
           (!pid || !*pid || !strncmp(pid, KP_AWS_PROVIDER_ID_PREFIX, strlen(KP_AWS_PROVIDER_ID_PREFIX)));
}

typedef struct claims {
    cJSON **items;
    size_t n, cap;
} claims;

static void collect(void *ctx, const char *key, const cJSON *claim)
{
    (void)key;
    claims *cs = ctx;
    if (!ours(claim) || kp_obj_str(claim, "metadata.deletionTimestamp")) return;
    if (cs->n == cs->cap) {
        cs->cap = cs->cap ? cs->cap * 2 : 16;
        cs->items = realloc(cs->items, cs->cap * sizeof(*cs->items));
        if (!cs->items) abort();
    }
    cs->items[cs->n++] = cJSON_Duplicate(claim, 1);
}

static void claims_free(claims *cs)
{
    for (size_t i = 0; i < cs->n; i++)
        cJSON_Delete(cs->items[i]);
    free(cs->items);
}

/* ----------------------------------------------------- nodeclaim.tagging */

/* Once a claim's node registered, its instance is named after the node. */
static int tag_registered(kp_ctrl *c, cJSON *claim)
{
    const char *node = kp_obj_str(claim, "status.nodeName");
    const char *tagged = kp_obj_annotation(claim, ANNOTATION_TAGGED);
    const char *cluster = kp_obj_annotation(claim, ANNOTATION_CLUSTER_TAGGED);
    if (!node || !*node || (tagged && !strcmp(tagged, "true") && cluster && !strcmp(cluster, "true")))
        return 0;
    int err = kp_aws_provider_tag_instance(c->cloud, kp_obj_str(claim, "status.providerID"), node,
                                           kp_obj_str(claim, "metadata.name"));
    if (err == KP_ENOTFOUND || err == KP_EINVALID) return 0; /* gone, or not launched yet */
    if (err < 0) return err;
    cJSON *want = cJSON_Duplicate(claim, 1);
    kp_obj_set_annotation(want, ANNOTATION_TAGGED, "true");
    kp_obj_set_annotation(want, ANNOTATION_CLUSTER_TAGGED, "true");
    err = kp_obj_patch(c->kube, KP_RES_NODECLAIM, claim, want, 0);
    cJSON_Delete(want);
    return err == KP_KUBE_UNCHANGED || err == KP_ENOTFOUND ? 0 : err;
}

/* -------------------------------------------- capacityreservation.expiration */

/* Claims in capacity blocks about to end go ahead of EC2's reclaim. */
static int expire_blocks(kp_ctrl *c, claims *cs)
{
    const char **ids = calloc(cs->n + 1, sizeof(*ids));
    bool *expiring = calloc(cs->n + 1, sizeof(*expiring));
    if (!ids || !expiring) abort();
    size_t n = 0;
    for (size_t i = 0; i < cs->n; i++) {
        const char *id = kp_obj_label(cs->items[i], KP_AWS_LABEL_CR_ID);
        if (id) ids[n++] = id;
    }
    int err = n ? kp_aws_provider_expiring_reservations(c->cloud, ids, n, expiring) : 0;
    for (size_t i = 0, k = 0; err == 0 && i < cs->n; i++) {
        if (!kp_obj_label(cs->items[i], KP_AWS_LABEL_CR_ID) || !expiring[k++]) continue;
        const char *name = kp_obj_str(cs->items[i], "metadata.name");
        int e = kp_kube_delete(c->kube, KP_RES_NODECLAIM, NULL, name, NULL);
        if (e == 0)
            KP_LOG(KP_LOG_INFO, LOGGER, "initiating delete for capacity block expiration", "NodeClaim", name,
                   "capacity-reservation-id", kp_obj_label(cs->items[i], KP_AWS_LABEL_CR_ID));
        else if (e != KP_ENOTFOUND)
            err = e;
    }
    free(ids);
    free(expiring);
    return err;
}

/* ------------------------------------------ capacityreservation.capacitytype */

/* A reserved object whose instance is on-demand now (its reservation ended):
 * the labels follow. */
static int demote(kp_ctrl *c, enum kp_kube_res res, const cJSON *obj)
{
    static const char *const gone[] = {KP_AWS_LABEL_CR_ID, KP_AWS_LABEL_CR_TYPE, KP_AWS_LABEL_CR_INTERRUPTIBLE};
    const char *ct = kp_obj_label(obj, KP_LABEL_CAPACITY_TYPE);
    if (!ct || strcmp(ct, "reserved") != 0) return 0;
    cJSON *want = cJSON_Duplicate(obj, 1);
    kp_obj_set_label(want, KP_LABEL_CAPACITY_TYPE, KP_CAPACITY_ON_DEMAND);
    cJSON *labels = kp_obj_ensure(want, "metadata.labels");
    for (size_t i = 0; i < 3; i++)
        cJSON_DeleteItemFromObjectCaseSensitive(labels, gone[i]);
    int err = kp_obj_patch(c->kube, res, obj, want, 0);
    cJSON_Delete(want);
    return err == KP_KUBE_UNCHANGED || err == KP_ENOTFOUND ? 0 : err;
}

static int sync_capacity_type(kp_ctrl *c, claims *cs)
{
    kp_arena *a = kp_arena_new();
    kp_cloud_instance *in = NULL;
    uint32_t n = 0;
    int err = c->cloud->ops->list(c->cloud, a, &in, &n);
    for (size_t i = 0; err == 0 && i < cs->n; i++) {
        const char *pid = kp_obj_str(cs->items[i], "status.providerID");
        for (uint32_t j = 0; pid && j < n && err == 0; j++) {
            if (strcmp(in[j].provider_id, pid) != 0 || strcmp(in[j].capacity_type, "on-demand") != 0) continue;
            err = demote(c, KP_RES_NODECLAIM, cs->items[i]);
            const char *node = kp_obj_str(cs->items[i], "status.nodeName");
            cJSON *nobj = node && err == 0 ? kp_ctrl_get(c, KP_CK_NODE, node) : NULL;
            const char *registered = nobj ? kp_obj_label(nobj, "karpenter.sh/registered") : NULL;
            if (registered && !strcmp(registered, "true")) err = demote(c, KP_RES_NODE, nobj);
            cJSON_Delete(nobj);
        }
    }
    kp_arena_free(a);
    return err;
}

/* ------------------------------------------ providers.instancetype.capacity */

/* A registered node's memory becomes what its type has (under its AMIs). */
static void observe_capacity(kp_ctrl *c, const cJSON *claim)
{
    const char *node = kp_obj_str(claim, "status.nodeName");
    cJSON *nobj = node ? kp_ctrl_get(c, KP_CK_NODE, node) : NULL;
    const char *mem = nobj ? kp_obj_str(nobj, "status.capacity.memory") : NULL;
    const char *type = kp_obj_label(claim, "node.kubernetes.io/instance-type");
    const char *cls = kp_obj_str(claim, "spec.nodeClassRef.name");
    kp_quantity q;
    if (mem && type && cls && kp_quantity_parse(mem, &q) == 0)
        (void)kp_aws_provider_observe_node(c->cloud, cls, type, kp_quantity_value(q));
    kp_error_clear();
    cJSON_Delete(nobj);
}

/* -------------------------------------- instanceprofile.garbagecollection */

static void collect_uid(void *ctx, const char *key, const cJSON *nc)
{
    (void)key;
    claims *uids = ctx; /* reused as a list of objects */
    if (kp_obj_str(nc, "metadata.uid")) collect(uids, key, nc);
}

static int gc_profiles(kp_ctrl *c)
{
    if (c->opts.isolated_vpc || !c->informers[KP_CK_NODECLASS]) return 0; /* no IAM from an isolated VPC */
    /* an unsynced cache would make every class look gone */
    if (!kp_informer_synced(c->informers[KP_CK_NODECLASS])) return KP_ERETRY;
    claims classes = {0};
    kp_informer_foreach(c->informers[KP_CK_NODECLASS], collect_uid, &classes);
    const char **uids = calloc(classes.n + 1, sizeof(*uids));
    if (!uids) abort();
    for (size_t i = 0; i < classes.n; i++)
        uids[i] = kp_obj_str(classes.items[i], "metadata.uid");
    int n = kp_aws_provider_gc_instance_profiles(c->cloud, uids, classes.n);
    if (n > 0) KP_LOG(KP_LOG_INFO, LOGGER, "deleted instance profiles of node classes that are gone");
    free(uids);
    claims_free(&classes);
    return n < 0 ? n : 0;
}

/* ------------------------------------------------------------------- loop */

/* The slower AWS-side controllers, each on its own period. */
static int periodic(kp_ctrl *c)
{
    int err = 0, e;
    if (kp_aws_provider_due(c->cloud, KP_AWS_TASK_INSTANCE_PROFILE_GC, PROFILE_GC_NS) && (e = gc_profiles(c)) < 0)
        err = kp_error_set(e, "instance profile garbage collection: %s",
                           e == KP_ERETRY ? "the EC2NodeClass cache is not synced yet" : kp_error_last());
    if (kp_aws_provider_due(c->cloud, KP_AWS_TASK_SSM_INVALIDATION, SSM_NS) &&
        (e = kp_aws_provider_invalidate_ssm(c->cloud)) < 0 && err == 0)
        err = kp_error_wrap(e, "SSM invalidation");
    kp_arena *a = kp_arena_new();
    kp_aws_cluster_info info;
    if (kp_aws_provider_eks_control_plane(c->cloud) && kp_aws_provider_due(c->cloud, KP_AWS_TASK_EKS_DISCOVERY, EKS_NS) &&
        (e = kp_aws_provider_discover(c->cloud, a, &info)) < 0 && err == 0)
        err = e;
    kp_arena_free(a);
    return err;
}

/* The per-claim controllers, every minute, over this provider's live claims. */
static int per_claim(kp_ctrl *c)
{
    claims cs = {0};
    if (c->informers[KP_CK_NODECLAIM]) kp_informer_foreach(c->informers[KP_CK_NODECLAIM], collect, &cs);
    int err = 0, e;
    for (size_t i = 0; i < cs.n; i++) {
        if ((e = tag_registered(c, cs.items[i])) < 0 && err == 0) err = kp_error_wrap(e, "tagging instances");
        observe_capacity(c, cs.items[i]);
    }
    if ((e = expire_blocks(c, &cs)) < 0 && err == 0) err = kp_error_wrap(e, "capacity block expiration");
    if ((e = sync_capacity_type(c, &cs)) < 0 && err == 0) err = kp_error_wrap(e, "capacity type sync");
    claims_free(&cs);
    return err;
}

/* state: when the next fetch of types and prices is due (ns; 0: at once). A
 * failed fetch is tried again after RETRY_NS, not every minute: a region
 * without the Price List API would otherwise re-read every instance type
 * each time. */
int kp_cloud_aws_upkeep(kp_ctrl *c, void *state)
{
    int64_t *due = state;
    int64_t now = c->clock->now(c->clock);
    int err = 0;
    if (now >= *due) {
        err = kp_aws_provider_refresh(c->cloud);
        *due = now + (err < 0 ? RETRY_NS : REFRESH_NS);
    }
    int swept = kp_aws_provider_maintain(c->cloud);
    if (swept > 0) KP_LOG(KP_LOG_INFO, LOGGER, "deleted unused launch templates");
    int claims_err = per_claim(c), periodic_err = periodic(c);
    if (err == 0) err = swept < 0 ? swept : claims_err < 0 ? claims_err : periodic_err;
    return err < 0 ? err : 0;
}
