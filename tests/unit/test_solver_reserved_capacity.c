/*
 * Solver scenarios: capacity reservations within one solve (Karpenter's
 * ReservationManager). A reservation with N places left takes at most N of
 * the solve's NodeClaims, each pinned to it (capacity-type reserved and its
 * capacity-reservation-id); the rest fall back to on-demand or spot, or wait
 * when their NodePool offers nothing else. The catalog-file fields that carry
 * a reservation (reservationID, reservationCapacity) are checked too.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "cloud/instance_types.h"
#include "helpers/scenario.h"

#include "solver_scenarios.h"

#define CT             "karpenter.sh/capacity-type"
#define CR_ID          "karpenter.k8s.aws/capacity-reservation-id"
#define REQ(key, vals) "{key: " key ", operator: In, values: [" vals "]}"

/* One 4-CPU type: on-demand and spot in zones 1 and 2, and the reserved
 * offerings `reserved` (JSON objects, each with a leading comma). */
static const char *catalog(char *buf, size_t n, const char *reserved)
{
    snprintf(buf, n,
             "json:[{\"name\":\"m-4\",\"capacity\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":"
             "\"110\"}," FAKE_OVERHEAD ",\"offerings\":["
             "{\"zone\":\"test-zone-1\",\"capacityType\":\"on-demand\",\"price\":0.2},"
             "{\"zone\":\"test-zone-2\",\"capacityType\":\"on-demand\",\"price\":0.2},"
             "{\"zone\":\"test-zone-1\",\"capacityType\":\"spot\",\"price\":0.1},"
             "{\"zone\":\"test-zone-2\",\"capacityType\":\"spot\",\"price\":0.1}%s]}]",
             reserved);
    return buf;
}

#define RESERVED(id, zone, left)                                                                   \
    ",{\"zone\":\"" zone                                                                           \
    "\",\"capacityType\":\"reserved\",\"price\":0.00002,\"reservationID\":\"" id                   \
    "\",\"reservationCapacity\":" #left "}"

/* `n` pods that each need a node of their own (3 of its 4 CPUs). */
static void big_pods(yb *y, int n)
{
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        pod(y, name, "cpu: '3'", NULL);
    }
}

static int count_ct(const kp_scenario *s, const char *ct)
{
    int n = 0;
    for (uint32_t c = 0; c < s->plan->n_claims; c++)
        n += strcmp(claim_ct(s, (int)c), ct) == 0;
    return n;
}

/* Every claim planned onto reserved capacity is pinned to it and to one
 * reservation; every other one excludes reserved capacity and names none. */
static void expect_pins(kp_scenario *s)
{
    for (uint32_t c = 0; c < s->plan->n_claims; c++) {
        const char *ct = kp_scenario_claim_req(s, (int)c, CT);
        const char *id = kp_scenario_claim_req(s, (int)c, CR_ID);
        if (strcmp(claim_ct(s, (int)c), "reserved") == 0) {
            cr_expect_str_eq(ct, "In [reserved]", "claim %u", c);
            cr_expect(id && !strncmp(id, "In [cr-", 7) && !strchr(id + 4, ' '),
                      "claim %u holds one: %s", c, id);
        } else {
            cr_expect(ct && !strstr(ct, "reserved"), "claim %u falls back: %s", c, ct);
            cr_expect_null(id, "claim %u names no reservation: %s", c, id);
        }
    }
}

Test(solver_reserved, capacity_reservation_count_caps_claims_in_one_solve)
{
    kp_scenario s = {0};
    yb y = {0};
    char buf[2048];
    pool(&y, "default", REQ(CT, "reserved, on-demand"), NULL, NULL, NULL);
    big_pods(&y, 5);
    run(&s, &y, catalog(buf, sizeof(buf), RESERVED("cr-1", "test-zone-1", 2)));
    cr_assert_eq(s.plan->n_claims, 5, "a node per pod");
    cr_expect_eq(s.plan->n_errors, 0);
    cr_expect_eq(count_ct(&s, "reserved"), 2, "the reservation has 2 places left");
    cr_expect_eq(count_ct(&s, "on-demand"), 3, "the rest fall back");
    for (uint32_t c = 0; c < s.plan->n_claims; c++)
        if (!strcmp(claim_ct(&s, (int)c), "reserved")) {
            cr_expect_str_eq(kp_scenario_claim_req(&s, (int)c, CR_ID), "In [cr-1]");
            cr_expect_str_eq(claim_zone(&s, (int)c), "test-zone-1", "the reservation's zone");
        }
    expect_pins(&s);
    cr_expect(s.plan->hourly_cost > 3 * 0.2 - 1e-9 && s.plan->hourly_cost < 3 * 0.2 + 1e-3,
              "priced as launched: %g", s.plan->hourly_cost);
    kp_scenario_free(&s);
}

