/*
 * Golden launch templates: for each EC2NodeClass launch setting, the
 * CreateLaunchTemplate form the provider sends, compared field by field
 * with tests/unit/data/aws/launchtemplate/<case>.form (one "key=value" per
 * line, sorted, percent-decoded; the user data and the name that hashes it
 * are left out: their own tests cover them). KP_UPDATE_GOLDEN=1 rewrites the files from the current output.
 *
 * Cases: networkInterfaces with an EFA-only interface, EFA interfaces for a
 * claim asking for vpc.amazonaws.com/efa, ipPrefixCount, an IPv6 cluster
 * (primary IPv6, IPv6 prefixes), volumeInitializationRate, nested
 * virtualization, enclaves, connection tracking, a placement group
 * partition, and reserved launches (default, capacity block, interruptible).
 */
#include <stdlib.h>

#include "cloud/aws/launchtemplate.h"
#include "test_aws_provider_fixture.h"

static kp_aws_lts *lts;

static void make_lts(const char *dns)
{
    kp_aws_lt_opts o = {.cluster_name = "c1",
                        .cluster_endpoint = "https://api.example",
                        .ca_bundle = "Q0E=",
                        .cluster_cidr = dns && strchr(dns, ':') ? "fd00::/108" : "10.100.0.0/16",
                        .kube_dns_ip = dns,
                        .region = "us-west-2",
                        .clock = &fx.clock.base};
    kp_aws_lts_free(lts);
    cr_assert_eq(kp_aws_lts_new(&lts, &o), 0);
}

static void setup(void)
{
    fx_init();
    lts = NULL;
    make_lts("10.100.0.10");
}

static void teardown(void)
{
    lts = kp_aws_lts_free(lts);
    fx_fini();
}

TestSuite(aws_lt_golden, .init = setup, .fini = teardown);

#define STATUS                                                                                     \
    "\"status\":{\"instanceProfile\":\"prof\",\"securityGroups\":[{\"id\":\"sg-1\"},{\"id\":"      \
    "\"sg-2\"}],\"amis\":[{\"id\":\"ami-1\"}]}"

static const kp_ec2nodeclass *klass(const char *spec)
{
    return nodeclass(fmt("{\"metadata\":{\"name\":\"nc\"},\"spec\":{\"amiFamily\":\"AL2023\"%s%s},"
                         STATUS "}",
                         *spec ? "," : "", spec));
}

static const kp_nodeclaim *claim_requesting(const char *resources)
{
    return nodeclaim(fmt("{\"metadata\":{\"name\":\"claim-1\",\"labels\":{\"karpenter.sh/"
                         "nodepool\":\"pool\"}},\"spec\":{\"resources\":{\"requests\":{%s}}}}",
                         resources));
}

static const kp_ec2_tag tags[] = {{"eks:eks-cluster-name", "c1"}};

static kp_aws_lt_params params(const kp_ec2nodeclass *nc, const kp_nodeclaim *c)
{
    return (kp_aws_lt_params){.nc = nc, .claim = c, .image_id = "ami-1",
                              .capacity_type = "on-demand", .max_pods = 29, .tags = tags,
                              .n_tags = 1};
}

static int line_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The form of request 0, decoded, sorted, one field a line, without UserData. */
static const char *form_lines(void)
{
    const char *body = fx.server.requests[0].body;
    const char *parts[512];
    size_t n = 0;
    for (const char *p = body; p && *p && n < 512;) {
        const char *amp = strchr(p, '&'), *end = amp ? amp : p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (eq) {
            const char *k = url_decode(p, (size_t)(eq - p));
            /* user data and the name that hashes it have tests of their own */
            if (strcmp(k, "LaunchTemplateData.UserData") != 0 && strcmp(k, "Version") != 0 &&
                strcmp(k, "LaunchTemplateName") != 0)
                parts[n++] = fmt("%s=%s", k, url_decode(eq + 1, (size_t)(end - eq - 1)));
        }
        p = amp ? amp + 1 : NULL;
    }
    qsort(parts, n, sizeof(*parts), line_cmp);
    const char *out = "";
    for (size_t i = 0; i < n; i++)
        out = fmt("%s%s\n", out, parts[i]);
    return out;
}

static char *read_golden(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Create the template for `p` on the double and compare with the golden file. */
static void golden(const char *name, const kp_aws_lt_params *p)
{
    answer(400, ec2_error("InvalidLaunchTemplateName.NotFoundException", "no"));
    answer(200, "<CreateLaunchTemplateResponse><launchTemplate><launchTemplateId>lt-1"
                "</launchTemplateId></launchTemplate></CreateLaunchTemplateResponse>");
    start();
    kp_aws_lt lt;
    cr_assert_eq(kp_aws_lt_ensure(lts, fx.ec2, fx.arena, p, &lt), 0, "%s", kp_error_last());
    dbl_stop(&fx.server);
    free(fx.server.requests[0].body);
    fx.server.requests[0] = fx.server.requests[1]; /* the create, not the describe */
    fx.server.requests[1].body = NULL;
    fx.server.n_requests = 1;
    const char *got = form_lines();
    char path[1024];
    snprintf(path, sizeof(path), "%s/tests/unit/data/aws/launchtemplate/%s.form", KP_SOURCE_DIR,
             name);
    if (getenv("KP_UPDATE_GOLDEN")) {
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f, "writing %s", path);
        fputs(got, f);
        fclose(f);
    }
    const char *want = read_golden(path);
    cr_assert_not_null(want, "missing golden file %s (KP_UPDATE_GOLDEN=1 writes it)", path);
    cr_expect_str_eq(got, want, "%s differs from its golden file", name);
}

