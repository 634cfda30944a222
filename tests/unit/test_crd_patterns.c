/*
 * The CRD patterns the webhook reports (api/crd_tables.h, written by
 * scripts/gen-crds.py) are the rules its hand-written matchers implement:
 * for a corpus of values per field, validation refuses a value with
 * "should match '<pattern>'" exactly when the pattern itself, run by the C
 * library's regex engine, does not match it. A pattern changed in the
 * generator without its matcher fails here.
 *
 * The patterns are RE2 syntax; for POSIX extended syntax \d becomes [0-9],
 * \s [[:space:]], (?: a plain group, \/ a slash. The volume size pattern's
 * empty alternatives ("([1-9]||...)Ti") admit a bare unit, zero bytes, which
 * the matcher refuses on purpose: they are dropped here.
 */
#include <criterion/criterion.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/admission.h"
#include "api/crd_tables.h"
#include "base/error.h"

/* The pattern in POSIX extended syntax (static buffer: one at a time). */
static const char *posix(const char *re2)
{
    static const struct {
        const char *from, *to;
    } swaps[] = {{"\\d", "[0-9]"}, {"\\s", "[[:space:]]"}, {"(?:", "("}, {"\\/", "/"}, {"||", "|"}};
    static char out[1024];
    size_t n = 0;
    for (const char *p = re2; *p;) {
        size_t i = 0, count = sizeof(swaps) / sizeof(swaps[0]);
        while (i < count && strncmp(p, swaps[i].from, strlen(swaps[i].from)) != 0)
            i++;
        const char *add = i < count ? swaps[i].to : (char[]){*p, '\0'};
        cr_assert_lt(n + strlen(add), sizeof(out));
        memcpy(out + n, add, strlen(add));
        n += strlen(add);
        p += i < count ? strlen(swaps[i].from) : 1;
    }
    out[n] = '\0';
    return out;
}

static bool pattern_matches(const char *re2, const char *s)
{
    regex_t re;
    int rc = regcomp(&re, posix(re2), REG_EXTENDED | REG_NOSUB);
    cr_assert_eq(rc, 0, "pattern %s does not compile as %s", re2, posix(re2));
    bool ok = regexec(&re, s, 0, NULL, 0) == 0;
    regfree(&re);
    return ok;
}

/* A JSON string literal for `s`. */
static char *json_string(const char *s)
{
    cJSON *str = cJSON_CreateString(s);
    char *out = cJSON_PrintUnformatted(str);
    cJSON_Delete(str);
    return out;
}

/* Validate `kind` built from `format` with the value in place of its one %s;
 * true when an error says the value should match `pattern`. */
static bool refused(enum kp_admission_kind kind, const char *format, const char *value,
                    const char *pattern)
{
    char *quoted = json_string(value);
    char text[4096];
    snprintf(text, sizeof(text), format, quoted);
    free(quoted);
    cJSON *obj = cJSON_Parse(text);
    cr_assert_not_null(obj, "bad test JSON: %s", text);
    kp_arena *arena = kp_arena_new();
    kp_admission_result res;
    kp_admission_result_init(&res, arena);
    cr_assert_eq(kp_admission_validate(kind, KP_ADMIT_CREATE, obj, NULL, &res), 0, "%s",
                 kp_error_last());
    const char *errors = kp_field_errors_string(arena, &res.errors);
    char want[1100];
    snprintf(want, sizeof(want), "should match '%s'", pattern);
    bool found = errors && strstr(errors, want) != NULL;
    kp_admission_result_clear(&res);
    kp_arena_free(arena);
    cJSON_Delete(obj);
    return found;
}

static void agree(enum kp_admission_kind kind, const char *format, const char *pattern,
                  const char *const *values)
{
    for (size_t i = 0; values[i]; i++) {
        bool matches = pattern_matches(pattern, values[i]);
        cr_expect_eq(refused(kind, format, values[i], pattern), !matches,
                     "%s: the pattern %s it, validation %s it", values[i],
                     matches ? "matches" : "does not match", matches ? "refuses" : "admits");
    }
}

