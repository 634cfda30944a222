/*
 * libFuzzer target for the --instance-types FILE loader (cloud/catalog_file.c)
 * and the quantities in it (api/quantity.c): any input must load or fail with
 * a message, never crash, leak or hang. What loads must compile into a
 * snapshot, every type must then state every label the catalog declares
 * (DoesNotExist where it has none), and every quantity that parses must print
 * to a string that parses back to the same value.
 */
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "cloud/instance_types.h"
#include "scheduling/snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quantity_round_trip(const uint8_t *data, size_t size)
{
    char text[96], printed[KP_QUANTITY_STRLEN];
    kp_quantity q, again;
    size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;
    memcpy(text, data, n);
    text[n] = '\0';
    if (kp_quantity_parse(text, &q) < 0)
        return;
    kp_quantity_format(q, printed, sizeof(printed));
    if (kp_quantity_parse(printed, &again) < 0 || kp_quantity_cmp(q, again) != 0)
        abort(); /* what we print, we must read back the same */
}

static bool declares(const kp_instance_type *it, const char *key)
{
    for (uint32_t r = 0; r < it->n_reqs; r++)
        if (strcmp(it->reqs[r].key, key) == 0)
            return true;
    return false;
}

static void check_catalog(const kp_catalog *catalog)
{
    for (size_t i = 0; i < catalog->count; i++)
        for (size_t k = 0; k < catalog->n_well_known; k++)
            if (!declares(&catalog->types[i], catalog->well_known[k]))
                abort();
    kp_snapshot *snap = kp_snapshot_new();
    (void)kp_snapshot_add_catalog(snap, catalog); /* refusing (too many resources) is allowed; crashing is not */
    kp_snapshot_free(snap);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    quantity_round_trip(data, size);
    cJSON *json = cJSON_ParseWithLength((const char *)data, size);
    if (!json)
        return 0;
    kp_catalog *catalog = NULL;
    if (kp_catalog_from_json(json, "fuzz", &catalog) == 0) {
        check_catalog(catalog);
        kp_catalog_free(catalog);
    }
    cJSON_Delete(json);
    return 0;
}
