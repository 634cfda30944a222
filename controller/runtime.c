/* Assembly of the controller process (see runtime.h). */
#include "controller/runtime.h"
#include "base/error.h"
#include "base/log.h"
#include "base/version.h"
#include "base/xalloc.h"
#include "cloud/kwok/kwok.h"
#include "cloud/kwok/kwok_kubelet.h"
#include "cloud/aws/interruption.h"
#include "cloud/interruption_dir.h"
#include "controller/client_metrics.h"
#include "controller/cloud_aws.h"
#include "controller/controllers.h"
#include "controller/discovery.h"
#include "controller/eventq.h"
#include "controller/http.h"
#include "controller/lifecycle.h"
#include "controller/memory.h"
#include "controller/metrics_ctrl.h"
#include "controller/nodeoverlay_ctrl.h"
#include "controller/nodepool_ctrl.h"
#include "controller/ownership.h"
#include "controller/reconcile_metrics.h"
#include "controller/state_metrics.h"
#include "kube/config.h"
#include "kube/leader.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOGGER "controller"
#define SYNC_TIMEOUT_MS 60000
/* How often free heap pages go back to the system (memory.h). */
#define TRIM_PERIOD_MS 10000

struct kp_runtime {
    kp_ctrl c;
    kp_kube_config *config;
    kp_cluster_facts facts; /* discovered at start-up; opts point into it */
    kp_kube_client *event_client;
    kp_kube_client *kubelet_client; /* the kwok kubelet's heartbeats must not starve the controllers */
    kp_catalog *catalog;
    kp_kwok_kubelet *kubelet;
    kp_controllers *controllers;
    kp_leader_elector *elector;
    kp_ctrl_http *metrics_http, *health_http;
    kp_ctrl_metrics metrics;
    kp_memory_trimmer *trimmer;
    enum kp_kube_res class_res; /* the node class's resource */
    char identity[300];
    pthread_mutex_t mu;
    atomic_bool leading, failed, synced;
};

static int clients(kp_runtime *rt)
{
    const kp_ctrl_opts *o = &rt->c.opts;
    int err = kp_kube_config_auto(&rt->config, o->kubeconfig, NULL);
    if (err < 0)
        return kp_error_wrap(err, "loading the Kubernetes configuration");
    kp_kube_client_opts co = KP_KUBE_CLIENT_OPTS_INIT;
    co.qps = o->kube_qps, co.burst = o->kube_burst, co.clock = rt->c.clock;
    co.observe = kp_client_metrics_observe, co.observe_ctx = &rt->metrics; /* client_go_request_* */
    if ((err = kp_kube_client_new(&rt->c.kube, rt->config, &co)) < 0)
        return err;
    /* Events have their own client and budget, as client-go's broadcaster. */
    co.qps = 25, co.burst = 50;
    if ((err = kp_kube_client_new(&rt->event_client, rt->config, &co)) < 0)
        return err;
    rt->c.events = kp_eventq_start(rt->event_client, "karpenter", 4096);
    return 0;
}

static int informers(kp_runtime *rt)
{
    kp_ctrl *c = &rt->c;
    for (int k = 0; k < KP_CK_COUNT; k++)
        if (kp_ctrl_kind_res(k) != KP_RES_COUNT && (k != KP_CK_CAPACITYBUFFER || c->opts.capacity_buffer) &&
            (k != KP_CK_NODEOVERLAY || c->opts.node_overlay))
            c->informers[k] = kp_informer_new(c->kube, kp_ctrl_kind_res(k), NULL);
    int err = kp_informer_add_index(c->informers[KP_CK_POD], KP_INDEX_POD_NODE, kp_informer_index_pod_node);
    if (!err)
        err = kp_informer_add_index(c->informers[KP_CK_NODE], KP_INDEX_PROVIDER_ID, kp_index_node_provider_id);
    if (!err)
        err = kp_informer_add_index(c->informers[KP_CK_NODE], KP_INDEX_NODEPOOL, kp_index_nodepool_label);
    if (!err)
        err = kp_informer_add_index(c->informers[KP_CK_NODECLAIM], KP_INDEX_PROVIDER_ID, kp_index_claim_provider_id);
    if (!err)
        err = kp_informer_add_index(c->informers[KP_CK_NODECLAIM], KP_INDEX_NODEPOOL, kp_index_nodepool_label);
    return err;
}

