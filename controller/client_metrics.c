/* client-go's request metrics (see client_metrics.h). */
#include "controller/client_metrics.h"

#include <stdio.h>
#include <string.h>

enum { MAX_PARTS = 8 };

/* Split the path (before any query) on '/'; how many parts. */
static size_t split(const char *path, char parts[MAX_PARTS][128])
{
    size_t n = 0, len = strcspn(path, "?");
    const char *p = path, *end = path + len;
    while (p < end && n < MAX_PARTS) {
        if (*p == '/')
            p++;
        size_t k = strcspn(p, "/?");
        if (p + k > end)
            k = (size_t)(end - p);
        snprintf(parts[n++], sizeof(parts[0]), "%.*s", (int)k, p);
        p += k;
    }
    return n;
}

/* client-go's verb as operatorpkg reports it: POST is CREATE, a GET without
 * a name is LIST, PUT is UPDATE (CREATE without a name). */
static void verb_of(const char *method, bool named, char *out, size_t size)
{
    const char *v = method;
    if (!strcmp(method, "POST"))
        v = "CREATE";
    else if (!strcmp(method, "GET") && !named)
        v = "LIST";
    else if (!strcmp(method, "PUT"))
        v = named ? "UPDATE" : "CREATE";
    snprintf(out, size, "%s", v);
}

bool kp_client_request_labels_of(const char *method, const char *path, kp_client_request_labels *out)
{
    char parts[MAX_PARTS][128];
    size_t n = split(path ? path : "", parts);
    memset(out, 0, sizeof(*out));
    size_t group;
    if (n && !strcmp(parts[0], "api"))
        group = 0;
    else if (n && !strcmp(parts[0], "apis"))
        group = 1;
    else
        return false;
    if (n < group + 3)
        return false;
    size_t version = group + 1, kind = version + 1;
    if (!strcmp(parts[group + 2], "namespaces") && n > group + 4)
        kind = version + 3; /* a namespaced resource, not the namespace itself */
    if (kind >= n)
        return false;
    snprintf(out->group, sizeof(out->group), "%s", group ? parts[group] : "");
    snprintf(out->version, sizeof(out->version), "%s", parts[version]);
    snprintf(out->kind, sizeof(out->kind), "%s", parts[kind]);
    if (n == kind + 3)
        snprintf(out->subresource, sizeof(out->subresource), "%s", parts[kind + 2]);
    verb_of(method, n > kind + 1, out->verb, sizeof(out->verb));
    return true;
}

void kp_client_metrics_observe(void *ctx, const char *method, const char *path, long status, int64_t took_ns)
{
    kp_ctrl_metrics *m = ctx;
    char code[16];
    if (status > 0)
        snprintf(code, sizeof(code), "%ld", status);
    else
        snprintf(code, sizeof(code), "<error>"); /* client-go's code when no answer came */
    kp_ctrl_count(m->client_requests, (const char *const[]){code, method});
    kp_client_request_labels l;
    if (kp_client_request_labels_of(method, path, &l))
        kp_ctrl_observe(m->client_request_duration,
                        (const char *const[]){l.verb, l.group, l.version, l.kind, l.subresource}, (double)took_ns / 1e9);
}
