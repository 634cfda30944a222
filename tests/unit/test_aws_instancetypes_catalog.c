/*
 * The instance-type provider, catalog side: zones and offerings from the
 * class's subnets, availability (ICE, prices, the type's zones, a1 on AL2023),
 * the per-class cache and what invalidates it, and how kubelet settings,
 * block devices, instance store policy and AMI family change allocatable.
 */
#include "test_aws_instancetypes.h"
#include "helpers/assert.h"

static void setup(void)
{
    it_env_start(NULL, 0);
}

static void teardown(void)
{
    it_env_stop();
}

TestSuite(aws_it_catalog, .init = setup, .fini = teardown);

#define TWO_ZONES                                                                                  \
    "{\"metadata\":{\"name\":\"two\"},\"spec\":{\"amiFamily\":\"AL2023\"},\"status\":"             \
    "{\"subnets\":[{\"id\":\"subnet-b\",\"zone\":\"eu-west-1b\",\"zoneID\":\"euw1-az2\"},"         \
    "{\"id\":\"subnet-a2\",\"zone\":\"eu-west-1a\",\"zoneID\":\"euw1-az1\"},"                      \
    "{\"id\":\"subnet-a\",\"zone\":\"eu-west-1a\",\"zoneID\":\"euw1-az1\"}]}}"

static const kp_catalog *catalog(const kp_ec2nodeclass *nc)
{
    const kp_catalog *cat = NULL;
    KP_ASSERT_OK(kp_aws_instancetypes_catalog(env.it, nc, &cat));
    return cat;
}

Test(aws_it_catalog, zones_are_the_types_zones_within_the_class_subnets)
{
    const kp_catalog *cat = catalog(nodeclass(TWO_ZONES));
    const kp_instance_type *m5 = type_of(cat, "m5.large");
    cr_expect_str_eq(values_of(m5, "topology.kubernetes.io/zone"), "eu-west-1a eu-west-1b");
    cr_expect_str_eq(values_of(m5, "topology.k8s.aws/zone-id"), "euw1-az1 euw1-az2");
    cr_expect_str_eq(values_of(m5, "karpenter.sh/capacity-type"), "on-demand spot");
    /* u-6tb1 only in 1a; p5 only in 1b and 1c */
    const kp_instance_type *u = type_of(cat, "u-6tb1.56xlarge");
    cr_expect_str_eq(values_of(u, "topology.kubernetes.io/zone"), "eu-west-1a");
    cr_expect_str_eq(values_of(u, "topology.k8s.aws/zone-id"), "euw1-az1");
    const kp_instance_type *p5 = type_of(cat, "p5.48xlarge");
    cr_expect_str_eq(values_of(p5, "topology.kubernetes.io/zone"), "eu-west-1b");
}

Test(aws_it_catalog, offerings_cover_every_zone_and_only_usable_ones_are_available)
{
    const kp_catalog *cat = catalog(nodeclass(TWO_ZONES));
    const kp_instance_type *m5 = type_of(cat, "m5.large");
    cr_assert_eq(m5->n_offerings, 6, "3 zones x 2 capacity types");
    double od = 0;
    cr_assert(kp_aws_prices_on_demand(env.prices, "m5.large", &od));
    const kp_offering *o = offering_of(m5, "eu-west-1a", "on-demand");
    cr_assert_not_null(o);
    cr_expect(o->available);
    cr_expect_float_eq(o->price, od, 1e-12);
    cr_expect(offering_of(m5, "eu-west-1b", "spot")->available);
    cr_expect_not(offering_of(m5, "eu-west-1c", "on-demand")->available, "no subnet in 1c");
    const kp_instance_type *p5 = type_of(cat, "p5.48xlarge");
    cr_expect_not(offering_of(p5, "eu-west-1a", "spot")->available, "p5 is not offered in 1a");
    cr_expect(offering_of(p5, "eu-west-1b", "spot")->available);
}

