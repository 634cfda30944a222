#include "webhook/filewatch.h"

#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void kp_file_stamp_get(kp_file_stamp *out, const char *path)
{
    struct stat st;
    memset(out, 0, sizeof(*out));
    if (!path || stat(path, &st) != 0) return;
    out->exists = true;
    out->dev = (uint64_t)st.st_dev;
    out->ino = (uint64_t)st.st_ino;
    out->size = (uint64_t)st.st_size;
    out->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    out->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
}

bool kp_file_stamp_equal(const kp_file_stamp *a, const kp_file_stamp *b)
{
    return a->exists == b->exists && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

void kp_filewatch_init(kp_filewatch *w, const char *const *paths, size_t count)
{
    memset(w, 0, sizeof(*w));
    for (size_t i = 0; i < count && w->count < KP_FILEWATCH_MAX; i++) {
        if (!paths[i]) continue;
        w->paths[w->count] = paths[i];
        kp_file_stamp_get(&w->committed[w->count], paths[i]);
        w->current[w->count] = w->committed[w->count];
        w->count++;
    }
}

bool kp_filewatch_poll(kp_filewatch *w)
{
    bool changed = false;
    for (size_t i = 0; i < w->count; i++) {
        kp_file_stamp_get(&w->current[i], w->paths[i]);
        if (!kp_file_stamp_equal(&w->current[i], &w->committed[i])) changed = true;
    }
    return changed;
}

void kp_filewatch_commit(kp_filewatch *w)
{
    memcpy(w->committed, w->current, sizeof(w->committed));
}

bool kp_filewatch_failed(kp_filewatch *w)
{
    bool first = false;
    for (size_t i = 0; i < w->count; i++)
        if (!kp_file_stamp_equal(&w->current[i], &w->failed[i])) first = true;
    memcpy(w->failed, w->current, sizeof(w->failed));
    return first;
}

static int read_all(kp_buf *out, int fd, const char *path)
{
    char chunk[8192];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n == 0) return 0;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return kp_error_set(KP_EIO, "%s: %s", path, strerror(errno));
        if (kp_buf_append(out, chunk, (size_t)n) < 0)
            return kp_error_set(KP_ETOOLARGE, "%s: larger than %zu bytes", path, out->max);
    }
}

int kp_file_read_regular(kp_buf *out, const char *path)
{
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return kp_error_set(errno == ENOENT ? KP_ENOTFOUND : KP_EIO, "%s: %s", path,
                            strerror(errno));
    struct stat st;
    int err = 0;
    if (fstat(fd, &st) != 0)
        err = kp_error_set(KP_EIO, "%s: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        err = kp_error_set(KP_EINVALID, "%s: not a regular file", path);
    else if (st.st_size > 0 && (uint64_t)st.st_size > out->max)
        err = kp_error_set(KP_ETOOLARGE, "%s: %lld bytes, more than the limit of %zu", path,
                           (long long)st.st_size, out->max);
    if (err == 0) err = read_all(out, fd, path);
    close(fd);
    return err;
}
