/* Wiring the AWS provider into the controller (see cloud_aws.h). */
#include "controller/cloud_aws.h"
#include "base/error.h"
#include "base/log.h"
#include "cloud/aws/provider.h"
#include "controller/nodeclass_ctrl.h"

#include <string.h>

#define LOGGER "aws"
#define REFRESH_NS (12LL * 3600 * KP_NS_PER_SEC)
#define RETRY_NS (5LL * 60 * KP_NS_PER_SEC)

bool kp_cloud_is_aws(const kp_ctrl *c)
{
    return c->cloud && !strcmp(kp_cloud_name(c->cloud), "aws");
}

int kp_cloud_aws_new(kp_ctrl *c, kp_interruption_source **src)
{
    const kp_ctrl_opts *o = &c->opts;
    kp_aws_provider_opts ao = KP_AWS_PROVIDER_OPTS_INIT;
    ao.region = o->aws_region, ao.cluster_name = o->cluster_name, ao.cluster_endpoint = o->cluster_endpoint;
    ao.cluster_ca_bundle = o->cluster_ca_bundle, ao.cluster_cidr = o->cluster_cidr;
    ao.kubernetes_version = o->kubernetes_version, ao.interruption_queue = o->interruption_queue;
    ao.endpoint_url = o->aws_endpoint_url, ao.lookup = kp_nodeclass_lookup, ao.lookup_ctx = c;
    ao.clock = c->clock, ao.vm_memory_overhead_percent = o->vm_memory_overhead_percent;
    ao.reserved_enis = o->reserved_enis, ao.isolated_vpc = o->isolated_vpc;
    ao.cluster_dns_ip = o->cluster_dns_ip;
    *src = NULL;
    if (!o->cluster_name || !*o->cluster_name)
        return kp_error_set(KP_EINVALID, "--cluster-name is required with --cloud-provider aws");
    int err = kp_aws_provider_new(&ao, &c->cloud);
    if (err < 0) return kp_error_wrap(err, "the AWS provider");
    if ((err = kp_aws_provider_refresh(c->cloud)) < 0)
        KP_LOG(KP_LOG_ERROR, LOGGER, "instance types or prices not fetched yet; retrying", "error", kp_error_last());
    if (o->interruption_queue && *o->interruption_queue) {
        err = kp_aws_provider_interruption_source(c->cloud, src);
        if (err < 0) return kp_error_wrap(err, "--interruption-queue %s", o->interruption_queue);
    }
    return 0;
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
    return err < 0 ? err : swept < 0 ? swept : 0;
}
