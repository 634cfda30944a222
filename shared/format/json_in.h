/*
 * JSON text into cJSON trees with the checks cJSON itself does not make, so
 * that every JSON reader of the project (manifest files, AdmissionReviews)
 * is equally strict:
 *
 *   - the text is valid UTF-8 (overlong forms and surrogates included), and
 *     holds no NUL byte and no "\u0000" escape (every consumer is C: a NUL
 *     would cut a string short and make two different values look equal);
 *   - nesting stays within a depth limit (cJSON's own recursion limit is
 *     higher than our consumers want);
 *   - integers beyond 2^53 keep their exact text (json_out.h);
 *   - an object member repeated under the same key keeps the last value, as
 *     Go's encoding/json does (so we judge what the API server would store).
 */
#ifndef KP_FORMAT_JSON_IN_H
#define KP_FORMAT_JSON_IN_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Big integers found by a scan: their ordinal among all numbers, and text. */
typedef struct kp_json_scan {
    struct kp_json_big_int {
        size_t ordinal, offset, len;
    } *big;
    size_t count, cap;
} kp_json_scan;

#define KP_JSON_SCAN_INIT {NULL, 0, 0}
void kp_json_scan_free(kp_json_scan *scan);

/* Check `len` bytes (see above). 0, or a KP_E* (KP_EINVALID, KP_ETOOLARGE
 * for depth) with *offset at the offending byte and *problem saying what is
 * wrong; no message is set (callers name their input). */
int kp_json_prescan(const char *data, size_t len, size_t max_depth, kp_json_scan *scan,
                    size_t *offset, const char **problem);

/* After cJSON parsed a value whose numbers are numbers `*ordinal` onwards in
 * the scanned text: attach big integers' text and collapse repeated keys.
 * `*next` is the first unused entry of scan->big; both advance. */
void kp_json_finish(cJSON *value, const char *data, const kp_json_scan *scan, size_t *ordinal,
                    size_t *next);

/* The whole of `data` as exactly one JSON value (surrounding blanks allowed),
 * with every check above. KP_EINVALID / KP_ETOOLARGE with the message
 * "<what>: <problem> (at byte N)". */
int kp_json_parse_one(cJSON **out, const char *data, size_t len, size_t max_depth,
                      const char *what);

#endif