static int cloud(kp_runtime *rt)
{
    kp_ctrl *c = &rt->c;
    if (!c->opts.cloud_provider)
        return kp_error_set(KP_EINVALID, "no cloud provider: set --cloud-provider to aws or kwok");
    if (!strcmp(c->opts.cloud_provider, "aws"))
        return kp_cloud_aws_new(c, &c->interruption);
    if (strcmp(c->opts.cloud_provider, "kwok") != 0)
        return kp_error_set(KP_EINVALID, "--cloud-provider %s is not available in this build", c->opts.cloud_provider);
    int err = kp_catalog_open(c->opts.instance_types, &rt->catalog);
    if (err < 0)
        return kp_error_wrap(err, "--instance-types %s", c->opts.instance_types);
    kp_kwok_opts ko = KP_KWOK_OPTS_INIT;
    ko.catalog = rt->catalog, ko.clock = c->clock;
    if (c->overlays) /* launch what the scheduler priced cheapest */
        ko.overlaid = kp_nodeoverlay_claim_catalog, ko.overlaid_ctx = c->overlays;
    if ((err = kp_kwok_provider_new(c->kube, &ko, &c->cloud)) < 0)
        return err;
    kp_kube_client_opts co = KP_KUBE_CLIENT_OPTS_INIT;
    co.qps = 50, co.burst = 100, co.clock = c->clock;
    if ((err = kp_kube_client_new(&rt->kubelet_client, rt->config, &co)) < 0)
        return err;
    kp_kwok_kubelet_opts kk = KP_KWOK_KUBELET_OPTS_INIT;
    kk.clock = c->clock, kk.finish_immediately = c->opts.kwok_finish_immediately;
    return kp_kwok_kubelet_new(rt->kubelet_client, c->informers[KP_CK_NODE], c->informers[KP_CK_POD], &kk, &rt->kubelet);
}

/* What the API server and the configuration tell (discovery.h); explicit
 * settings win. */
static int discover(kp_runtime *rt)
{
    kp_ctrl_opts *o = &rt->c.opts;
    kp_cluster_facts *f = &rt->facts;
    int err = kp_cluster_discover(rt->c.kube, rt->config, f);
    if (err < 0)
        return err;
    if (o->kubernetes_min_version && *o->kubernetes_min_version) {
        int older = kp_kube_version_compare(f->git_version, o->kubernetes_min_version, &err) < 0;
        if (err < 0)
            return kp_error_wrap(err, "KUBERNETES_MIN_VERSION");
        if (older)
            return kp_error_set(KP_EINVALID, "the API server is %s, older than KUBERNETES_MIN_VERSION %s",
                                f->git_version, o->kubernetes_min_version);
    }
    if (!o->kubernetes_version || !*o->kubernetes_version)
        o->kubernetes_version = f->version;
    if (!o->cluster_ca_bundle || !*o->cluster_ca_bundle)
        o->cluster_ca_bundle = f->ca_bundle;
    o->cluster_dns_ip = f->dns_ip[0] ? f->dns_ip : NULL;
    bool aws = !strcmp(o->cloud_provider, "aws");
    if (aws && (!o->cluster_endpoint || !*o->cluster_endpoint)) {
        o->cluster_endpoint = f->endpoint;
        if (f->in_cluster)
            KP_LOG(KP_LOG_WARN, LOGGER, "nodes will join the in-cluster Service address of the API server; set "
                   "CLUSTER_ENDPOINT if they cannot reach it before kube-proxy runs", "endpoint", f->endpoint);
    }
    KP_LOG(KP_LOG_INFO, LOGGER, "discovered the cluster", "kubernetesVersion", f->git_version, "kubeDNS",
           f->dns_ip[0] ? f->dns_ip : "<none>", "endpoint", f->endpoint ? f->endpoint : "");
    return 0;
}

