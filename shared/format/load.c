#include "format/load.h"
#include "format/json_in.h"
#include "format/json_out.h"

#include "base/arena.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/xalloc.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct kp_doc_list {
    kp_doc *docs;
    size_t count, cap;
    kp_arena *names;      /* file names the entries point to */
    const char **skipped; /* "dir/README.md (why)", in the names arena */
    size_t n_skipped, cap_skipped;
};

/* One load call: where documents go and what they are called. */
struct loader {
    kp_doc_list *list;
    kp_load_opts opts;
    const char *file;
};

kp_doc_list *kp_doc_list_new(void)
{
    kp_doc_list *list = kp_xcalloc(1, sizeof(*list));
    list->names = kp_arena_new();
    return list;
}

static void truncate_list(kp_doc_list *list, size_t count)
{
    while (list->count > count)
        cJSON_Delete(list->docs[--list->count].obj);
}

kp_doc_list *kp_doc_list_free(kp_doc_list *list)
{
    if (!list) return NULL;
    truncate_list(list, 0);
    free(list->docs);
    free(list->skipped);
    kp_arena_free(list->names);
    free(list);
    return NULL;
}

size_t kp_doc_list_count(const kp_doc_list *list)
{
    return list->count;
}

const kp_doc *kp_doc_list_at(const kp_doc_list *list, size_t i)
{
    return i < list->count ? &list->docs[i] : NULL;
}

size_t kp_doc_list_skipped_count(const kp_doc_list *list)
{
    return list->n_skipped;
}

const char *kp_doc_list_skipped(const kp_doc_list *list, size_t i)
{
    return i < list->n_skipped ? list->skipped[i] : NULL;
}

static void note_skipped(kp_doc_list *list, const char *path, const char *why)
{
    list->skipped =
        kp_xgrow(list->skipped, &list->cap_skipped, list->n_skipped + 1, sizeof(*list->skipped));
    list->skipped[list->n_skipped++] = kp_arena_printf(list->names, "%s (%s)", path, why);
}

cJSON *kp_doc_list_take(kp_doc_list *list, size_t i)
{
    if (i >= list->count) return NULL;
    cJSON *obj = list->docs[i].obj;
    list->docs[i].obj = NULL;
    return obj;
}

char *kp_doc_origin(const kp_doc *doc, char *buf, size_t size)
{
    if (doc->item >= 0)
        snprintf(buf, size, "%s: document %zu, items[%ld]", doc->file, doc->doc + 1, doc->item);
    else
        snprintf(buf, size, "%s: document %zu", doc->file, doc->doc + 1);
    return buf;
}

/* ---- documents into the list ------------------------------------------------ */

static const char *type_name(const cJSON *item)
{
    if (cJSON_IsArray(item)) return "a sequence";
    if (cJSON_IsString(item)) return "a string";
    if (cJSON_IsNumber(item)) return "a number";
    return cJSON_IsBool(item) ? "a boolean" : cJSON_IsNull(item) ? "null" : "a scalar";
}

/* Takes `obj` whatever happens. */
static int push(struct loader *ld, cJSON *obj, size_t doc, long item, size_t line)
{
    kp_doc_list *list = ld->list;
    if (!cJSON_IsObject(obj)) {
        char where[32] = "";
        if (item >= 0) snprintf(where, sizeof(where), ", items[%ld]", item);
        int err = kp_error_set(KP_EINVALID,
                               "%s: document %zu%s: expected a mapping (an object), "
                               "got %s",
                               ld->file, doc + 1, where, type_name(obj));
        cJSON_Delete(obj);
        return err;
    }
    if (list->count >= ld->opts.max_docs) {
        cJSON_Delete(obj);
        return kp_error_set(KP_ETOOLARGE, "%s: document %zu: more than %zu objects", ld->file,
                            doc + 1, ld->opts.max_docs);
    }
    list->docs = kp_xgrow(list->docs, &list->cap, list->count + 1, sizeof(kp_doc));
    list->docs[list->count++] = (kp_doc){ld->file, doc, item, line, obj};
    return 0;
}

/* kind "List" (items may be absent), or "...List" with an items array. */
static int is_list(const cJSON *obj)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(obj, "items");
    if (!cJSON_IsString(kind)) return 0;
    size_t n = strlen(kind->valuestring);
    if (strcmp(kind->valuestring, "List") == 0)
        return !items || cJSON_IsNull(items) || cJSON_IsArray(items);
    return n > 4 && strcmp(kind->valuestring + n - 4, "List") == 0 && cJSON_IsArray(items);
}