Test(aws_it_catalog, types_without_a_price_are_unavailable)
{
    const kp_catalog *cat = catalog(nodeclass(TWO_ZONES));
    /* u-6tb1 is not in the static table: no price until the Price List API has one */
    const kp_instance_type *u = type_of(cat, "u-6tb1.56xlarge");
    cr_expect_not(offering_of(u, "eu-west-1a", "on-demand")->available);
    const char *types[] = {"u-6tb1.56xlarge"};
    double prices[] = {55.0};
    kp_aws_prices_merge_on_demand(env.prices, types, prices, 1);
    cat = catalog(nodeclass(TWO_ZONES));
    u = type_of(cat, "u-6tb1.56xlarge");
    const kp_offering *o = offering_of(u, "eu-west-1a", "on-demand");
    cr_expect(o->available, "a new price rebuilds the catalog");
    cr_expect_float_eq(o->price, 55.0, 1e-12);
    /* after a spot update, zones without a spot record have no spot price */
    kp_aws_prices_put_spot(env.prices, "m5.large", "eu-west-1a", 0.031, 1);
    cat = catalog(nodeclass(TWO_ZONES));
    const kp_instance_type *m5 = type_of(cat, "m5.large");
    cr_expect(offering_of(m5, "eu-west-1a", "spot")->available);
    cr_expect_float_eq(offering_of(m5, "eu-west-1a", "spot")->price, 0.031, 1e-12);
    cr_expect_not(offering_of(m5, "eu-west-1b", "spot")->available);
}

Test(aws_it_catalog, ice_marks_make_offerings_unavailable_for_three_minutes)
{
    const kp_ec2nodeclass *nc = nodeclass(TWO_ZONES);
    const kp_catalog *before = catalog(nc);
    cr_expect(offering_of(type_of(before, "m5.large"), "eu-west-1a", "spot")->available);
    kp_aws_ice_mark(env.ice, "spot", "m5.large", "eu-west-1a", "InsufficientInstanceCapacity");
    const kp_catalog *after = catalog(nc);
    cr_expect_neq(before, after, "a new ICE entry rebuilds the catalog");
    const kp_instance_type *m5 = type_of(after, "m5.large");
    cr_expect_not(offering_of(m5, "eu-west-1a", "spot")->available);
    cr_expect(offering_of(m5, "eu-west-1a", "on-demand")->available);
    cr_expect(offering_of(m5, "eu-west-1b", "spot")->available);
    env.clock.ns += KP_AWS_ICE_TTL_NS;
    const kp_catalog *later = catalog(nc);
    cr_expect(offering_of(type_of(later, "m5.large"), "eu-west-1a", "spot")->available);
    kp_aws_ice_mark_capacity_type(env.ice, "spot",
                                  "AuthFailure.ServiceLinkedRoleCreationNotPermitted");
    const kp_catalog *no_spot = catalog(nc);
    cr_expect_not(offering_of(type_of(no_spot, "c5.large"), "eu-west-1b", "spot")->available);
    cr_expect(offering_of(type_of(no_spot, "c5.large"), "eu-west-1b", "on-demand")->available);
}

Test(aws_it_catalog, catalogs_are_cached_per_class_until_an_input_changes)
{
    const kp_ec2nodeclass *nc = nodeclass(TWO_ZONES);
    const kp_catalog *first = catalog(nc);
    cr_expect_eq(catalog(nc), first, "same inputs: the cached catalog");
    cr_expect_eq(catalog(nodeclass(TWO_ZONES)), first, "an equal class decoded again");
    const kp_catalog *other = catalog(class_with("other", "\"amiFamily\":\"AL2023\""));
    cr_expect_neq(other, first);
    cr_expect_eq(catalog(nc), first, "another class does not evict this one");
    const kp_catalog *changed = catalog(nodeclass(
        "{\"metadata\":{\"name\":\"two\"},\"spec\":{\"amiFamily\":\"AL2023\",\"kubelet\":"
        "{\"maxPods\":20}},\"status\":{\"subnets\":[{\"id\":\"s\",\"zone\":\"eu-west-1a\"}]}}"));
    cr_expect_neq(changed, first, "new kubelet settings rebuild");
    cr_expect_eq(kp_it_capacity(type_of(changed, "m5.large"), "pods"), 20 * 1000);
    const kp_catalog *as_text = catalog(class_with("text", "\"kubelet\":{\"maxPods\":\"30\"}"));
    cr_expect_eq(kp_it_capacity(type_of(as_text, "m5.large"), "pods"), 30 * 1000,
                 "a number written as a string");
    /* the replaced catalog is still readable until the next replacement */
    cr_expect_not_null(kp_catalog_find(first, "m5.large"));
    /* a refresh (new rows) rebuilds */
    kp_aws_type_row row;
    cr_assert_eq(kp_aws_instancetypes_get(env.it, "m5.large", env.arena, &row), 0);
    kp_aws_instancetypes_set_rows(env.it, &row, 1);
    const kp_catalog *one = catalog(nc);
    cr_expect_eq(one->count, 1);
}