#define NODEPOOL(disruption, template_spec)                                                        \
    "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"disruption\":{" disruption "},"                    \
    "\"template\":{\"spec\":{\"nodeClassRef\":{\"group\":\"karpenter.k8s.aws\",\"kind\":"          \
    "\"EC2NodeClass\",\"name\":\"d\"},\"requirements\":[]" template_spec "}}}}"

#define EC2NODECLASS(fields)                                                                       \
    "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"role\":\"r\",\"amiSelectorTerms\":[{\"alias\":"    \
    "\"al2023@latest\"}],\"subnetSelectorTerms\":[{\"tags\":{\"a\":\"b\"}}],"                      \
    "\"securityGroupSelectorTerms\":[{\"tags\":{\"a\":\"b\"}}]" fields "}}"

static const char *const durations[] = {
    "720h",   "1h30m", "0s",  "10m0s", "1h0s",  "Never", "",        "1d", "1.5h", "h",  "10",
    "Neverx", "-1h",   "1h ", "1s",    "30m1h", "1h30s", "1h30m0s", "0m", "5ms",  "1H", NULL};

Test(crd_patterns, durations)
{
    agree(KP_ADMIT_NODEPOOL, NODEPOOL("", ",\"expireAfter\":%s"), KP_CRD_NILLABLE_DURATION_PATTERN,
          durations);
    agree(KP_ADMIT_NODEPOOL, NODEPOOL("\"consolidateAfter\":%s", ""),
          KP_CRD_NILLABLE_DURATION_PATTERN, durations);
    agree(KP_ADMIT_NODEPOOL, NODEPOOL("", ",\"terminationGracePeriod\":%s"),
          KP_CRD_DURATION_PATTERN, durations);
    agree(KP_ADMIT_NODEPOOL,
          NODEPOOL("\"budgets\":[{\"nodes\":\"1\",\"schedule\":\"@daily\",\"duration\":%s}]", ""),
          KP_CRD_BUDGET_DURATION_PATTERN, durations);
}

Test(crd_patterns, budget_nodes_and_schedule)
{
    static const char *const nodes[] = {"0",   "10",   "100",  "100%",  "10%", "5%", "0%",
                                        "99%", "101%", "009%", "1000%", "%",   "",   "abc",
                                        "-1",  "10 %", "1%%",  "007",   "1e3", NULL};
    static const char *const schedules[] = {
        "@daily",     "@hourly",     "@yearly",  "@dailyx",   "x@daily",     "@reboot",
        "",           "0 0 * * *",   "* * * *",  "a b c d e", " a b c d",    "a b c d ",
        "a\tb c d e", "a b c d e f", "a  b c d", "@",         "0 9 * * 1-5", NULL};
    agree(KP_ADMIT_NODEPOOL, NODEPOOL("\"budgets\":[{\"nodes\":%s}]", ""),
          KP_CRD_BUDGET_NODES_PATTERN, nodes);
    agree(KP_ADMIT_NODEPOOL,
          NODEPOOL("\"budgets\":[{\"nodes\":\"1\",\"schedule\":%s,\"duration\":\"1h\"}]", ""),
          KP_CRD_BUDGET_SCHEDULE_PATTERN, schedules);
}

