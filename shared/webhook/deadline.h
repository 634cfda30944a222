/*
 * An absolute deadline for every request a server accepts, TLS handshake
 * and headers included. libmicrohttpd's own timeout is an idle timeout: a
 * client that sends one byte every few seconds resets it forever, and a
 * thousand such clients hold every connection slot (slowloris). A watch keeps
 * the accepted sockets with the time their current request must be done by,
 * and a thread of its own shuts a socket down (shutdown(2), both ways) once
 * that time has passed; the server then sees the connection end and closes
 * it as it would any other. Used by the webhook and the controller's
 * /metrics and health endpoints.
 *
 * The server calls kp_deadline_watch_add when it accepts a connection (the
 * deadline starts then), kp_deadline_watch_restart when a request has been
 * answered (the next request on a keep-alive connection gets the full time
 * again) and kp_deadline_watch_remove before the socket is closed: removing
 * takes the watch's lock, so the watch never touches a descriptor that has
 * been closed and perhaps reused.
 */
#ifndef KP_WEBHOOK_DEADLINE_H
#define KP_WEBHOOK_DEADLINE_H

#include <stdbool.h>
#include <stdint.h>

/* One watched connection; embed it in the connection's own state. */
typedef struct kp_deadline_entry {
    struct kp_deadline_entry *prev, *next;
    int fd;
    int64_t due_ns; /* monotonic */
    bool cut;       /* shut down already */
} kp_deadline_entry;

typedef struct kp_deadline_watch kp_deadline_watch;

/* A watch giving each request `limit_ms`; starts its thread. NULL when the
 * thread cannot start. */
kp_deadline_watch *kp_deadline_watch_new(int64_t limit_ms);
/* Stops the thread; every entry must have been removed. Accepts NULL. */
kp_deadline_watch *kp_deadline_watch_free(kp_deadline_watch *watch);

void kp_deadline_watch_add(kp_deadline_watch *watch, kp_deadline_entry *entry, int fd);
void kp_deadline_watch_restart(kp_deadline_watch *watch, kp_deadline_entry *entry);
void kp_deadline_watch_remove(kp_deadline_watch *watch, kp_deadline_entry *entry);

/* Connections cut so far (for logs and tests). */
unsigned long kp_deadline_watch_cut_count(kp_deadline_watch *watch);

#endif
