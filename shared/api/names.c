/*
 * Kubernetes' name syntax checked with character classes instead of regular
 * expressions: every rule here is "allowed bytes, alphanumeric at both ends",
 * so one pass over the bytes decides it. The messages are Kubernetes' own,
 * byte for byte, regex text included, because users compare them with what
 * kubectl and the API server print.
 */
#include "api/names.h"

#include <stdint.h>
#include <string.h>

/* Kubernetes' message texts. The "(e.g. 'x',  or 'y', ...)" double spaces are
 * theirs (their RegexError puts ", " after every example and " or " before). */
#define LABEL_KEY_REGEX "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define LABEL_KEY_MSG                                                                              \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "    \
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "         \
    "validation is '" LABEL_KEY_REGEX "')"
#define DNS_LABEL_REGEX     "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define DNS_SUBDOMAIN_REGEX DNS_LABEL_REGEX "(\\." DNS_LABEL_REGEX ")*"
#define DNS_SUBDOMAIN_MSG                                                                          \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "       \
    "used for validation is '" DNS_SUBDOMAIN_REGEX "')"

static const char MSG_NAME_EMPTY[] = "name part must be non-empty";
static const char MSG_NAME_TOO_LONG[] = "name part must be no more than 63 bytes";
static const char MSG_NAME_FORMAT[] = "name part " LABEL_KEY_MSG;
static const char MSG_PREFIX_EMPTY[] = "prefix part must be non-empty";
static const char MSG_PREFIX_TOO_LONG[] = "prefix part must be no more than 253 bytes";
static const char MSG_PREFIX_FORMAT[] = "prefix part " DNS_SUBDOMAIN_MSG;
static const char MSG_KEY_SLASHES[] =
    "a valid label key " LABEL_KEY_MSG
    " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
static const char MSG_VALUE_TOO_LONG[] = "must be no more than 63 bytes";
static const char MSG_VALUE_FORMAT[] =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is '(" LABEL_KEY_REGEX ")?')";
static const char MSG_DNS_LABEL_TOO_LONG[] = "must be no more than 63 characters";
static const char MSG_DNS_LABEL_DOTS[] = "must not contain dots";
static const char MSG_DNS_LABEL_FORMAT[] =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '" DNS_LABEL_REGEX "')";
static const char MSG_SUBDOMAIN_TOO_LONG[] = "must be no more than 253 characters";
static const char MSG_SUBDOMAIN_FORMAT[] = DNS_SUBDOMAIN_MSG;

void kp_msgs_init(kp_msgs *msgs, kp_arena *arena)
{
    memset(msgs, 0, sizeof(*msgs));
    msgs->arena = arena;
}

/* Messages are static strings: they outlive any arena, so none is copied. */
static size_t add(kp_msgs *msgs, const char *msg)
{
    if (!msgs) return 1;
    if (msgs->count == msgs->cap) {
        size_t cap = msgs->cap ? msgs->cap * 2 : 4;
        msgs->items = kp_arena_grow(msgs->arena, msgs->items, msgs->count, cap, sizeof(char *));
        msgs->cap = cap;
    }
    msgs->items[msgs->count++] = msg;
    return 1;
}

static bool is_lower_alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(unsigned char c)
{
    return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* [-a-z0-9]* between lower-case alphanumerics: one RFC 1123 label, length aside. */
static bool dns_label_syntax(const unsigned char *s, size_t n)
{
    if (n == 0 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1])) return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!is_lower_alnum(s[i]) && s[i] != '-') return false;
    return true;
}

/* Labels joined by single dots, length aside. */
static bool dns_subdomain_syntax(const unsigned char *s, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.') continue;
        if (!dns_label_syntax(s + start, i - start)) return false;
        start = i + 1;
    }
    return true;
}

/* [-A-Za-z0-9_.]* between alphanumerics: a label key's name part, or a
 * non-empty label value. */
static bool name_syntax(const unsigned char *s, size_t n)
{
    if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1])) return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') return false;
    return true;
}

static size_t check_prefix(const unsigned char *s, size_t n, kp_msgs *msgs)
{
    size_t added = 0;
    if (n == 0) return add(msgs, MSG_PREFIX_EMPTY);
    if (n > KP_DNS1123_SUBDOMAIN_MAX) added += add(msgs, MSG_PREFIX_TOO_LONG);
    if (!dns_subdomain_syntax(s, n)) added += add(msgs, MSG_PREFIX_FORMAT);
    return added;
}

