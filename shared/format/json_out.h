/*
 * JSON trees (cJSON) on their way out of the format module: printing them as
 * JSON or as YAML (`simulate -o json|yaml`), and the small conventions every
 * tree made by this module follows so that what comes out equals what went in.
 *
 * Exact integers. cJSON keeps numbers as doubles, which hold integers exactly
 * only up to 2^53. Kubernetes keeps int64 (and the YAML reader uint64) exact, so
 * the readers in this module annotate every integer whose magnitude exceeds
 * 2^53 with its decimal text, kept in the number item's otherwise unused
 * `valuestring` (cJSON_Delete and cJSON_Duplicate already free and copy it).
 * Read integers with kp_json_int64() rather than `valuedouble`; the printers
 * below use the text. If a caller changes such a number with
 * cJSON_SetNumberValue, the stale text is ignored (it no longer parses to the
 * new double).
 *
 * Nothing here keeps state; output goes into a caller's capped kp_buf.
 */
#ifndef KP_FORMAT_JSON_OUT_H
#define KP_FORMAT_JSON_OUT_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/* Integers with a magnitude above this are annotated with their exact text. */
#define KP_JSON_EXACT_LIMIT 9007199254740992.0 /* 2^53 */

/* Attach the exact decimal text of an integer number item (digits with an
 * optional '-'). Replaces any earlier text. */
void kp_json_number_set_text(cJSON *number, const char *text, size_t len);

/* The exact decimal text of a big integer, or NULL when the double is exact
 * (or the item is not an annotated number). */
const char *kp_json_number_text(const cJSON *number);

/* An integer-valued number as int64. KP_EINVALID if `item` is not a number or
 * has a fraction, KP_EOVERFLOW if it does not fit. *out set only on success. */
int kp_json_int64(int64_t *out, const cJSON *item);

/* Keep only the last of several members of an object with the same key, as
 * Go's encoding/json and go-yaml do (last one wins; its position is kept),
 * in `root` and everything below it. Iterative in depth only up to the trees
 * this module builds (which are depth-capped). */
void kp_json_dedupe_keys(cJSON *root);

/* Length of the valid UTF-8 sequence starting at s (at most n bytes), or 0
 * if it is not one (overlong forms, surrogates and values above U+10FFFF are
 * invalid, as in Go). */
size_t kp_json_utf8_len(const char *s, size_t n);

/* How a double is spelled by the Go code whose output we match. */
enum kp_float_style {
    KP_FLOAT_JSON,  /* encoding/json: 1e+21, 1e-7, 0.000001, 100000 */
    KP_FLOAT_YAML,  /* kubectl -o yaml: integral values below 2^64 in full, else
                       go-yaml's float64 'g': 1.5, 1e+20, .inf */
    KP_FLOAT_KEY32, /* sigs.k8s.io/yaml's float map keys: float32, 'g' */
};

/* Format `v` into buf (at least 40 bytes) the way `style` says; returns buf. */
char *kp_json_format_float(char *buf, size_t size, double v, enum kp_float_style style);

/* Append `item` as JSON: compact, or indented by four spaces and ending in a
 * newline like kubectl's `-o json` when `pretty`. Integers keep their exact
 * text. Raw items are copied as they are. KP_ETOOLARGE when `out` reaches its
 * cap (out then holds what it held before). */
int kp_json_out_json(kp_buf *out, const cJSON *item, int pretty);

/* Append `root` as one YAML document, starting with a "---" line when
 * `separator` is set. Strings that would read back as something else
 * ("true", "1", "null", "", "0x10", "yes", "1:30", ...) are double-quoted;
 * strings with line breaks use literal block style where YAML allows it;
 * long lines are not folded; empty mappings and sequences are {} and [].
 * Errors (out then holds what it held before): KP_ETOOLARGE when `out` reaches
 * its cap, KP_EINVALID for what YAML cannot carry (raw JSON items, strings
 * that are not UTF-8). */
int kp_json_out_yaml(kp_buf *out, const cJSON *root, int separator);

/* Append several documents separated by "---" lines. */
int kp_json_out_yaml_stream(kp_buf *out, cJSON *const *roots, size_t count);

#endif