/* The cache of the node class the provider serves (EC2NodeClass, KWOKNodeClass). */
static int node_class_informer(kp_runtime *rt)
{
    kp_ctrl *c = &rt->c;
    enum kp_kube_res res = kp_kube_resource_find(c->cloud->ops->node_class_kind);
    if (res == KP_RES_COUNT)
        return kp_error_set(KP_EINVALID, "the %s provider's node class %s has no known resource",
                            kp_cloud_name(c->cloud), c->cloud->ops->node_class_kind);
    c->informers[KP_CK_NODECLASS] = kp_informer_new(c->kube, res, NULL);
    rt->class_res = res;
    return 0;
}

static const char *informer_plural(const kp_runtime *rt, int kind)
{
    return kp_kube_resource_get(kind == KP_CK_NODECLASS ? rt->class_res : kp_ctrl_kind_res(kind))->plural;
}

/* Notices come from a directory (kwok, tests; EventBridge JSON as on AWS's
 * queue) or, with the AWS provider, from its SQS queue. */
static int interruption(kp_runtime *rt)
{
    const kp_ctrl_opts *o = &rt->c.opts;
    if (rt->c.interruption)
        return 0; /* the AWS provider's queue */
    if (o->interruption_dir && *o->interruption_dir)
        return kp_interruption_dir_new(o->interruption_dir, kp_aws_interruption_parse, &rt->c.interruption);
    if (o->interruption_queue && *o->interruption_queue)
        return kp_error_set(KP_EINVALID, "--interruption-queue needs --cloud-provider aws");
    return 0;
}

int kp_runtime_new(const kp_ctrl_opts *opts, kp_runtime **out)
{
    kp_memory_tune(); /* before the first thread: it bounds the heaps they get */
    kp_runtime *rt = kp_xcalloc(1, sizeof(*rt));
    pthread_mutex_init(&rt->mu, NULL);
    rt->c.opts = *opts;
    rt->c.clock = kp_clock_system();
    rt->c.stop = kp_kube_cancel_new();
    rt->c.metrics = kp_metrics_new();
    rt->c.m = &rt->metrics;
    pthread_mutex_init(&rt->c.foreign_mu, NULL);
    pthread_mutex_init(&rt->c.launch_mu, NULL);
    pthread_mutex_init(&rt->c.reghealth_mu, NULL);
    int err = kp_ctrl_metrics_init(&rt->metrics, rt->c.metrics);
    if (!err)
        kp_ctrl_set(rt->metrics.build_info,
                    (const char *const[]){kp_version(), kp_compiler(), kp_arch(), kp_commit()}, 1);
    if (!err)
        err = clients(rt);
    if (!err)
        err = discover(rt);
    if (!err)
        err = informers(rt);
    if (!err && rt->c.opts.node_overlay)
        rt->c.overlays = kp_overlay_state_new();
    if (!err)
        err = cloud(rt);
    if (!err)
        err = node_class_informer(rt);
    if (!err)
        err = kp_ctrl_metrics_init_status(&rt->metrics, rt->c.metrics, rt->c.cloud->ops->node_class_group,
                                          rt->c.cloud->ops->node_class_kind);
    if (!err)
        err = kp_state_metrics_watch(&rt->c); /* before the informers start */
    if (!err)
        err = interruption(rt);
    if (err < 0) {
        kp_runtime_free(rt);
        return err;
    }
    rt->controllers = kp_controllers_new(&rt->c);
    *out = rt;
    return 0;
}

/* ------------------------------------------------------------- leadership */

