/*
 * Capacity reservations on the in-process double (moto has none): selector
 * terms resolved with DescribeCapacityReservations into the status and
 * CapacityReservationsReady, remaining counts as launches take and
 * terminations give back, which reserved offerings a launch may use
 * (Karpenter's reserved filters, capacity blocks, interruptible ODCRs), the
 * launch template and CreateFleet fields of a reserved launch, and the
 * fallback when EC2 finds a reservation exhausted.
 */
#include "cloud/aws/capacityreservation.h"
#include "cloud/aws/launch.h"
#include "cloud/aws/nodeclass.h"
#include "test_aws_provider_fixture.h"
#include "helpers/assert.h"

static kp_aws_reservations *crs;
static kp_aws_nc_resolver *resolver;
static kp_aws_lts *lts;
static kp_aws_launcher *launcher;
static kp_aws_ice_cache *ice;
static kp_catalog *cat;

#define NOW_NS (INT64_C(1767225600) * KP_NS_PER_SEC) /* the fixture clock: 2026-01-01 */

static void setup(void)
{
    fx_init();
    crs = kp_aws_reservations_new(&fx.clock.base);
    ice = kp_aws_ice_cache_new(&fx.clock.base);
    cat = kp_catalog_new("test");
    kp_aws_nc_resolver_opts ro = {.region = "us-west-2",
                                  .cluster_name = "c1",
                                  .kubernetes_version = "1.32",
                                  .clock = &fx.clock.base,
                                  .reservations = crs};
    cr_assert_eq(kp_aws_nc_resolver_new(&resolver, &ro), 0);
    kp_aws_lt_opts lo = {.cluster_name = "c1", .cluster_endpoint = "https://api",
                         .cluster_cidr = "10.100.0.0/16", .clock = &fx.clock.base};
    cr_assert_eq(kp_aws_lts_new(&lts, &lo), 0);
    kp_aws_launcher_opts o = {"c1", lts, resolver, ice, &fx.clock.base, crs};
    cr_assert_eq(kp_aws_launcher_new(&launcher, &o), 0);
}

static void teardown(void)
{
    launcher = kp_aws_launcher_free(launcher);
    lts = kp_aws_lts_free(lts);
    resolver = kp_aws_nc_resolver_free(resolver);
    crs = kp_aws_reservations_free(crs);
    ice = kp_aws_ice_cache_free(ice);
    cat = kp_catalog_free(cat);
    fx_fini();
}

TestSuite(aws_capacity_reservation, .init = setup, .fini = teardown);

/* One item of a DescribeCapacityReservations answer, AWS's field names. */
static const char *cr_item(const char *id, const char *zone, const char *type, const char *imc,
                           const char *rtype, int available, const char *end)
{
    return fmt("<item><capacityReservationId>%s</capacityReservationId><ownerId>123456789012"
               "</ownerId><availabilityZone>%s</availabilityZone><instanceType>%s</instanceType>"
               "<instancePlatform>Linux/UNIX</instancePlatform><tenancy>default</tenancy>"
               "<totalInstanceCount>4</totalInstanceCount><availableInstanceCount>%d"
               "</availableInstanceCount><state>active</state><instanceMatchCriteria>%s"
               "</instanceMatchCriteria>%s%s<tagSet/></item>",
               id, zone, type, available, imc,
               rtype ? fmt("<reservationType>%s</reservationType>", rtype) : "",
               end ? fmt("<endDate>%s</endDate>", end) : "");
}

static const char *crs_answer(const char *items)
{
    return ec2_response("DescribeCapacityReservations", "capacityReservationSet", items);
}

static cJSON *list(const char *terms_json)
{
    const kp_ec2nodeclass *nc = nodeclass(
        fmt("{\"metadata\":{\"name\":\"nc\"},\"spec\":{\"capacityReservationSelectorTerms\":%s}}",
            terms_json));
    cJSON *st = NULL;
    KP_ASSERT_OK(kp_aws_crs_list(crs, fx.ec2, nc->capacity_reservation_selector_terms, nc->n_capacity_reservation_selector_terms, &st));
    return st;
}

