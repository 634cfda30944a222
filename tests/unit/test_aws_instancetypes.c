/*
 * The instance-type provider, EC2 side: what refresh asks EC2, how
 * DescribeInstanceTypes answers become rows, and allocatable of 27 types
 * against the figures Karpenter publishes for AL2023
 * (data/aws/instancetypes/karpenter-allocatable-al2023.json).
 */
#include "api/quantity.h"
#include "test_aws_instancetypes.h"
#include "helpers/assert.h"

static void teardown(void)
{
    it_env_stop();
}

TestSuite(aws_instancetypes, .fini = teardown);

Test(aws_instancetypes, refresh_asks_for_hvm_x86_and_arm_in_pages)
{
    it_env_start(NULL, 0);
    dbl_stop(&env.server);
    cr_assert_eq(env.server.n_requests, 3);
    const char *b0 = env.server.requests[0].body, *b1 = env.server.requests[1].body;
    cr_expect(strstr(b0, "Action=DescribeInstanceTypes") != NULL);
    cr_expect(strstr(b0, "Filter.1.Name=supported-virtualization-type&Filter.1.Value.1=hvm") !=
                  NULL,
              "%s", b0);
    cr_expect(strstr(b0, "Filter.2.Name=processor-info.supported-architecture&Filter.2.Value.1="
                         "x86_64&Filter.2.Value.2=arm64") != NULL,
              "%s", b0);
    cr_expect(strstr(b0, "MaxResults=100") != NULL);
    cr_expect(strstr(b1, "NextToken=page-2") != NULL, "%s", b1);
    const char *b2 = env.server.requests[2].body;
    cr_expect(strstr(b2, "Action=DescribeInstanceTypeOfferings") != NULL);
    cr_expect(strstr(b2, "LocationType=availability-zone") != NULL, "%s", b2);
    cr_expect(kp_aws_instancetypes_ready(env.it));
}

/* Every resource Karpenter lists for a type must match capacity - overhead,
 * and nothing else may be advertised. */
static void check_type(const kp_instance_type *t, const cJSON *want)
{
    /* Branch ENIs come from static data; types the built-in table lacks have none. */
    bool static_known = kp_aws_catalog_find(t->name) != NULL;
    const cJSON *r;
    cJSON_ArrayForEach(r, want)
    {
        if (!static_known && strcmp(r->string, "vpc.amazonaws.com/pod-eni") == 0) continue;
        kp_quantity q;
        cr_assert_eq(kp_quantity_parse(r->valuestring, &q), 0);
        cr_expect_eq(alloc_of(t, r->string), q.milli, "%s %s: got %lld milli, Karpenter %s",
                     t->name, r->string, (long long)alloc_of(t, r->string), r->valuestring);
    }
    for (uint32_t i = 0; i < t->n_capacity; i++)
        cr_expect_not_null(cJSON_GetObjectItemCaseSensitive(want, t->capacity[i].name),
                           "%s advertises %s, Karpenter does not", t->name, t->capacity[i].name);
}

Test(aws_instancetypes, allocatable_matches_karpenter_for_al2023)
{
    it_env_start(NULL, 0);
    const kp_catalog *cat = NULL;
    KP_ASSERT_OK(kp_aws_instancetypes_catalog(
        env.it, class_with("al2023", "\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}]"),
        &cat));
    char *text = dbl_fixture("instancetypes/karpenter-allocatable-al2023.json");
    cJSON *expected = cJSON_Parse(text);
    cr_assert_not_null(expected);
    int checked = 0;
    const cJSON *entry;
    cJSON_ArrayForEach(entry, expected)
    {
        check_type(type_of(cat, entry->string), entry);
        checked++;
    }
    cr_expect_geq(checked, 20);
    cr_expect_eq(cat->count, (size_t)checked, "every described type is in the catalog");
    cJSON_Delete(expected);
    free(text);
}

