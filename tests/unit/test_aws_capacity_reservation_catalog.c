/*
 * The catalog side of the EC2NodeClass launch settings: reserved offerings
 * from status.capacityReservations (one per reservation, priced as
 * Karpenter prices them, available while the reservation has room), and the
 * compatibility checks networkInterfaces (EFA), nested virtualization,
 * connection tracking and placement groups apply to instance types, with
 * the placement-group labels and the EFA resource they change.
 */
#include <math.h>

#include "cloud/aws/capacityreservation.h"
#include "test_aws_instancetypes.h"

static kp_aws_reservations *crs;

static void setup(void)
{
    it_env_start(NULL, 0);
    crs = kp_aws_reservations_new(&env.clock.base);
    kp_aws_instancetypes_set_reservations(env.it, crs);
}

static void teardown(void)
{
    it_env_stop();
    crs = kp_aws_reservations_free(crs);
}

TestSuite(aws_cr_catalog, .init = setup, .fini = teardown);

/* A class "nc" with subnets in eu-west-1a and 1b, `spec` members and reservations. */
static const char *klass(const char *spec, const char *reservations)
{
    return kp_arena_printf(
        env.arena,
        "{\"metadata\":{\"name\":\"nc\"},\"spec\":{\"amiFamily\":\"AL2023\"%s%s},\"status\":{"
        "\"subnets\":[{\"id\":\"subnet-a\",\"zone\":\"eu-west-1a\",\"zoneID\":\"euw1-az1\"},"
        "{\"id\":\"subnet-b\",\"zone\":\"eu-west-1b\",\"zoneID\":\"euw1-az2\"}],"
        "\"capacityReservations\":[%s]}}",
        *spec ? "," : "", spec, reservations);
}

static const kp_catalog *catalog_of(const char *spec, const char *reservations,
                                    const kp_aws_pg_info *pg)
{
    const kp_catalog *cat = NULL;
    cr_assert_eq(kp_aws_instancetypes_catalog_pg(env.it, nodeclass(klass(spec, reservations)), pg,
                                                 &cat),
                 0, "%s", kp_error_last());
    return cat;
}

static const kp_offering *reserved_of(const kp_instance_type *t, const char *id)
{
    for (uint32_t i = 0; i < t->n_offerings; i++)
        if (t->offerings[i].reservation_id && !strcmp(t->offerings[i].reservation_id, id))
            return &t->offerings[i];
    return NULL;
}

static bool any_available(const kp_instance_type *t)
{
    for (uint32_t i = 0; i < t->n_offerings; i++)
        if (t->offerings[i].available) return true;
    return false;
}

#define CR(id, zone, type, extra)                                                                  \
    "{\"id\":\"" id "\",\"availabilityZone\":\"" zone "\",\"instanceType\":\"" type "\","          \
    "\"ownerID\":\"123456789012\",\"instanceMatchCriteria\":\"targeted\"" extra "}"

Test(aws_cr_catalog, capacity_reservation_offerings_and_labels)
{
    kp_aws_crs_set_available(crs, "cr-1", 2);
    const char *rs = CR("cr-1", "eu-west-1a", "m5.large", "") "," CR(
        "cr-2", "eu-west-1b", "m5.large", ",\"reservationType\":\"capacity-block\"");
    kp_aws_crs_set_available(crs, "cr-2", 1);
    const kp_catalog *cat = catalog_of("", rs, NULL);
    const kp_instance_type *m5 = type_of(cat, "m5.large");
    cr_expect_str_eq(values_of(m5, "karpenter.sh/capacity-type"), "on-demand spot reserved");
    cr_expect_str_eq(values_of(m5, "karpenter.k8s.aws/capacity-reservation-id"), "cr-1 cr-2");
    cr_expect_str_eq(values_of(m5, "karpenter.k8s.aws/capacity-reservation-type"),
                     "default capacity-block");
    cr_expect_str_eq(values_of(m5, "karpenter.k8s.aws/capacity-reservation-interruptible"),
                     "false");
    const kp_offering *o = reserved_of(m5, "cr-1");
    cr_assert_not_null(o);
    cr_expect_str_eq(o->capacity_type, "reserved");
    cr_expect_str_eq(o->zone, "eu-west-1a");
    cr_expect(o->available);
    double od = 0;
    cr_assert(kp_aws_prices_on_demand(env.prices, "m5.large", &od));
    cr_expect(fabs(o->price - od / 1e7) < 1e-15, "priced near zero: %g", o->price);
    cr_expect(reserved_of(m5, "cr-2")->available);
    const kp_instance_type *c5 = type_of(cat, "c5.large");
    cr_expect_eq(req_of(c5, "karpenter.k8s.aws/capacity-reservation-id")->op,
                 KP_OP_DOES_NOT_EXIST);
    cr_expect_str_eq(values_of(c5, "karpenter.sh/capacity-type"), "on-demand spot");
    /* the launch that takes the last place makes the offering unavailable */
    kp_aws_crs_mark_launched(crs, "cr-2");
    cat = catalog_of("", rs, NULL);
    cr_expect_not(reserved_of(type_of(cat, "m5.large"), "cr-2")->available,
                  "the catalog was rebuilt when the count reached zero");
    kp_aws_crs_mark_terminated(crs, "cr-2");
    cat = catalog_of("", rs, NULL);
    cr_expect(reserved_of(type_of(cat, "m5.large"), "cr-2")->available);
}

