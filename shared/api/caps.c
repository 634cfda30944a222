/* Cluster-wide and NodePool dollar caps, as written (see caps.h). */
#include "api/caps.h"
#include "base/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool kp_caps_any(const kp_caps *c)
{
    return c && (c->max_nodes >= 0 || c->has_cores || c->has_memory || c->max_hourly_cost >= 0);
}

/* Cluster Autoscaler writes these as MIN:MAX; a minimum would be accepted
 * and ignored here, so the form is refused with what to write instead. */
static int refuse_min_max(const char *text, const char *source, const char *example)
{
    if (!strchr(text, ':'))
        return 0;
    return kp_error_set(KP_EINVALID, "%s %s: give the maximum only (%s); Cluster Autoscaler's MIN:MAX form has a "
                                     "minimum, which nothing here would keep (consolidation decides what goes)",
                        source, text, example);
}

/* A count: digits only, at most 10^12. */
static int parse_count(const char *text, const char *source, int64_t *out)
{
    errno = 0;
    long long v = *text && !text[strspn(text, "0123456789")] ? strtoll(text, NULL, 10) : -1;
    if (v < 0 || errno || v > 1000000000000LL)
        return kp_error_set(KP_EINVALID, "%s %s: want a whole number from 0 to 10^12", source, text);
    *out = v;
    return 0;
}

int kp_caps_parse_max_nodes(kp_caps *c, const char *text, const char *source)
{
    int64_t n = 0; /* set by parse_count on success; gcc -O3 cannot see that */
    int err = refuse_min_max(text, source, "--max-nodes-total 50");
    if (!err)
        err = parse_count(text, source, &n);
    if (!err)
        c->max_nodes = n;
    return err;
}

int kp_caps_parse_cores(kp_caps *c, const char *text, const char *source)
{
    int64_t n = 0; /* as above */
    int err = refuse_min_max(text, source, "--cores-total 320");
    if (!err)
        err = parse_count(text, source, &n);
    if (!err)
        c->cores = (kp_milli128)n * 1000, c->has_cores = true;
    return err;
}

/* A quantity with a unit: a bare number would be bytes here and gigabytes
 * in Cluster Autoscaler's flag of the same name. */
int kp_caps_parse_memory(kp_caps *c, const char *text, const char *source)
{
    kp_quantity q;
    int err = refuse_min_max(text, source, "--memory-total 512Gi");
    if (err)
        return err;
    if (*text && text[strspn(text, "0123456789.")] == '\0')
        return kp_error_set(KP_EINVALID, "%s %s: give a unit (%sGi, %sG): a bare number would be bytes, and Cluster "
                                         "Autoscaler's --memory-total counts gigabytes",
                            source, text, text, text);
    if (kp_quantity_parse(text, &q) < 0)
        return kp_error_wrap(KP_EINVALID, "%s", source);
    if (kp_quantity_milli128(q) < 0)
        return kp_error_set(KP_EINVALID, "%s %s: want a quantity of 0 or more", source, text);
    c->memory = kp_quantity_milli128(q), c->has_memory = true;
    return 0;
}

/* Digits with at most one '.', and at least one digit: nothing strtod
 * would read differently (signs, exponents, hex, "inf", "nan"). */
static bool dollar_shape(const char *text)
{
    static const char digits[] = "0123456789";
    size_t whole = strspn(text, digits), frac = 0;
    const char *p = text + whole;
    if (*p == '.') {
        frac = strspn(p + 1, digits);
        p += 1 + frac;
    }
    return *p == '\0' && whole + frac > 0;
}

int kp_caps_parse_dollars(const char *text, const char *source, double *out)
{
    double v = dollar_shape(text) ? strtod(text, NULL) : -1;
    if (v < 0 || v > KP_CAPS_MAX_DOLLARS)
        return kp_error_set(KP_EINVALID, "%s %s: want dollars an hour, a decimal number from 0 to %.0f (\"25\", "
                                         "\"7.50\")",
                            source, text, KP_CAPS_MAX_DOLLARS);
    *out = v;
    return 0;
}

int kp_caps_parse_hourly_cost(kp_caps *c, const char *text, const char *source)
{
    return kp_caps_parse_dollars(text, source, &c->max_hourly_cost);
}

int kp_caps_parse_setting(kp_caps *c, const char *flag, const char *text, const char *source)
{
    if (!strcmp(flag, "max-nodes-total"))
        return kp_caps_parse_max_nodes(c, text, source);
    if (!strcmp(flag, "cores-total"))
        return kp_caps_parse_cores(c, text, source);
    if (!strcmp(flag, "memory-total"))
        return kp_caps_parse_memory(c, text, source);
    if (!strcmp(flag, "max-hourly-cost"))
        return kp_caps_parse_hourly_cost(c, text, source);
    return kp_error_set(KP_EINVALID, "%s: not a cap", source);
}

int kp_caps_nodepool_cost(const kp_nodepool *np, double *out)
{
    const char *v = kp_labels_get(&np->meta.annotations, KP_ANNOTATION_MAX_HOURLY_COST);
    *out = -1;
    if (!v)
        return 0;
    char source[320];
    snprintf(source, sizeof(source), "NodePool %s: annotation %s", np->meta.name, KP_ANNOTATION_MAX_HOURLY_COST);
    return kp_caps_parse_dollars(v, source, out);
}

char *kp_caps_describe(const kp_caps *c, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    char q[KP_QUANTITY_STRLEN];
    if (c->max_nodes >= 0)
        at += (size_t)snprintf(buf + at, size - at, "--max-nodes-total=%lld", (long long)c->max_nodes);
    if (c->has_cores && at < size)
        at += (size_t)snprintf(buf + at, size - at, "%s--cores-total=%lld", at ? ", " : "",
                               (long long)(c->cores / 1000));
    if (c->has_memory && at < size) {
        kp_quantity_format(kp_quantity_from_milli128(c->memory, KP_QUANTITY_BINARY_SI), q, sizeof(q));
        at += (size_t)snprintf(buf + at, size - at, "%s--memory-total=%s", at ? ", " : "", q);
    }
    if (c->max_hourly_cost >= 0 && at < size)
        snprintf(buf + at, size - at, "%s--max-hourly-cost=%.4g", at ? ", " : "", c->max_hourly_cost);
    return buf;
}
