/*
 * Loading manifests the way `kubectl apply -f` finds them: files, directories
 * (recursively), standard input ("-") or a memory buffer, each holding one or
 * more YAML documents or JSON values, into one list of JSON objects that
 * remember where they came from.
 *
 *   - Directories: entries ending in .yaml, .yml or .json (case-sensitive, as
 *     kubectl), visited in byte order of their names so that results do not
 *     depend on the file system; names starting with '.' are skipped; symbolic
 *     links to files are followed, to directories not (no cycles). Other
 *     entries are listed as skipped (kp_doc_list_skipped). A path given
 *     explicitly is read whatever its extension.
 *   - Format: files ending in .json are JSON (one value or several in a row,
 *     parsed with cJSON; errors give the byte offset, line and column);
 *     everything else is YAML (format/yaml.h). Buffers and standard input are
 *     JSON when their first non-blank byte is '{', as kubectl decides.
 *   - Empty and null documents are skipped. Every other document must be a
 *     mapping (an object).
 *   - Lists: an object whose kind is "List", or ends in "List" and has an
 *     `items` array (PodList, ...), is replaced by its items, each keeping
 *     the origin of the list plus its index. One level, as kubectl does.
 *
 * Ownership: a kp_doc_list owns every tree and string in it; one
 * kp_doc_list_free releases all. A load that fails leaves the list as it was
 * before the call, with the message naming the file and the document.
 */
#ifndef KP_FORMAT_LOAD_H
#define KP_FORMAT_LOAD_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>

#include "format/yaml.h"

typedef struct kp_doc {
    const char *file; /* the path (joined below a directory), "-", or a buffer's name */
    size_t doc;       /* 0-based position in its file, empty documents counted */
    long item;        /* 0-based index in the `items` of a List, or -1 */
    size_t line;      /* 1-based line where the document starts (YAML and JSON) */
    cJSON *obj;       /* the object; NULL once taken with kp_doc_list_take */
} kp_doc;

typedef struct kp_doc_list kp_doc_list;

enum kp_load_format {
    KP_LOAD_AUTO, /* by file extension, or by the first byte for buffers and stdin */
    KP_LOAD_YAML,
    KP_LOAD_JSON,
};

typedef struct kp_load_opts {
    kp_yaml_limits limits; /* per file; max_bytes also caps JSON files and stdin */
    int recursive;         /* descend into subdirectories */
    size_t max_docs;       /* objects in one list, Lists unpacked */
} kp_load_opts;

#define KP_LOAD_MAX_DOCS 1000000
#define KP_LOAD_OPTS_INIT                                                                          \
    {                                                                                              \
        KP_YAML_LIMITS_INIT, 1, KP_LOAD_MAX_DOCS                                                   \
    }

kp_doc_list *kp_doc_list_new(void);
/* Frees every tree still in the list. Accepts NULL; returns NULL. */
kp_doc_list *kp_doc_list_free(kp_doc_list *list);

size_t kp_doc_list_count(const kp_doc_list *list);
/* The i-th document (i < count), in load order. */
const kp_doc *kp_doc_list_at(const kp_doc_list *list, size_t i);
/* Entries of the directories loaded that were not read, each as "path
 * (why)": other extensions, sub-directories without recursion, FIFOs and
 * devices. kubectl passes over them in silence; a planner should say so. */
size_t kp_doc_list_skipped_count(const kp_doc_list *list);
const char *kp_doc_list_skipped(const kp_doc_list *list, size_t i);

/* Hand the i-th tree to the caller (who frees it); the entry keeps its origin. */
cJSON *kp_doc_list_take(kp_doc_list *list, size_t i);

/* Append what `path` holds: a file, a directory, or "-" for standard input.
 * `opts` NULL means KP_LOAD_OPTS_INIT. KP_ENOTFOUND if the path does not
 * exist, KP_EIO if it cannot be read, KP_EINVALID for malformed content,
 * KP_ETOOLARGE past a limit. */
int kp_load_path(kp_doc_list *list, const char *path, const kp_load_opts *opts);

/* Append the documents in `len` bytes of `data`, naming them `name`. */
int kp_load_buffer(kp_doc_list *list, const char *data, size_t len, const char *name,
                   enum kp_load_format format, const kp_load_opts *opts);

/* Append the documents read from `stream` until its end. */
int kp_load_stream(kp_doc_list *list, FILE *stream, const char *name, enum kp_load_format format,
                   const kp_load_opts *opts);

/* Append `obj`, already parsed (taken whatever happens), as document `doc`
 * of `file`, items[`item`] (-1: not from a List). A List is not unpacked.
 * KP_EINVALID when it is not an object, KP_ETOOLARGE past
 * KP_LOAD_MAX_DOCS. For objects that come from elsewhere than a file (an
 * API server's list) or move from one list to another. */
int kp_doc_list_append(kp_doc_list *list, cJSON *obj, const char *file, size_t doc, long item);

/* "x.yaml: document 2" or "x.yaml: document 2, items[3]": the document
 * counted from 1 like lines, the item as a field path. Returns buf. */
char *kp_doc_origin(const kp_doc *doc, char *buf, size_t size);

#endif
