#include "cloud/aws/sigv4.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "base/buf.h"
#include "base/error.h"

enum { SHA256_LEN = 32, HEADERS_MAX = 64 };

static const char HEX_UPPER[] = "0123456789ABCDEF";
static const char HEX_LOWER[] = "0123456789abcdef";

static void hex_lower(const unsigned char *in, size_t len, char *out)
{
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = HEX_LOWER[in[i] >> 4];
        out[2 * i + 1] = HEX_LOWER[in[i] & 15];
    }
    out[2 * len] = '\0';
}

void kp_sigv4_sha256_hex(const void *data, size_t len, char out[65])
{
    unsigned char md[SHA256_LEN];
    unsigned int md_len = 0;
    EVP_Digest(data ? data : "", len, md, &md_len, EVP_sha256(), NULL);
    hex_lower(md, SHA256_LEN, out);
}

static void hmac_sha256(const void *key, size_t key_len, const char *msg, unsigned char out[32])
{
    unsigned int out_len = SHA256_LEN;
    HMAC(EVP_sha256(), key, (int)key_len, (const unsigned char *)msg, strlen(msg), out, &out_len);
}

int kp_sigv4_amz_date(int64_t time_ns, char out[17])
{
    int64_t secs = time_ns / 1000000000;
    if (time_ns < 0 || secs > INT64_C(253402300799))
        return kp_error_set(KP_EINVALID, "signing time out of range");
    time_t t = (time_t)secs;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
    return 0;
}

static bool unreserved(unsigned char c)
{
    return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

char *kp_sigv4_uri_encode(kp_arena *arena, const char *s, size_t len, bool keep_slash)
{
    char *out = kp_arena_alloc(arena, 3 * len + 1), *p = out;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (unreserved(c) || (keep_slash && c == '/')) {
            *p++ = (char)c;
        } else {
            *p++ = '%';
            *p++ = HEX_UPPER[c >> 4];
            *p++ = HEX_UPPER[c & 15];
        }
    }
    *p = '\0';
    return out;
}

/* RFC 3986 remove_dot_segments plus collapsing of empty segments, keeping a
 * trailing slash: "//example//" -> "/example/", "/a/b/../.." -> "/". */
static char *normalize_path(kp_arena *arena, const char *path)
{
    size_t len = strlen(path);
    const char **segs = KP_ARENA_NEW(arena, const char *, len + 1);
    size_t *lens = KP_ARENA_NEW(arena, size_t, len + 1);
    size_t n = 0;
    for (const char *p = path; *p;) {
        const char *e = strchr(p, '/');
        size_t sl = e ? (size_t)(e - p) : strlen(p);
        if (sl == 2 && p[0] == '.' && p[1] == '.') {
            if (n > 0)
                n--;
        } else if (sl > 0 && !(sl == 1 && p[0] == '.')) {
            segs[n] = p;
            lens[n++] = sl;
        }
        p += sl;
        if (*p == '/')
            p++;
    }
    bool trailing = len > 1 && path[len - 1] == '/' && n > 0;
    char *out = kp_arena_alloc(arena, len + 2), *w = out;
    for (size_t i = 0; i < n; i++) {
        *w++ = '/';
        memcpy(w, segs[i], lens[i]);
        w += lens[i];
    }
    if (n == 0 || trailing)
        *w++ = '/';
    *w = '\0';
    return out;
}

char *kp_sigv4_canonical_uri(kp_arena *arena, const char *path, bool keep_path)
{
    if (!path || !*path)
        path = "/";
    const char *p = keep_path ? path : normalize_path(arena, path);
    return kp_sigv4_uri_encode(arena, p, strlen(p), true);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)tolower((unsigned char)c);
    return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}

/* Percent-decode s[0..len) then encode strictly. */
static char *reencode(kp_arena *arena, const char *s, size_t len)
{
    char *dec = kp_arena_alloc(arena, len + 1);
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        int hi, lo;
        if (s[i] == '%' && i + 2 < len && (hi = hexval(s[i + 1])) >= 0 &&
            (lo = hexval(s[i + 2])) >= 0) {
            dec[n++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            dec[n++] = s[i];
        }
    }
    return kp_sigv4_uri_encode(arena, dec, n, false);
}

typedef struct query_pair {
    const char *key;
    const char *value;
} query_pair;

static int cmp_pair(const void *a, const void *b)
{
    const query_pair *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : strcmp(x->value, y->value);
}