Test(aws_instancetypes, labels_follow_karpenter)
{
    it_env_start(NULL, 0);
    const kp_catalog *cat = NULL;
    KP_ASSERT_OK(
        kp_aws_instancetypes_catalog(env.it, class_with("c", "\"amiFamily\":\"AL2023\""), &cat));
    const kp_instance_type *m5 = type_of(cat, "m5.large");
    struct {
        const char *key, *value;
    } want[] = {
        {"node.kubernetes.io/instance-type", "m5.large"},
        {"kubernetes.io/arch", "amd64"},
        {"kubernetes.io/os", "linux"},
        {"topology.kubernetes.io/region", "eu-west-1"},
        {"karpenter.k8s.aws/instance-category", "m"},
        {"karpenter.k8s.aws/instance-generation", "5"},
        {"karpenter.k8s.aws/instance-family", "m5"},
        {"karpenter.k8s.aws/instance-size", "large"},
        {"karpenter.k8s.aws/instance-cpu", "2"},
        {"karpenter.k8s.aws/instance-memory", "8192"},
        {"karpenter.k8s.aws/instance-hypervisor", "nitro"},
        {"karpenter.k8s.aws/instance-cpu-manufacturer", "intel"},
        {"karpenter.k8s.aws/instance-ebs-bandwidth", "4750"},
        {"karpenter.k8s.aws/instance-network-bandwidth", "750"},
        {"karpenter.k8s.aws/instance-encryption-in-transit-supported", "false"},
        {"karpenter.k8s.aws/instance-capability-flex", "false"},
        {"karpenter.k8s.aws/nitro-sandbox", "true"},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const char *got = label_of(m5, want[i].key);
        cr_expect(got && strcmp(got, want[i].value) == 0, "%s: %s, want %s", want[i].key,
                  got ? got : "(none)", want[i].value);
    }
    cr_expect_str_eq(values_of(m5, "karpenter.k8s.aws/instance-tenancy"), "default dedicated");
    const char *absent[] = {
        "karpenter.k8s.aws/instance-gpu-name", "karpenter.k8s.aws/instance-accelerator-name",
        "karpenter.k8s.aws/instance-local-nvme", "karpenter.k8s.aws/capacity-reservation-id",
        "node.kubernetes.io/windows-build"};
    for (size_t i = 0; i < 5; i++) {
        const kp_it_requirement *r = req_of(m5, absent[i]);
        cr_expect(r && r->op == KP_OP_DOES_NOT_EXIST, "%s must be DoesNotExist", absent[i]);
    }
}

Test(aws_instancetypes, accelerator_storage_and_name_labels)
{
    it_env_start(NULL, 0);
    const kp_catalog *cat = NULL;
    KP_ASSERT_OK(
        kp_aws_instancetypes_catalog(env.it, class_with("c", "\"amiFamily\":\"AL2\""), &cat));
    const kp_instance_type *g5 = type_of(cat, "g5.xlarge");
    cr_expect_str_eq(label_of(g5, "karpenter.k8s.aws/instance-gpu-name"), "a10g");
    cr_expect_str_eq(label_of(g5, "karpenter.k8s.aws/instance-gpu-manufacturer"), "nvidia");
    cr_expect_str_eq(label_of(g5, "karpenter.k8s.aws/instance-gpu-count"), "1");
    cr_expect_str_eq(label_of(g5, "karpenter.k8s.aws/instance-gpu-memory"), "22888");
    cr_expect_str_eq(label_of(g5, "karpenter.k8s.aws/instance-local-nvme"), "250");
    cr_expect_str_eq(label_of(g5, "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz"),
                     "3300");
    const kp_instance_type *g4ad = type_of(cat, "g4ad.xlarge");
    cr_expect_str_eq(label_of(g4ad, "karpenter.k8s.aws/instance-gpu-name"), "radeon-pro-v520");
    const kp_instance_type *inf2 = type_of(cat, "inf2.xlarge");
    cr_expect_str_eq(label_of(inf2, "karpenter.k8s.aws/instance-accelerator-name"), "inferentia2");
    cr_expect_str_eq(label_of(inf2, "karpenter.k8s.aws/instance-accelerator-manufacturer"), "aws");
    cr_expect_str_eq(label_of(inf2, "karpenter.k8s.aws/instance-accelerator-count"), "1");
    const kp_instance_type *metal = type_of(cat, "c7g.metal");
    cr_expect_str_eq(label_of(metal, "karpenter.k8s.aws/instance-hypervisor"), "",
                     "bare metal: the label is present and empty");
    cr_expect_str_eq(label_of(metal, "kubernetes.io/arch"), "arm64");
    const kp_instance_type *flex = type_of(cat, "m7i-flex.large");
    cr_expect_str_eq(label_of(flex, "karpenter.k8s.aws/instance-capability-flex"), "true");
    cr_expect_str_eq(label_of(flex, "karpenter.k8s.aws/instance-family"), "m7i-flex");
    const kp_instance_type *u = type_of(cat, "u-6tb1.56xlarge");
    cr_expect_str_eq(label_of(u, "karpenter.k8s.aws/instance-category"), "u");
    cr_expect_str_eq(label_of(u, "karpenter.k8s.aws/instance-generation"), "1");
    const kp_instance_type *t2 = type_of(cat, "t2.micro");
    cr_expect_str_eq(label_of(t2, "karpenter.k8s.aws/instance-hypervisor"), "xen");
    const kp_it_requirement *bw = req_of(t2, "karpenter.k8s.aws/instance-network-bandwidth");
    cr_expect(bw && bw->op == KP_OP_DOES_NOT_EXIST, "no static bandwidth for t2.micro");
}

