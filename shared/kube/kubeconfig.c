/*
 * Reading kubeconfig files (see config.h for the rules). Each file is parsed
 * with the project's YAML reader into a cJSON tree; lookups walk the trees in
 * file order, so the first file that defines a name wins, as kubectl's merge.
 */
#include "base/error.h"
#include "base/base64.h"
#include "base/xalloc.h"
#include "format/yaml.h"
#include "kube/config.h"
#include "kube/config_internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct kc_file {
    char *name; /* for messages */
    char *dir;  /* anchors relative paths; NULL: the working directory */
    cJSON *root;
} kc_file;

typedef struct kc_set {
    kc_file *files;
    size_t n;
} kc_set;

/* A named entry found in a section: `body` is e.g. clusters[2].cluster. */
typedef struct kc_entry {
    const kc_file *file;
    const cJSON *body;
    char where[64];
} kc_entry;

static const char *json_type(const cJSON *v)
{
    if (cJSON_IsString(v)) return "string";
    if (cJSON_IsNumber(v)) return "number";
    if (cJSON_IsBool(v)) return "boolean";
    if (cJSON_IsArray(v)) return "array";
    if (cJSON_IsObject(v)) return "object";
    return "null";
}

__attribute__((format(printf, 4, 5))) static int kc_error(const kc_file *f, const char *where,
                                                          const char *field, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    char at[160];
    snprintf(at, sizeof(at), "%s%s%s", where, *where && field ? "." : "", field ? field : "");
    return kp_error_set(KP_EINVALID, "kubeconfig %s: %s%s%s", f->name, at, *at ? ": " : "", msg);
}

static int present(const cJSON *v)
{
    return v && !cJSON_IsNull(v);
}

/* A string field of `e`: NULL when absent or null or empty. */
static int entry_string(const kc_entry *e, const char *field, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e->body, field);
    *out = NULL;
    if (!present(v)) return 0;
    if (!cJSON_IsString(v))
        return kc_error(e->file, e->where, field, "expected string, got %s", json_type(v));
    *out = *v->valuestring ? v->valuestring : NULL;
    return 0;
}

static int entry_bool(const kc_entry *e, const char *field, bool *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e->body, field);
    *out = false;
    if (!present(v)) return 0;
    if (!cJSON_IsBool(v))
        return kc_error(e->file, e->where, field, "expected boolean, got %s", json_type(v));
    *out = cJSON_IsTrue(v);
    return 0;
}

/* A file named by `field`, relative to the kubeconfig's directory; it must be
 * readable now, so that a typo shows here and not as a TLS failure later. */
static int entry_file(const kc_entry *e, const char *field, char **out)
{
    const char *s;
    int err = entry_string(e, field, &s);
    if (err < 0 || !s) return err;
    char *path = kp_kube_join_path(e->file->dir, s);
    if (access(path, R_OK) != 0) {
        err = kc_error(e->file, e->where, field, "cannot read %s: %s", path, strerror(errno));
        free(path);
        return err;
    }
    *out = path;
    return 0;
}

static int entry_data(const kc_entry *e, const char *field, char **out, size_t *len)
{
    const char *s;
    int err = entry_string(e, field, &s);
    if (err < 0 || !s) return err;
    if (kp_base64_decode(out, len, s) < 0)
        return kc_error(e->file, e->where, field, "not valid base64");
    return 0;
}

/* Look for `name` in file f's `section` (a list of {name, <inner>: {...}}). */
static int find_in_file(const kc_file *f, const char *section, const char *inner, const char *name,
                        kc_entry *out)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(f->root, section);
    if (!present(list)) return KP_ENOTFOUND;
    if (!cJSON_IsArray(list))
        return kc_error(f, section, NULL, "expected array, got %s", json_type(list));
    int i = 0;
    for (const cJSON *item = list->child; item; item = item->next, i++) {
        char where[64];
        snprintf(where, sizeof(where), "%s[%d]", section, i);
        if (!cJSON_IsObject(item))
            return kc_error(f, where, NULL, "expected object, got %s", json_type(item));
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(item, "name");
        if (!cJSON_IsString(n) || !*n->valuestring) return kc_error(f, where, "name", "required");
        if (strcmp(n->valuestring, name) != 0) continue;
        const cJSON *body = cJSON_GetObjectItemCaseSensitive(item, inner);
        if (present(body) && !cJSON_IsObject(body))
            return kc_error(f, where, inner, "expected object, got %s", json_type(body));
        out->file = f;
        out->body = body;
        snprintf(out->where, sizeof(out->where), "%s.%s", where, inner);
        return 0;
    }
    return KP_ENOTFOUND;
}

