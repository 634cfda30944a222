/* Whole-file reads (see file.h). */
#include "base/file.h"
#include "base/error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int kp_file_read(kp_buf *out, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return kp_error_set(errno == ENOENT ? KP_ENOTFOUND : KP_EIO, "cannot read %s: %s", path, strerror(errno));
    char chunk[4096];
    size_t n;
    int err = 0;
    while (!err && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        err = kp_buf_append(out, chunk, n);
    if (!err && ferror(f))
        err = kp_error_set(KP_EIO, "cannot read %s: %s", path, strerror(errno));
    fclose(f);
    return err == KP_ETOOLARGE ? kp_error_wrap(err, "reading %s", path) : err;
}