Test(aws_capacity_reservation, capacity_reservation_selector_terms_resolve_into_status)
{
    answer(200, crs_answer(cr_item("cr-1", "us-west-2a", "m5.large", "open", "default", 3, NULL)));
    answer(200, crs_answer(fmt(
                    "%s%s%s%s",
                    /* a capacity block 30 minutes from its end: expiring */
                    cr_item("cr-2", "us-west-2b", "p5.48xlarge", "targeted", "capacity-block", 2,
                            "2026-01-01T00:30:00.000Z"),
                    cr_item("cr-3", "us-west-2a", "m5.large", "targeted", NULL, 1,
                            "2025-12-31T23:00:00.000Z"), /* ended: dropped */
                    cr_item("cr-4", "us-west-2a", "m5.large", "somehow", NULL, 1, NULL),
                    cr_item("cr-1", "us-west-2a", "m5.large", "open", "default", 3, NULL))));
    start();
    cJSON *st = list("[{\"id\":\"cr-1\"},{\"tags\":{\"team\":\"ml\",\"any\":\"*\"},\"ownerID\":"
                     "\"123456789012\",\"instanceMatchCriteria\":\"targeted\"}]");
    cr_assert_eq(cJSON_GetArraySize(st), 2, "%s", cJSON_PrintUnformatted(st));
    cr_expect_str_eq(jstr_at(st, "0.id"), "cr-1");
    cr_expect_str_eq(jstr_at(st, "0.availabilityZone"), "us-west-2a");
    cr_expect_str_eq(jstr_at(st, "0.instanceType"), "m5.large");
    cr_expect_str_eq(jstr_at(st, "0.ownerID"), "123456789012");
    cr_expect_str_eq(jstr_at(st, "0.instanceMatchCriteria"), "open");
    cr_expect_str_eq(jstr_at(st, "0.reservationType"), "default");
    cr_expect_str_eq(jstr_at(st, "0.state"), "active");
    cr_expect_str_eq(jstr_at(st, "0.endTime"), "<absent>");
    cr_expect_str_eq(jstr_at(st, "1.id"), "cr-2");
    cr_expect_str_eq(jstr_at(st, "1.reservationType"), "capacity-block");
    cr_expect_str_eq(jstr_at(st, "1.state"), "expiring");
    cr_expect_str_eq(jstr_at(st, "1.endTime"), "2026-01-01T00:30:00Z");
    cr_expect(cJSON_IsFalse(jpath(st, "1.interruptible")));
    cJSON_Delete(st);
    cr_expect_eq(kp_aws_crs_available(crs, "cr-1"), 3);
    cr_expect_eq(kp_aws_crs_available(crs, "cr-2"), 2);
    cr_expect_str_eq(action(0), "DescribeCapacityReservations");
    cr_expect_str_eq(sent(0, "CapacityReservationId.1"), "cr-1");
    cr_expect_str_eq(filter(0, "state"), "active");
    cr_expect_null(sent(0, "MaxResults"), "EC2 refuses MaxResults with ids");
    cr_expect_str_eq(filter(1, "state"), "active");
    cr_expect_str_eq(filter(1, "owner-id"), "123456789012");
    cr_expect_str_eq(filter(1, "tag:team"), "ml");
    cr_expect_str_eq(filter(1, "tag-key"), "any");
    cr_expect_str_eq(filter(1, "instance-match-criteria"), "targeted");
    cr_expect_str_eq(sent(1, "MaxResults"), "1000");
    /* a minute's cache: no second round of requests */
    cJSON_Delete(list("[{\"id\":\"cr-1\"}]"));
    cr_expect_eq(requests(), 2);
}

Test(aws_capacity_reservation, capacity_reservation_unknown_id_is_empty)
{
    answer(400, ec2_error("InvalidCapacityReservationId.NotFound", "The reservation 'cr-9' "
                                                                   "does not exist"));
    start();
    cJSON *st = list("[{\"id\":\"cr-9\"}]");
    cr_expect_eq(cJSON_GetArraySize(st), 0);
    cJSON_Delete(st);
}

Test(aws_capacity_reservation, capacity_reservation_count_tracking)
{
    uint64_t s0 = kp_aws_crs_seqnum(crs);
    kp_aws_crs_set_available(crs, "cr-1", 2);
    uint64_t s1 = kp_aws_crs_seqnum(crs);
    cr_expect_neq(s1, s0, "became available");
    kp_aws_crs_mark_launched(crs, "cr-1");
    cr_expect_eq(kp_aws_crs_available(crs, "cr-1"), 1);
    uint64_t s2 = kp_aws_crs_seqnum(crs);
    cr_expect_neq(s2, s1, "the count changed: catalogs carry it, so they rebuild");
    kp_aws_crs_set_available(crs, "cr-1", 1);
    cr_expect_eq(kp_aws_crs_seqnum(crs), s2, "the same count again: nothing to rebuild");
    kp_aws_crs_mark_launched(crs, "cr-1");
    kp_aws_crs_mark_launched(crs, "cr-1");
    cr_expect_eq(kp_aws_crs_available(crs, "cr-1"), 0, "never below zero");
    cr_expect_neq(kp_aws_crs_seqnum(crs), s1);
    kp_aws_crs_mark_terminated(crs, "cr-1");
    cr_expect_eq(kp_aws_crs_available(crs, "cr-1"), 1);
    kp_aws_crs_mark_unavailable(crs, "cr-1");
    cr_expect_eq(kp_aws_crs_available(crs, "cr-1"), 0);
    kp_aws_crs_mark_launched(crs, "cr-unknown");
    kp_aws_crs_mark_terminated(crs, "cr-unknown");
    cr_expect_eq(kp_aws_crs_available(crs, "cr-unknown"), 0, "unknown reservations stay unknown");
    kp_aws_crs_set_available(crs, "cr-1", 5);
    fx.clock.ns += KP_AWS_CR_AVAILABILITY_TTL_NS + KP_NS_PER_SEC;
    cr_expect_eq(kp_aws_crs_available(crs, "cr-1"), 0, "counts not refreshed in a day expire");
}