static void lead(kp_runtime *rt)
{
    pthread_mutex_lock(&rt->mu);
    /* The kwok kubelet stands in for machines the leader launched: one
     * replica plays it, or two would race on every heartbeat. */
    if (!atomic_load(&rt->leading) && kp_controllers_start(rt->controllers) == 0 &&
        (!rt->kubelet || kp_kwok_kubelet_start(rt->kubelet) == 0)) {
        atomic_store(&rt->leading, true);
        kp_ctrl_metrics_lead(&rt->metrics, rt->c.opts.lease_name, true);
        KP_LOG(KP_LOG_INFO, LOGGER, "leading: controllers started", "identity", rt->identity);
    }
    pthread_mutex_unlock(&rt->mu);
}

static void on_started(void *ctx)
{
    lead(ctx);
}

static void on_stopped(void *ctx)
{
    kp_runtime *rt = ctx;
    if (atomic_load(&rt->leading)) {
        kp_ctrl_metrics_lead(&rt->metrics, rt->c.opts.lease_name, false);
        KP_LOG(KP_LOG_ERROR, LOGGER, "lost the leader lease", "identity", rt->identity);
        atomic_store(&rt->failed, true);
    }
}

static void on_new_leader(void *ctx, const char *identity)
{
    kp_runtime *rt = ctx;
    if (identity && strcmp(identity, rt->identity) != 0)
        KP_LOG(KP_LOG_INFO, LOGGER, "another replica leads", "leader", identity);
}

static int elect(kp_runtime *rt)
{
    const kp_ctrl_opts *o = &rt->c.opts;
    if (o->identity && *o->identity) {
        snprintf(rt->identity, sizeof(rt->identity), "%s", o->identity);
    } else {
        char host[256] = "controller";
        gethostname(host, sizeof(host) - 1);
        snprintf(rt->identity, sizeof(rt->identity), "%s_%ld", host, (long)getpid());
    }
    kp_ctrl_metrics_lead(&rt->metrics, o->lease_name, false); /* 0 until the lease is ours */
    if (!o->leader_elect) {
        lead(rt);
        return 0;
    }
    kp_leader_opts lo = KP_LEADER_OPTS_INIT;
    lo.namespace = o->lease_namespace, lo.name = o->lease_name, lo.identity = rt->identity;
    lo.callbacks = (kp_leader_callbacks){on_started, on_stopped, on_new_leader, rt};
    lo.clock = rt->c.clock;
    lo.release_on_stop = true; /* as Karpenter: a clean stop hands over at once */
    int err = kp_leader_elector_new(&rt->elector, rt->c.kube, &lo);
    return err < 0 ? err : kp_leader_elector_start(rt->elector);
}

/* --------------------------------------------------------------- starting */

static bool ready(void *ctx)
{
    return atomic_load(&((kp_runtime *)ctx)->synced);
}

/* Wait for one cache, in slices, so a signal ends the wait at once. */
static int wait_synced(kp_runtime *rt, int kind, bool (*interrupted)(void))
{
    for (int64_t waited = 0; waited < SYNC_TIMEOUT_MS; waited += 200) {
        if (kp_informer_wait_synced(rt->c.informers[kind], 200) == 0)
            return 0;
        if (interrupted && interrupted())
            return kp_error_set(KP_ERROR, "interrupted while the caches filled");
    }
    return kp_error_set(KP_ETIMEOUT, "the %s cache did not sync within a minute (RBAC? CRDs installed?)",
                        informer_plural(rt, kind));
}

static int sync_caches(kp_runtime *rt, bool (*interrupted)(void))
{
    kp_ctrl *c = &rt->c;
    for (int k = 0; k < KP_CK_COUNT; k++) {
        int err = c->informers[k] ? kp_informer_start(c->informers[k]) : 0;
        if (err < 0)
            return err;
    }
    for (int k = 0; k < KP_CK_COUNT; k++) {
        int err = c->informers[k] ? wait_synced(rt, k, interrupted) : 0;
        if (err < 0)
            return err;
    }
    kp_ctrl_report_foreign(c);
    atomic_store(&rt->synced, true);
    kp_reconcile_metrics_synced(rt->metrics.reconciles, true);
    return 0;
}

