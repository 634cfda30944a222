/*
 * Node-class resolution of where instances go beyond subnets: capacity
 * reservations (CapacityReservationsReady) and the placement group
 * (PlacementGroupReady), and who decides ValidationSucceeded.
 */
#include "cloud/aws/nodeclass_internal.h"

#include <string.h>

#include "base/error.h"

void kp_aws_nc_resolver_set_validator(kp_aws_nc_resolver *r, kp_aws_nc_validate_fn fn, void *ctx)
{
    r->validate = fn;
    r->validate_ctx = ctx;
}

/* "UnauthorizedOperation: You are not authorized ..." from the client's last error. */
static const char *aws_said(kp_arena *a, kp_aws_client *c)
{
    const kp_aws_error *e = kp_aws_client_error(c);
    if (!e->code[0]) return kp_arena_strdup(a, kp_error_last());
    return kp_arena_printf(a, "%s: %s", e->code, e->message);
}

/* ---------------------------------------------------- capacity reservations */

int kp_ncr_capacity_reservations(kp_aws_nc_resolver *r, kp_aws_client *ec2,
                                 const kp_ec2nodeclass *nc, kp_arena *a, cJSON **out,
                                 kp_ncr_why *why)
{
    *why = (kp_ncr_why){0};
    *out = NULL;
    if (nc->n_capacity_reservation_selector_terms == 0) {
        *out = cJSON_CreateArray();
        return 0;
    }
    if (!r->reservations) {
        *why = (kp_ncr_why){"ReservedCapacityDisabled",
                            "capacityReservationSelectorTerms is set, but the ReservedCapacity "
                            "feature gate is off: no reservation is launched into"};
        return 0;
    }
    int err = kp_aws_crs_list(r->reservations, ec2, nc->capacity_reservation_selector_terms,
                              nc->n_capacity_reservation_selector_terms, out);
    if (err == KP_ERETRY) return err;
    if (err < 0)
        *why = (kp_ncr_why){"CapacityReservationResolutionFailed",
                            kp_arena_printf(a, "Failed to resolve capacity reservations: %s",
                                            aws_said(a, ec2))};
    return 0;
}

/* ---------------------------------------------------------- placement group */

static const char *pg_key(kp_arena *a, const char *kind, const kp_ec2nodeclass *nc)
{
    return kp_arena_printf(a, "%s|%s|%s", kind, nc->placement_group_id ? nc->placement_group_id : "",
                           nc->placement_group_name ? nc->placement_group_name : "");
}

static const char *or_null(const char *s)
{
    return s && *s ? s : NULL;
}

static void pg_from_json(kp_arena *a, const cJSON *j, kp_aws_pg_info *out, bool *found)
{
    const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "id"));
    const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "strategy"));
    const cJSON *pc = cJSON_GetObjectItemCaseSensitive(j, "partitionCount");
    *found = id != NULL;
    if (!id) return;
    out->id = kp_arena_strdup(a, id);
    out->strategy = st ? kp_arena_strdup(a, st) : NULL;
    out->partition_count = cJSON_IsNumber(pc) ? (int32_t)pc->valuedouble : 0;
}

static bool pg_not_found(kp_aws_client *ec2)
{
    const char *code = kp_aws_client_error(ec2)->code;
    return strcmp(code, "InvalidPlacementGroup.Unknown") == 0 || kp_aws_code_is_not_found(code);
}

/* Ask EC2; the answer (a group or {}) is cached, a group also as the last good one. */
static int describe_pg(kp_aws_nc_resolver *r, kp_aws_client *ec2, const kp_ec2nodeclass *nc,
                       kp_arena *a, cJSON **out)
{
    const char *avail[] = {"available"};
    kp_ec2_filter f = {"state", avail, 1};
    kp_ec2_placement_group_list l = {0};
    int err = kp_ec2_describe_placement_groups(ec2, a, or_null(nc->placement_group_id),
                                               or_null(nc->placement_group_id)
                                                   ? NULL
                                                   : or_null(nc->placement_group_name),
                                               &f, 1, &l);
    if (err < 0 && pg_not_found(ec2)) err = 0, l.n = 0;
    if (err < 0) return err;
    cJSON *j = cJSON_CreateObject();
    if (l.n > 0 && l.items[0].id) {
        cJSON_AddStringToObject(j, "id", l.items[0].id);
        cJSON_AddStringToObject(j, "name", l.items[0].name ? l.items[0].name : "");
        cJSON_AddStringToObject(j, "strategy", l.items[0].strategy ? l.items[0].strategy : "");
        cJSON_AddNumberToObject(j, "partitionCount", l.items[0].partition_count);
        kp_aws_cache_put(r->cache, pg_key(a, "pg-last", nc), j, KP_NC_PG_LAST_TTL_NS);
    }
    kp_aws_cache_put(r->cache, pg_key(a, "pg", nc), j, KP_NC_PG_TTL_NS);
    *out = j;
    return 0;
}

int kp_aws_nc_placement_group(kp_aws_nc_resolver *r, kp_aws_client *ec2, const kp_ec2nodeclass *nc,
                              kp_arena *a, kp_aws_pg_info *out, bool *found)
{
    *found = false;
    *out = (kp_aws_pg_info){0};
    if (!nc->has_placement_group_selector) return 0;
    cJSON *j = kp_aws_cache_get(r->cache, pg_key(a, "pg", nc));
    int err = j ? 0 : describe_pg(r, ec2, nc, a, &j);
    if (err < 0) j = kp_aws_cache_get(r->cache, pg_key(a, "pg-last", nc));
    if (j) pg_from_json(a, j, out, found);
    cJSON_Delete(j);
    return err < 0 ? kp_error_wrap(err, "resolving placement group") : 0;
}

int kp_ncr_placement_group_ready(kp_aws_nc_resolver *r, kp_aws_client *ec2,
                                 const kp_ec2nodeclass *nc, kp_arena *a, kp_ncr_why *why)
{
    *why = (kp_ncr_why){0};
    kp_aws_pg_info pg;
    bool found = false;
    int err = kp_aws_nc_placement_group(r, ec2, nc, a, &pg, &found);
    const char *sel = or_null(nc->placement_group_id) ? nc->placement_group_id
                                                      : nc->placement_group_name;
    if (err == KP_ERETRY) return err;
    if (err < 0)
        *why = (kp_ncr_why){"PlacementGroupResolutionFailed",
                            kp_arena_printf(a, "Failed to resolve placement group: %s",
                                            aws_said(a, ec2))};
    else if (nc->has_placement_group_selector && !found)
        *why = (kp_ncr_why){"PlacementGroupNotFound",
                            kp_arena_printf(a, "Placement group \"%s\" not found", sel ? sel : "")};
    return 0;
}