static int find_named(const kc_set *set, const char *section, const char *inner, const char *name,
                      kc_entry *out)
{
    for (size_t i = 0; i < set->n; i++) {
        int err = find_in_file(&set->files[i], section, inner, name, out);
        if (err != KP_ENOTFOUND) return err;
    }
    return KP_ENOTFOUND;
}

static int current_context(const kc_set *set, const char **out)
{
    for (size_t i = 0; i < set->n; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(set->files[i].root, "current-context");
        if (present(v) && !cJSON_IsString(v))
            return kc_error(&set->files[i], "", "current-context", "expected string, got %s",
                            json_type(v));
        if (cJSON_IsString(v) && *v->valuestring) {
            *out = v->valuestring;
            return 0;
        }
    }
    return kc_error(&set->files[0], "", "current-context", "not set, and no context was chosen");
}

static int server_url(const kc_entry *e, kp_kube_config *c)
{
    const char *s;
    int err = entry_string(e, "server", &s);
    if (err < 0) return err;
    if (!s) return kc_error(e->file, e->where, "server", "required");
    if (strncmp(s, "https://", 8) != 0 && strncmp(s, "http://", 7) != 0)
        return kc_error(e->file, e->where, "server", "\"%s\" is not an http or https URL", s);
    size_t len = strlen(s);
    while (len && s[len - 1] == '/')
        len--;
    c->server = kp_xstrndup(s, len);
    return 0;
}

static int refuse(const kc_entry *e, const char *field, const char *what)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e->body, field);
    return present(v) ? kc_error(e->file, e->where, field, "%s are not supported", what) : 0;
}

static int read_cluster(const kc_entry *e, kp_kube_config *c)
{
    int err = server_url(e, c);
    if (!err) err = entry_file(e, "certificate-authority", &c->ca_file);
    if (!err) err = entry_data(e, "certificate-authority-data", &c->ca_data, &c->ca_len);
    if (!err) err = entry_bool(e, "insecure-skip-tls-verify", &c->insecure);
    if (!err) err = refuse(e, "tls-server-name", "server name overrides");
    if (err < 0) return err;
    if (c->ca_file && c->ca_data)
        return kc_error(e->file, e->where, NULL,
                        "certificate-authority and certificate-authority-data are both set");
    if (c->insecure && (c->ca_file || c->ca_data))
        return kc_error(e->file, e->where, NULL,
                        "insecure-skip-tls-verify is set together with a certificate authority");
    return 0;
}

static int read_user_fields(const kc_entry *e, kp_kube_config *c)
{
    const char *token = NULL;
    int err = entry_string(e, "token", &token);
    if (!err && token) c->token = kp_xstrdup(token);
    if (!err) err = entry_file(e, "tokenFile", &c->token_file);
    if (!err) err = entry_file(e, "client-certificate", &c->cert_file);
    if (!err) err = entry_data(e, "client-certificate-data", &c->cert_data, &c->cert_len);
    if (!err) err = entry_file(e, "client-key", &c->key_file);
    if (!err) err = entry_data(e, "client-key-data", &c->key_data, &c->key_len);
    return err;
}

static int read_user(const kc_entry *e, kp_kube_config *c)
{
    int err = refuse(e, "exec", "exec credential plugins");
    if (!err) err = refuse(e, "auth-provider", "auth-provider plugins");
    if (!err) err = refuse(e, "username", "basic authentication (username/password)");
    if (!err) err = read_user_fields(e, c);
    if (err < 0) return err;
    if (c->cert_file && c->cert_data)
        return kc_error(e->file, e->where, NULL,
                        "client-certificate and client-certificate-data are both set");
    if (c->key_file && c->key_data)
        return kc_error(e->file, e->where, NULL, "client-key and client-key-data are both set");
    if ((c->cert_file || c->cert_data) != (c->key_file || c->key_data))
        return kc_error(e->file, e->where, NULL,
                        "a client certificate needs a client key and a key needs a certificate");
    return 0;
}

static int not_found(const kc_entry *e, const char *field, const char *what, const char *name)
{
    return kc_error(e->file, e->where, field, "no %s named \"%s\"", what, name);
}

static int resolve_context(const kc_set *set, const kc_entry *ctx, kp_kube_config *c)
{
    const char *cluster, *user, *ns;
    int err = entry_string(ctx, "cluster", &cluster);
    if (!err) err = entry_string(ctx, "user", &user);
    if (!err) err = entry_string(ctx, "namespace", &ns);
    if (err < 0) return err;
    if (!cluster) return kc_error(ctx->file, ctx->where, "cluster", "required");
    c->namespace = kp_xstrdup(ns ? ns : "default");
    kc_entry e;
    err = find_named(set, "clusters", "cluster", cluster, &e);
    if (err == KP_ENOTFOUND) return not_found(ctx, "cluster", "cluster", cluster);
    if (!err && !e.body) return kc_error(e.file, e.where, NULL, "required");
    if (!err) err = read_cluster(&e, c);
    if (err < 0 || !user) return err;
    err = find_named(set, "users", "user", user, &e);
    if (err == KP_ENOTFOUND) return not_found(ctx, "user", "user", user);
    return err < 0 || !e.body ? err : read_user(&e, c);
}