char *kp_sigv4_canonical_query(kp_arena *arena, const char *query)
{
    if (!query || !*query)
        return kp_arena_strdup(arena, "");
    size_t cap = 1;
    for (const char *p = query; *p; p++)
        cap += *p == '&';
    query_pair *pairs = KP_ARENA_NEW(arena, query_pair, cap);
    size_t n = 0, total = 0;
    for (const char *p = query; *p;) {
        const char *e = strchr(p, '&');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len > 0) {
            const char *eq = memchr(p, '=', len);
            size_t kl = eq ? (size_t)(eq - p) : len;
            pairs[n].key = reencode(arena, p, kl);
            pairs[n].value = eq ? reencode(arena, eq + 1, len - kl - 1) : "";
            total += strlen(pairs[n].key) + strlen(pairs[n].value) + 2;
            n++;
        }
        p += len;
        if (*p == '&')
            p++;
    }
    qsort(pairs, n, sizeof(*pairs), cmp_pair);
    char *out = kp_arena_alloc(arena, total + 1), *w = out;
    for (size_t i = 0; i < n; i++)
        w += snprintf(w, total + 1 - (size_t)(w - out), "%s%s=%s", i ? "&" : "", pairs[i].key,
                      pairs[i].value);
    *w = '\0';
    return out;
}

typedef struct canon_header {
    char *name;  /* lower case */
    char *value; /* trimmed, folded */
    size_t order;
} canon_header;

static int cmp_header(const void *a, const void *b)
{
    const canon_header *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->order < y->order ? -1 : x->order > y->order);
}