Test(crd_patterns, ec2nodeclass_ids)
{
    static const char *const ids[] = {
        "ami-123abc",   "ami-",          "xami-1",      "ami-ABC",      "ami-1-2", "subnet-0a1b",
        "subnet-",      "sg-0a1b",       "sg-",         "my-sg-1",      "cr-1",    "cr-",
        "xcr-1",        "cr-1x_",        "cr-abc",      "pg-1",         "pg-",     "pg-1A",
        "123456789012", "1234567890123", "12345678901", "12345678901a", "",        NULL};
    agree(KP_ADMIT_EC2NODECLASS,
          "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"role\":\"r\",\"amiSelectorTerms\":[{\"id\":"
          "%s}],\"amiFamily\":\"AL2023\",\"subnetSelectorTerms\":[{\"tags\":{\"a\":\"b\"}}],"
          "\"securityGroupSelectorTerms\":[{\"tags\":{\"a\":\"b\"}}]}}",
          KP_CRD_AMI_ID_PATTERN, ids);
    agree(
        KP_ADMIT_EC2NODECLASS,
        "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"role\":\"r\",\"amiSelectorTerms\":[{\"alias\":"
        "\"al2023@latest\"}],\"subnetSelectorTerms\":[{\"id\":%s}],"
        "\"securityGroupSelectorTerms\":[{\"tags\":{\"a\":\"b\"}}]}}",
        KP_CRD_SUBNET_ID_PATTERN, ids);
    agree(
        KP_ADMIT_EC2NODECLASS,
        "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"role\":\"r\",\"amiSelectorTerms\":[{\"alias\":"
        "\"al2023@latest\"}],\"subnetSelectorTerms\":[{\"tags\":{\"a\":\"b\"}}],"
        "\"securityGroupSelectorTerms\":[{\"id\":%s}]}}",
        KP_CRD_SECURITY_GROUP_ID_PATTERN, ids);
    agree(KP_ADMIT_EC2NODECLASS,
          EC2NODECLASS(",\"capacityReservationSelectorTerms\":[{\"id\":%s}]"),
          KP_CRD_CAPACITY_RESERVATION_ID_PATTERN, ids);
    agree(KP_ADMIT_EC2NODECLASS,
          EC2NODECLASS(",\"capacityReservationSelectorTerms\":[{\"tags\":{\"a\":\"b\"},"
                       "\"ownerID\":%s}]"),
          KP_CRD_OWNER_ID_PATTERN, ids);
    agree(KP_ADMIT_EC2NODECLASS, EC2NODECLASS(",\"placementGroupSelector\":{\"id\":%s}"),
          KP_CRD_PLACEMENT_GROUP_ID_PATTERN, ids);
}

Test(crd_patterns, volume_size)
{
    static const char *const sizes[] = {
        "1Gi",     "20Gi",    "100Gi",    "9999Gi", "10000Gi", "49999Gi", "50000Gi", "58999Gi",
        "59000Gi", "59001Gi", "60000Gi",  "0Gi",    "01Gi",    "1G",      "64000G",  "64001G",
        "1Ti",     "9Ti",     "10Ti",     "17Ti",   "18Ti",    "20Ti",    "57Ti",    "58Ti",
        "59Ti",    "1T",      "64T",      "65T",    "Gi",      "1gi",     "1",       "1Mi",
        "",        "1.5Gi",   "100000Gi", NULL};
    agree(KP_ADMIT_EC2NODECLASS,
          EC2NODECLASS(",\"blockDeviceMappings\":[{\"ebs\":{\"volumeSize\":%s}}]"),
          KP_CRD_VOLUME_SIZE_PATTERN, sizes);
}

Test(crd_patterns, overlay_prices)
{
    static const char *const prices[] = {
        "1",     "1.5",  "0.25", ".5",    "1.",    "-1",     "+1",   "abc",   "1e3", "+0.5",
        "-0.25", "+10%", "-15%", "-100%", "-101%", "+1000%", "10%",  "-5.5%", "+.5", "-99.99%",
        "--1",   "+1.%", "",     "-0%",   "+0",    "1.2.3",  "-.5%", NULL};
    const char *format = "{\"metadata\":{\"name\":\"o\"},\"spec\":{\"requirements\":[],"
                         "\"price\":%s}}";
    agree(KP_ADMIT_NODEOVERLAY, format, KP_CRD_OVERLAY_PRICE_PATTERN, prices);
    format = "{\"metadata\":{\"name\":\"o\"},\"spec\":{\"requirements\":[],"
             "\"priceAdjustment\":%s}}";
    agree(KP_ADMIT_NODEOVERLAY, format, KP_CRD_OVERLAY_PRICE_ADJUSTMENT_PATTERN, prices);
}