Test(solver_reserved, capacity_reservation_exhausted_falls_back_to_spot)
{
    kp_scenario s = {0};
    yb y = {0};
    char buf[2048];
    pool(&y, "default", REQ(CT, "reserved, spot, on-demand"), NULL, NULL, NULL);
    big_pods(&y, 3);
    run(&s, &y, catalog(buf, sizeof(buf), RESERVED("cr-1", "test-zone-2", 0)));
    cr_expect_eq(count_ct(&s, "reserved"), 0, "no place left at all");
    cr_expect_eq(count_ct(&s, "spot"), 3);
    expect_pins(&s);
    kp_scenario_free(&s);
}

Test(solver_reserved, capacity_reservation_each_claim_holds_one_reservation)
{
    kp_scenario s = {0};
    yb y = {0};
    char buf[2048];
    pool(&y, "default", REQ(CT, "reserved, on-demand"), NULL, NULL, NULL);
    big_pods(&y, 4);
    run(&s, &y,
        catalog(buf, sizeof(buf),
                RESERVED("cr-1", "test-zone-1", 1) RESERVED("cr-2", "test-zone-2", 1)));
    cr_assert_eq(s.plan->n_claims, 4);
    cr_expect_eq(count_ct(&s, "reserved"), 2, "both reservations used in the same solve");
    int held1 = 0, held2 = 0;
    for (uint32_t c = 0; c < s.plan->n_claims; c++) {
        const char *id = kp_scenario_claim_req(&s, (int)c, CR_ID);
        held1 += id && !strcmp(id, "In [cr-1]");
        held2 += id && !strcmp(id, "In [cr-2]");
    }
    cr_expect_eq(held1, 1);
    cr_expect_eq(held2, 1);
    expect_pins(&s);
    kp_scenario_free(&s);
}

Test(solver_reserved, capacity_reservation_only_pool_leaves_the_rest_pending)
{
    kp_scenario s = {0};
    yb y = {0};
    char buf[2048];
    pool(&y, "default", REQ(CT, "reserved"), NULL, NULL, NULL);
    big_pods(&y, 3);
    run(&s, &y, catalog(buf, sizeof(buf), RESERVED("cr-1", "test-zone-1", 1)));
    cr_expect_eq(s.plan->n_claims, 1);
    cr_expect_eq(count_ct(&s, "reserved"), 1);
    cr_expect_eq(s.plan->n_errors, 2, "no other offering: two pods wait for a later batch");
    cr_expect_eq(s.plan->n_scheduled, 1);
    for (uint32_t i = 0; i < s.plan->n_errors; i++)
        cr_expect(strstr(s.plan->errors[i].reason, "could not be reserved"), "%s",
                  s.plan->errors[i].reason);
    kp_scenario_free(&s);
}

Test(solver_reserved, capacity_reservation_id_requirement_chooses_the_reservation)
{
    kp_scenario s = {0};
    yb y = {0};
    char buf[2048];
    pool(&y, "default", REQ(CT, "reserved, on-demand") ", " REQ(CR_ID, "cr-2"), NULL, NULL, NULL);
    big_pods(&y, 2);
    run(&s, &y,
        catalog(buf, sizeof(buf),
                RESERVED("cr-1", "test-zone-1", 5) RESERVED("cr-2", "test-zone-2", 1)));
    cr_expect_eq(count_ct(&s, "reserved"), 1, "cr-2 has one place; cr-1 is not allowed");
    for (uint32_t c = 0; c < s.plan->n_claims; c++)
        if (!strcmp(claim_ct(&s, (int)c), "reserved")) {
            cr_expect_str_eq(kp_scenario_claim_req(&s, (int)c, CR_ID), "In [cr-2]");
            cr_expect_str_eq(claim_zone(&s, (int)c), "test-zone-2");
        }
    kp_scenario_free(&s);
}

/* ---------- the catalog file's reservation fields ---------- */

