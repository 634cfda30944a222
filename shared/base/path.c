#include "base/path.h"

#include <stdio.h>
#include <string.h>

void kp_path_init(kp_path *path, const char *root)
{
    memset(path, 0, sizeof(*path));
    if (root && *root) {
        snprintf(path->text, sizeof(path->text), "%s", root);
        path->len = strlen(path->text);
    }
}

/* Append an already-rendered piece, remembering where it started. */
static void push(kp_path *path, const char *piece, size_t n)
{
    if (path->depth < KP_PATH_DEPTH)
        path->marks[path->depth] = path->len;
    path->depth++;
    if (path->truncated)
        return;
    if (path->len + n + 4 >= sizeof(path->text)) {
        memcpy(path->text + path->len, "...", 4);
        path->truncated = 1;
        return;
    }
    memcpy(path->text + path->len, piece, n);
    path->len += n;
    path->text[path->len] = '\0';
}

void kp_path_push_field(kp_path *path, const char *name)
{
    char piece[KP_PATH_MAX];
    int n = snprintf(piece, sizeof(piece), "%s%s", path->len ? "." : "", name);
    push(path, piece, n < 0 ? 0 : (size_t)n >= sizeof(piece) ? sizeof(piece) : (size_t)n);
}

void kp_path_push_index(kp_path *path, size_t index)
{
    char piece[32];
    int n = snprintf(piece, sizeof(piece), "[%zu]", index);
    push(path, piece, (size_t)n);
}

void kp_path_push_key(kp_path *path, const char *key)
{
    char piece[KP_PATH_MAX];
    int n = snprintf(piece, sizeof(piece), "[%s]", key);
    push(path, piece, n < 0 ? 0 : (size_t)n >= sizeof(piece) ? sizeof(piece) : (size_t)n);
}

void kp_path_pop(kp_path *path)
{
    if (path->depth == 0)
        return;
    path->depth--;
    if (path->depth < KP_PATH_DEPTH) {
        path->len = path->marks[path->depth];
        path->text[path->len] = '\0';
        path->truncated = 0;
    }
}

const char *kp_path_cstr(const kp_path *path)
{
    return path->text;
}
