/*
 * Table-driven admission tests: every case in the YAML files of
 * tests/unit/data/admission is one Criterion test. A fixture file names the kind and a base object
 * (inline or bases/<name>.yaml); each case edits a copy of the base and says
 * what validation must answer:
 *
 *   kind: NodePool
 *   base: nodepool
 *   cases:
 *     - name: weight 0 is below the minimum
 *       set: {/spec/weight: 0}          # JSON pointer -> value (parents created)
 *       remove: [/spec/limits]          # pointers to delete
 *       patch: [{op: add, ...}]         # RFC 6902 operations, applied last
 *       op: update                      # with old: {set/remove/patch} on the base
 *       deny:                           # absent: the object must be allowed
 *         - {path: spec.weight, message: greater than or equal to 1}
 *       more: true                      # other errors may appear too
 *       warn: [no limits]               # fragments that some warning contains
 *       no_warnings: true
 *       crd_admits: true                # a denial Karpenter makes after admission, not
 *                                       # its CRDs (tests/e2e/test_cel_agreement.sh)
 *
 * Each expected error must match one error's path exactly and its rendered
 * message by substring; without `more`, the error count must match too.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/admission.h"
#include "api/jsonpatch.h"
#include "base/error.h"
#include "format/yaml.h"

#define DATA KP_SOURCE_DIR "/tests/unit/data/admission"

typedef struct fixture_case {
    char file[128];
    int index;
} fixture_case;

/* The YAML document at `path`, or NULL (with a message on stderr). */
static cJSON *read_yaml(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        fwrite(chunk, 1, n, mem);
    fclose(mem);
    fclose(f);
    cJSON *root = NULL;
    int err = kp_yaml_parse_one(&root, buf, len, path, NULL);
    free(buf);
    if (err < 0 || !root) fprintf(stderr, "%s: %s\n", path, err < 0 ? kp_error_last() : "empty");
    return err < 0 ? NULL : root;
}

static cJSON *load_yaml(const char *path)
{
    cJSON *root = read_yaml(path);
    cr_assert_not_null(root, "cannot load %s", path);
    return root;
}

/* Fixtures that cannot be read stop the run: a silently empty table would pass. */
static cJSON *must_read_yaml(const char *path)
{
    cJSON *root = read_yaml(path);
    if (!root) abort();
    return root;
}

static const cJSON *member(const cJSON *obj, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(obj, name);
}

static int yaml_files(char names[][128], int max)
{
    DIR *dir = opendir(DATA);
    if (!dir) {
        fprintf(stderr, "cannot open %s\n", DATA);
        abort();
    }
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0 && n < max && len < 128)
            memcpy(names[n++], e->d_name, len + 1);
    }
    closedir(dir);
    qsort(names, (size_t)n, 128, (int (*)(const void *, const void *))strcmp);
    return n;
}

static void free_params(struct criterion_test_params *params)
{
    cr_free(params->params);
}

ParameterizedTestParameters(admission, fixtures)
{
    static char files[64][128];
    int n_files = yaml_files(files, 64);
    size_t total = 0;
    for (int f = 0; f < n_files; f++) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%.127s", DATA, files[f]);
        cJSON *root = must_read_yaml(path);
        total += (size_t)cJSON_GetArraySize(member(root, "cases"));
        cJSON_Delete(root);
    }
    fixture_case *params = cr_malloc(sizeof(fixture_case) * (total ? total : 1));
    size_t k = 0;
    for (int f = 0; f < n_files; f++) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%.127s", DATA, files[f]);
        cJSON *root = must_read_yaml(path);
        int n = cJSON_GetArraySize(member(root, "cases"));
        for (int i = 0; i < n; i++, k++) {
            snprintf(params[k].file, sizeof(params[k].file), "%.127s", files[f]);
            params[k].index = i;
        }
        cJSON_Delete(root);
    }
    return cr_make_param_array(fixture_case, params, total, free_params);
}

/* Set `pointer` to a copy of `value`, creating missing parent objects. */
static void set_at(cJSON *doc, const char *pointer, const cJSON *value, const char *where)
{
    char parent[1024];
    snprintf(parent, sizeof(parent), "%s", pointer);
    char *slash = strrchr(parent, '/');
    cr_assert_not_null(slash, "%s: bad pointer %s", where, pointer);
    *slash = '\0';
    if (*parent && !kp_jsonpointer_get(doc, parent)) {
        cJSON empty_obj = {0};
        empty_obj.type = cJSON_Object;
        set_at(doc, parent, &empty_obj, where);
    }
    cJSON *patch = kp_jsonpatch_new();
    cJSON *copy = cJSON_Duplicate(value, 1);
    if (kp_jsonpointer_get(doc, pointer))
        kp_jsonpatch_replace(patch, pointer, copy);
    else
        kp_jsonpatch_add(patch, pointer, copy);
    int err = kp_jsonpatch_apply(doc, patch);
    cJSON_Delete(patch);
    cr_assert_eq(err, 0, "%s: set %s: %s", where, pointer, kp_error_last());
}

/* A copy of `base` with the edits of `edit` (set, remove, patch). */
static cJSON *edited(const cJSON *base, const cJSON *edit, const char *where)
{
    cJSON *doc = cJSON_Duplicate(base, 1);
    const cJSON *e;
    cJSON_ArrayForEach(e, member(edit, "set")) set_at(doc, e->string, e, where);
    cJSON_ArrayForEach(e, member(edit, "remove"))
    {
        cJSON *patch = kp_jsonpatch_new();
        kp_jsonpatch_remove(patch, e->valuestring);
        int err = kp_jsonpatch_apply(doc, patch);
        cJSON_Delete(patch);
        cr_assert_eq(err, 0, "%s: remove %s: %s", where, e->valuestring, kp_error_last());
    }
    const cJSON *patch = member(edit, "patch");
    if (patch) cr_assert_eq(kp_jsonpatch_apply(doc, patch), 0, "%s: %s", where, kp_error_last());
    return doc;
}