Test(aws_it_catalog, a1_cannot_run_al2023)
{
    const kp_catalog *al2023 = catalog(class_with("new", "\"amiFamily\":\"AL2023\""));
    const kp_instance_type *a1 = type_of(al2023, "a1.medium");
    for (uint32_t i = 0; i < a1->n_offerings; i++)
        cr_expect_not(a1->offerings[i].available, "a1 with AL2023: %s %s", a1->offerings[i].zone,
                      a1->offerings[i].capacity_type);
    const char *types[] = {"a1.medium"};
    double prices[] = {0.0255};
    kp_aws_prices_merge_on_demand(env.prices, types, prices, 1);
    const kp_catalog *al2 = catalog(class_with("old", "\"amiFamily\":\"AL2\""));
    cr_expect(offering_of(type_of(al2, "a1.medium"), "eu-west-1a", "on-demand")->available);
}

Test(aws_it_catalog, windows_classes_get_the_build_and_no_arm64_types)
{
    const kp_catalog *cat =
        catalog(class_with("win", "\"amiSelectorTerms\":[{\"alias\":\"windows2022@latest\"}]"));
    const kp_instance_type *m5 = type_of(cat, "m5.large");
    cr_expect_str_eq(label_of(m5, "node.kubernetes.io/windows-build"), "10.0.20348");
    cr_expect_str_eq(label_of(m5, "kubernetes.io/os"), "windows");
    cr_expect_null(kp_catalog_find(cat, "m6g.large"), "no Windows for arm64");
    cr_expect_gt(kp_it_capacity(m5, "vpc.amazonaws.com/PrivateIPv4Address"), 0);
    cr_expect_eq(kp_it_capacity(m5, "ephemeral-storage"), INT64_C(50) * 1024 * 1024 * 1024 * 1000,
                 "Windows' default volume");
}

Test(aws_it_catalog, kubelet_settings_change_allocatable)
{
    const kp_catalog *plain = catalog(class_with("p", "\"amiFamily\":\"AL2023\""));
    const kp_catalog *tuned = catalog(class_with(
        "t", "\"amiFamily\":\"AL2023\",\"kubelet\":{\"podsPerCore\":4,\"kubeReserved\":"
             "{\"cpu\":\"500m\",\"memory\":\"1Gi\"},\"systemReserved\":{\"memory\":\"256Mi\"},"
             "\"evictionHard\":{\"memory.available\":\"5%\",\"nodefs.available\":\"1Gi\"}}"));
    const kp_instance_type *a = type_of(plain, "m5.xlarge"), *b = type_of(tuned, "m5.xlarge");
    cr_expect_eq(kp_it_capacity(b, "pods"), 16 * 1000, "4 pods per core x 4 vCPUs");
    cr_expect_eq(kp_it_overhead(b, "cpu"), 500, "kubeReserved cpu replaces the default");
    int64_t mem = kp_it_capacity(b, "memory") / 1000;
    int64_t want = (INT64_C(1) << 30) /* kube */ + (INT64_C(256) << 20) /* system */ +
                   (mem * 5 + 99) / 100 /* 5% of capacity, rounded up */;
    cr_expect_eq(kp_it_overhead(b, "memory") / 1000, want);
    cr_expect_eq(kp_it_capacity(a, "memory"), kp_it_capacity(b, "memory"));
    int64_t eph = kp_it_overhead(b, "ephemeral-storage") / 1000;
    cr_expect_eq(eph, (INT64_C(1) << 30) * 2, "1Gi kube-reserved + 1Gi evictionHard");
}

