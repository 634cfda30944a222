/*
 * Instance types from a JSON file (`--instance-types FILE.json`): an array of
 *   {"name", "capacity": {"cpu": "4", ...}, "overhead": {...},
 *    "labels": {"kubernetes.io/arch": "amd64", ...}, "operatingSystems": ["linux"],
 *    "offerings": [{"zone", "capacityType", "price", "available",
 *                   "reservationID", "reservationCapacity"}],
 *    "ebsVolumeLimit": 26}   (optional; 0 or absent: volumes are not limited)
 * Labels become single-value requirements; the zone and capacity-type
 * requirements are the union of the offerings', as a provider would report,
 * and so is the capacity-reservation-id requirement of a type with reserved
 * offerings (each names its reservation and the instances it can still take).
 * Every label key a type declares is a well-known label of the catalog's
 * provider, as a cloud provider's own labels are in Karpenter: pods and
 * DaemonSets may select it although no NodePool mentions it, and a type that
 * does not declare it does not have it (DoesNotExist, as a provider reports).
 */
#include "cloud/instance_types.h"
#include "api/quantity.h"
#include "base/error.h"
#include "base/path.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int type_error(const kp_path *path, const char *want)
{
    return kp_error_set(KP_EINVALID, "%s: expected %s", kp_path_cstr(path), want);
}

static int load_resources(kp_catalog *catalog, kp_instance_type *it, const cJSON *obj,
                          kp_path *path, bool overhead)
{
    if (!obj)
        return 0;
    if (!cJSON_IsObject(obj))
        return type_error(path, "an object of resource quantities");
    const cJSON *entry;
    cJSON_ArrayForEach(entry, obj)
    {
        kp_quantity q;
        kp_path_push_field(path, entry->string);
        if (!cJSON_IsString(entry))
            return type_error(path, "a quantity string such as \"4\" or \"8Gi\"");
        if (kp_quantity_parse(entry->valuestring, &q) < 0)
            return kp_error_wrap(KP_EINVALID, "%s", kp_path_cstr(path));
        if (overhead)
            kp_it_set_overhead(catalog, it, entry->string, q.milli);
        else
            kp_it_set_capacity(catalog, it, entry->string, q.milli);
        kp_path_pop(path);
    }
    return 0;
}

static void add_well_known(kp_catalog *catalog, const char *key)
{
    for (size_t i = 0; i < catalog->n_well_known; i++)
        if (strcmp(catalog->well_known[i], key) == 0)
            return;
    kp_catalog_add_well_known(catalog, key);
}

static int load_labels(kp_catalog *catalog, kp_instance_type *it, const cJSON *obj, kp_path *path)
{
    if (!obj)
        return 0;
    if (!cJSON_IsObject(obj))
        return type_error(path, "an object of label values");
    const cJSON *entry;
    cJSON_ArrayForEach(entry, obj)
    {
        kp_path_push_field(path, entry->string);
        if (!cJSON_IsString(entry))
            return type_error(path, "a string");
        kp_it_add_label(catalog, it, entry->string, entry->valuestring);
        add_well_known(catalog, entry->string);
        kp_path_pop(path);
    }
    return 0;
}

static int load_string_list(const cJSON *arr, kp_path *path, const char **out, uint32_t *n, uint32_t max)
{
    if (!cJSON_IsArray(arr))
        return type_error(path, "an array of strings");
    const cJSON *item;
    *n = 0;
    cJSON_ArrayForEach(item, arr)
    {
        if (!cJSON_IsString(item))
            return type_error(path, "an array of strings");
        if (*n == max)
            return kp_error_set(KP_ETOOLARGE, "%s: more than %u values", kp_path_cstr(path), max);
        out[(*n)++] = item->valuestring;
    }
    return 0;
}

/* Append `value` to `set` unless present. */
static void add_unique(const char **set, uint32_t *n, uint32_t max, const char *value)
{
    for (uint32_t i = 0; i < *n; i++)
        if (strcmp(set[i], value) == 0)
            return;
    if (*n < max)
        set[(*n)++] = value;
}

enum { MAX_SET = 64 };

/* A reserved offering's reservation: both fields or neither, only on "reserved". */
static int load_reservation(kp_catalog *catalog, kp_offering *of, const cJSON *o, kp_path *path)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "reservationID");
    const cJSON *count = cJSON_GetObjectItemCaseSensitive(o, "reservationCapacity");
    if (!id && !count)
        return 0;
    if (strcmp(of->capacity_type, "reserved") != 0)
        return kp_error_set(KP_EINVALID, "%s: reservationID and reservationCapacity need capacityType \"reserved\"",
                            kp_path_cstr(path));
    if (!cJSON_IsString(id) || !*id->valuestring)
        return kp_error_set(KP_EINVALID, "%s.reservationID: expected a non-empty string", kp_path_cstr(path));
    if (!cJSON_IsNumber(count) || count->valuedouble < 0 || count->valuedouble > INT32_MAX ||
        count->valuedouble != (double)(int32_t)count->valuedouble)
        return kp_error_set(KP_EINVALID, "%s.reservationCapacity: expected an integer from 0 to %d",
                            kp_path_cstr(path), INT32_MAX);
    of->reservation_id = kp_arena_strdup(catalog->arena, id->valuestring);
    of->reservation_capacity = (int32_t)count->valuedouble;
    return 0;
}