/* ----------------------------------------------------- the node class status */

#define FULL_SPEC                                                                                  \
    "\"instanceProfile\":\"ip\",\"subnetSelectorTerms\":[{\"id\":\"subnet-1\"}],"                  \
    "\"securityGroupSelectorTerms\":[{\"id\":\"sg-1\"}],\"amiSelectorTerms\":[{\"id\":\"ami-1\"}],"  \
    "\"capacityReservationSelectorTerms\":[{\"id\":\"cr-1\"}]"

static void answer_selectors(void)
{
    answer(200, subnets(subnet("subnet-1", "us-west-2a", "usw2-az1", 9)));
    answer(200, groups(group("sg-1", "g")));
    answer(200, images(image("ami-1", "a", "x86_64", "2025-01-01T00:00:00Z", NULL)));
}

static const cJSON *condition(const cJSON *st, const char *type)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(st, "conditions"))
    {
        if (strcmp(jstr_at(c, "type"), type) == 0) return c;
    }
    cr_assert_fail("no %s condition", type);
    return NULL;
}

static int resolve_err;

static cJSON *resolve(void)
{
    const kp_ec2nodeclass *nc =
        nodeclass("{\"metadata\":{\"name\":\"nc\",\"generation\":1},\"spec\":{" FULL_SPEC "}}");
    kp_aws_nc_clients c = {fx.ec2, fx.ssm, fx.iam};
    cJSON *st = NULL;
    resolve_err = kp_aws_nc_resolve(resolver, &c, nc, &st);
    return resolve_err == 0 ? st : NULL;
}

Test(aws_capacity_reservation, capacity_reservations_ready_with_status)
{
    answer_selectors();
    answer(200, crs_answer(cr_item("cr-1", "us-west-2a", "m5.large", "targeted", NULL, 2, NULL)));
    start();
    cJSON *st = resolve();
    cr_assert_not_null(st, "%s", kp_error_last());
    cr_expect_str_eq(jstr_at(st, "capacityReservations.0.id"), "cr-1");
    cr_expect_str_eq(jstr_at(condition(st, "CapacityReservationsReady"), "status"), "True");
    cr_expect_str_eq(jstr_at(condition(st, "Ready"), "status"), "True");
    /* the status decodes back for launches */
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddItemToObject(doc, "status", st);
    kp_ec2nodeclass back;
    KP_ASSERT_OK(kp_decode_ec2nodeclass(fx.arena, doc, &back));
    cr_expect_eq(back.n_status_capacity_reservations, 1);
    cr_expect_str_eq(back.status_capacity_reservations[0].instance_type, "m5.large");
    cJSON_Delete(doc);
}

Test(aws_capacity_reservation, capacity_reservations_not_ready_with_aws_code_and_message)
{
    answer_selectors();
    answer(403, ec2_error("UnauthorizedOperation", "You are not authorized to perform "
                                                   "ec2:DescribeCapacityReservations"));
    start();
    cJSON *st = resolve();
    cr_assert_not_null(st, "%s", kp_error_last());
    const cJSON *c = condition(st, "CapacityReservationsReady");
    cr_expect_str_eq(jstr_at(c, "status"), "False");
    cr_expect_str_eq(jstr_at(c, "reason"), "CapacityReservationResolutionFailed");
    cr_expect(strstr(jstr_at(c, "message"), "UnauthorizedOperation: You are not authorized") !=
                  NULL,
              "%s", jstr_at(c, "message"));
    cr_expect_str_eq(jstr_at(condition(st, "Ready"), "status"), "False");
    cr_expect(strstr(jstr_at(condition(st, "Ready"), "message"), "CapacityReservationsReady") !=
              NULL);
    cJSON_Delete(st);
}

Test(aws_capacity_reservation, capacity_reservations_throttled_is_retried)
{
    answer_selectors();
    answer(503, ec2_error("RequestLimitExceeded", "Request limit exceeded."));
    start();
    cr_expect_null(resolve());
    cr_expect_eq(resolve_err, KP_ERETRY, "%s", kp_error_last());
}

Test(aws_capacity_reservation, capacity_reservations_refused_when_the_gate_is_off)
{
    kp_aws_nc_resolver *off = NULL;
    kp_aws_nc_resolver_opts ro = {.region = "us-west-2", .cluster_name = "c1",
                                  .clock = &fx.clock.base};
    cr_assert_eq(kp_aws_nc_resolver_new(&off, &ro), 0);
    answer_selectors();
    start();
    const kp_ec2nodeclass *nc =
        nodeclass("{\"metadata\":{\"name\":\"nc\",\"generation\":1},\"spec\":{" FULL_SPEC "}}");
    kp_aws_nc_clients c = {fx.ec2, fx.ssm, fx.iam};
    cJSON *st = NULL;
    KP_ASSERT_OK(kp_aws_nc_resolve(off, &c, nc, &st));
    const cJSON *cond = condition(st, "CapacityReservationsReady");
    cr_expect_str_eq(jstr_at(cond, "status"), "False", "never accepted and ignored");
    cr_expect_str_eq(jstr_at(cond, "reason"), "ReservedCapacityDisabled");
    cJSON_Delete(st);
    kp_aws_nc_resolver_free(off);
}

