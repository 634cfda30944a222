/* A directory of notice files as an interruption source (see interruption_dir.h). */
#include "cloud/interruption_dir.h"
#include "base/error.h"
#include "base/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_BODY (256 * 1024)
#define MAX_BATCH 10 /* what one SQS receive returns at most */
#define POLL_MS 200

typedef struct dir_source {
    kp_interruption_source base;
    char *dir;
    kp_interruption_parse_fn parse;
} dir_source;

static bool is_notice(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".json") == 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Up to MAX_BATCH notice file names, sorted, in `arena`. */
static int list_notices(const dir_source *s, kp_arena *arena, char **names, uint32_t *n)
{
    DIR *d = opendir(s->dir);
    if (!d) return kp_error_set(KP_EIO, "interruption directory %s: %s", s->dir, strerror(errno));
    uint32_t count = 0;
    char *all[256];
    for (struct dirent *e = readdir(d); e && count < 256; e = readdir(d))
        if (is_notice(e->d_name)) all[count++] = kp_arena_strdup(arena, e->d_name);
    closedir(d);
    qsort(all, count, sizeof(all[0]), by_name);
    *n = count < MAX_BATCH ? count : MAX_BATCH;
    memcpy(names, all, *n * sizeof(all[0]));
    return 0;
}

static char *read_body(const char *path, kp_arena *arena, const char **why)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        *why = strerror(errno);
        return NULL;
    }
    char *buf = kp_arena_alloc(arena, MAX_BODY + 1);
    size_t len = fread(buf, 1, MAX_BODY + 1, f);
    fclose(f);
    if (len > MAX_BODY) {
        *why = "larger than 256 KiB";
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

static void load_notice(const dir_source *s, kp_arena *arena, const char *name, kp_interruption *m)
{
    const char *path = kp_arena_printf(arena, "%s/%s", s->dir, name);
    const char *why = NULL;
    char *body = read_body(path, arena, &why);
    memset(m, 0, sizeof(*m));
    if (!body || s->parse(body, arena, m) < 0) {
        memset(m, 0, sizeof(*m));
        m->kind = KP_INTERRUPT_NOOP;
        m->parse_error = kp_arena_printf(arena, "%s: %s", name, body ? kp_error_last() : why);
    }
    m->kind_name = kp_interruption_kind_name(m->kind);
    if (!m->id) m->id = kp_arena_strdup(arena, name);
    m->handle = path;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int dir_receive(kp_interruption_source *src, kp_arena *arena, kp_interruption **out, uint32_t *n,
                       int wait_seconds)
{
    dir_source *s = (dir_source *)src;
    char *names[MAX_BATCH];
    uint32_t count = 0;
    for (long waited = 0;; waited += POLL_MS) {
        int err = list_notices(s, arena, names, &count);
        if (err < 0) return err;
        if (count > 0 || waited >= (long)wait_seconds * 1000) break;
        sleep_ms(POLL_MS);
    }
    kp_interruption *list = count ? kp_arena_alloc(arena, count * sizeof(*list)) : NULL;
    for (uint32_t i = 0; i < count; i++) load_notice(s, arena, names[i], &list[i]);
    *out = list;
    *n = count;
    return 0;
}

static int dir_ack(kp_interruption_source *src, const kp_interruption *m)
{
    (void)src;
    if (unlink(m->handle) < 0 && errno != ENOENT)
        return kp_error_set(KP_EIO, "removing %s: %s", m->handle, strerror(errno));
    return 0;
}

static const char *dir_name(const kp_interruption_source *src)
{
    return ((const dir_source *)src)->dir;
}

static void dir_free(kp_interruption_source *src)
{
    dir_source *s = (dir_source *)src;
    free(s->dir);
    free(s);
}

static const kp_interruption_source_ops dir_ops = {dir_receive, dir_ack, NULL, dir_name, dir_free};

int kp_interruption_dir_new(const char *dir, kp_interruption_parse_fn parse, kp_interruption_source **out)
{
    struct stat st;
    if (!dir || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
        return kp_error_set(KP_ENOTFOUND, "interruption directory %s: not a directory", dir ? dir : "(none)");
    dir_source *s = kp_xcalloc(1, sizeof(*s));
    s->base.ops = &dir_ops;
    s->dir = kp_xstrdup(dir);
    s->parse = parse;
    *out = &s->base;
    return 0;
}