Test(aws_it_catalog, bad_kubelet_values_are_errors)
{
    const char *bad[] = {
        "\"kubelet\":{\"kubeReserved\":{\"memory\":\"lots\"}}",
        "\"kubelet\":{\"systemReserved\":{\"cpu\":\"1x\"}}",
        "\"kubelet\":{\"evictionHard\":{\"memory.available\":\"120%\"}}",
        "\"kubelet\":{\"evictionHard\":{\"nodefs.available\":\"ten%\"}}",
        "\"kubelet\":{\"maxPods\":\"self.cpu * 2\"}",
    };
    for (size_t i = 0; i < 5; i++) {
        const kp_catalog *cat = NULL;
        char name[8];
        snprintf(name, sizeof(name), "b%zu", i);
        cr_expect_eq(kp_aws_instancetypes_catalog(env.it, class_with(name, bad[i]), &cat),
                     KP_EINVALID, "%s", bad[i]);
        cr_expect(strstr(kp_error_last(), "spec.kubelet.") != NULL, "%s", kp_error_last());
    }
}

Test(aws_it_catalog, block_devices_and_instance_store_set_ephemeral_storage)
{
    const int64_t GI = INT64_C(1) << 30;
    const kp_catalog *root = catalog(class_with(
        "root",
        "\"amiFamily\":\"AL2023\",\"blockDeviceMappings\":[{\"deviceName\":\"/dev/xvdz\","
        "\"ebs\":{\"volumeSize\":\"30Gi\"}},{\"deviceName\":\"/dev/xvda\",\"rootVolume\":true,"
        "\"ebs\":{\"volumeSize\":\"100Gi\"}}]"));
    cr_expect_eq(kp_it_capacity(type_of(root, "m5.large"), "ephemeral-storage"), 100 * GI * 1000);
    const kp_catalog *br = catalog(class_with(
        "br", "\"amiFamily\":\"Bottlerocket\",\"blockDeviceMappings\":[{\"deviceName\":"
              "\"/dev/xvda\",\"ebs\":{\"volumeSize\":\"4Gi\"}},{\"deviceName\":\"/dev/xvdb\","
              "\"ebs\":{\"volumeSize\":\"60Gi\"}}]"));
    cr_expect_eq(kp_it_capacity(type_of(br, "m5.large"), "ephemeral-storage"), 60 * GI * 1000,
                 "Bottlerocket's data volume is /dev/xvdb");
    const kp_catalog *custom = catalog(class_with(
        "cu",
        "\"amiFamily\":\"Custom\",\"blockDeviceMappings\":[{\"deviceName\":\"/dev/sdf\","
        "\"ebs\":{\"volumeSize\":\"10Gi\"}},{\"deviceName\":\"/dev/sdg\",\"ebs\":{\"volumeSize\":"
        "\"40Gi\"}}]"));
    cr_expect_eq(kp_it_capacity(type_of(custom, "m5.large"), "ephemeral-storage"), 40 * GI * 1000,
                 "Custom: the last mapping");
    const kp_catalog *raid =
        catalog(class_with("raid", "\"amiFamily\":\"AL2023\",\"instanceStorePolicy\":\"RAID0\""));
    cr_expect_eq(kp_it_capacity(type_of(raid, "m5d.large"), "ephemeral-storage"),
                 INT64_C(75) * 1000000000 * 1000, "local NVMe in decimal GB");
    cr_expect_eq(kp_it_capacity(type_of(raid, "m5.large"), "ephemeral-storage"), 20 * GI * 1000,
                 "no instance store: the default volume");
}