Test(aws_cr_catalog, capacity_reservation_unusable_offerings)
{
    kp_aws_crs_set_available(crs, "cr-x", 1);
    kp_aws_crs_set_available(crs, "cr-e", 1);
    kp_aws_crs_set_available(crs, "cr-z", 1);
    const char *rs = CR("cr-x", "eu-west-1a", "m5.large", "") "," CR(
        "cr-e", "eu-west-1a", "c5.large", ",\"state\":\"expiring\"") "," CR("cr-z", "eu-west-1c",
                                                                            "c5.large", "");
    /* the class has subnets in 1a and 1b only */
    const kp_catalog *cat = catalog_of("", rs, NULL);
    cr_expect(reserved_of(type_of(cat, "m5.large"), "cr-x")->available);
    cr_expect_not(reserved_of(type_of(cat, "c5.large"), "cr-e")->available, "expiring");
    cr_expect_not(reserved_of(type_of(cat, "c5.large"), "cr-z")->available, "no subnet there");
    kp_aws_instancetypes_set_reservations(env.it, NULL);
    cat = catalog_of("", rs, NULL);
    cr_expect_not(reserved_of(type_of(cat, "m5.large"), "cr-x")->available,
                  "no counts known: nothing reserved is offered");
}

Test(aws_cr_catalog, network_interface_efa_only_compatibility_and_resource)
{
    const kp_catalog *cat = catalog_of(
        "\"networkInterfaces\":[{\"networkCardIndex\":0,\"deviceIndex\":0,\"interfaceType\":"
        "\"interface\"},{\"networkCardIndex\":0,\"deviceIndex\":1,\"interfaceType\":\"efa-only\"}]",
        "", NULL);
    const kp_instance_type *efa = type_of(cat, "c6gn.16xlarge");
    cr_expect(any_available(efa));
    cr_expect_eq(kp_it_capacity(efa, "vpc.amazonaws.com/efa"), 1000, "one EFA-only interface");
    cr_expect_not(any_available(type_of(cat, "m5.large")), "m5.large has no EFA");
    /* without networkInterfaces, the type's own EFA count */
    cat = catalog_of("", "", NULL);
    cr_expect_eq(kp_it_capacity(type_of(cat, "c6gn.16xlarge"), "vpc.amazonaws.com/efa"), 1000);
    cr_expect(any_available(type_of(cat, "m5.large")));
    /* a device index the card does not have */
    cat = catalog_of("\"networkInterfaces\":[{\"networkCardIndex\":0,\"deviceIndex\":0,"
                     "\"interfaceType\":\"interface\"},{\"networkCardIndex\":0,\"deviceIndex\":3,"
                     "\"interfaceType\":\"interface\"}]",
                     "", NULL);
    cr_expect_not(any_available(type_of(cat, "m5.large")), "3 interfaces on card 0");
    cr_expect(any_available(type_of(cat, "m5.xlarge")), "4 interfaces on card 0");
}

Test(aws_cr_catalog, nested_virtualization_and_connection_tracking_compatibility)
{
    const kp_catalog *cat =
        catalog_of("\"cpuOptions\":{\"nestedVirtualization\":\"enabled\"}", "", NULL);
    cr_expect(any_available(type_of(cat, "m5.xlarge")), "reports nested-virtualization");
    cr_expect_not(any_available(type_of(cat, "m5.large")));
    cat = catalog_of("\"cpuOptions\":{\"nestedVirtualization\":\"disabled\"}", "", NULL);
    cr_expect(any_available(type_of(cat, "m5.large")), "disabled asks for nothing");
    cat = catalog_of("\"connectionTracking\":{\"udpTimeout\":30}", "", NULL);
    cr_expect(any_available(type_of(cat, "m5.large")), "nitro");
    cr_expect_not(any_available(type_of(cat, "t2.micro")), "xen: no connection tracking");
}

Test(aws_cr_catalog, placement_group_strategy_and_labels)
{
    kp_aws_pg_info cluster = {"pg-1", "cluster", 0};
    const kp_catalog *cat = catalog_of("", "", &cluster);
    const kp_instance_type *m5 = type_of(cat, "m5.large");
    cr_expect(any_available(m5));
    cr_expect_str_eq(values_of(m5, "karpenter.k8s.aws/placement-group-id"), "pg-1");
    cr_expect_eq(req_of(m5, "karpenter.k8s.aws/placement-group-partition")->op,
                 KP_OP_DOES_NOT_EXIST);
    cr_expect_not(any_available(type_of(cat, "c5.large")), "c5.large: no cluster strategy");
    kp_aws_pg_info partition = {"pg-2", "partition", 3};
    cat = catalog_of("", "", &partition);
    cr_expect(any_available(type_of(cat, "c5.large")));
    cr_expect_str_eq(values_of(type_of(cat, "c5.large"),
                               "karpenter.k8s.aws/placement-group-partition"),
                     "1 2 3");
    cat = catalog_of("", "", NULL);
    cr_expect_eq(req_of(type_of(cat, "m5.large"), "karpenter.k8s.aws/placement-group-id")->op,
                 KP_OP_DOES_NOT_EXIST);
}
