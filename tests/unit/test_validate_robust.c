/*
 * Validation and defaulting never crash, whatever JSON arrives: every value of
 * a fully populated object is replaced in turn by each JSON type (null reads as
 * absent), on CREATE and on UPDATE, and both functions must run to completion,
 * produce a patch that applies, and leave the input untouched. ASan and UBSan
 * watch.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "api/admission.h"
#include "api/jsonpatch.h"
#include "base/error.h"
#include "helpers/assert.h"

static const char *const full_nodepool =
    "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":\"np\"},"
    "\"spec\":{\"weight\":10,\"limits\":{\"cpu\":\"10\",\"memory\":\"10Gi\"},"
    "\"disruption\":{\"consolidateAfter\":\"1m\",\"consolidationPolicy\":\"WhenEmpty\","
    "\"budgets\":[{\"nodes\":\"10%\",\"schedule\":\"0 9 * * mon-fri\",\"duration\":\"8h\","
    "\"reasons\":[\"Drifted\"]},{\"nodes\":\"1\"}]},"
    "\"template\":{\"metadata\":{\"labels\":{\"team\":\"a\"},\"annotations\":{\"x/y\":\"z\"}},"
    "\"spec\":{\"nodeClassRef\":{\"group\":\"karpenter.k8s.aws\",\"kind\":\"EC2NodeClass\","
    "\"name\":\"default\"},\"expireAfter\":\"720h\",\"terminationGracePeriod\":\"1h\","
    "\"requirements\":[{\"key\":\"node.kubernetes.io/instance-type\",\"operator\":\"In\","
    "\"values\":[\"m5.large\",\"m5.xlarge\"],\"minValues\":2},{\"key\":\"karpenter.k8s.aws/"
    "instance-cpu\",\"operator\":\"Gt\",\"values\":[\"4\"]}],"
    "\"taints\":[{\"key\":\"a\",\"value\":\"b\",\"effect\":\"NoSchedule\",\"timeAdded\":"
    "\"2024-01-01T00:00:00Z\"}],\"startupTaints\":[{\"key\":\"c\",\"effect\":\"NoExecute\"}]}}}}";

static const char *const full_nodeclaim =
    "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"metadata\":{\"name\":\"nc\"},"
    "\"spec\":{\"nodeClassRef\":{\"group\":\"karpenter.k8s.aws\",\"kind\":\"EC2NodeClass\","
    "\"name\":\"default\"},\"expireAfter\":\"Never\",\"terminationGracePeriod\":\"5m\","
    "\"resources\":{\"requests\":{\"cpu\":\"1\",\"pods\":3}},"
    "\"requirements\":[{\"key\":\"karpenter.sh/"
    "nodepool\",\"operator\":\"In\",\"values\":[\"np\"]}],"
    "\"taints\":[{\"key\":\"a\",\"effect\":\"NoSchedule\"}]}}";

static const char *const full_nodeoverlay =
    "{\"apiVersion\":\"karpenter.sh/v1alpha1\",\"kind\":\"NodeOverlay\",\"metadata\":{\"name\":"
    "\"o\"},\"spec\":{\"weight\":10,\"priceAdjustment\":\"-10%\",\"capacity\":{"
    "\"example.com/fuse\":\"1\",\"hugepages-2Mi\":\"100Mi\"},\"requirements\":[{\"key\":"
    "\"node.kubernetes.io/instance-type\",\"operator\":\"In\",\"values\":[\"m5.large\"]},"
    "{\"key\":\"karpenter.k8s.aws/instance-cpu\",\"operator\":\"Gte\",\"values\":[\"4\"]}]}}";

static const char *const full_ec2nodeclass =
    "{\"apiVersion\":\"karpenter.k8s.aws/v1\",\"kind\":\"EC2NodeClass\",\"metadata\":{\"name\":"
    "\"d\"},\"spec\":{\"amiFamily\":\"AL2023\",\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}]"
    ","
    "\"role\":\"r\",\"subnetSelectorTerms\":[{\"tags\":{\"a\":\"b\"}},{\"id\":\"subnet-1\"}],"
    "\"securityGroupSelectorTerms\":[{\"name\":\"sg\"}],\"capacityReservationSelectorTerms\":"
    "[{\"ownerID\":\"012345678901\",\"tags\":{\"a\":\"b\"},\"instanceMatchCriteria\":\"open\"}],"
    "\"placementGroupSelector\":{\"name\":\"pg\"},\"associatePublicIPAddress\":true,"
    "\"ipPrefixCount\":1,\"userData\":\"x\",\"tags\":{\"team\":\"a\"},\"detailedMonitoring\":false,"
    "\"instanceStorePolicy\":\"RAID0\",\"context\":\"c\",\"cpuOptions\":{\"nestedVirtualization\":"
    "\"enabled\"},\"blockDeviceMappings\":[{\"deviceName\":\"/dev/xvda\",\"rootVolume\":true,"
    "\"ebs\":{\"volumeSize\":\"20Gi\",\"volumeType\":\"gp3\",\"iops\":3000,\"throughput\":125,"
    "\"encrypted\":true,\"snapshotID\":\"snap-1\",\"volumeInitializationRate\":100,"
    "\"kmsKeyID\":\"k\",\"deleteOnTermination\":true}}],\"networkInterfaces\":[{"
    "\"networkCardIndex\":0,\"deviceIndex\":0,\"interfaceType\":\"interface\"}],"
    "\"metadataOptions\":{\"httpEndpoint\":\"enabled\",\"httpProtocolIPv6\":\"disabled\","
    "\"httpPutResponseHopLimit\":1,\"httpTokens\":\"required\"},\"connectionTracking\":{"
    "\"udpTimeout\":30},\"kubelet\":{\"maxPods\":110,\"clusterDNS\":[\"10.0.0.10\"],"
    "\"evictionSoft\":{\"memory.available\":\"5%\"},\"evictionSoftGracePeriod\":{"
    "\"memory.available\":\"1m\"},\"kubeReserved\":{\"cpu\":\"1\"},\"imageGCHighThresholdPercent\":"
    "80,\"imageGCLowThresholdPercent\":70}}}";

static const char *const replacements[] = {
    "null", "true",           "0",    "-1",
    "1.5",  "1e300",          "\"\"", "\"x\"",
    "[]",   "[1,\"a\",null]", "{}",   "{\"a\":{\"b\":[]}}",
};

typedef struct run_stats {
    size_t runs, denials;
} run_stats;

static void run_all(enum kp_admission_kind kind, const cJSON *obj, const cJSON *old, run_stats *st)
{
    char *before = cJSON_PrintUnformatted(obj);
    kp_arena *arena = kp_arena_new();
    kp_admission_result res;
    kp_admission_result_init(&res, arena);
    int err = kp_admission_validate(kind, old ? KP_ADMIT_UPDATE : KP_ADMIT_CREATE, obj, old, &res);
    cr_assert_eq(err, 0, "%s: %s", before, kp_error_last());
    kp_field_errors_string(arena, &res.errors);
    st->denials += res.errors.count > 0;
    KP_ASSERT_OK(kp_admission_default(kind, obj, &res));
    if (res.patch) {
        cJSON *copy = cJSON_Duplicate(obj, 1);
        cr_expect_eq(kp_jsonpatch_apply(copy, res.patch), 0, "%s: %s", before, kp_error_last());
        cJSON_Delete(copy);
    }
    char *after = cJSON_PrintUnformatted(obj);
    cr_expect_str_eq(after, before, "the input was changed");
    free(after);
    free(before);
    kp_admission_result_clear(&res);
    kp_arena_free(arena);
    st->runs++;
}

/* Replace every value below `node` in turn, validating the whole
 * document each time, then put the original back. */