/* ------------------------------------------------------------- selection */

/* A reserved offering of `t` in `zone` for reservation `id`. */
static void reserved_offering(kp_instance_type *t, const char *zone, const char *id, double price)
{
    kp_it_add_offering(cat, t, zone, "reserved", price, true);
    t->offerings[t->n_offerings - 1].reservation_id = kp_arena_strdup(cat->arena, id);
}

/* A class whose status lists `reservations` (JSON array items). */
static const kp_ec2nodeclass *class_with(const char *reservations)
{
    return nodeclass(fmt(
        "{\"metadata\":{\"name\":\"nc\",\"generation\":1},\"spec\":{\"amiFamily\":\"AL2023\","
        "\"subnetSelectorTerms\":[{\"tags\":{\"k\":\"v\"}}]},\"status\":{\"instanceProfile\":"
        "\"prof\",\"securityGroups\":[{\"id\":\"sg-1\"}],\"subnets\":[{\"id\":\"subnet-a\","
        "\"zone\":\"us-west-2a\"},{\"id\":\"subnet-b\",\"zone\":\"us-west-2b\"}],\"amis\":[{\"id\":"
        "\"ami-x86\",\"requirements\":[{\"key\":\"kubernetes.io/arch\",\"operator\":\"In\","
        "\"values\":[\"amd64\"]}]}],\"capacityReservations\":[%s]}}",
        reservations));
}

static const char *cr_status(const char *id, const char *zone, const char *type,
                             const char *extra)
{
    return fmt("{\"id\":\"%s\",\"availabilityZone\":\"%s\",\"instanceType\":\"%s\",\"ownerID\":"
               "\"123456789012\",\"instanceMatchCriteria\":\"targeted\"%s}",
               id, zone, type, extra);
}

static const kp_nodeclaim *claim_req(const char *requirements)
{
    return nodeclaim(fmt("{\"metadata\":{\"name\":\"claim-1\",\"labels\":{"
                         "\"karpenter.sh/nodepool\":\"pool\"}},\"spec\":{\"nodeClassRef\":{"
                         "\"name\":\"nc\"},\"requirements\":[%s]}}",
                         requirements));
}

#define ANY_CT                                                                                     \
    "{\"key\":\"karpenter.sh/capacity-type\",\"operator\":\"In\",\"values\":[\"reserved\","        \
    "\"spot\",\"on-demand\"]}"

static kp_aws_launch_choice choose(const kp_ec2nodeclass *nc, const kp_nodeclaim *c)
{
    kp_aws_launch_reservations r = {nc, crs};
    kp_aws_launch_choice ch;
    KP_ASSERT_OK(kp_aws_launch_select(cat, c, ice, &r, NULL, fx.arena, &ch));
    return ch;
}

/* "type/zone/reservation" of every usable offering, joined by ' '. */
static const char *usable(const kp_aws_launch_choice *ch)
{
    const char *s = "";
    for (uint32_t i = 0; i < ch->n_types; i++)
        for (uint32_t j = 0; j < ch->types[i]->n_offerings; j++) {
            const kp_offering *o = &ch->types[i]->offerings[j];
            if (!ch->usable[i][j]) continue;
            s = fmt("%s%s%s/%s/%s", s, *s ? " " : "", ch->types[i]->name, o->zone,
                    o->reservation_id ? o->reservation_id : o->capacity_type);
        }
    return s;
}

Test(aws_capacity_reservation, capacity_reservation_is_preferred_over_spot_and_on_demand)
{
    kp_instance_type *m5 = cat_type(cat, "m5.large", "amd64", 0.096, 0.04, 2, 29);
    cat_type(cat, "c5.large", "amd64", 0.085, 0.03, 2, 29);
    reserved_offering(m5, "us-west-2a", "cr-1", 0.096 / 1e7);
    const kp_ec2nodeclass *nc = class_with(cr_status("cr-1", "us-west-2a", "m5.large", ""));
    kp_aws_crs_set_available(crs, "cr-1", 1);
    kp_aws_launch_choice ch = choose(nc, claim_req(ANY_CT));
    cr_expect_str_eq(ch.capacity_type, "reserved");
    cr_expect_str_eq(ch.reservation_type, "default");
    cr_expect_not(ch.reservation_interruptible);
    cr_expect_str_eq(usable(&ch), "m5.large/us-west-2a/cr-1", "only the reservation");
    /* a claim that does not allow reserved capacity launches as before */
    ch = choose(nc, claim_req("{\"key\":\"karpenter.sh/capacity-type\",\"operator\":\"In\","
                              "\"values\":[\"spot\",\"on-demand\"]}"));
    cr_expect_str_eq(ch.capacity_type, "spot");
    /* no room left: the reservation is not used */
    kp_aws_crs_mark_launched(crs, "cr-1");
    ch = choose(nc, claim_req(ANY_CT));
    cr_expect_str_eq(ch.capacity_type, "spot", "exhausted reservation falls back");
}

