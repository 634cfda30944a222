/*
 * Noticing that files changed, by polling stat(): certificate and policy
 * files live in Kubernetes volumes that are updated by swapping a symbolic
 * link (..data), which inotify on the file itself does not report, and a poll
 * every second costs nothing. stat() follows the links, so a swap shows as a
 * new inode. The caller decides what a change means: kp_filewatch_poll() says
 * that something differs from what was last committed, and the caller commits
 * only once it has loaded the new contents, so a half-written update is
 * retried at the next poll.
 */
#ifndef KP_WEBHOOK_FILEWATCH_H
#define KP_WEBHOOK_FILEWATCH_H

#include "base/buf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { KP_FILEWATCH_MAX = 4 };

typedef struct kp_file_stamp {
    bool exists;
    uint64_t dev, ino, size;
    int64_t mtime_ns, ctime_ns;
} kp_file_stamp;

typedef struct kp_filewatch {
    const char *paths[KP_FILEWATCH_MAX]; /* borrowed */
    size_t count;
    kp_file_stamp committed[KP_FILEWATCH_MAX];
    kp_file_stamp current[KP_FILEWATCH_MAX];
    kp_file_stamp failed[KP_FILEWATCH_MAX];
} kp_filewatch;

void kp_file_stamp_get(kp_file_stamp *out, const char *path);
bool kp_file_stamp_equal(const kp_file_stamp *a, const kp_file_stamp *b);

/* Watch up to KP_FILEWATCH_MAX paths (NULLs are skipped); their present
 * state counts as committed. */
void kp_filewatch_init(kp_filewatch *w, const char *const *paths, size_t count);
/* Whether any file differs from its committed state. */
bool kp_filewatch_poll(kp_filewatch *w);
/* The state seen by the last poll is now the committed one. */
void kp_filewatch_commit(kp_filewatch *w);
/* Loading the state seen by the last poll failed; true the first time for
 * that state (so a caller logs a failure once, not every second). */
bool kp_filewatch_failed(kp_filewatch *w);

/* Append the contents of the regular file at `path` to `out` (capped by its
 * max: KP_ETOOLARGE). Anything else there (a FIFO, a device, a directory,
 * a socket) is KP_EINVALID at once: opening does not wait for a FIFO's
 * writer, and a device cannot feed us forever. KP_ENOTFOUND when absent. */
int kp_file_read_regular(kp_buf *out, const char *path);

#endif
