/*
 * The AWS shared configuration files: the credentials file
 * (AWS_SHARED_CREDENTIALS_FILE, default ~/.aws/credentials, sections `[name]`)
 * and the config file (AWS_CONFIG_FILE, default ~/.aws/config, sections
 * `[default]` and `[profile name]`). A small INI reader plus the merge of one
 * profile out of both files, the credentials file winning key by key.
 *
 * INI rules (those of the AWS CLI and SDKs): `#` and `;` start comment lines;
 * `key = value` with spaces around '=' trimmed; indented lines after a key are
 * nested values (`s3 =` blocks) and are skipped. Anything else is malformed:
 * KP_EINVALID with "FILE:LINE: reason".
 *
 * Everything returned lives in the caller's arena.
 */
#ifndef KP_CLOUD_AWS_SHARED_CONFIG_H
#define KP_CLOUD_AWS_SHARED_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "base/arena.h"

typedef struct kp_aws_ini_entry {
    const char *section;
    const char *key; /* lower case */
    const char *value;
    int line;
} kp_aws_ini_entry;

typedef struct kp_aws_ini {
    kp_aws_ini_entry *entries;
    size_t n_entries;
    const char **sections; /* every section header seen, even empty ones */
    size_t n_sections;
} kp_aws_ini;

/* Parse `text`; `filename` only names the file in error messages. */
int kp_aws_ini_parse(kp_aws_ini *out, kp_arena *arena, const char *text, size_t len,
                     const char *filename);
/* The value of `key` in `section`, or NULL. */
const char *kp_aws_ini_get(const kp_aws_ini *ini, const char *section, const char *key);
bool kp_aws_ini_has_section(const kp_aws_ini *ini, const char *section);

typedef struct kp_aws_profile {
    const char *name;
    bool found; /* the profile appears in either file */
    const char *access_key_id;
    const char *secret_access_key;
    const char *session_token;
    const char *region;
    const char *role_arn;
    const char *web_identity_token_file;
    const char *role_session_name;
} kp_aws_profile;

/* `profile`, else AWS_PROFILE, else "default". */
const char *kp_aws_profile_name(const char *profile);

/* Read both files (a missing file counts as empty) and merge `profile` (NULL:
 * kp_aws_profile_name). out->found is false when neither file has it. */
int kp_aws_profile_load(kp_aws_profile *out, kp_arena *arena, const char *profile);

#endif