Test(aws_capacity_reservation, capacity_reservation_pinned_claim_and_expiring_blocks)
{
    kp_instance_type *m5 = cat_type(cat, "m5.large", "amd64", 0.096, 0.04, 2, 29);
    reserved_offering(m5, "us-west-2a", "cr-1", 1e-8);
    reserved_offering(m5, "us-west-2b", "cr-2", 1e-8);
    kp_instance_type *p5 = cat_type(cat, "p5.48xlarge", "amd64", 98.0, -1, 192, 100);
    reserved_offering(p5, "us-west-2b", "cr-3", 1e-6);
    const kp_ec2nodeclass *nc = class_with(
        fmt("%s,%s,%s", cr_status("cr-1", "us-west-2a", "m5.large", ""),
            cr_status("cr-2", "us-west-2b", "m5.large", ""),
            cr_status("cr-3", "us-west-2b", "p5.48xlarge",
                      ",\"reservationType\":\"capacity-block\",\"state\":\"expiring\"")));
    kp_aws_crs_set_available(crs, "cr-1", 1);
    kp_aws_crs_set_available(crs, "cr-2", 1);
    kp_aws_crs_set_available(crs, "cr-3", 1);
    /* a claim the solver pinned to cr-2 launches there and nowhere else */
    kp_aws_launch_choice ch =
        choose(nc, claim_req(ANY_CT ",{\"key\":\"karpenter.k8s.aws/capacity-reservation-id\","
                                    "\"operator\":\"In\",\"values\":[\"cr-2\"]}"));
    cr_expect_str_eq(usable(&ch), "m5.large/us-west-2b/cr-2");
    kp_aws_crs_mark_unavailable(crs, "cr-2");
    kp_aws_launch_reservations r = {nc, crs};
    cr_expect_eq(kp_aws_launch_select(cat,
                                      claim_req(ANY_CT ",{\"key\":\"karpenter.k8s.aws/"
                                                       "capacity-reservation-id\",\"operator\":"
                                                       "\"In\",\"values\":[\"cr-2\"]}"),
                                      ice, &r, NULL, fx.arena, &ch),
                 KP_EINSUFFICIENT_CAPACITY, "pinned to an exhausted reservation: no fallback");
    /* an expiring capacity block takes no new instances */
    ch = choose(nc, claim_req(ANY_CT ",{\"key\":\"node.kubernetes.io/instance-type\",\"operator\":"
                                     "\"In\",\"values\":[\"p5.48xlarge\"]}"));
    cr_expect_str_eq(ch.capacity_type, "on-demand");
}

Test(aws_capacity_reservation, capacity_block_one_type_and_one_reservation_per_zone)
{
    kp_instance_type *p5 = cat_type(cat, "p5.48xlarge", "amd64", 98.0, -1, 192, 100);
    kp_instance_type *p4 = cat_type(cat, "p4d.24xlarge", "amd64", 32.0, -1, 96, 100);
    reserved_offering(p5, "us-west-2b", "cr-b1", 98.0 / 1e7);
    reserved_offering(p4, "us-west-2b", "cr-b2", 32.0 / 1e7);
    const char *block = ",\"reservationType\":\"capacity-block\"";
    const kp_ec2nodeclass *nc =
        class_with(fmt("%s,%s", cr_status("cr-b1", "us-west-2b", "p5.48xlarge", block),
                       cr_status("cr-b2", "us-west-2b", "p4d.24xlarge", block)));
    kp_aws_crs_set_available(crs, "cr-b1", 2);
    kp_aws_crs_set_available(crs, "cr-b2", 2);
    kp_aws_launch_choice ch = choose(nc, claim_req(ANY_CT));
    cr_expect_str_eq(ch.capacity_type, "reserved");
    cr_expect_str_eq(ch.reservation_type, "capacity-block");
    cr_expect_str_eq(usable(&ch), "p4d.24xlarge/us-west-2b/cr-b2",
                     "a fleet takes one capacity block: the cheapest");

    kp_catalog_free(cat);
    cat = kp_catalog_new("test");
    kp_instance_type *m5 = cat_type(cat, "m5.large", "amd64", 0.096, 0.04, 2, 29);
    reserved_offering(m5, "us-west-2a", "cr-small", 1e-8);
    reserved_offering(m5, "us-west-2a", "cr-big", 1e-8);
    reserved_offering(m5, "us-west-2b", "cr-int", 1e-9);
    nc = class_with(fmt("%s,%s,%s", cr_status("cr-small", "us-west-2a", "m5.large", ""),
                        cr_status("cr-big", "us-west-2a", "m5.large", ""),
                        cr_status("cr-int", "us-west-2b", "m5.large", ",\"interruptible\":true")));
    kp_aws_crs_set_available(crs, "cr-small", 1);
    kp_aws_crs_set_available(crs, "cr-big", 5);
    kp_aws_crs_set_available(crs, "cr-int", 5);
    ch = choose(nc, claim_req(ANY_CT));
    cr_expect_str_eq(ch.capacity_type, "reserved");
    cr_expect(ch.reservation_interruptible, "the interruptible ODCR was cheapest");
    cr_expect_str_eq(usable(&ch), "m5.large/us-west-2b/cr-int");
    ch = choose(nc, claim_req(ANY_CT ",{\"key\":\"karpenter.k8s.aws/capacity-reservation-"
                                     "interruptible\",\"operator\":\"In\",\"values\":[\"false\"]}"));
    cr_expect_not(ch.reservation_interruptible);
    cr_expect_str_eq(usable(&ch), "m5.large/us-west-2a/cr-big", "one per zone: the most room");
}