static const char *load_error(const char *offering)
{
    char text[1024];
    snprintf(
        text, sizeof(text),
        "[{\"name\":\"m\",\"capacity\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},\"offerings\":[%s]}]",
        offering);
    cJSON *json = cJSON_Parse(text);
    cr_assert_not_null(json, "%s", text);
    kp_catalog *cat = NULL;
    int err = kp_catalog_from_json(json, "test", &cat);
    cJSON_Delete(json);
    if (err == 0) {
        kp_catalog_free(cat);
        return NULL;
    }
    return kp_error_last();
}

Test(solver_reserved, capacity_reservation_catalog_fields_malformed)
{
    static const struct {
        const char *offering, *needle;
    } cases[] = {
        {"{\"zone\":\"z\",\"capacityType\":\"on-demand\",\"price\":1,\"reservationID\":\"cr-1\","
         "\"reservationCapacity\":1}",
         "need capacityType \"reserved\""},
        {"{\"zone\":\"z\",\"capacityType\":\"reserved\",\"price\":0,\"reservationCapacity\":1}",
         "reservationID: expected a non-empty string"},
        {"{\"zone\":\"z\",\"capacityType\":\"reserved\",\"price\":0,\"reservationID\":\"\","
         "\"reservationCapacity\":1}",
         "reservationID: expected a non-empty string"},
        {"{\"zone\":\"z\",\"capacityType\":\"reserved\",\"price\":0,\"reservationID\":7,"
         "\"reservationCapacity\":1}",
         "reservationID: expected a non-empty string"},
        {"{\"zone\":\"z\",\"capacityType\":\"reserved\",\"price\":0,\"reservationID\":\"cr-1\"}",
         "reservationCapacity: expected an integer"},
        {"{\"zone\":\"z\",\"capacityType\":\"reserved\",\"price\":0,\"reservationID\":\"cr-1\","
         "\"reservationCapacity\":-1}",
         "reservationCapacity: expected an integer"},
        {"{\"zone\":\"z\",\"capacityType\":\"reserved\",\"price\":0,\"reservationID\":\"cr-1\","
         "\"reservationCapacity\":1.5}",
         "reservationCapacity: expected an integer"},
        {"{\"zone\":\"z\",\"capacityType\":\"reserved\",\"price\":0,\"reservationID\":\"cr-1\","
         "\"reservationCapacity\":3e9}",
         "reservationCapacity: expected an integer"},
        {"{\"zone\":\"z\",\"capacityType\":\"reserved\",\"price\":0,\"reservationID\":\"cr-1\","
         "\"reservationCapacity\":\"2\"}",
         "reservationCapacity: expected an integer"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *why = load_error(cases[i].offering);
        cr_expect(why && strstr(why, cases[i].needle), "case %zu: %s", i, why ? why : "(accepted)");
        cr_expect(why && strstr(why, "offerings[0]"), "case %zu names the offering: %s", i,
                  why ? why : "");
    }
    cr_expect_null(
        load_error(
            "{\"zone\":\"z\",\"capacityType\":\"reserved\",\"price\":0,\"reservationID\":\"cr-1\","
            "\"reservationCapacity\":0}"),
        "a reservation with no place left is valid");
}

Test(solver_reserved, capacity_reservation_catalog_fields_loaded)
{
    cJSON *json = cJSON_Parse(
        "[{\"name\":\"m\",\"capacity\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},\"offerings\":["
        "{\"zone\":\"z\",\"capacityType\":\"on-demand\",\"price\":1},"
        "{\"zone\":\"z\",\"capacityType\":\"reserved\",\"price\":0,\"reservationID\":\"cr-9\","
        "\"reservationCapacity\":4}]}]");
    kp_catalog *cat = NULL;
    cr_assert_eq(kp_catalog_from_json(json, "test", &cat), 0, "%s", kp_error_last());
    cJSON_Delete(json);
    const kp_instance_type *it = &cat->types[0];
    cr_expect_null(it->offerings[0].reservation_id);
    cr_expect_str_eq(it->offerings[1].reservation_id, "cr-9");
    cr_expect_eq(it->offerings[1].reservation_capacity, 4);
    bool has_id = false;
    for (uint32_t i = 0; i < it->n_reqs; i++)
        if (!strcmp(it->reqs[i].key, CR_ID))
            has_id = it->reqs[i].n_values == 1 && !strcmp(it->reqs[i].values[0], "cr-9");
    cr_expect(has_id, "the type carries its reservations' id requirement");
    kp_catalog_free(cat);
}
