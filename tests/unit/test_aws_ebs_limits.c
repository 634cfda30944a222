/*
 * The EBS CSI driver's volume count per AWS instance type (cloud/aws_ebs_limits.h),
 * checked against what the driver reports on nodes of those types, and carried
 * by the built-in catalog and the --instance-types file, not by the synthetic one.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdio.h>

#include "base/error.h"
#include "cloud/aws_catalog.h"
#include "cloud/aws_ebs_limits.h"
#include "cloud/instance_types.h"

static int32_t limit_of(const char *name)
{
    const kp_aws_type_info *t = kp_aws_catalog_find(name);
    cr_assert_not_null(t, "%s is in the built-in catalog", name);
    return kp_aws_ebs_volume_limit(t);
}

Test(aws_ebs_limits, shared_nitro_limit_less_root_interface_and_devices)
{
    cr_expect_eq(limit_of("m5.large"), 26);
    cr_expect_eq(limit_of("m7g.xlarge"), 26, "Graviton 3 shares the limit");
    cr_expect_eq(limit_of("m5d.large"), 25, "one instance-store disk");
    cr_expect_eq(limit_of("m5d.24xlarge"), 22, "four instance-store disks");
    cr_expect_eq(limit_of("g4dn.12xlarge"), 21, "four GPUs and a disk");
    cr_expect_eq(limit_of("inf1.24xlarge"), 10, "sixteen Inferentia chips");
    cr_expect_eq(limit_of("m5.metal"), 30);
}

Test(aws_ebs_limits, dedicated_limits_grow_with_size)
{
    cr_expect_eq(limit_of("m7i.large"), 31);
    cr_expect_eq(limit_of("m7i.16xlarge"), 47);
    cr_expect_eq(limit_of("m7i.48xlarge"), 127);
    cr_expect_eq(limit_of("c7a.32xlarge"), 87);
    cr_expect_eq(limit_of("m8g.metal-24xl"), 38);
    cr_expect_eq(limit_of("m8gd.large"), 31, "instance store does not share a dedicated limit");
    cr_expect_eq(limit_of("p4d.24xlarge"), 27);
}

Test(aws_ebs_limits, xen_and_floor)
{
    kp_aws_type_info xen = {.name = "m4.large",
                            .family = "m4",
                            .category = "m",
                            .generation = 4,
                            .vcpu = 2,
                            .hypervisor = KP_AWS_HV_XEN};
    cr_expect_eq(kp_aws_ebs_volume_limit(&xen), 38);
    kp_aws_type_info crowded = {.name = "x.large",
                                .family = "x9",
                                .generation = 5,
                                .vcpu = 2,
                                .hypervisor = KP_AWS_HV_NITRO,
                                .gpu_count = 40};
    cr_expect_eq(kp_aws_ebs_volume_limit(&crowded), 1,
                 "never below one: zero would mean unlimited");
}

Test(aws_ebs_limits, catalogs)
{
    kp_catalog *builtin = NULL, *synthetic = NULL;
    cr_assert_eq(kp_catalog_open("builtin", &builtin), 0);
    cr_expect_eq(kp_catalog_find(builtin, "m5.large")->ebs_volume_limit, 26);
    for (size_t i = 0; i < builtin->count; i++)
        cr_expect_gt(builtin->types[i].ebs_volume_limit, 0, "%s", builtin->types[i].name);
    cr_assert_eq(kp_catalog_open("synthetic:10", &synthetic), 0);
    for (size_t i = 0; i < synthetic->count; i++)
        cr_expect_eq(synthetic->types[i].ebs_volume_limit, 0, "%s", synthetic->types[i].name);
    kp_catalog_free(builtin);
    kp_catalog_free(synthetic);
}

static int from_json(const char *text, kp_catalog **out)
{
    cJSON *json = cJSON_Parse(text);
    cr_assert_not_null(json);
    int err = kp_catalog_from_json(json, "test", out);
    cJSON_Delete(json);
    return err;
}

Test(aws_ebs_limits, file_field)
{
    kp_catalog *c = NULL;
    cr_assert_eq(
        from_json("[{\"name\":\"a\",\"capacity\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},\"offerings\":["
                  "{\"zone\":\"z\",\"capacityType\":\"spot\",\"price\":1}],\"ebsVolumeLimit\":12},"
                  "{\"name\":\"b\",\"capacity\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},\"offerings\":[{"
                  "\"zone\":\"z\",\"capacityType\":\"spot\",\"price\":1}]}]",
                  &c),
        0, "%s", kp_error_last());
    cr_expect_eq(kp_catalog_find(c, "a")->ebs_volume_limit, 12);
    cr_expect_eq(kp_catalog_find(c, "b")->ebs_volume_limit, 0);
    kp_catalog_free(c);
    const char *bad[] = {"\"12\"", "-1", "1.5", "1e9", "true", "null"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        char text[256];
        snprintf(text, sizeof(text),
                 "[{\"name\":\"a\",\"capacity\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},\"offerings\":[{"
                 "\"zone\":\"z\",\"capacityType\":\"spot\",\"price\":1}],\"ebsVolumeLimit\":%s}]",
                 bad[i]);
        c = NULL;
        cr_expect_lt(from_json(text, &c), 0, "ebsVolumeLimit %s is refused", bad[i]);
        kp_catalog_free(c);
    }
}