/* ---------------------------------------------------------------- launch */

static void answer_subnets(void)
{
    answer(200, subnets(fmt("%s%s", subnet("subnet-a", "us-west-2a", "usw2-az1", 10),
                            subnet("subnet-b", "us-west-2b", "usw2-az2", 20))));
}

static void answer_new_template(const char *id)
{
    answer(400, ec2_error("InvalidLaunchTemplateName.NotFoundException", "no"));
    answer(200, fmt("<CreateLaunchTemplateResponse><launchTemplate><launchTemplateId>%s"
                    "</launchTemplateId><launchTemplateName>x</launchTemplateName>"
                    "</launchTemplate></CreateLaunchTemplateResponse>",
                    id));
}

static size_t find(const char *name, size_t from)
{
    for (size_t i = from; i < requests(); i++)
        if (strcmp(action(i), name) == 0) return i;
    cr_assert_fail("no %s request after %zu", name, from);
    return 0;
}

static int launch(const kp_ec2nodeclass *nc, const kp_nodeclaim *c, kp_aws_launched *out)
{
    kp_aws_nc_clients cl = {fx.ec2, fx.ssm, fx.iam};
    return kp_aws_launch(launcher, &cl, nc, c, cat, fx.arena, out);
}

Test(aws_capacity_reservation, capacity_reservation_launch_targets_the_reservation)
{
    kp_instance_type *m5 = cat_type(cat, "m5.large", "amd64", 0.096, 0.04, 2, 29);
    reserved_offering(m5, "us-west-2a", "cr-1", 0.096 / 1e7);
    const kp_ec2nodeclass *nc = class_with(cr_status("cr-1", "us-west-2a", "m5.large", ""));
    kp_aws_crs_set_available(crs, "cr-1", 2);
    answer_subnets();
    answer_new_template("lt-1");
    answer(200, fleet(fleet_instance("i-1", "m5.large", "us-west-2a", "subnet-a", "on-demand"), ""));
    start();
    kp_aws_launched out;
    KP_ASSERT_OK(launch(nc, claim_req(ANY_CT), &out));
    cr_expect_str_eq(out.capacity_type, "reserved");
    cr_expect_str_eq(out.reservation_id, "cr-1");
    cr_expect_str_eq(out.reservation_type, "default");
    cr_expect_eq(kp_aws_crs_available(crs, "cr-1"), 1, "the launch took one");
    size_t lt = find("CreateLaunchTemplate", 0);
    cr_expect_str_eq(sent(lt, "LaunchTemplateData.CapacityReservationSpecification."
                              "CapacityReservationPreference"),
                     "capacity-reservations-only");
    cr_expect_str_eq(sent(lt, "LaunchTemplateData.CapacityReservationSpecification."
                              "CapacityReservationTarget.CapacityReservationId"),
                     "cr-1");
    cr_expect_null(sent(lt, "LaunchTemplateData.InstanceMarketOptions.MarketType"));
    size_t f = find("CreateFleet", 0);
    cr_expect_str_eq(sent(f, "TargetCapacitySpecification.DefaultTargetCapacityType"),
                     "on-demand");
    cr_expect_str_eq(sent(f, "OnDemandOptions.AllocationStrategy"), "lowest-price");
    cr_expect_str_eq(sent(f, "LaunchTemplateConfigs.1.Overrides.1.AvailabilityZone"),
                     "us-west-2a");
    cr_expect_null(sent(f, "LaunchTemplateConfigs.1.Overrides.2.InstanceType"),
                   "only the reservation's zone");
}

