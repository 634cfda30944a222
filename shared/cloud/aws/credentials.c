/* The credential chain and its cache (see credentials.h); the sources that
 * call out (STS, container, IMDS) are in credentials_remote.c. */
#include "cloud/aws/credentials.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "cloud/aws/credentials_internal.h"
#include "cloud/aws/shared_config.h"

#define REFRESH_BEFORE_DEFAULT (5 * 60 * KP_NS_PER_SEC)

struct kp_aws_credentials {
    pthread_mutex_t lock;
    kp_aws_credentials_options opts; /* strings below are owned copies */
    bool fixed;
    bool have;
    kp_aws_creds cached;
};

static char *dup_or_null(const char *s)
{
    return s ? kp_xstrdup(s) : NULL;
}

static kp_aws_credentials *provider_alloc(const kp_aws_credentials_options *opts)
{
    kp_aws_credentials *p = kp_xcalloc(1, sizeof(*p));
    pthread_mutex_init(&p->lock, NULL);
    if (opts)
        p->opts = *opts;
    p->opts.profile = dup_or_null(p->opts.profile);
    p->opts.region = dup_or_null(p->opts.region);
    p->opts.sts_endpoint = dup_or_null(p->opts.sts_endpoint);
    p->opts.imds_endpoint = dup_or_null(p->opts.imds_endpoint);
    if (!p->opts.clock)
        p->opts.clock = kp_clock_system();
    if (p->opts.refresh_before_ns <= 0)
        p->opts.refresh_before_ns = REFRESH_BEFORE_DEFAULT;
    return p;
}

int kp_aws_credentials_new(kp_aws_credentials **out, const kp_aws_credentials_options *opts)
{
    *out = provider_alloc(opts);
    return 0;
}

int kp_aws_credentials_new_static(kp_aws_credentials **out, const kp_aws_creds *creds)
{
    if (!creds->access_key_id[0] || !creds->secret_access_key[0])
        return kp_error_set(KP_EINVALID, "static AWS credentials need a key id and a secret");
    kp_aws_credentials *p = provider_alloc(NULL);
    p->fixed = true;
    p->have = true;
    p->cached = *creds;
    p->cached.expires_ns = 0;
    if (!p->cached.source)
        p->cached.source = "static";
    *out = p;
    return 0;
}

kp_aws_credentials *kp_aws_credentials_free(kp_aws_credentials *p)
{
    if (!p)
        return NULL;
    free((char *)p->opts.profile);
    free((char *)p->opts.region);
    free((char *)p->opts.sts_endpoint);
    free((char *)p->opts.imds_endpoint);
    pthread_mutex_destroy(&p->lock);
    kp_creds_wipe(&p->cached);
    free(p);
    return NULL;
}

void kp_creds_wipe(kp_aws_creds *c)
{
    volatile unsigned char *b = (volatile unsigned char *)c;
    for (size_t i = 0; i < sizeof(*c); i++)
        b[i] = 0;
}