size_t kp_is_qualified_name(const char *value, kp_msgs *msgs)
{
    const unsigned char *s = (const unsigned char *)value;
    const unsigned char *name = s;
    size_t added = 0;
    const char *slash = strchr(value, '/');
    if (slash) {
        if (strchr(slash + 1, '/')) return add(msgs, MSG_KEY_SLASHES);
        added += check_prefix(s, (size_t)(slash - value), msgs);
        name = (const unsigned char *)slash + 1;
    }
    size_t n = strlen((const char *)name);
    if (n == 0)
        added += add(msgs, MSG_NAME_EMPTY);
    else if (n > KP_QUALIFIED_NAME_MAX)
        added += add(msgs, MSG_NAME_TOO_LONG);
    if (!name_syntax(name, n)) added += add(msgs, MSG_NAME_FORMAT);
    return added;
}

size_t kp_is_valid_label_value(const char *value, kp_msgs *msgs)
{
    size_t n = strlen(value);
    size_t added = 0;
    if (n > KP_LABEL_VALUE_MAX) added += add(msgs, MSG_VALUE_TOO_LONG);
    if (n > 0 && !name_syntax((const unsigned char *)value, n))
        added += add(msgs, MSG_VALUE_FORMAT);
    return added;
}

size_t kp_is_dns1123_label(const char *value, kp_msgs *msgs)
{
    const unsigned char *s = (const unsigned char *)value;
    size_t n = strlen(value);
    size_t added = 0;
    if (n > KP_DNS1123_LABEL_MAX) added += add(msgs, MSG_DNS_LABEL_TOO_LONG);
    if (!dns_label_syntax(s, n)) {
        /* A valid subdomain that is not a valid label can only differ by its dots. */
        added += add(msgs, dns_subdomain_syntax(s, n) ? MSG_DNS_LABEL_DOTS : MSG_DNS_LABEL_FORMAT);
    }
    return added;
}

size_t kp_is_dns1123_subdomain(const char *value, kp_msgs *msgs)
{
    size_t n = strlen(value);
    size_t added = 0;
    if (n > KP_DNS1123_SUBDOMAIN_MAX) added += add(msgs, MSG_SUBDOMAIN_TOO_LONG);
    if (!dns_subdomain_syntax((const unsigned char *)value, n))
        added += add(msgs, MSG_SUBDOMAIN_FORMAT);
    return added;
}

/* One Invalid error per message, the value shown as given. */
static bool report(kp_field_errors *errs, const char *path, const char *shown, const kp_msgs *msgs)
{
    for (size_t i = 0; i < msgs->count; i++)
        kp_field_errors_invalid_str(errs, path, shown, msgs->items[i]);
    return msgs->count == 0;
}

bool kp_validate_label_key(kp_field_errors *errs, const char *path, const char *key)
{
    kp_msgs msgs;
    kp_msgs_init(&msgs, errs->arena);
    kp_is_qualified_name(key, &msgs);
    return report(errs, path, key, &msgs);
}

bool kp_validate_label_value(kp_field_errors *errs, const char *path, const char *value)
{
    kp_msgs msgs;
    kp_msgs_init(&msgs, errs->arena);
    kp_is_valid_label_value(value, &msgs);
    return report(errs, path, value, &msgs);
}

/*
 * Kubernetes lowers annotation keys with Go's strings.ToLower before checking
 * them, which can change a key's length and with it the "no more than N
 * bytes" messages. What decides the outcome is reproduced: ASCII capitals
 * lowered; the runes whose lower case has another UTF-8 length (Go's Unicode
 * 15 tables; U+0130 and U+212A even become ASCII 'i' and 'k') replaced by it;
 * each byte of invalid UTF-8 turned into U+FFFD as Go does. Other non-ASCII
 * runes keep their bytes: their lower case has the same length and fails the
 * same character classes.
 */
static const struct {
    uint32_t upper, lower;
} LOWER_LENGTH_CHANGES[] = {
    {0x0130, 0x0069}, {0x023A, 0x2C65}, {0x023E, 0x2C66}, {0x1E9E, 0x00DF}, {0x2126, 0x03C9},
    {0x212A, 0x006B}, {0x212B, 0x00E5}, {0x2C62, 0x026B}, {0x2C64, 0x027D}, {0x2C6D, 0x0251},
    {0x2C6E, 0x0271}, {0x2C6F, 0x0250}, {0x2C70, 0x0252}, {0x2C7E, 0x023F}, {0x2C7F, 0x0240},
    {0xA78D, 0x0265}, {0xA7AA, 0x0266}, {0xA7AB, 0x025C}, {0xA7AC, 0x0261}, {0xA7AD, 0x026C},
    {0xA7AE, 0x026A}, {0xA7B0, 0x029E}, {0xA7B1, 0x0287}, {0xA7B2, 0x029D}, {0xA7C5, 0x0282},
};