/* Takes `obj`. */
static int add_document(struct loader *ld, cJSON *obj, size_t doc, size_t line)
{
    if (!cJSON_IsObject(obj) || !is_list(obj)) return push(ld, obj, doc, -1, line);
    cJSON *items = cJSON_GetObjectItemCaseSensitive(obj, "items");
    int err = 0;
    for (long i = 0; !err && cJSON_IsArray(items) && items->child; i++)
        err = push(ld, cJSON_DetachItemViaPointer(items, items->child), doc, i, line);
    cJSON_Delete(obj);
    return err;
}

static int on_yaml_document(void *ctx, cJSON *root, const kp_yaml_doc_info *info)
{
    return add_document(ctx, root, info->index, info->line);
}

/* ---- JSON ------------------------------------------------------------------- */

static void line_col(const char *data, size_t offset, size_t *line, size_t *col)
{
    *line = *col = 1;
    for (size_t i = 0; i < offset; i++) {
        if (data[i] == '\n') {
            (*line)++;
            *col = 1;
        } else if (((unsigned char)data[i] & 0xC0) != 0x80) {
            (*col)++;
        }
    }
}

static int json_fail(struct loader *ld, const char *data, size_t offset, int code,
                     const char *problem)
{
    size_t line, col;
    line_col(data, offset, &line, &col);
    return kp_error_set(code, "%s: byte offset %zu, line %zu column %zu: %s", ld->file, offset,
                        line, col, problem);
}

static size_t skip_blank(const char *data, size_t len, size_t off)
{
    while (off < len && strchr(" \t\r\n", data[off]) && data[off])
        off++;
    return off;
}

/* One JSON value after another, as kubectl's JSON decoder reads a stream. */
static int load_json(struct loader *ld, const char *data, size_t len)
{
    kp_json_scan scan = KP_JSON_SCAN_INIT;
    size_t off = len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    size_t doc = 0, ordinal = 0, next = 0, at = 0;
    const char *problem = NULL;
    int err = kp_json_prescan(data, len, ld->opts.limits.max_depth, &scan, &at, &problem);
    if (err < 0) err = json_fail(ld, data, at, err, problem);
    while (!err && (off = skip_blank(data, len, off)) < len) {
        const char *end = NULL;
        cJSON *value = cJSON_ParseWithLengthOpts(data + off, len - off, &end, 0);
        if (!value) {
            err =
                json_fail(ld, data, end ? (size_t)(end - data) : off, KP_EINVALID, "invalid JSON");
            break;
        }
        size_t line, col;
        line_col(data, off, &line, &col);
        kp_json_finish(value, data, &scan, &ordinal, &next);
        if (cJSON_IsNull(value))
            cJSON_Delete(value);
        else
            err = add_document(ld, value, doc, line);
        doc++;
        off = (size_t)(end - data);
    }
    kp_json_scan_free(&scan);
    return err;
}

/* ---- sources -------------------------------------------------------------- */

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static enum kp_load_format sniff(const char *data, size_t len)
{
    size_t off = len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    off = skip_blank(data, len, off);
    return off < len && data[off] == '{' ? KP_LOAD_JSON : KP_LOAD_YAML;
}

static int load_data(struct loader *ld, const char *data, size_t len, enum kp_load_format format)
{
    if (len > ld->opts.limits.max_bytes)
        return kp_error_set(KP_ETOOLARGE, "%s: input is %zu bytes, more than the limit of %zu",
                            ld->file, len, ld->opts.limits.max_bytes);
    if (format == KP_LOAD_AUTO) format = sniff(data, len);
    if (format == KP_LOAD_JSON) return load_json(ld, data, len);
    return kp_yaml_parse_stream(data, len, ld->file, &ld->opts.limits, on_yaml_document, ld);
}

static void loader_init(struct loader *ld, kp_doc_list *list, const char *name,
                        const kp_load_opts *opts)
{
    static const kp_load_opts defaults = KP_LOAD_OPTS_INIT;
    ld->list = list;
    ld->opts = opts ? *opts : defaults;
    ld->file = kp_arena_strdup(list->names, name ? name : "<input>");
}

