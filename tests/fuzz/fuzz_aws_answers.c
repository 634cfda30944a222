/*
 * libFuzzer target for what the AWS provider reads from peers it does not
 * control: EKS DescribeCluster answers, and EC2NodeClass objects (every
 * field the provider launches with, status included). Any input must parse
 * or fail with a message: never crash, leak or hang; a parsed cluster has
 * an endpoint.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "api/decode.h"
#include "base/arena.h"
#include "cloud/aws/eks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kp_arena *a = kp_arena_new();
    kp_eks_cluster c;
    if (kp_eks_cluster_parse(a, (const char *)data, size, &c) == 0 && !c.endpoint) abort();
    cJSON *doc = cJSON_ParseWithLength((const char *)data, size);
    if (doc) {
        kp_ec2nodeclass nc;
        (void)kp_decode_ec2nodeclass(a, doc, &nc);
        cJSON_Delete(doc);
    }
    kp_arena_free(a);
    return 0;
}