Test(aws_capacity_reservation, capacity_block_launch_market_type)
{
    kp_instance_type *p5 = cat_type(cat, "p5.48xlarge", "amd64", 98.0, -1, 192, 100);
    reserved_offering(p5, "us-west-2b", "cr-b", 98.0 / 1e7);
    const kp_ec2nodeclass *nc = class_with(
        cr_status("cr-b", "us-west-2b", "p5.48xlarge", ",\"reservationType\":\"capacity-block\""));
    kp_aws_crs_set_available(crs, "cr-b", 1);
    answer_subnets();
    answer_new_template("lt-b");
    answer(200,
           fleet(fleet_instance("i-2", "p5.48xlarge", "us-west-2b", "subnet-b", "capacity-block"),
                 ""));
    start();
    kp_aws_launched out;
    KP_ASSERT_OK(launch(nc, claim_req(ANY_CT), &out));
    cr_expect_str_eq(out.reservation_type, "capacity-block");
    size_t lt = find("CreateLaunchTemplate", 0);
    cr_expect_str_eq(sent(lt, "LaunchTemplateData.InstanceMarketOptions.MarketType"),
                     "capacity-block");
    size_t f = find("CreateFleet", 0);
    cr_expect_str_eq(sent(f, "TargetCapacitySpecification.DefaultTargetCapacityType"),
                     "capacity-block");
    cr_expect_null(sent(f, "OnDemandOptions.AllocationStrategy"), "none for capacity blocks");
}

Test(aws_capacity_reservation, interruptible_capacity_reservation_launch)
{
    kp_instance_type *m5 = cat_type(cat, "m5.large", "amd64", 0.096, 0.04, 2, 29);
    reserved_offering(m5, "us-west-2a", "cr-i", 1e-9);
    const kp_ec2nodeclass *nc =
        class_with(cr_status("cr-i", "us-west-2a", "m5.large", ",\"interruptible\":true"));
    kp_aws_crs_set_available(crs, "cr-i", 1);
    answer_subnets();
    answer_new_template("lt-i");
    answer(200, fleet(fleet_instance("i-3", "m5.large", "us-west-2a", "subnet-a", "on-demand"), ""));
    start();
    kp_aws_launched out;
    KP_ASSERT_OK(launch(nc, claim_req(ANY_CT), &out));
    cr_expect(out.reservation_interruptible);
    size_t lt = find("CreateLaunchTemplate", 0);
    cr_expect_str_eq(sent(lt, "LaunchTemplateData.InstanceMarketOptions.MarketType"),
                     "interruptible-capacity-reservation");
    size_t f = find("CreateFleet", 0);
    cr_expect_str_eq(sent(f, "TargetCapacitySpecification.DefaultTargetCapacityType"),
                     "reserved-capacity");
    cr_expect_str_eq(sent(f, "ReservedCapacityOptions.ReservationType.1"),
                     "interruptible-capacity-reservation");
}

Test(aws_capacity_reservation, capacity_reservation_exhausted_ice_falls_back_to_on_demand)
{
    kp_instance_type *m5 = cat_type(cat, "m5.large", "amd64", 0.096, -1, 2, 29);
    reserved_offering(m5, "us-west-2a", "cr-1", 0.096 / 1e7);
    const kp_ec2nodeclass *nc = class_with(cr_status("cr-1", "us-west-2a", "m5.large", ""));
    kp_aws_crs_set_available(crs, "cr-1", 3); /* EC2 knows better: it is full */
    answer_subnets();
    answer_new_template("lt-r");
    answer(200, fleet("", fleet_error("ReservationCapacityExceeded", "m5.large", "us-west-2a",
                                      "subnet-a")));
    answer_new_template("lt-od"); /* the on-demand template, subnets cached */
    answer(200, fleet(fleet_instance("i-4", "m5.large", "us-west-2b", "subnet-b", "on-demand"), ""));
    start();
    kp_aws_launched out;
    KP_ASSERT_OK(launch(nc, claim_req(ANY_CT), &out));
    cr_expect_str_eq(out.capacity_type, "on-demand");
    cr_expect_null(out.reservation_id);
    cr_expect_eq(kp_aws_crs_available(crs, "cr-1"), 0, "marked exhausted, not ICE-cached");
    cr_expect_not(kp_aws_ice_unavailable(ice, "reserved", "m5.large", "us-west-2a"));
    size_t second = find("CreateFleet", find("CreateFleet", 0) + 1);
    cr_expect_str_eq(sent(second, "TargetCapacitySpecification.DefaultTargetCapacityType"),
                     "on-demand");
    size_t lt2 = find("CreateLaunchTemplate", find("CreateLaunchTemplate", 0) + 1);
    cr_expect_str_eq(sent(lt2, "LaunchTemplateData.CapacityReservationSpecification."
                               "CapacityReservationPreference"),
                     "none", "plain launches stay out of open reservations");
}

Test(aws_capacity_reservation, capacity_reservation_exhausted_and_pinned_is_ice)
{
    kp_instance_type *m5 = cat_type(cat, "m5.large", "amd64", 0.096, -1, 2, 29);
    reserved_offering(m5, "us-west-2a", "cr-1", 0.096 / 1e7);
    const kp_ec2nodeclass *nc = class_with(cr_status("cr-1", "us-west-2a", "m5.large", ""));
    kp_aws_crs_set_available(crs, "cr-1", 1);
    answer_subnets();
    answer_new_template("lt-r");
    answer(200, fleet("", fleet_error("InsufficientInstanceCapacity", "m5.large", "us-west-2a",
                                      "subnet-a")));
    start();
    kp_aws_launched out;
    cr_expect_eq(launch(nc,
                        claim_req("{\"key\":\"karpenter.sh/capacity-type\",\"operator\":\"In\","
                                  "\"values\":[\"reserved\"]}"),
                        &out),
                 KP_EINSUFFICIENT_CAPACITY,
                 "the claim goes and is provisioned again, without the reservation");
    cr_expect(strstr(kp_error_last(), "InsufficientInstanceCapacity") != NULL, "%s",
              kp_error_last());
    cr_expect_eq(kp_aws_crs_available(crs, "cr-1"), 0);
}

