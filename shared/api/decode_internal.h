/*
 * Helpers shared by the decode_*.c files (not an interface for other
 * modules). A decoder carries the arena and the field path being walked;
 * each reader pushes its field name, checks the JSON type, converts, and
 * pops, so an error message always names the exact field.
 *
 * Readers share one contract: absent and null leave the output at its zero
 * value (and `*present` false when asked); a wrong type or bad value returns
 * KP_EINVALID with "<path>: <what went wrong>".
 */
#ifndef KP_API_DECODE_INTERNAL_H
#define KP_API_DECODE_INTERNAL_H

#include "api/objects.h"
#include "base/arena.h"
#include "base/path.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kp_decoder {
    kp_arena *arena;
    kp_path path;
} kp_decoder;

/* Decode one JSON value (already known to be present) into `out`. */
typedef int (*kp_dec_fn)(kp_decoder *d, const cJSON *json, void *out);

/* A name -> value table for string enums, ended by a NULL name. */
typedef struct kp_dec_choice {
    const char *name;
    int value;
} kp_dec_choice;

extern const char kp_dec_empty[]; /* "" for absent strings */
/* An empty JSON object, decoded in place of absent sub-objects. */
const cJSON *kp_dec_empty_object(void);

void kp_dec_init(kp_decoder *d, kp_arena *arena);

/* KP_EINVALID with "<path>: <message>" (just the message at the root). */
int kp_dec_fail(kp_decoder *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* As kp_dec_fail, for the field `name` below the current path. */
int kp_dec_fail_at(kp_decoder *d, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "<path>: expected <want>, got <json type>". */
int kp_dec_type_error(kp_decoder *d, const char *want, const cJSON *got);
/* "<path>: Required value" for the field `name`. */
int kp_dec_required(kp_decoder *d, const char *name);
/* "object", "array", "string", "number", "boolean", "null". */
const char *kp_dec_type_name(const cJSON *item);

/* The member `name` of `obj`, NULL when absent or null. */
const cJSON *kp_dec_get(const cJSON *obj, const char *name);
/* KP_EINVALID unless `json` is an object (at the current path). */
int kp_dec_expect_object(kp_decoder *d, const cJSON *json);

int kp_dec_string(kp_decoder *d, const cJSON *obj, const char *name, const char **out);
int kp_dec_string_p(kp_decoder *d, const cJSON *obj, const char *name, const char **out,
                    bool *present);
int kp_dec_bool(kp_decoder *d, const cJSON *obj, const char *name, bool *out, bool *present);
int kp_dec_int32(kp_decoder *d, const cJSON *obj, const char *name, int32_t *out, bool *present);
int kp_dec_int64(kp_decoder *d, const cJSON *obj, const char *name, int64_t *out, bool *present);
int kp_dec_strings(kp_decoder *d, const cJSON *obj, const char *name, kp_strings *out);
int kp_dec_labels(kp_decoder *d, const cJSON *obj, const char *name, kp_labels *out);
int kp_dec_resources(kp_decoder *d, const cJSON *obj, const char *name, kp_resource_list *out);
/* The same for core objects (Pod requests, limits and overhead, PVC, PV and
 * Node amounts), where the API server refuses a negative quantity: so do we,
 * with its message. Karpenter's own types allow negative amounts. */
int kp_dec_core_resources(kp_decoder *d, const cJSON *obj, const char *name, kp_resource_list *out);
int kp_dec_quantity(kp_decoder *d, const cJSON *obj, const char *name, kp_quantity *out,
                    bool *present);
int kp_dec_time(kp_decoder *d, const cJSON *obj, const char *name, kp_time *out);
/* Go duration text; with `nillable`, "Never" too. */
int kp_dec_duration(kp_decoder *d, const cJSON *obj, const char *name, bool nillable,
                    kp_duration *out, bool *present);
int kp_dec_int_or_string(kp_decoder *d, const cJSON *obj, const char *name, kp_int_or_string *out);
/* A string enum; absent leaves *out unchanged; `required` makes absent an error. */
int kp_dec_enum(kp_decoder *d, const cJSON *obj, const char *name, const kp_dec_choice *table,
                bool required, int *out);
/* A string enum given as a NULL-terminated list of names (such as the CRD's,
 * api/crd_tables.h): *index is the value's position; absent leaves it unchanged. */
int kp_dec_enum_index(kp_decoder *d, const cJSON *obj, const char *name, const char *const *names,
                      int *index);
/* "<path>: Unsupported value: \"x\": supported values: \"a\", \"b\"", the
 * supported values (at most 32) listed sorted, whatever order they come in. */
int kp_dec_unsupported(kp_decoder *d, const char *value, const char *const *supported,
                       size_t n_supported);

/* The member `name` as an object decoded by `fn`; absent or null is decoded
 * as {} (so `fn` still sets its defaults) with *present false. */
int kp_dec_object(kp_decoder *d, const cJSON *obj, const char *name, kp_dec_fn fn, void *out,
                  bool *present);
/* The member `name` as an array whose elements `fn` decodes into a new
 * arena array of `elem_size` elements. `items_ptr` is the address of the
 * destination pointer (T **); use KP_DEC_ARRAY. */
int kp_dec_array_into(kp_decoder *d, const cJSON *obj, const char *name, size_t elem_size,
                      kp_dec_fn fn, void *items_ptr, size_t *count, bool *present);
#define KP_DEC_ARRAY(d, obj, name, fn, items, count)                                               \
    kp_dec_array_into((d), (obj), (name), sizeof(*(items)), (fn), (void *)&(items), &(count), NULL)

/* Shared pieces (decode_meta.c). */
int kp_dec_meta(kp_decoder *d, const cJSON *obj, kp_object_meta *out);
int kp_dec_conditions(kp_decoder *d, const cJSON *obj, const char *name, kp_conditions *out);
int kp_dec_label_selector(kp_decoder *d, const cJSON *obj, const char *name,
                          kp_label_selector *out);
/* A list of NodeSelectorTerms (core operators only). */
int kp_dec_node_selector_terms(kp_decoder *d, const cJSON *obj, const char *name,
                               kp_node_selector_term **terms, size_t *count, bool *present);
/* NodeSelectorRequirement arrays; `karpenter` admits Gte/Lte and minValues. */
int kp_dec_node_requirements(kp_decoder *d, const cJSON *obj, const char *name, bool karpenter,
                             kp_selector_req **reqs, size_t *count);
int kp_dec_taints(kp_decoder *d, const cJSON *obj, const char *name, kp_taint **taints,
                  size_t *count);
int kp_dec_tolerations(kp_decoder *d, const cJSON *obj, const char *name,
                       kp_toleration **tolerations, size_t *count);

/* Pods and pod templates (decode_pod.c): metadata + spec (+ status). */
int kp_dec_pod_body(kp_decoder *d, const cJSON *json, kp_pod *out);
int kp_dec_pod_template(kp_decoder *d, const cJSON *obj, const char *name, kp_pod *out);
/* Fill the derived fields of a decoded pod. */
int kp_dec_pod_derive(kp_decoder *d, kp_pod *pod);
/* A PodSpec into a kp_pod (decode_pod_spec.c). */
int kp_dec_pod_spec(kp_decoder *d, const cJSON *spec, void *out);
/* A PVC's metadata, spec and status into a kp_pvc (decode_storage.c). */
int kp_dec_pvc_body(kp_decoder *d, const cJSON *json, void *out);

#endif