static int serve(kp_runtime *rt)
{
    const kp_ctrl_opts *o = &rt->c.opts;
    int err = 0;
    if (o->metrics_port > 0)
        err = kp_ctrl_http_start(&rt->metrics_http, o->bind_address, (uint16_t)o->metrics_port, rt->c.metrics, ready,
                                 rt);
    if (!err && o->health_port > 0 && o->health_port != o->metrics_port)
        err = kp_ctrl_http_start(&rt->health_http, o->bind_address, (uint16_t)o->health_port, rt->c.metrics, ready,
                                 rt);
    return err;
}

int kp_runtime_start(kp_runtime *rt, bool (*interrupted)(void))
{
    if (!rt->trimmer)
        rt->trimmer = kp_memory_trimmer_start(TRIM_PERIOD_MS);
    int err = serve(rt);
    if (!err)
        err = sync_caches(rt, interrupted);
    if (!err) {
        KP_LOG(KP_LOG_INFO, LOGGER, "caches synced", "cloudProvider", kp_cloud_name(rt->c.cloud));
        err = elect(rt);
    }
    return err;
}

bool kp_runtime_failed(kp_runtime *rt)
{
    return atomic_load(&rt->failed);
}

bool kp_runtime_leading(kp_runtime *rt)
{
    return atomic_load(&rt->leading);
}

kp_ctrl *kp_runtime_ctrl(kp_runtime *rt)
{
    return &rt->c;
}

kp_runtime *kp_runtime_free(kp_runtime *rt)
{
    if (!rt)
        return NULL;
    kp_kube_cancel_fire(rt->c.stop);
    kp_controllers_stop(rt->controllers);
    rt->elector = kp_leader_elector_free(rt->elector);
    for (int k = 0; k < KP_CK_COUNT; k++)
        if (rt->c.informers[k])
            kp_informer_stop(rt->c.informers[k]);
    rt->controllers = kp_controllers_free(rt->controllers);
    rt->kubelet = kp_kwok_kubelet_free(rt->kubelet);
    for (int k = 0; k < KP_CK_COUNT; k++)
        rt->c.informers[k] = kp_informer_free(rt->c.informers[k]);
    rt->metrics_http = kp_ctrl_http_stop(rt->metrics_http);
    rt->health_http = kp_ctrl_http_stop(rt->health_http);
    rt->c.events = kp_eventq_stop(rt->c.events);
    rt->c.interruption = kp_interruption_source_free(rt->c.interruption);
    rt->c.cloud = kp_cloud_free(rt->c.cloud);
    rt->c.overlays = kp_overlay_state_free(rt->c.overlays);
    rt->catalog = kp_catalog_free(rt->catalog);
    rt->event_client = kp_kube_client_free(rt->event_client);
    rt->kubelet_client = kp_kube_client_free(rt->kubelet_client);
    rt->c.kube = kp_kube_client_free(rt->c.kube);
    rt->config = kp_kube_config_free(rt->config);
    kp_cluster_facts_clear(&rt->facts);
    kp_ctrl_metrics_fini(&rt->metrics);
    rt->c.metrics = kp_metrics_free(rt->c.metrics);
    rt->c.stop = kp_kube_cancel_free(rt->c.stop);
    kp_strmap_clear(&rt->c.foreign_seen, NULL);
    pthread_mutex_destroy(&rt->c.foreign_mu);
    kp_strmap_clear(&rt->c.launched, kp_ctrl_free_json);
    pthread_mutex_destroy(&rt->c.launch_mu);
    kp_strmap_clear(&rt->c.reghealth, free);
    pthread_mutex_destroy(&rt->c.reghealth_mu);
    rt->trimmer = kp_memory_trimmer_stop(rt->trimmer);
    pthread_mutex_destroy(&rt->mu);
    free(rt);
    return NULL;
}