Test(aws_lt_golden, network_interface_efa_only)
{
    kp_aws_lt_params p = params(
        klass("\"networkInterfaces\":[{\"networkCardIndex\":0,\"deviceIndex\":0,\"interfaceType\":"
              "\"interface\"},{\"networkCardIndex\":1,\"deviceIndex\":0,\"interfaceType\":"
              "\"efa-only\"}],\"associatePublicIPAddress\":false,\"ipPrefixCount\":1,"
              "\"connectionTracking\":{\"tcpEstablishedTimeout\":3600}"),
        claim_requesting("\"cpu\":\"1\""));
    golden("network_interface_efa_only", &p);
}

Test(aws_lt_golden, efa_interfaces_for_a_claim_asking_for_efa)
{
    kp_aws_lt_params p = params(klass(""), claim_requesting("\"vpc.amazonaws.com/efa\":\"2\""));
    p.efa_count = 2;
    golden("efa_interfaces", &p);
}

Test(aws_lt_golden, ip_prefix_count_ipv4)
{
    kp_aws_lt_params p = params(klass("\"ipPrefixCount\":2"), claim_requesting("\"cpu\":\"1\""));
    golden("ip_prefix_count", &p);
}

Test(aws_lt_golden, ipv6_primary_address_and_prefix)
{
    make_lts("fd00::a");
    kp_aws_lt_params p = params(klass("\"ipPrefixCount\":1"), claim_requesting("\"cpu\":\"1\""));
    golden("ipv6", &p);
}

Test(aws_lt_golden, volume_initialization_rate)
{
    kp_aws_lt_params p =
        params(klass("\"blockDeviceMappings\":[{\"deviceName\":\"/dev/xvda\",\"rootVolume\":true,"
                     "\"ebs\":{\"snapshotID\":\"snap-0123\",\"volumeInitializationRate\":250,"
                     "\"volumeSize\":\"100Gi\",\"volumeType\":\"gp3\"}}]"),
               claim_requesting("\"cpu\":\"1\""));
    golden("volume_initialization", &p);
}

Test(aws_lt_golden, nested_virtualization_and_enclave)
{
    kp_aws_lt_params p =
        params(klass("\"cpuOptions\":{\"nestedVirtualization\":\"enabled\"}"),
               claim_requesting("\"eks.amazonaws.com/nitro-sandbox\":\"1\""));
    golden("nested_virtualization_enclave", &p);
}

Test(aws_lt_golden, placement_group_partition)
{
    kp_aws_lt_params p = params(klass("\"placementGroupSelector\":{\"name\":\"training\"}"),
                                claim_requesting("\"cpu\":\"1\""));
    p.placement_group_id = "pg-0123456789abcdef0";
    p.placement_partition = 2;
    golden("placement_group", &p);
}

Test(aws_lt_golden, capacity_reservation_default_block_and_interruptible)
{
    kp_aws_lt_params p = params(klass(""), claim_requesting("\"cpu\":\"1\""));
    p.capacity_type = "reserved";
    p.capacity_reservation_id = "cr-1";
    p.capacity_reservation_type = "default";
    golden("capacity_reservation", &p);
}

Test(aws_lt_golden, capacity_block)
{
    kp_aws_lt_params p = params(klass(""), claim_requesting("\"cpu\":\"1\""));
    p.capacity_type = "reserved";
    p.capacity_reservation_id = "cr-b";
    p.capacity_reservation_type = "capacity-block";
    golden("capacity_block", &p);
}

Test(aws_lt_golden, interruptible_capacity_reservation)
{
    kp_aws_lt_params p = params(klass(""), claim_requesting("\"cpu\":\"1\""));
    p.capacity_type = "reserved";
    p.capacity_reservation_id = "cr-i";
    p.capacity_reservation_type = "default";
    p.capacity_reservation_interruptible = true;
    golden("interruptible_capacity_reservation", &p);
}

/* Every setting is part of the template's name: no two cases share a template. */
Test(aws_lt_golden, every_setting_changes_the_template_name)
{
    const char *specs[] = {"",
                           "\"ipPrefixCount\":2",
                           "\"cpuOptions\":{\"nestedVirtualization\":\"enabled\"}",
                           "\"connectionTracking\":{\"udpTimeout\":30}",
                           "\"networkInterfaces\":[{\"networkCardIndex\":0,\"deviceIndex\":0,"
                           "\"interfaceType\":\"interface\"}]",
                           "\"blockDeviceMappings\":[{\"deviceName\":\"/dev/xvda\",\"ebs\":{"
                           "\"snapshotID\":\"s\",\"volumeInitializationRate\":100}}]"};
    const char *names[8];
    kp_ec2_launch_template_data d;
    for (size_t i = 0; i < 6; i++) {
        kp_aws_lt_params p = params(klass(specs[i]), claim_requesting("\"cpu\":\"1\""));
        cr_assert_eq(kp_aws_lt_render(lts, fx.arena, &p, &names[i], &d), 0, "%s", kp_error_last());
    }
    kp_aws_lt_params p = params(klass(""), claim_requesting("\"eks.amazonaws.com/nitro-sandbox\":"
                                                            "\"1\""));
    cr_assert_eq(kp_aws_lt_render(lts, fx.arena, &p, &names[6], &d), 0);
    p = params(klass(""), claim_requesting("\"cpu\":\"1\""));
    p.capacity_type = "reserved", p.capacity_reservation_id = "cr-1";
    cr_assert_eq(kp_aws_lt_render(lts, fx.arena, &p, &names[7], &d), 0);
    for (size_t i = 0; i < 8; i++)
        for (size_t j = i + 1; j < 8; j++)
            cr_expect_str_neq(names[i], names[j], "cases %zu and %zu", i, j);
}