static const char ODD_TYPES[] =
    "<DescribeInstanceTypesResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">"
    "<instanceTypeSet>"
    "<item><instanceType>mac-m4.metal</instanceType><bareMetal>true</bareMetal>"
    "<supportedUsageClasses><item>on-demand</item></supportedUsageClasses>"
    "<processorInfo><supportedArchitectures><item>arm64_mac</item><item>arm64</item>"
    "</supportedArchitectures><manufacturer>Apple</manufacturer></processorInfo>"
    "<vCpuInfo><defaultVCpus>10</defaultVCpus></vCpuInfo><memoryInfo><sizeInMiB>24576</sizeInMiB>"
    "</memoryInfo><networkInfo><maximumNetworkInterfaces>8</maximumNetworkInterfaces>"
    "<ipv4AddressesPerInterface>30</ipv4AddressesPerInterface></networkInfo>"
    "<instanceStorageInfo><totalSizeInGB>900</totalSizeInGB><nvmeSupport>unsupported</nvmeSupport>"
    "</instanceStorageInfo><ebsInfo><ebsOptimizedSupport>supported</ebsOptimizedSupport>"
    "<ebsOptimizedInfo><maximumBandwidthInMbps>8000</maximumBandwidthInMbps></ebsOptimizedInfo>"
    "</ebsInfo></item>"
    "<item><instanceType>u7i-12tb.224xlarge</instanceType><hypervisor>nitro</hypervisor>"
    "<supportedUsageClasses><item>on-demand</item><item>capacity-block</item></"
    "supportedUsageClasses>"
    "<processorInfo><supportedArchitectures><item>x86_64</item></supportedArchitectures>"
    "<manufacturer>Intel</manufacturer></processorInfo>"
    "<vCpuInfo><defaultVCpus>896</defaultVCpus></vCpuInfo><memoryInfo><sizeInMiB>12582912"
    "</sizeInMiB></memoryInfo><networkInfo><maximumNetworkInterfaces>16</maximumNetworkInterfaces>"
    "<defaultNetworkCardIndex>1</defaultNetworkCardIndex><networkCards>"
    "<item><networkCardIndex>0</networkCardIndex><maximumNetworkInterfaces>3</"
    "maximumNetworkInterfaces></item>"
    "<item><networkCardIndex>1</networkCardIndex><maximumNetworkInterfaces>13</"
    "maximumNetworkInterfaces></item>"
    "</networkCards><ipv4AddressesPerInterface>50</ipv4AddressesPerInterface></networkInfo>"
    "<inferenceAcceleratorInfo><accelerators><item><name>Fancy Chip</name><manufacturer>Some Co"
    "</manufacturer><count>2</count></item></accelerators></inferenceAcceleratorInfo></item>"
    "<item><instanceType>broken.large</instanceType><vCpuInfo><defaultVCpus>0</defaultVCpus>"
    "</vCpuInfo></item>"
    "</instanceTypeSet></DescribeInstanceTypesResponse>";

static const char ODD_OFFERINGS[] =
    "<DescribeInstanceTypeOfferingsResponse><instanceTypeOfferingSet>"
    "<item><instanceType>u7i-12tb.224xlarge</instanceType><location>eu-west-1b</location></item>"
    "<item><instanceType>mac-m4.metal</instanceType><location>eu-west-1a</location></item>"
    "<item><instanceType>u7i-12tb.224xlarge</instanceType><location>eu-west-1a</location></item>"
    "<item><instanceType>u7i-12tb.224xlarge</instanceType><location>eu-west-1b</location></item>"
    "</instanceTypeOfferingSet></DescribeInstanceTypeOfferingsResponse>";