static int load_offering(kp_catalog *catalog, kp_instance_type *it, const cJSON *o, kp_path *path)
{
    const cJSON *zone = cJSON_GetObjectItemCaseSensitive(o, "zone");
    const cJSON *ct = cJSON_GetObjectItemCaseSensitive(o, "capacityType");
    const cJSON *price = cJSON_GetObjectItemCaseSensitive(o, "price");
    const cJSON *available = cJSON_GetObjectItemCaseSensitive(o, "available");
    if (!cJSON_IsObject(o))
        return type_error(path, "an offering object");
    if (!cJSON_IsString(zone) || !cJSON_IsString(ct))
        return kp_error_set(KP_EINVALID, "%s: zone and capacityType are required strings",
                            kp_path_cstr(path));
    if (!cJSON_IsNumber(price) || price->valuedouble < 0)
        return kp_error_set(KP_EINVALID, "%s.price: expected a non-negative number", kp_path_cstr(path));
    if (available && !cJSON_IsBool(available))
        return kp_error_set(KP_EINVALID, "%s.available: expected true or false", kp_path_cstr(path));
    kp_it_add_offering(catalog, it, zone->valuestring, ct->valuestring, price->valuedouble,
                       !available || cJSON_IsTrue(available));
    return load_reservation(catalog, &it->offerings[it->n_offerings - 1], o, path);
}

static int load_offerings(kp_catalog *catalog, kp_instance_type *it, const cJSON *arr, kp_path *path)
{
    const char *zones[MAX_SET], *cts[MAX_SET], *ids[MAX_SET];
    uint32_t n_zones = 0, n_cts = 0, n_ids = 0;
    size_t index = 0;
    const cJSON *o;
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
        return type_error(path, "a non-empty array of offerings");
    cJSON_ArrayForEach(o, arr)
    {
        kp_path_push_index(path, index++);
        int err = load_offering(catalog, it, o, path);
        if (err < 0)
            return err;
        kp_path_pop(path);
    }
    for (uint32_t i = 0; i < it->n_offerings; i++) {
        if (!it->offerings[i].available)
            continue;
        add_unique(zones, &n_zones, MAX_SET, it->offerings[i].zone);
        add_unique(cts, &n_cts, MAX_SET, it->offerings[i].capacity_type);
    }
    for (uint32_t i = 0; i < it->n_offerings; i++)
        if (it->offerings[i].reservation_id)
            add_unique(ids, &n_ids, MAX_SET, it->offerings[i].reservation_id);
    if (n_ids)
        kp_it_add_req(catalog, it, "karpenter.k8s.aws/capacity-reservation-id", KP_OP_IN, ids, n_ids);
    kp_it_add_req(catalog, it, "topology.kubernetes.io/zone", n_zones ? KP_OP_IN : KP_OP_DOES_NOT_EXIST,
                  zones, n_zones);
    kp_it_add_req(catalog, it, "karpenter.sh/capacity-type", n_cts ? KP_OP_IN : KP_OP_DOES_NOT_EXIST,
                  cts, n_cts);
    return 0;
}

/* The optional "ebsVolumeLimit": volumes ebs.csi.aws.com may attach to a new node of the type. */
static int load_ebs_limit(kp_instance_type *it, const cJSON *obj, const kp_path *path)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "ebsVolumeLimit");
    if (!v)
        return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 100000 ||
        v->valuedouble != (double)(int32_t)v->valuedouble)
        return kp_error_set(KP_EINVALID, "%s.ebsVolumeLimit: expected a whole number from 0 (no limit) to 100000",
                            kp_path_cstr(path));
    it->ebs_volume_limit = (int32_t)v->valuedouble;
    return 0;
}