Test(aws_it_catalog, alloc_opts_for_launch_code)
{
    kp_aws_alloc_opts o;
    const kp_ec2nodeclass *nc = class_with(
        "x", "\"amiFamily\":\"Bottlerocket\",\"kubelet\":{\"maxPods\":42,\"kubeReserved\":"
             "{\"memory\":\"2Gi\"}}");
    KP_ASSERT_OK(kp_aws_alloc_opts_for_nodeclass(env.it, nc, &o));
    cr_expect_eq(o.ami_family, KP_AWS_AMI_BOTTLEROCKET);
    cr_expect(o.kubelet.has_max_pods);
    cr_expect_eq(o.kubelet.max_pods, 42);
    cr_expect(o.kubelet.kube_reserved.has_memory);
    cr_expect_eq(o.kubelet.kube_reserved.memory_bytes, INT64_C(2) << 30);
    cr_expect_float_eq(o.vm_memory_overhead_percent, KP_AWS_VM_MEMORY_OVERHEAD_DEFAULT, 1e-12);
    kp_aws_instancetypes_opts flags = {.vm_memory_overhead_percent = 0.1, .reserved_enis = 1};
    cr_assert_eq(kp_aws_instancetypes_set_opts(env.it, &flags), 0);
    cr_assert_eq(kp_aws_alloc_opts_for_nodeclass(env.it, NULL, &o), 0);
    cr_expect_eq(o.ami_family, KP_AWS_AMI_AL2023);
    cr_expect_eq(o.reserved_enis, 1);
    cr_expect_eq(kp_aws_nodeclass_ami_family(class_with("al2", "\"amiSelectorTerms\":"
                                                               "[{\"alias\":\"al2@v20240807\"}]")),
                 KP_AWS_AMI_AL2);
}

Test(aws_it_catalog, operator_flags_apply_to_every_catalog)
{
    const kp_ec2nodeclass *nc = class_with("f", "\"amiFamily\":\"AL2023\"");
    int64_t pods = kp_it_capacity(type_of(catalog(nc), "m5.large"), "pods");
    int64_t mem = kp_it_capacity(type_of(catalog(nc), "m5.large"), "memory");
    kp_aws_instancetypes_opts flags = {
        .vm_memory_overhead_percent = 0.1, .reserved_enis = 1, .region = "eu-central-1"};
    cr_assert_eq(kp_aws_instancetypes_set_opts(env.it, &flags), 0);
    const kp_instance_type *m5 = type_of(catalog(nc), "m5.large");
    cr_expect_eq(kp_it_capacity(m5, "pods"), pods - 9 * 1000, "one ENI fewer: 9 IPs fewer");
    cr_expect_lt(kp_it_capacity(m5, "memory"), mem);
    cr_expect_str_eq(label_of(m5, "topology.kubernetes.io/region"), "eu-central-1");
}

Test(aws_it_catalog, default_catalog_and_missing_subnets)
{
    const kp_catalog *all = catalog(NULL);
    cr_expect_str_eq(values_of(type_of(all, "m5.large"), "topology.kubernetes.io/zone"),
                     "eu-west-1a eu-west-1b eu-west-1c");
    cr_expect_null(req_of(type_of(all, "m5.large"), "topology.k8s.aws/zone-id"),
                   "no subnets: no zone IDs");
    const kp_catalog *cat = NULL;
    cr_expect_eq(kp_aws_instancetypes_catalog(
                     env.it, nodeclass("{\"metadata\":{\"name\":\"n\"},\"spec\":{}}"), &cat),
                 KP_ENOTREADY);
    cr_expect_str_eq(kp_error_last(), "no subnets found");
}

Test(aws_it_catalog, replaced_catalogs_stay_readable_for_a_minute)
{
    const kp_ec2nodeclass *nc = nodeclass(TWO_ZONES);
    const kp_catalog *first = catalog(nc);
    /* three replacements in a row, as three ICE marks during one solve */
    kp_aws_ice_mark(env.ice, "spot", "m5.large", "eu-west-1a", "InsufficientInstanceCapacity");
    const kp_catalog *second = catalog(nc);
    kp_aws_ice_mark(env.ice, "spot", "m5.large", "eu-west-1b", "InsufficientInstanceCapacity");
    const kp_catalog *third = catalog(nc);
    kp_aws_ice_mark(env.ice, "on-demand", "m5.large", "eu-west-1b", "InsufficientInstanceCapacity");
    cr_assert_neq(catalog(nc), third);
    cr_expect_neq(second, first);
    /* under ASan a freed catalog would be a use-after-free here */
    cr_expect_not_null(kp_catalog_find(first, "m5.large"));
    cr_expect_not_null(kp_catalog_find(second, "m5.large"));
    /* a minute later the next replacement frees the old ones (no leak at teardown either) */
    env.clock.ns += 61 * KP_NS_PER_SEC;
    kp_aws_ice_mark(env.ice, "spot", "m5.large", "eu-west-1b", "InsufficientInstanceCapacity");
    cr_expect_not_null(catalog(nc));
}
