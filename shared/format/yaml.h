/*
 * YAML -> JSON: reads a YAML stream with libyaml and builds one cJSON tree per
 * document, giving the same JSON kubectl gets from the same text (kubectl
 * converts YAML with sigs.k8s.io/yaml, i.e. go-yaml v2's YAML 1.1 rules, then
 * encoding/json). In short:
 *
 *   - Quoted ('' "") and block (| >) scalars are strings. Plain scalars:
 *     "", ~, null, Null, NULL -> null; true/false, yes/no, on/off, y/n in
 *     lower, Title and UPPER case -> booleans; integers in Go's base-prefix
 *     syntax (12, -3, +4, 0x1F, 0o17, 017 (octal), 0b101, 1_000) -> numbers,
 *     up to the uint64 range; decimal floats (1.5, 1e3, .5, 1.) -> numbers,
 *     as are integers beyond uint64; .inf and .nan are errors, as in
 *     encoding/json; everything else (timestamps included) -> strings.
 *   - Tags: !!str, !!int, !!float, !!bool, !!null, !!timestamp and !!binary
 *     are honoured ("cannot decode !!str `x` as a !!int" otherwise); "!" and
 *     unknown tags make a string; tags on collections are ignored.
 *   - Anchors, aliases and "<<" merge keys (a mapping or a sequence of
 *     mappings). As in go-yaml v2, members are applied in order and the last
 *     assignment wins, so a merge overrides keys written before it and keys
 *     after it override the merge; an anchor may be redefined, an alias refers
 *     to the latest definition.
 *   - Duplicate keys: a key written twice in one mapping is an error, as
 *     kubectl reports it ("mapping key "x" already defined at line 3"). Keys
 *     a merge brings in may be overridden (see above).
 *   - Keys that are not strings become strings: 1 -> "1", 0x10 -> "16",
 *     1.5 -> "1.5" (float32 'g' spelling), yes -> "true". A null key, a key
 *     beyond int64 or a collection as a key is an error.
 *   - Key order is the document's (encoding/json would sort; order is not
 *     meaningful to any consumer, and this order reads better).
 *   - Integers beyond 2^53 keep their exact text (see json_out.h).
 *   - Strings containing NUL are refused: every consumer is C.
 *
 * Documents whose root is null (empty documents, "---" alone, "null", "~")
 * are skipped, as kubectl skips them. Document numbers in messages count
 * every document in the stream from 1, skipped ones included; lines and
 * columns count from 1. Errors read
 *   `x.yaml: document 2, line 7 column 3: mapping values are not allowed in this context`
 *
 * Limits (kp_yaml_limits): input bytes, nesting depth, JSON nodes per
 * stream, and nodes produced by aliases and merges (the billion-laughs
 * defence). Exceeding one is KP_ETOOLARGE; malformed input is KP_EINVALID.
 *
 * Trees handed out are owned by the receiver (cJSON_Delete). Nothing is kept
 * between calls; each call uses its own libyaml parser and arena.
 */
#ifndef KP_FORMAT_YAML_H
#define KP_FORMAT_YAML_H

#include <cjson/cJSON.h>
#include <stddef.h>

typedef struct kp_yaml_limits {
    size_t max_bytes;       /* size of the input */
    size_t max_depth;       /* nested mappings and sequences */
    size_t max_nodes;       /* JSON values built from one stream */
    size_t max_alias_nodes; /* of those, values copied by aliases and merges */
} kp_yaml_limits;

#define KP_YAML_MAX_BYTES       ((size_t)64 << 20)
#define KP_YAML_MAX_DEPTH       256
#define KP_YAML_MAX_NODES       4000000
#define KP_YAML_MAX_ALIAS_NODES 100000
#define KP_YAML_LIMITS_INIT                                                                        \
    {                                                                                              \
        KP_YAML_MAX_BYTES, KP_YAML_MAX_DEPTH, KP_YAML_MAX_NODES, KP_YAML_MAX_ALIAS_NODES           \
    }

/* Where a document sits in its stream. */
typedef struct kp_yaml_doc_info {
    size_t index; /* 0-based position in the stream, empty documents counted */
    size_t line;  /* 1-based line of the document's first node */
} kp_yaml_doc_info;

/* Receives each non-empty document in order and owns `root` from then on
 * (also when it fails). Return 0 to go on, or a negative KP_E* (with the
 * message set) to stop: the parser then returns that code unchanged. */
typedef int (*kp_yaml_doc_fn)(void *ctx, cJSON *root, const kp_yaml_doc_info *info);

/* Parse every document of `data` (`len` bytes, need not be NUL-terminated).
 * `name` (may be NULL) starts error messages; `limits` NULL means the
 * defaults. Documents already delivered stay with the callback on error. */
int kp_yaml_parse_stream(const char *data, size_t len, const char *name,
                         const kp_yaml_limits *limits, kp_yaml_doc_fn fn, void *ctx);

/* Parse a stream that holds at most one non-empty document: *out is its tree,
 * or NULL when there is none. More than one is KP_EINVALID. */
int kp_yaml_parse_one(cJSON **out, const char *data, size_t len, const char *name,
                      const kp_yaml_limits *limits);

/* Whether the plain (unquoted) scalar `text` would read back as the string
 * itself: false for "true", "1", "~", "", "0x10", "1e3", "<<", ... The YAML
 * emitter quotes every string for which this is false. Also false for the
 * base-60 numbers YAML 1.1 readers other than go-yaml see ("1:30"). */
int kp_yaml_plain_is_string(const char *text, size_t len);

#endif