Test(aws_instancetypes, conversion_of_unusual_answers)
{
    dbl_response again[] = {{200, NULL, ODD_TYPES}, {200, NULL, ODD_OFFERINGS}};
    it_env_start(again, 2);
    KP_ASSERT_OK(kp_aws_instancetypes_refresh(env.it));
    kp_aws_type_row mac, u7;
    cr_assert_eq(kp_aws_instancetypes_get(env.it, "mac-m4.metal", env.arena, &mac), 0);
    cr_expect_str_eq(mac.info.category, "", "mac-m4 has no category/generation");
    cr_expect_eq(mac.info.arch, KP_AWS_ARCH_ARM64, "the first architecture we know");
    cr_expect_eq(mac.info.hypervisor, KP_AWS_HV_NONE);
    cr_expect_eq(mac.info.local_nvme_gb, 0, "instance store without NVMe");
    cr_expect_eq(mac.info.ebs_mbps, 0, "EBS optimisation not on by default");
    cr_expect_str_eq(mac.info.cpu_manufacturer, "apple");
    cr_expect(mac.on_demand && !mac.spot);
    cr_expect_eq(mac.info.default_card_max_enis, 8, "no card list: the type's total");
    cr_assert_eq(kp_aws_instancetypes_get(env.it, "u7i-12tb.224xlarge", env.arena, &u7), 0);
    cr_expect_str_eq(u7.info.category, "u");
    cr_expect_eq(u7.info.generation, 7);
    cr_expect_eq(u7.info.default_card_max_enis, 13, "the default card's ENIs");
    cr_expect_str_eq(u7.info.accel_name, "fancy-chip");
    cr_expect_str_eq(u7.info.accel_manufacturer, "some-co");
    cr_expect_eq(u7.info.accel_count, 2);
    cr_expect_eq(u7.info.neuron_cores_per_device, 0);
    cr_expect(u7.on_demand && !u7.spot, "capacity-block is not a capacity type we offer");
    cr_assert_eq(u7.n_zones, 2, "duplicates removed");
    cr_expect_str_eq(u7.zones[0], "eu-west-1a");
    cr_expect_str_eq(u7.zones[1], "eu-west-1b");
    cr_expect_eq(kp_aws_instancetypes_get(env.it, "broken.large", env.arena, &u7), KP_ENOTFOUND,
                 "a type without vCPUs is left out");
    cr_expect_eq(kp_aws_instancetypes_get(env.it, "m5.large", env.arena, &u7), KP_ENOTFOUND,
                 "a refresh replaces the old rows");
}

Test(aws_instancetypes, a_failed_refresh_keeps_the_old_types)
{
    dbl_response fail[] = {
        {503, NULL,
         "<Response><Errors><Error><Code>Unavailable</Code><Message>down</Message>"
         "</Error></Errors></Response>"},
        {200, NULL,
         "<DescribeInstanceTypesResponse><instanceTypeSet/></DescribeInstanceTypesResponse>"},
        {200, NULL, "<DescribeInstanceTypeOfferingsResponse/>"},
    };
    it_env_start(fail, 3);
    cr_assert_lt(kp_aws_instancetypes_refresh(env.it), 0);
    cr_expect(strstr(kp_error_last(), "describing instance types") != NULL, "%s", kp_error_last());
    cr_assert_eq(kp_aws_instancetypes_refresh(env.it), KP_ENOTFOUND, "an empty answer");
    kp_aws_type_row row;
    cr_expect_eq(kp_aws_instancetypes_get(env.it, "m5.large", env.arena, &row), 0);
    const char **zones = NULL;
    uint32_t n = 0;
    cr_assert_eq(kp_aws_instancetypes_zones(env.it, env.arena, &zones, &n), 0);
    cr_assert_eq(n, 3);
    cr_expect_str_eq(zones[0], "eu-west-1a");
    cr_expect_str_eq(zones[2], "eu-west-1c");
}

Test(aws_instancetypes, nothing_before_the_first_refresh)
{
    kp_aws_instancetypes *it = NULL;
    cr_assert_eq(kp_aws_instancetypes_new(&it, NULL, NULL, NULL, NULL), 0);
    const kp_catalog *cat = NULL;
    cr_expect_eq(kp_aws_instancetypes_catalog(it, NULL, &cat), KP_ENOTREADY);
    cr_expect_not(kp_aws_instancetypes_ready(it));
    cr_expect_eq(kp_aws_instancetypes_refresh(it), KP_EINVALID, "no EC2 client");
    kp_arena *a = kp_arena_new();
    kp_aws_type_row row;
    cr_expect_eq(kp_aws_instancetypes_get(it, "m5.large", a, &row), KP_ENOTREADY);
    kp_arena_free(a);
    kp_aws_instancetypes_opts bad = {.vm_memory_overhead_percent = 1.0};
    cr_expect_eq(kp_aws_instancetypes_set_opts(it, &bad), KP_EINVALID);
    cr_assert_null(kp_aws_instancetypes_free(it));
    cr_assert_null(kp_aws_instancetypes_free(NULL));
}

Test(aws_instancetypes, lower_kebab)
{
    kp_arena *a = kp_arena_new();
    cr_expect_str_eq(kp_aws_lower_kebab(a, "Radeon Pro V520"), "radeon-pro-v520");
    cr_expect_str_eq(kp_aws_lower_kebab(a, "NVIDIA"), "nvidia");
    cr_expect_null(kp_aws_lower_kebab(a, NULL));
    kp_arena_free(a);
}
