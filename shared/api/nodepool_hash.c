/* NodePool template hash: canonical JSON, then SHA-256 (see the header). */
#include "api/nodepool_hash.h"
#include "base/buf.h"

#include <openssl/evp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_zero(const cJSON *v)
{
    if (cJSON_IsNull(v) || cJSON_IsFalse(v))
        return true;
    if (cJSON_IsString(v))
        return v->valuestring[0] == '\0';
    if (cJSON_IsNumber(v))
        return v->valuedouble == 0;
    if (cJSON_IsArray(v) || cJSON_IsObject(v))
        return v->child == NULL;
    return false;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

static char *canonical(const cJSON *v);

/* Containers left empty once their own zero members are gone count as zero too. */
static char *canonical_nonzero(const cJSON *v)
{
    if (is_zero(v))
        return NULL;
    char *s = canonical(v);
    if (strcmp(s, "{}") == 0 || strcmp(s, "[]") == 0) {
        free(s);
        return NULL;
    }
    return s;
}

/* Arrays are sets: members in the order of their canonical text. */
static int canonical_array(kp_buf *out, const cJSON *v)
{
    size_t n = (size_t)cJSON_GetArraySize(v), k = 0;
    char **items = calloc(n ? n : 1, sizeof(char *));
    for (const cJSON *e = v->child; e; e = e->next)
        if ((items[k] = canonical_nonzero(e)) != NULL)
            k++;
    qsort(items, k, sizeof(char *), cmp_str);
    int err = kp_buf_putc(out, '[');
    for (size_t i = 0; i < k; i++) {
        if (!err)
            err = kp_buf_printf(out, "%s%s", i ? "," : "", items[i]);
        free(items[i]);
    }
    free(items);
    return err ? err : kp_buf_putc(out, ']');
}

/* Objects: members sorted by key, zero values left out. */
static int canonical_object(kp_buf *out, const cJSON *v)
{
    size_t n = (size_t)cJSON_GetArraySize(v), k = 0;
    const cJSON **members = calloc(n ? n : 1, sizeof(cJSON *));
    for (const cJSON *e = v->child; e; e = e->next)
        members[k++] = e;
    qsort(members, k, sizeof(cJSON *), cmp_key);
    int err = kp_buf_putc(out, '{');
    bool first = true;
    for (size_t i = 0; i < k && !err; i++) {
        char *val = canonical_nonzero(members[i]);
        if (!val)
            continue;
        cJSON *name = cJSON_CreateStringReference(members[i]->string);
        char *key = cJSON_PrintUnformatted(name);
        err = kp_buf_printf(out, "%s%s:%s", first ? "" : ",", key, val);
        first = false;
        free(key), free(val);
        cJSON_Delete(name);
    }
    free(members);
    return err ? err : kp_buf_putc(out, '}');
}

/* The canonical text of `v` (free() it). Larger than the cap (far beyond
 * any object the API server stores), the plain text stands in: complete,
 * though not canonical, rather than a canonical text with a hole in it. */
static char *canonical(const cJSON *v)
{
    if (!cJSON_IsArray(v) && !cJSON_IsObject(v))
        return cJSON_PrintUnformatted(v);
    kp_buf out = KP_BUF_INIT(64u << 20);
    int err = cJSON_IsArray(v) ? canonical_array(&out, v) : canonical_object(&out, v);
    char *s = err ? cJSON_PrintUnformatted(v) : strdup(kp_buf_cstr(&out));
    kp_buf_free(&out);
    return s;
}

char *kp_nodepool_hash(const cJSON *nodepool, char *buf, size_t size)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(nodepool, "spec");
    cJSON *tmpl = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(spec, "template"), 1);
    if (!tmpl)
        tmpl = cJSON_CreateObject();
    cJSON *tspec = cJSON_GetObjectItemCaseSensitive(tmpl, "spec");
    cJSON_DeleteItemFromObjectCaseSensitive(tspec, "requirements");
    cJSON_DeleteItemFromObjectCaseSensitive(tspec, "resources");
    char *text = canonical(tmpl);
    cJSON_Delete(tmpl);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int md_len = 0;
    EVP_Digest(text, strlen(text), md, &md_len, EVP_sha256(), NULL);
    free(text);
    uint64_t h = 0;
    for (int i = 0; i < 8; i++)
        h = h << 8 | md[i];
    snprintf(buf, size, "%llu", (unsigned long long)h);
    return buf;
}
