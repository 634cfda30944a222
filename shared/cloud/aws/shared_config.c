#include "cloud/aws/shared_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"

enum { CONFIG_MAX_BYTES = 1 << 20 };

typedef struct ini_state {
    kp_aws_ini *ini;
    kp_arena *arena;
    const char *filename;
    const char *section;
    size_t cap_entries, cap_sections;
    bool in_key; /* a key was seen in this section: indented lines nest under it */
} ini_state;

static const char *trim(kp_arena *arena, const char *s, size_t len)
{
    while (len > 0 && isspace((unsigned char)*s))
        s++, len--;
    while (len > 0 && isspace((unsigned char)s[len - 1]))
        len--;
    return kp_arena_strndup(arena, s, len);
}

static int section_line(ini_state *st, const char *line, size_t len, int lineno)
{
    const char *close = memchr(line, ']', len);
    if (!close)
        return kp_error_set(KP_EINVALID, "%s:%d: section header without ']'", st->filename,
                            lineno);
    const char *name = trim(st->arena, line + 1, (size_t)(close - line - 1));
    if (!*name)
        return kp_error_set(KP_EINVALID, "%s:%d: empty section name", st->filename, lineno);
    if (st->ini->n_sections == st->cap_sections) {
        size_t cap = st->cap_sections ? 2 * st->cap_sections : 8;
        st->ini->sections =
            kp_arena_grow(st->arena, st->ini->sections, st->ini->n_sections, cap, sizeof(char *));
        st->cap_sections = cap;
    }
    st->ini->sections[st->ini->n_sections++] = name;
    st->section = name;
    st->in_key = false;
    return 0;
}

static int key_line(ini_state *st, const char *line, size_t len, int lineno)
{
    const char *eq = memchr(line, '=', len);
    if (!eq)
        return kp_error_set(KP_EINVALID, "%s:%d: expected 'key = value' or '[section]'",
                            st->filename, lineno);
    if (!st->section)
        return kp_error_set(KP_EINVALID, "%s:%d: 'key = value' before any [section]",
                            st->filename, lineno);
    char *key = (char *)trim(st->arena, line, (size_t)(eq - line));
    if (!*key)
        return kp_error_set(KP_EINVALID, "%s:%d: empty key", st->filename, lineno);
    for (char *p = key; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    if (st->ini->n_entries == st->cap_entries) {
        size_t cap = st->cap_entries ? 2 * st->cap_entries : 16;
        st->ini->entries = kp_arena_grow(st->arena, st->ini->entries, st->ini->n_entries, cap,
                                         sizeof(kp_aws_ini_entry));
        st->cap_entries = cap;
    }
    kp_aws_ini_entry *e = &st->ini->entries[st->ini->n_entries++];
    e->section = st->section;
    e->key = key;
    e->value = trim(st->arena, eq + 1, len - (size_t)(eq + 1 - line));
    e->line = lineno;
    st->in_key = true;
    return 0;
}

static int ini_line(ini_state *st, const char *line, size_t len, int lineno)
{
    size_t lead = 0;
    while (lead < len && (line[lead] == ' ' || line[lead] == '\t'))
        lead++;
    if (lead == len || line[lead] == '#' || line[lead] == ';' || line[lead] == '\r')
        return 0;
    if (lead > 0 && st->in_key)
        return 0; /* nested value of the previous key */
    if (line[lead] == '[')
        return section_line(st, line + lead, len - lead, lineno);
    return key_line(st, line + lead, len - lead, lineno);
}

int kp_aws_ini_parse(kp_aws_ini *out, kp_arena *arena, const char *text, size_t len,
                     const char *filename)
{
    kp_aws_ini ini = {0};
    ini_state st = {.ini = &ini, .arena = arena, .filename = filename ? filename : "config"};
    int lineno = 0;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - (text + pos)) : len - pos;
        int err = ini_line(&st, text + pos, ll, ++lineno);
        if (err < 0)
            return err;
        pos += ll + 1;
    }
    *out = ini;
    return 0;
}