static int resolve(const kc_set *set, const char *context, kp_kube_config *c)
{
    const char *name = context;
    int err = name && *name ? 0 : current_context(set, &name);
    if (err < 0) return err;
    kc_entry ctx;
    err = find_named(set, "contexts", "context", name, &ctx);
    if (err == KP_ENOTFOUND)
        return kc_error(&set->files[0], "contexts", NULL, "no context named \"%s\"", name);
    if (!err && !ctx.body) return kc_error(ctx.file, ctx.where, NULL, "required");
    return err < 0 ? err : resolve_context(set, &ctx, c);
}

static int parse_file(kc_file *f, const char *text, size_t len)
{
    cJSON *root = NULL;
    int err = kp_yaml_parse_one(&root, text, len, f->name, NULL);
    if (err < 0) return kp_error_wrap(KP_EINVALID, "kubeconfig");
    if (!cJSON_IsObject(root)) {
        err = kc_error(f, "", NULL, "expected a mapping at the top level, got %s", json_type(root));
        cJSON_Delete(root);
        return err;
    }
    f->root = root;
    return 0;
}

static void set_free(kc_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        free(set->files[i].name);
        free(set->files[i].dir);
        cJSON_Delete(set->files[i].root);
    }
    free(set->files);
}

static int finish(kc_set *set, const char *context, kp_kube_config **out)
{
    kp_kube_config *c = kp_xcalloc(1, sizeof(*c));
    int err = resolve(set, context, c);
    if (err < 0) {
        kp_kube_config_free(c);
        return err;
    }
    size_t n = strlen(set->files[0].name) + 16;
    c->source = kp_xmalloc(n);
    snprintf(c->source, n, "kubeconfig %s", set->files[0].name);
    *out = c;
    return 0;
}

int kp_kube_config_parse(kp_kube_config **out, const char *text, size_t len, const char *name,
                         const char *dir, const char *context)
{
    kc_file file = {kp_xstrdup(name ? name : "<memory>"), dir ? kp_xstrdup(dir) : NULL, NULL};
    kc_set set = {kp_xmalloc(sizeof(kc_file)), 1};
    set.files[0] = file;
    int err = parse_file(&set.files[0], text, len);
    if (!err) err = finish(&set, context, out);
    set_free(&set);
    return err;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return NULL;
    return kp_xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
}

/* Add `path` to the set; a file that does not exist is skipped, as kubectl
 * skips missing entries of $KUBECONFIG. */
static int add_file(kc_set *set, size_t *cap, const char *path)
{
    char *text;
    size_t len;
    int err = kp_kube_read_file(&text, &len, path);
    if (err == KP_ENOTFOUND) return 0;
    if (err < 0) return kp_error_wrap(err, "kubeconfig");
    set->files = kp_xgrow(set->files, cap, set->n + 1, sizeof(kc_file));
    kc_file *f = &set->files[set->n++];
    f->name = kp_xstrdup(path);
    f->dir = dir_of(path);
    f->root = NULL;
    err = parse_file(f, text, len);
    free(text);
    return err;
}

static int load_paths(kc_set *set, const char *paths)
{
    size_t cap = 0;
    const char *p = paths;
    while (*p) {
        size_t n = strcspn(p, ":");
        if (n) {
            char *path = kp_xstrndup(p, n);
            int err = add_file(set, &cap, path);
            free(path);
            if (err < 0) return err;
        }
        p += n + (p[n] == ':');
    }
    if (!set->n) return kp_error_set(KP_ENOTFOUND, "kubeconfig: no file found in \"%s\"", paths);
    return 0;
}

int kp_kube_config_load(kp_kube_config **out, const char *paths, const char *context)
{
    char *home = NULL;
    if (!paths || !*paths) paths = getenv("KUBECONFIG");
    if (!paths || !*paths) {
        const char *h = getenv("HOME");
        if (!h || !*h)
            return kp_error_set(KP_ENOTFOUND, "kubeconfig: neither $KUBECONFIG nor $HOME is set");
        paths = home = kp_kube_join_path(h, ".kube/config");
    }
    kc_set set = {NULL, 0};
    int err = load_paths(&set, paths);
    if (!err) err = finish(&set, context, out);
    set_free(&set);
    free(home);
    return err;
}