/* One rune as Go's utf8.DecodeRuneInString reads it: the width of a valid
 * sequence (no overlongs, surrogates or values past U+10FFFF), or 0. */
static size_t utf8_decode(const unsigned char *s, uint32_t *rune)
{
    unsigned char c = s[0];
    size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c < 0xC2 || c > 0xF4) return 0;
    if (c == 0xE0)
        lo = 0xA0;
    else if (c == 0xED)
        hi = 0x9F;
    else if (c == 0xF0)
        lo = 0x90;
    else if (c == 0xF4)
        hi = 0x8F;
    if (s[1] < lo || s[1] > hi) return 0;
    uint32_t r = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
    for (size_t i = 1; i < n; i++) {
        if (i > 1 && (s[i] < 0x80 || s[i] > 0xBF)) return 0;
        r = (r << 6) | (s[i] & 0x3F);
    }
    *rune = r;
    return n;
}

static size_t utf8_encode(uint32_t r, char *out)
{
    if (r < 0x80) {
        out[0] = (char)r;
        return 1;
    }
    if (r < 0x800) {
        out[0] = (char)(0xC0 | (r >> 6));
        out[1] = (char)(0x80 | (r & 0x3F));
        return 2;
    }
    out[0] = (char)(0xE0 | (r >> 12));
    out[1] = (char)(0x80 | ((r >> 6) & 0x3F));
    out[2] = (char)(0x80 | (r & 0x3F));
    return 3;
}

/* Appends the lowered form of the non-ASCII sequence at s; returns bytes read. */
static size_t lower_non_ascii(const unsigned char *s, char *out, size_t *j)
{
    uint32_t rune;
    size_t width = utf8_decode(s, &rune);
    if (width == 0) {
        *j += utf8_encode(0xFFFD, out + *j);
        return 1;
    }
    for (size_t k = 0; k < sizeof(LOWER_LENGTH_CHANGES) / sizeof(LOWER_LENGTH_CHANGES[0]); k++) {
        if (LOWER_LENGTH_CHANGES[k].upper == rune) {
            *j += utf8_encode(LOWER_LENGTH_CHANGES[k].lower, out + *j);
            return width;
        }
    }
    memcpy(out + *j, s, width);
    *j += width;
    return width;
}

static char *lower_key(kp_arena *arena, const char *key)
{
    const unsigned char *s = (const unsigned char *)key;
    size_t n = strlen(key);
    /* Worst case: every byte invalid, each becoming three. */
    char *out = kp_arena_calloc(arena, 3, n + 1);
    size_t j = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] < 0x80) {
            out[j++] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
            i++;
        } else {
            i += lower_non_ascii(s + i, out, &j);
        }
    }
    out[j] = '\0';
    return out;
}

bool kp_validate_annotation_key(kp_field_errors *errs, const char *path, const char *key)
{
    kp_msgs msgs;
    kp_msgs_init(&msgs, errs->arena);
    kp_is_qualified_name(lower_key(errs->arena, key), &msgs);
    return report(errs, path, key, &msgs);
}

bool kp_validate_labels(kp_field_errors *errs, const char *path, const char *const *keys,
                        const char *const *values, size_t n)
{
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        ok &= kp_validate_label_key(errs, path, keys[i]);
        ok &= kp_validate_label_value(errs, path, values[i]);
    }
    return ok;
}

bool kp_validate_annotations(kp_field_errors *errs, const char *path, const char *const *keys,
                             const char *const *values, size_t n)
{
    bool ok = true;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        ok &= kp_validate_annotation_key(errs, path, keys[i]);
        total += strlen(keys[i]) + strlen(values[i]);
    }
    if (total > KP_ANNOTATIONS_TOTAL_MAX) {
        kp_field_errors_add(errs, KP_FIELD_TOO_LONG, path, NULL, "may not be more than %d bytes",
                            KP_ANNOTATIONS_TOTAL_MAX);
        ok = false;
    }
    return ok;
}
