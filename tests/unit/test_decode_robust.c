/*
 * Every field of every fixture, replaced by values of the wrong type: the
 * decoder must either accept the document (the field is ignored or the value
 * fits) or fail with KP_EINVALID and a message that names the replaced field
 * (or a field below it). Runs under ASan, so it also shows that no error
 * path leaks or reads out of bounds.
 */
#include "test_decode_util.h"

#include <ctype.h>

static const char *const fixtures[] = {
    "pod_full.json",  "nodepool_full.json", "nodeclaim_full.json", "ec2nodeclass_full.json",
    "node_full.json", "statefulset.json",   "daemonset.json",      "pv.json",
};

typedef cJSON *(*make_fn)(void);

static cJSON *make_fraction(void)
{
    return cJSON_CreateNumber(12.5);
}
static cJSON *make_big(void)
{
    return cJSON_CreateNumber(3000000000.0);
}
static cJSON *make_string(void)
{
    return cJSON_CreateString("Foo");
}
static cJSON *make_array(void)
{
    return cJSON_CreateArray();
}
static cJSON *make_object(void)
{
    return cJSON_CreateObject();
}
static cJSON *make_bool(void)
{
    return cJSON_CreateTrue();
}
static cJSON *make_null(void)
{
    return cJSON_CreateNull();
}

static const make_fn makers[] = {make_fraction, make_big,  make_string, make_array,
                                 make_object,   make_bool, make_null};

enum { MAX_DEPTH = 32 };

/* A node's address: the child index at each level, and its field path. */
typedef struct address {
    int steps[MAX_DEPTH];
    int depth;
    char path[512];
} address;

/* "metadata.labels[app]" -> "metadata.labels.app": map keys may be written
 * either way (resource names use dots, label keys brackets). */
static void normalise(const char *in, char *out, size_t size)
{
    size_t n = 0;
    for (const char *p = in; *p && n + 1 < size; p++) {
        if (*p == '[' && !isdigit((unsigned char)p[1])) {
            out[n++] = '.';
            const char *close = strchr(p, ']');
            size_t len = close ? (size_t)(close - p - 1) : strlen(p + 1);
            if (n + len >= size) break;
            memcpy(out + n, p + 1, len);
            n += len;
            p = close ? close : p + len;
        } else {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
}

static cJSON *at(cJSON *root, const address *a, cJSON **parent)
{
    cJSON *node = root;
    *parent = NULL;
    for (int i = 0; i < a->depth; i++) {
        *parent = node;
        node = cJSON_GetArrayItem(node, a->steps[i]);
    }
    return node;
}

typedef struct stats {
    size_t runs;
    size_t errors;
} stats;

static void mutate(const cJSON *original, const address *a, stats *st)
{
    for (size_t m = 0; m < sizeof(makers) / sizeof(makers[0]); m++) {
        cJSON *doc = cJSON_Duplicate(original, 1), *parent;
        cJSON *node = at(doc, a, &parent);
        cJSON *replacement = makers[m]();
        if (node->string) /* keep the member's name (cJSON frees it with free()) */
            replacement->string = strdup(node->string);
        cJSON_ReplaceItemViaPointer(parent, node, replacement);
        kp_arena *arena = kp_arena_new();
        kp_object obj;
        int err = kp_decode_object(arena, doc, &obj);
        st->runs++;
        if (err != 0) {
            char want[600], got[600];
            st->errors++;
            cr_expect_eq(err, KP_EINVALID, "%s: %d", a->path, err);
            normalise(a->path, want, sizeof(want));
            normalise(kp_error_last(), got, sizeof(got));
            size_t n = strlen(want);
            cr_expect(strncmp(got, want, n) == 0 && strchr(":.[", got[n]),
                      "replacing %s (maker %zu): %s", a->path, m, kp_error_last());
        }
        kp_arena_free(arena);
        cJSON_Delete(doc);
    }
}

static void walk(const cJSON *root, const cJSON *node, address *a, stats *st)
{
    int i = 0;
    if (a->depth == MAX_DEPTH - 1) return;
    for (const cJSON *child = node->child; child; child = child->next, i++) {
        address sub = *a;
        sub.steps[sub.depth++] = i;
        int n = cJSON_IsArray(node) ? snprintf(sub.path, sizeof(sub.path), "%s[%d]", a->path, i)
                                    : snprintf(sub.path, sizeof(sub.path), "%s%s%s", a->path,
                                               a->depth ? "." : "", child->string);
        cr_assert(n > 0 && (size_t)n < sizeof(sub.path));
        bool type_meta = a->depth == 0 && (strcmp(child->string, "apiVersion") == 0 ||
                                           strcmp(child->string, "kind") == 0);
        if (!type_meta) mutate(root, &sub, st);
        walk(root, child, &sub, st);
    }
}

Test(decode_robust, every_field_with_every_wrong_type, .timeout = 240)
{
    for (size_t f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++) {
        cJSON *json = load_fixture(fixtures[f]);
        address root = {{0}, 0, ""};
        stats st = {0, 0};
        walk(json, json, &root, &st);
        cr_expect_gt(st.errors, st.runs / 4, "%s: only %zu of %zu mutations were refused",
                     fixtures[f], st.errors, st.runs);
        cJSON_Delete(json);
    }
}