int kp_creds_set(kp_aws_creds *out, const char *key, const char *secret, const char *token,
                 int64_t expires_ns, const char *source)
{
    if (!key || !*key || !secret || !*secret)
        return kp_error_set(KP_EINVALID, "%s: access key id or secret missing", source);
    if (strlen(key) >= sizeof(out->access_key_id) ||
        strlen(secret) >= sizeof(out->secret_access_key) ||
        (token && strlen(token) >= sizeof(out->session_token)))
        return kp_error_set(KP_EINVALID, "%s: a credential field is too long", source);
    kp_aws_creds c;
    memset(&c, 0, sizeof(c));
    snprintf(c.access_key_id, sizeof(c.access_key_id), "%s", key);
    snprintf(c.secret_access_key, sizeof(c.secret_access_key), "%s", secret);
    snprintf(c.session_token, sizeof(c.session_token), "%s", token ? token : "");
    c.expires_ns = expires_ns;
    c.source = source;
    *out = c;
    kp_creds_wipe(&c);
    return 0;
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int kp_aws_creds_from_env(kp_aws_creds *out)
{
    const char *key = env("AWS_ACCESS_KEY_ID"), *secret = env("AWS_SECRET_ACCESS_KEY");
    if (!key && !secret)
        return kp_error_set(KP_ENOTFOUND, "environment: AWS_ACCESS_KEY_ID not set");
    if (!key || !secret)
        return kp_error_set(KP_EINVALID, "environment: %s is set but %s is not",
                            key ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                            key ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
    return kp_creds_set(out, key, secret, env("AWS_SESSION_TOKEN"), 0, "environment");
}

int kp_aws_creds_from_files(kp_aws_creds *out, const kp_aws_credentials_options *opts)
{
    kp_arena *a = kp_arena_new();
    kp_aws_profile prof;
    int err = kp_aws_profile_load(&prof, a, opts ? opts->profile : NULL);
    if (err == 0 && !prof.found)
        err = kp_error_set(KP_ENOTFOUND, "shared files: no profile '%s'", prof.name);
    if (err == 0 && prof.access_key_id)
        err = kp_creds_set(out, prof.access_key_id, prof.secret_access_key, prof.session_token, 0,
                           "shared-files");
    else if (err == 0 && prof.role_arn && prof.web_identity_token_file)
        err = kp_aws_creds_from_web_identity(out, opts, prof.role_arn,
                                             prof.web_identity_token_file,
                                             prof.role_session_name);
    else if (err == 0)
        err = kp_error_set(KP_ENOTFOUND, "shared files: profile '%s' has no credentials",
                           prof.name);
    kp_arena_free(a);
    return err;
}

static int web_identity_env(kp_aws_creds *out, const kp_aws_credentials_options *opts)
{
    const char *role = env("AWS_ROLE_ARN"), *file = env("AWS_WEB_IDENTITY_TOKEN_FILE");
    if (!role || !file)
        return kp_error_set(KP_ENOTFOUND, "web identity: AWS_ROLE_ARN or "
                                          "AWS_WEB_IDENTITY_TOKEN_FILE not set");
    return kp_aws_creds_from_web_identity(out, opts, role, file, env("AWS_ROLE_SESSION_NAME"));
}

static int container_source(kp_aws_creds *out, const kp_aws_credentials_options *opts)
{
    (void)opts;
    return kp_aws_creds_from_container(out, 5000);
}

typedef int (*source_fn)(kp_aws_creds *out, const kp_aws_credentials_options *opts);

static int env_source(kp_aws_creds *out, const kp_aws_credentials_options *opts)
{
    (void)opts;
    return kp_aws_creds_from_env(out);
}

/* Walk the chain; KP_ENOTFOUND with every source's reason when none applies. */
static int resolve(const kp_aws_credentials_options *opts, kp_aws_creds *out)
{
    static const source_fn chain[] = {env_source, web_identity_env, kp_aws_creds_from_files,
                                      container_source, kp_aws_creds_from_imds};
    kp_buf why = KP_BUF_INIT(4096);
    int err = KP_ENOTFOUND;
    bool cut = false; /* the reasons passed 4 KiB: the rest are left out, and said to be */
    for (size_t i = 0; i < sizeof(chain) / sizeof(chain[0]) && err == KP_ENOTFOUND; i++) {
        err = chain[i](out, opts);
        if (err == KP_ENOTFOUND && !cut)
            cut = kp_buf_printf(&why, "%s%s", why.len ? "; " : "", kp_error_last()) < 0;
    }
    if (err == KP_ENOTFOUND)
        kp_error_set(KP_ENOTFOUND, "no AWS credentials found (%s%s)", kp_buf_cstr(&why), cut ? "; ..." : "");
    kp_buf_free(&why);
    return err;
}

static bool fresh(const kp_aws_credentials *p, int64_t now)
{
    return p->have && (p->cached.expires_ns == 0 ||
                       now < p->cached.expires_ns - p->opts.refresh_before_ns);
}

int kp_aws_credentials_get(kp_aws_credentials *p, kp_aws_creds *out)
{
    pthread_mutex_lock(&p->lock);
    int64_t now = p->opts.clock->now(p->opts.clock);
    int err = 0;
    if (!p->fixed && !fresh(p, now)) {
        kp_aws_creds next;
        err = resolve(&p->opts, &next);
        if (err == 0) {
            p->cached = next;
            p->have = true;
        } else if (p->have && (p->cached.expires_ns == 0 || now < p->cached.expires_ns)) {
            err = 0; /* refresh failed early: the old ones still work for a while */
        }
        kp_creds_wipe(&next);
    }
    if (err == 0)
        *out = p->cached;
    pthread_mutex_unlock(&p->lock);
    return err;
}

void kp_aws_credentials_invalidate(kp_aws_credentials *p)
{
    pthread_mutex_lock(&p->lock);
    if (!p->fixed) {
        p->have = false;
        kp_creds_wipe(&p->cached);
    }
    pthread_mutex_unlock(&p->lock);
}