/* Read until EOF into a buffer capped at the limit. */
static int load_file_stream(struct loader *ld, FILE *f, enum kp_load_format format)
{
    kp_buf buf = KP_BUF_INIT(ld->opts.limits.max_bytes);
    char chunk[65536];
    int err = 0;
    size_t n;
    while (!err && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        if (kp_buf_append(&buf, chunk, n) < 0)
            err = kp_error_set(KP_ETOOLARGE, "%s: input is more than the limit of %zu bytes",
                               ld->file, ld->opts.limits.max_bytes);
    if (!err && ferror(f)) err = kp_error_set(KP_EIO, "%s: read error", ld->file);
    if (!err) err = load_data(ld, kp_buf_cstr(&buf), buf.len, format);
    kp_buf_free(&buf);
    return err;
}

static int load_file(kp_doc_list *list, const char *path, const kp_load_opts *opts)
{
    struct loader ld;
    loader_init(&ld, list, path, opts);
    FILE *f = fopen(path, "rbe");
    if (!f)
        return kp_error_set(errno == ENOENT ? KP_ENOTFOUND : KP_EIO, "%s: %s", path,
                            strerror(errno));
    int err = load_file_stream(&ld, f, has_suffix(path, ".json") ? KP_LOAD_JSON : KP_LOAD_YAML);
    fclose(f);
    return err;
}

static int wanted(const char *name)
{
    return has_suffix(name, ".yaml") || has_suffix(name, ".yml") || has_suffix(name, ".json");
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in `dir` worth looking at, sorted; NULL-terminated, caller frees. */
static int list_dir(char ***out, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return kp_error_set(KP_EIO, "%s: %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        names = kp_xgrow(names, &cap, n + 2, sizeof(*names));
        names[n++] = kp_xstrdup(e->d_name);
    }
    closedir(d);
    names = kp_xgrow(names, &cap, n + 1, sizeof(*names));
    names[n] = NULL;
    qsort(names, n, sizeof(*names), name_cmp);
    *out = names;
    return 0;
}

static int load_dir(kp_doc_list *list, const char *dir, const kp_load_opts *opts, int recursive)
{
    char **names = NULL;
    int err = list_dir(&names, dir);
    for (size_t i = 0; !err && names[i]; i++) {
        size_t n = strlen(dir);
        char *path = kp_xmalloc(n + strlen(names[i]) + 2);
        snprintf(path, n + strlen(names[i]) + 2, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/",
                 names[i]);
        struct stat st, target;
        bool file = false;
        if (lstat(path, &st) < 0)
            err = kp_error_set(KP_EIO, "%s: %s", path, strerror(errno));
        else if (S_ISDIR(st.st_mode) && recursive)
            err = load_dir(list, path, opts, recursive);
        else if (S_ISDIR(st.st_mode))
            note_skipped(list, path, "a directory; not recursing");
        else if (!(file = S_ISREG(st.st_mode) || (S_ISLNK(st.st_mode) && stat(path, &target) == 0 &&
                                                  S_ISREG(target.st_mode))))
            note_skipped(list, path, "not a regular file");
        else if (!wanted(names[i]))
            note_skipped(list, path, "not .yaml, .yml or .json");
        else
            err = load_file(list, path, opts);
        free(path);
    }
    for (size_t i = 0; names && names[i]; i++)
        free(names[i]);
    free(names);
    return err;
}

/* ---- entry points --------------------------------------------------------------- */

static int finish(kp_doc_list *list, size_t mark, int err)
{
    if (err < 0) truncate_list(list, mark);
    return err < 0 ? err : 0;
}

int kp_load_buffer(kp_doc_list *list, const char *data, size_t len, const char *name,
                   enum kp_load_format format, const kp_load_opts *opts)
{
    struct loader ld;
    size_t mark = list->count;
    loader_init(&ld, list, name, opts);
    return finish(list, mark, load_data(&ld, len ? data : "", len, format));
}

int kp_load_stream(kp_doc_list *list, FILE *stream, const char *name, enum kp_load_format format,
                   const kp_load_opts *opts)
{
    struct loader ld;
    size_t mark = list->count;
    loader_init(&ld, list, name, opts);
    return finish(list, mark, load_file_stream(&ld, stream, format));
}

int kp_load_path(kp_doc_list *list, const char *path, const kp_load_opts *opts)
{
    static const kp_load_opts defaults = KP_LOAD_OPTS_INIT;
    size_t mark = list->count;
    struct stat st;
    if (!opts) opts = &defaults;
    if (strcmp(path, "-") == 0) return kp_load_stream(list, stdin, "-", KP_LOAD_AUTO, opts);
    if (stat(path, &st) < 0)
        return kp_error_set(errno == ENOENT ? KP_ENOTFOUND : KP_EIO, "%s: %s", path,
                            strerror(errno));
    if (S_ISDIR(st.st_mode)) return finish(list, mark, load_dir(list, path, opts, opts->recursive));
    return finish(list, mark, load_file(list, path, opts));
}

int kp_doc_list_append(kp_doc_list *list, cJSON *obj, const char *file, size_t doc, long item)
{
    struct loader ld;
    loader_init(&ld, list, file, NULL);
    return push(&ld, obj, doc, item, 0);
}