static int load_type(kp_catalog *catalog, const cJSON *obj, kp_path *path)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(obj, "name");
    const char *os[MAX_SET];
    uint32_t n_os = 0;
    int err;
    if (!cJSON_IsObject(obj))
        return type_error(path, "an instance type object");
    if (!cJSON_IsString(name) || !*name->valuestring)
        return kp_error_set(KP_EINVALID, "%s.name: required non-empty string", kp_path_cstr(path));
    kp_instance_type *it = kp_catalog_add_type(catalog, name->valuestring);
    kp_it_add_label(catalog, it, "node.kubernetes.io/instance-type", name->valuestring);
    if ((err = load_ebs_limit(it, obj, path)) < 0)
        return err;

    kp_path_push_field(path, "capacity");
    err = load_resources(catalog, it, cJSON_GetObjectItemCaseSensitive(obj, "capacity"), path, false);
    kp_path_pop(path);
    if (err < 0)
        return err;
    if (kp_it_capacity(it, "cpu") <= 0 || kp_it_capacity(it, "memory") <= 0)
        return kp_error_set(KP_EINVALID, "%s.capacity: cpu and memory must be positive", kp_path_cstr(path));
    kp_path_push_field(path, "overhead");
    err = load_resources(catalog, it, cJSON_GetObjectItemCaseSensitive(obj, "overhead"), path, true);
    kp_path_pop(path);
    if (err < 0)
        return err;
    kp_path_push_field(path, "labels");
    err = load_labels(catalog, it, cJSON_GetObjectItemCaseSensitive(obj, "labels"), path);
    kp_path_pop(path);
    if (err < 0)
        return err;
    const cJSON *oses = cJSON_GetObjectItemCaseSensitive(obj, "operatingSystems");
    kp_path_push_field(path, "operatingSystems");
    if (oses && (err = load_string_list(oses, path, os, &n_os, MAX_SET)) < 0)
        return err;
    kp_path_pop(path);
    if (n_os == 0) {
        os[0] = "linux";
        n_os = 1;
    }
    kp_it_add_req(catalog, it, "kubernetes.io/os", KP_OP_IN, os, n_os);
    kp_path_push_field(path, "offerings");
    err = load_offerings(catalog, it, cJSON_GetObjectItemCaseSensitive(obj, "offerings"), path);
    kp_path_pop(path);
    return err;
}

/* The catalog's labels this type does not declare: DoesNotExist. */
static void add_absent_labels(kp_catalog *catalog, kp_instance_type *it)
{
    for (size_t k = 0; k < catalog->n_well_known; k++) {
        bool has = false;
        for (uint32_t r = 0; r < it->n_reqs && !has; r++)
            has = strcmp(it->reqs[r].key, catalog->well_known[k]) == 0;
        if (!has)
            kp_it_add_req(catalog, it, catalog->well_known[k], KP_OP_DOES_NOT_EXIST, NULL, 0);
    }
}

int kp_catalog_from_json(const cJSON *json, const char *description, kp_catalog **out)
{
    kp_path path;
    size_t index = 0;
    const cJSON *item;
    if (!cJSON_IsArray(json))
        return kp_error_set(KP_EINVALID, "%s: expected a JSON array of instance types", description);
    kp_catalog *catalog = kp_catalog_new(description);
    kp_path_init(&path, NULL);
    cJSON_ArrayForEach(item, json)
    {
        kp_path_init(&path, NULL);
        kp_path_push_index(&path, index++);
        int err = load_type(catalog, item, &path);
        if (err < 0) {
            kp_catalog_free(catalog);
            return kp_error_wrap(err, "%s", description);
        }
    }
    if (catalog->count == 0) {
        kp_catalog_free(catalog);
        return kp_error_set(KP_EINVALID, "%s: no instance types", description);
    }
    for (size_t i = 0; i < catalog->count; i++)
        add_absent_labels(catalog, &catalog->types[i]);
    *out = catalog;
    return 0;
}

enum { CATALOG_FILE_MAX = 64 * 1024 * 1024 };

static int read_file(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return kp_error_set(KP_EIO, "%s: cannot open: %m", path);
    char *data = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (cap - n < 65536) {
            cap = cap ? cap * 2 : 65536;
            if (cap > CATALOG_FILE_MAX + 65536) {
                free(data);
                fclose(f);
                return kp_error_set(KP_ETOOLARGE, "%s: larger than %d bytes", path, CATALOG_FILE_MAX);
            }
            char *grown = realloc(data, cap + 1);
            if (!grown) {
                free(data);
                fclose(f);
                return kp_error_set(KP_ERROR, "%s: out of memory", path);
            }
            data = grown;
        }
        size_t got = fread(data + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    data[n] = '\0';
    *out = data;
    *len = n;
    return 0;
}

int kp_catalog_load_file(const char *path, kp_catalog **out)
{
    char *text = NULL;
    size_t len = 0;
    int err = read_file(path, &text, &len);
    if (err < 0)
        return err;
    const char *end = NULL;
    cJSON *json = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!json) {
        size_t offset = end ? (size_t)(end - text) : 0;
        free(text);
        return kp_error_set(KP_EINVALID, "%s: invalid JSON near byte %zu", path, offset);
    }
    err = kp_catalog_from_json(json, path, out);
    cJSON_Delete(json);
    free(text);
    return err;
}