/* --------------------------------------------------------- placement group */

#define PG_SPEC(sel)                                                                               \
    "\"instanceProfile\":\"ip\",\"subnetSelectorTerms\":[{\"id\":\"subnet-1\"}],"                  \
    "\"securityGroupSelectorTerms\":[{\"id\":\"sg-1\"}],\"amiSelectorTerms\":[{\"id\":\"ami-1\"}],"  \
    "\"placementGroupSelector\":" sel

static const char *pg_answer(const char *items)
{
    return ec2_response("DescribePlacementGroups", "placementGroupSet", items);
}

static cJSON *resolve_spec(const char *spec)
{
    const kp_ec2nodeclass *nc =
        nodeclass(fmt("{\"metadata\":{\"name\":\"nc\",\"generation\":1},\"spec\":{%s}}", spec));
    kp_aws_nc_clients c = {fx.ec2, fx.ssm, fx.iam};
    cJSON *st = NULL;
    resolve_err = kp_aws_nc_resolve(resolver, &c, nc, &st);
    return st;
}

Test(aws_capacity_reservation, placement_group_ready_not_found_and_failed)
{
    answer_selectors();
    answer(200, pg_answer("<item><groupName>training</groupName><strategy>partition</strategy>"
                          "<state>available</state><groupId>pg-1</groupId><partitionCount>3"
                          "</partitionCount></item>"));
    answer(200, pg_answer(""));
    answer(400, ec2_error("InvalidPlacementGroup.Unknown", "The Placement Group 'x' is unknown."));
    answer(403, ec2_error("UnauthorizedOperation", "not allowed: ec2:DescribePlacementGroups"));
    start();
    cJSON *st = resolve_spec(PG_SPEC("{\"name\":\"training\"}"));
    cr_assert_not_null(st, "%s", kp_error_last());
    cr_expect_str_eq(jstr_at(condition(st, "PlacementGroupReady"), "status"), "True");
    cJSON_Delete(st);
    cr_expect_str_eq(sent(3, "GroupName.1"), "training");
    cr_expect_str_eq(filter(3, "state"), "available");
    st = resolve_spec(PG_SPEC("{\"name\":\"none\"}"));
    const cJSON *c = condition(st, "PlacementGroupReady");
    cr_expect_str_eq(jstr_at(c, "reason"), "PlacementGroupNotFound");
    cr_expect_str_eq(jstr_at(c, "message"), "Placement group \"none\" not found");
    cJSON_Delete(st);
    st = resolve_spec(PG_SPEC("{\"id\":\"pg-9\"}"));
    cr_expect_str_eq(jstr_at(condition(st, "PlacementGroupReady"), "reason"),
                     "PlacementGroupNotFound", "EC2's Unknown is not found");
    cJSON_Delete(st);
    cr_expect_str_eq(sent(5, "GroupId.1"), "pg-9");
    st = resolve_spec(PG_SPEC("{\"id\":\"pg-8\"}"));
    c = condition(st, "PlacementGroupReady");
    cr_expect_str_eq(jstr_at(c, "reason"), "PlacementGroupResolutionFailed");
    cr_expect(strstr(jstr_at(c, "message"), "UnauthorizedOperation") != NULL);
    cr_expect_str_eq(jstr_at(condition(st, "Ready"), "status"), "False");
    cJSON_Delete(st);
}

Test(aws_capacity_reservation, placement_group_last_good_kept_when_ec2_fails)
{
    answer(200, pg_answer("<item><groupName>training</groupName><strategy>cluster</strategy>"
                          "<state>available</state><groupId>pg-1</groupId></item>"));
    answer(500, ec2_error("InternalError", "An internal error has occurred"));
    start();
    const kp_ec2nodeclass *nc = nodeclass("{\"metadata\":{\"name\":\"nc\"},\"spec\":{"
                                          "\"placementGroupSelector\":{\"name\":\"training\"}}}");
    kp_aws_pg_info pg;
    bool found = false;
    cr_assert_eq(kp_aws_nc_placement_group(resolver, fx.ec2, nc, fx.arena, &pg, &found), 0);
    cr_expect(found);
    cr_expect_str_eq(pg.id, "pg-1");
    cr_expect_str_eq(pg.strategy, "cluster");
    fx.clock.ns += 61 * KP_NS_PER_SEC; /* past the minute's cache */
    cr_expect_eq(kp_aws_nc_placement_group(resolver, fx.ec2, nc, fx.arena, &pg, &found),
                 KP_ERETRY);
    cr_expect(found, "the last group found stands in");
    cr_expect_str_eq(pg.id, "pg-1");
}