static int kind_of(const char *name)
{
    if (strcmp(name, "NodePool") == 0) return KP_ADMIT_NODEPOOL;
    if (strcmp(name, "NodeClaim") == 0) return KP_ADMIT_NODECLAIM;
    if (strcmp(name, "EC2NodeClass") == 0) return KP_ADMIT_EC2NODECLASS;
    if (strcmp(name, "NodeOverlay") == 0) return KP_ADMIT_NODEOVERLAY;
    cr_assert_fail("unknown kind %s", name);
    return -1;
}

static cJSON *base_of(const cJSON *root)
{
    const cJSON *base = member(root, "base");
    if (cJSON_IsObject(base)) return cJSON_Duplicate(base, 1);
    cr_assert(cJSON_IsString(base), "a fixture needs a base");
    char path[512];
    snprintf(path, sizeof(path), "%s/bases/%.200s.yaml", DATA, base->valuestring);
    return load_yaml(path);
}

static const cJSON *as_list(const cJSON *item, cJSON **owned)
{
    *owned = NULL;
    if (!item || cJSON_IsArray(item)) return item;
    *owned = cJSON_CreateArray();
    cJSON_AddItemToArray(*owned, cJSON_Duplicate(item, 1));
    return *owned;
}

static void check_denials(const cJSON *tc, const kp_admission_result *res, kp_arena *arena,
                          const char *where)
{
    cJSON *owned;
    const cJSON *deny = as_list(member(tc, "deny"), &owned);
    const char *all = kp_field_errors_string(arena, &res->errors);
    size_t want = (size_t)cJSON_GetArraySize(deny);
    if (!deny) cr_expect_eq(res->errors.count, 0, "%s: expected no errors, got %s", where, all);
    const cJSON *d;
    cJSON_ArrayForEach(d, deny)
    {
        const char *path = cJSON_GetStringValue(member(d, "path"));
        const char *msg = cJSON_GetStringValue(member(d, "message"));
        bool found = false;
        for (size_t i = 0; i < res->errors.count && !found; i++) {
            const kp_field_error *e = &res->errors.items[i];
            const char *text = kp_field_error_string(arena, e);
            found = (!path || strcmp(e->path, path) == 0) && (!msg || strstr(text, msg));
        }
        cr_expect(found, "%s: no error at %s containing \"%s\"; got %s", where, path ? path : "*",
                  msg ? msg : "", all);
    }
    if (deny && !cJSON_IsTrue(member(tc, "more")))
        cr_expect_eq(res->errors.count, want, "%s: expected %zu errors, got %s", where, want, all);
    cJSON_Delete(owned);
}

static void check_warnings(const cJSON *tc, const kp_admission_result *res, const char *where)
{
    cJSON *owned;
    const cJSON *warn = as_list(member(tc, "warn"), &owned), *w;
    cJSON_ArrayForEach(w, warn)
    {
        bool found = false;
        for (size_t i = 0; i < res->n_warnings && !found; i++)
            found = strstr(res->warnings[i], w->valuestring) != NULL;
        cr_expect(found, "%s: no warning contains \"%s\" (%zu warnings%s%s)", where, w->valuestring,
                  res->n_warnings, res->n_warnings ? ", first: " : "",
                  res->n_warnings ? res->warnings[0] : "");
    }
    if (cJSON_IsTrue(member(tc, "no_warnings")))
        cr_expect_eq(res->n_warnings, 0, "%s: expected no warnings, got \"%s\"", where,
                     res->n_warnings ? res->warnings[0] : "");
    cJSON_Delete(owned);
}

ParameterizedTest(fixture_case *c, admission, fixtures)
{
    char path[512], where[512];
    snprintf(path, sizeof(path), "%s/%.127s", DATA, c->file);
    cJSON *root = load_yaml(path);
    const cJSON *tc = cJSON_GetArrayItem(member(root, "cases"), c->index);
    snprintf(where, sizeof(where), "%s: case %d \"%s\"", c->file, c->index,
             cJSON_GetStringValue(member(tc, "name")));
    int kind = kind_of(cJSON_GetStringValue(member(root, "kind")));
    cJSON *base = base_of(root);
    cJSON *obj = edited(base, tc, where);
    bool update = cJSON_GetStringValue(member(tc, "op")) &&
                  strcmp(cJSON_GetStringValue(member(tc, "op")), "update") == 0;
    cJSON *old = update ? edited(base, member(tc, "old"), where) : NULL;

    kp_arena *arena = kp_arena_new();
    kp_admission_result res;
    kp_admission_result_init(&res, arena);
    int err = kp_admission_validate((enum kp_admission_kind)kind,
                                    update ? KP_ADMIT_UPDATE : KP_ADMIT_CREATE, obj, old, &res);
    cr_assert_eq(err, 0, "%s: %s", where, kp_error_last());
    check_denials(tc, &res, arena, where);
    check_warnings(tc, &res, where);

    kp_admission_result_clear(&res);
    kp_arena_free(arena);
    cJSON_Delete(old);
    cJSON_Delete(obj);
    cJSON_Delete(base);
    cJSON_Delete(root);
}