static void mutate_everywhere(enum kp_admission_kind kind, cJSON *root, cJSON *node, run_stats *st)
{
    for (cJSON *child = node->child; child; child = child->next) {
        for (size_t r = 0; r < sizeof(replacements) / sizeof(replacements[0]); r++) {
            cJSON *saved = cJSON_Duplicate(child, 1);
            cJSON *repl = cJSON_Parse(replacements[r]);
            if (child->string) repl->string = strdup(child->string); /* keep the member's name */
            cJSON_ReplaceItemViaPointer(node, child, repl);
            run_all(kind, root, NULL, st);
            run_all(kind, root, root, st);
            cJSON_ReplaceItemViaPointer(node, repl, saved);
            child = saved;
        }
        if (cJSON_IsObject(child) || cJSON_IsArray(child)) mutate_everywhere(kind, root, child, st);
    }
}

static void robust(enum kp_admission_kind kind, const char *json)
{
    cJSON *root = cJSON_Parse(json);
    cr_assert_not_null(root);
    run_stats st = {0, 0};
    run_all(kind, root, NULL, &st);
    cr_assert_eq(st.denials, 0, "the full object itself must be valid");
    mutate_everywhere(kind, root, root, &st);
    cr_expect_gt(st.runs, 200);
    cr_expect_gt(st.denials, st.runs / 10, "mutations should be refused often (%zu of %zu)",
                 st.denials, st.runs);
    cJSON_Delete(root);
}

Test(validate_robust, nodepool)
{
    robust(KP_ADMIT_NODEPOOL, full_nodepool);
}

Test(validate_robust, nodeclaim)
{
    robust(KP_ADMIT_NODECLAIM, full_nodeclaim);
}

Test(validate_robust, nodeoverlay)
{
    robust(KP_ADMIT_NODEOVERLAY, full_nodeoverlay);
}

Test(validate_robust, ec2nodeclass)
{
    robust(KP_ADMIT_EC2NODECLASS, full_ec2nodeclass);
}