const char *kp_aws_ini_get(const kp_aws_ini *ini, const char *section, const char *key)
{
    const char *found = NULL; /* the last assignment wins */
    for (size_t i = 0; i < ini->n_entries; i++)
        if (strcmp(ini->entries[i].section, section) == 0 && strcmp(ini->entries[i].key, key) == 0)
            found = ini->entries[i].value;
    return found;
}

bool kp_aws_ini_has_section(const kp_aws_ini *ini, const char *section)
{
    for (size_t i = 0; i < ini->n_sections; i++)
        if (strcmp(ini->sections[i], section) == 0)
            return true;
    return false;
}

const char *kp_aws_profile_name(const char *profile)
{
    if (profile && *profile)
        return profile;
    const char *env = getenv("AWS_PROFILE");
    return env && *env ? env : "default";
}

/* Read `path` into a capped buffer; a missing file is an empty file. */
static int read_file(kp_buf *buf, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno == ENOENT ? 0 : kp_error_set(KP_EIO, "%s: %s", path, strerror(errno));
    char chunk[4096];
    size_t n;
    int err = 0;
    while (err == 0 && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        err = kp_buf_append(buf, chunk, n);
    if (err == 0 && ferror(f))
        err = kp_error_set(KP_EIO, "%s: read error", path);
    fclose(f);
    return err;
}

static const char *file_path(kp_arena *arena, const char *env, const char *leaf)
{
    const char *p = getenv(env);
    if (p && *p)
        return p;
    const char *home = getenv("HOME");
    return kp_arena_printf(arena, "%s/.aws/%s", home ? home : "", leaf);
}

static int load_ini(kp_aws_ini *out, kp_arena *arena, const char *path)
{
    kp_buf buf = KP_BUF_INIT(CONFIG_MAX_BYTES);
    int err = read_file(&buf, path);
    if (err == 0)
        err = kp_aws_ini_parse(out, arena, kp_buf_cstr(&buf), buf.len, path);
    kp_buf_free(&buf);
    return err;
}

/* Credentials-file value if set there, else the config file's. */
static const char *pick(const kp_aws_ini *cred, const kp_aws_ini *conf, const char *cred_sec,
                        const char *conf_sec, const char *key)
{
    const char *v = kp_aws_ini_get(cred, cred_sec, key);
    if (v && *v)
        return v;
    v = kp_aws_ini_get(conf, conf_sec, key);
    return v && *v ? v : NULL;
}

int kp_aws_profile_load(kp_aws_profile *out, kp_arena *arena, const char *profile)
{
    kp_aws_ini cred = {0}, conf = {0};
    int err = load_ini(&cred, arena, file_path(arena, "AWS_SHARED_CREDENTIALS_FILE", "credentials"));
    if (err == 0)
        err = load_ini(&conf, arena, file_path(arena, "AWS_CONFIG_FILE", "config"));
    if (err < 0)
        return err;
    kp_aws_profile p = {.name = kp_aws_profile_name(profile)};
    const char *conf_sec = kp_arena_printf(arena, "profile %s", p.name);
    if (strcmp(p.name, "default") == 0 && !kp_aws_ini_has_section(&conf, conf_sec))
        conf_sec = "default";
    p.found = kp_aws_ini_has_section(&cred, p.name) || kp_aws_ini_has_section(&conf, conf_sec);
    p.access_key_id = pick(&cred, &conf, p.name, conf_sec, "aws_access_key_id");
    p.secret_access_key = pick(&cred, &conf, p.name, conf_sec, "aws_secret_access_key");
    p.session_token = pick(&cred, &conf, p.name, conf_sec, "aws_session_token");
    p.region = pick(&cred, &conf, p.name, conf_sec, "region");
    p.role_arn = pick(&cred, &conf, p.name, conf_sec, "role_arn");
    p.web_identity_token_file = pick(&cred, &conf, p.name, conf_sec, "web_identity_token_file");
    p.role_session_name = pick(&cred, &conf, p.name, conf_sec, "role_session_name");
    *out = p;
    return 0;
}