static char *lower_dup(kp_arena *arena, const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t len = strlen(s);
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    char *out = kp_arena_strndup(arena, s, len);
    for (char *p = out; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return out;
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Trim, and fold each run of whitespace inside to a single space. */
static char *fold_value(kp_arena *arena, const char *s)
{
    char *out = kp_arena_alloc(arena, strlen(s) + 1), *w = out;
    while (is_ws(*s))
        s++;
    for (; *s; s++) {
        if (is_ws(*s)) {
            while (is_ws(s[1]))
                s++;
            if (s[1])
                *w++ = ' ';
        } else {
            *w++ = *s;
        }
    }
    *w = '\0';
    return out;
}

static bool signer_owned(const char *lower_name)
{
    static const char *const owned[] = {"authorization", "x-amz-date", "x-amz-security-token",
                                        "x-amz-content-sha256"};
    for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
        if (strcmp(lower_name, owned[i]) == 0)
            return true;
    return false;
}

static void push_header(canon_header *hs, size_t *n, kp_arena *arena, const char *name,
                        const char *value)
{
    hs[*n].name = kp_arena_strdup(arena, name);
    hs[*n].value = fold_value(arena, value ? value : "");
    hs[*n].order = *n;
    (*n)++;
}

/* Canonical header block and signed-header list, with the signer's own headers. */
static int canonical_headers(kp_arena *arena, const kp_sigv4_request *req,
                             const kp_sigv4_params *params, const char *amz_date,
                             const char *payload_hash, kp_buf *block, kp_buf *signed_list)
{
    if (req->n_headers > HEADERS_MAX - 4)
        return kp_error_set(KP_ETOOLARGE, "too many headers to sign (%zu)", req->n_headers);
    canon_header hs[HEADERS_MAX];
    size_t n = 0;
    bool have_host = false;
    for (size_t i = 0; i < req->n_headers; i++) {
        char *name = lower_dup(arena, req->headers[i].name);
        if (!*name || signer_owned(name))
            continue;
        have_host |= strcmp(name, "host") == 0;
        push_header(hs, &n, arena, name, req->headers[i].value);
    }
    if (!have_host)
        return kp_error_set(KP_EINVALID, "the request to sign has no Host header");
    push_header(hs, &n, arena, "x-amz-date", amz_date);
    if (params->session_token && *params->session_token && !params->token_unsigned)
        push_header(hs, &n, arena, "x-amz-security-token", params->session_token);
    if (params->add_content_sha256)
        push_header(hs, &n, arena, "x-amz-content-sha256", payload_hash);
    qsort(hs, n, sizeof(hs[0]), cmp_header);
    int err = 0;
    for (size_t i = 0; i < n && err == 0; i++) {
        bool same = i > 0 && strcmp(hs[i - 1].name, hs[i].name) == 0;
        bool last = i + 1 == n || strcmp(hs[i + 1].name, hs[i].name) != 0;
        if (!same) {
            err = kp_buf_printf(block, "%s:", hs[i].name);
            if (err == 0)
                err = kp_buf_printf(signed_list, "%s%s", i ? ";" : "", hs[i].name);
        }
        if (err == 0)
            err = kp_buf_printf(block, "%s%s%s", same ? "," : "", hs[i].value, last ? "\n" : "");
    }
    return err;
}

static void signing_key(const kp_sigv4_params *p, const char *date, unsigned char key[32])
{
    size_t slen = strlen(p->secret_access_key);
    char *k0 = malloc(slen + 5);
    memcpy(k0, "AWS4", 4);
    memcpy(k0 + 4, p->secret_access_key, slen + 1);
    unsigned char a[SHA256_LEN], b[SHA256_LEN];
    hmac_sha256(k0, slen + 4, date, a);
    OPENSSL_cleanse(k0, slen + 4);
    free(k0);
    hmac_sha256(a, SHA256_LEN, p->region, b);
    hmac_sha256(b, SHA256_LEN, p->service, a);
    hmac_sha256(a, SHA256_LEN, "aws4_request", key);
    OPENSSL_cleanse(a, sizeof(a));
    OPENSSL_cleanse(b, sizeof(b));
}

static int check_params(const kp_sigv4_request *req, const kp_sigv4_params *p)
{
    if (!req->method || !*req->method)
        return kp_error_set(KP_EINVALID, "sigv4: no HTTP method");
    if (!p->access_key_id || !*p->access_key_id || !p->secret_access_key ||
        !*p->secret_access_key)
        return kp_error_set(KP_EINVALID, "sigv4: no credentials");
    if (!p->region || !*p->region || !p->service || !*p->service)
        return kp_error_set(KP_EINVALID, "sigv4: region and service are required");
    return 0;
}

static void add_header(kp_sigv4_result *out, const char *name, const char *value)
{
    out->added[out->n_added].name = name;
    out->added[out->n_added++].value = value;
}

static int build_canonical(kp_sigv4_result *out, kp_arena *arena, const kp_sigv4_request *req,
                           const kp_sigv4_params *p, const char *payload_hash)
{
    kp_buf block = KP_BUF_INIT(1u << 20), names = KP_BUF_INIT(1u << 16);
    int err = canonical_headers(arena, req, p, out->amz_date, payload_hash, &block, &names);
    if (err == 0) {
        out->signed_headers = kp_arena_strdup(arena, kp_buf_cstr(&names));
        out->canonical_request = kp_arena_printf(
            arena, "%s\n%s\n%s\n%s\n%s\n%s", req->method,
            kp_sigv4_canonical_uri(arena, req->path, p->keep_path),
            kp_sigv4_canonical_query(arena, req->query), kp_buf_cstr(&block),
            out->signed_headers, payload_hash);
    }
    kp_buf_free(&block);
    kp_buf_free(&names);
    return err;
}

int kp_sigv4_sign(kp_sigv4_result *out, kp_arena *arena, const kp_sigv4_request *req,
                  const kp_sigv4_params *p)
{
    kp_sigv4_result r;
    memset(&r, 0, sizeof(r));
    int err = check_params(req, p);
    if (err == 0)
        err = kp_sigv4_amz_date(p->time_ns, r.amz_date);
    char payload_hash[65], creq_hash[65];
    kp_sigv4_sha256_hex(req->body, req->body_len, payload_hash);
    if (err == 0)
        err = build_canonical(&r, arena, req, p, payload_hash);
    if (err < 0)
        return err;
    char date[9];
    memcpy(date, r.amz_date, 8);
    date[8] = '\0';
    const char *scope = kp_arena_printf(arena, "%s/%s/%s/aws4_request", date, p->region, p->service);
    kp_sigv4_sha256_hex(r.canonical_request, strlen(r.canonical_request), creq_hash);
    r.string_to_sign =
        kp_arena_printf(arena, "AWS4-HMAC-SHA256\n%s\n%s\n%s", r.amz_date, scope, creq_hash);
    unsigned char key[SHA256_LEN], sig[SHA256_LEN];
    signing_key(p, date, key);
    hmac_sha256(key, SHA256_LEN, r.string_to_sign, sig);
    OPENSSL_cleanse(key, sizeof(key));
    hex_lower(sig, SHA256_LEN, r.signature);
    add_header(&r, "X-Amz-Date", kp_arena_strdup(arena, r.amz_date));
    if (p->session_token && *p->session_token)
        add_header(&r, "X-Amz-Security-Token", p->session_token);
    if (p->add_content_sha256)
        add_header(&r, "X-Amz-Content-Sha256", kp_arena_strdup(arena, payload_hash));
    add_header(&r, "Authorization",
               kp_arena_printf(arena, "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, "
                                      "Signature=%s",
                               p->access_key_id, scope, r.signed_headers, r.signature));
    *out = r;
    return 0;
}
