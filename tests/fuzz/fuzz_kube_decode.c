/*
 * libFuzzer target for what the kube client decodes from an API server:
 * watch streams (kube/watch.h) cut into chunks at input-chosen places, the
 * pages of a list (kp_kube_pager: repeated continue tokens, the size cap),
 * and Status bodies of failed requests. Anything must be decoded or refused
 * with a message; never a crash, a leak or unbounded memory.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/rest_internal.h"
#include "kube/watch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int take_every_other(void *ctx, enum kp_watch_type type, cJSON **object)
{
    unsigned *n = ctx;
    (void)type;
    if ((*n)++ % 2) {
        cJSON_Delete(*object); /* the callback may take the object */
        *object = NULL;
    }
    return *n > 1000 ? 1 : 0; /* a callback may also stop the stream */
}

/* The first byte chooses where chunks end: every (byte % 31 + 1) bytes. */
static void watch_stream(const uint8_t *data, size_t size)
{
    if (size == 0) return;
    size_t step = data[0] % 31 + 1;
    unsigned n = 0;
    kp_watch_stream s;
    kp_watch_stream_init(&s, 4096, take_every_other, &n);
    for (size_t off = 1; off < size;) {
        size_t len = size - off < step ? size - off : step;
        if (kp_watch_stream_feed(&s, (const char *)data + off, len) != 0) break;
        off += len;
    }
    kp_watch_stream_free(&s);
}

/* Pages separated by NUL bytes, each a JSON list body. */
static void list_pages(const uint8_t *data, size_t size)
{
    kp_kube_pager p = {NULL, NULL, NULL, 0, 0};
    const char *text = (const char *)data, *end = text + size;
    while (text < end) {
        const char *nul = memchr(text, '\0', (size_t)(end - text));
        size_t len = nul ? (size_t)(nul - text) : (size_t)(end - text);
        cJSON *page = cJSON_ParseWithLength(text, len);
        int err = page ? kp_kube_pager_add(&p, page, len, 64 * 1024, "/api/v1/pods") : 0;
        cJSON_Delete(page);
        if (err < 0) break;
        text += len + 1;
    }
    kp_kube_pager_reset(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    watch_stream(data, size);
    list_pages(data, size);
    char *body = malloc(size + 1);
    if (!body) return 0;
    memcpy(body, data, size);
    body[size] = '\0';
    kp_kube_status_error(size ? 400 + data[0] % 200 : 500, body, "GET /x");
    free(body);
    return 0;
}
