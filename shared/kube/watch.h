/*
 * Watches: a long GET with ?watch=1 whose body is a stream of JSON events,
 * one per line ({"type":"ADDED","object":{...}}). Lines are cut from curl's
 * write callback with a capped line buffer (opts.max_line of the client), so
 * an event split across reads is joined and an endless line is an error, not
 * an allocation.
 *
 * Bookmarks (allowWatchBookmarks) arrive as KP_WATCH_BOOKMARK with an object
 * that carries only metadata.resourceVersion: remember it, it is where to
 * resume. An ERROR event ends the watch with its Status mapped like an HTTP
 * status: 410 "too old resource version" is KP_EGONE, meaning relist.
 * Resuming after a dropped connection (watch again from the last
 * resourceVersion seen), relisting and backing off are the caller's, as the
 * informer does them (informer.h).
 */
#ifndef KP_KUBE_WATCH_H
#define KP_KUBE_WATCH_H

#include "base/buf.h"
#include "kube/rest.h"

#include <cjson/cJSON.h>
#include <stdbool.h>

enum kp_watch_type {
    KP_WATCH_ADDED,
    KP_WATCH_MODIFIED,
    KP_WATCH_DELETED,
    KP_WATCH_BOOKMARK,
};

/* Called for each event with its object. The object is freed after the call
 * unless the callback takes it by setting *object to NULL (it then owns it).
 * Return 0 to go on; anything else stops the watch and becomes
 * kp_kube_watch's return value. */
typedef int (*kp_kube_watch_fn)(void *ctx, enum kp_watch_type type, cJSON **object);

typedef struct kp_kube_watch_opts {
    const char *namespace; /* NULL: every namespace */
    const char *label_selector;
    const char *field_selector;
    const char *resource_version; /* events after this one; NULL: from now */
    bool bookmarks;               /* allowWatchBookmarks */
    int timeout_seconds;          /* the server ends the watch after this; 0: its own default */
    kp_kube_cancel *cancel;       /* may be NULL */
} kp_kube_watch_opts;

#define KP_KUBE_WATCH_OPTS_INIT                                                                    \
    {                                                                                              \
        NULL, NULL, NULL, NULL, true, 300, NULL                                                    \
    }

/* Stream events to `fn` until the server ends the watch or the token fires
 * (0), `fn` stops it (its value), or an error (KP_EGONE: relist; others as
 * rest.h). A connection lost mid-stream is KP_ERETRY. */
int kp_kube_watch(kp_kube_client *c, enum kp_kube_res res, const kp_kube_watch_opts *opts,
                  kp_kube_watch_fn fn, void *ctx);

/* The line splitter and event decoder behind kp_kube_watch, usable on its
 * own (tests feed it arbitrary chunks). */
typedef struct kp_watch_stream {
    kp_buf line;
    kp_kube_watch_fn fn;
    void *ctx;
    unsigned long events; /* delivered so far */
} kp_watch_stream;

void kp_watch_stream_init(kp_watch_stream *s, size_t max_line, kp_kube_watch_fn fn, void *ctx);
/* Feed bytes; complete lines are decoded and delivered. Returns 0, the
 * callback's non-zero value, or KP_E* (malformed event, oversized line,
 * ERROR event). After a non-zero return the stream must not be fed again. */
int kp_watch_stream_feed(kp_watch_stream *s, const char *data, size_t len);
void kp_watch_stream_free(kp_watch_stream *s);

#endif
