/*
 * EC2NodeClass (karpenter.k8s.aws/v1) validation: the CRD schema and its CEL
 * rules (selector terms and their exclusivity, AMI aliases and families,
 * role or instance profile, restricted tags, block devices, network
 * interfaces, metadata options, connection tracking), and Karpenter's kubelet
 * configuration checks, which it runs in its controller and we run at
 * admission as well. Warnings flag settings EC2 itself will refuse or that
 * weaken a node's security. The schema's enums, patterns and bounds are read
 * from api/crd_tables.h.
 */
#include "api/crd_tables.h"
#include "api/duration.h"
#include "api/quantity.h"
#include "api/validate_internal.h"
#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXCLUSIVE "is mutually exclusive, cannot be set with a combination of other fields in"

/* Alias families, and the amiFamily each implies (same order). */
static const char *const *const alias_families = kp_crd_ami_alias_family_names;

/* has() as the API server's CEL evaluates it: present, even as an empty map. */
static bool has_member(const cJSON *obj, const char *name)
{
    return kp_v_get(obj, name) != NULL;
}

/* The CRD's ID patterns read "<prefix>[0-9a-z]+", found anywhere, or
 * "^<prefix>[0-9a-z]+$". A pattern of another shape matches nothing, so a
 * change to one in scripts/gen-crds.py fails closed (and the tests). */
static bool id_like(const char *s, const char *pattern)
{
    bool anchored = pattern[0] == '^';
    char prefix[32];
    size_t n = strcspn(pattern + anchored, "[");
    if (n == 0 || n >= sizeof(prefix) ||
        strcmp(pattern + anchored + n, anchored ? "[0-9a-z]+$" : "[0-9a-z]+") != 0)
        return false;
    memcpy(prefix, pattern + anchored, n);
    prefix[n] = '\0';
    for (const char *p = s; (p = strstr(p, prefix)) != NULL; p++) {
        size_t tail = strspn(p + n, "0123456789abcdefghijklmnopqrstuvwxyz");
        if (tail && (!anchored || (p == s && p[n + tail] == '\0'))) return true;
        if (anchored) return false;
    }
    return false;
}

/* ---------------------------------------------------------------- selector terms */

typedef struct term_kind {
    const char *list;               /* member of spec */
    bool required;                  /* and not empty */
    const char *const *selectors;   /* at least one of these */
    const char *at_least;           /* message when none */
    const char *id_pattern;         /* the CRD's pattern for `id` */
    const char *const *id_excludes; /* fields `id` may not be combined with */
    const char *id_message;
    const char *const *name_excludes; /* fields `name` may not be combined with, or NULL */
    const char *name_message;
} term_kind;

static const char *const subnet_sel[] = {"tags", "id", NULL};
static const char *const sg_sel[] = {"tags", "id", "name", NULL};
static const char *const cr_sel[] = {"tags", "id", "instanceMatchCriteria", NULL};
static const char *const ami_sel[] = {"tags", "id", "name", "alias", "ssmParameter", NULL};
static const char *const tags_only[] = {"tags", NULL};
static const char *const tags_name[] = {"tags", "name", NULL};
static const char *const tags_id[] = {"tags", "id", NULL};
static const char *const cr_id_ex[] = {"tags", "ownerID", "instanceMatchCriteria", NULL};
static const char *const ami_id_ex[] = {"alias", "tags", "name", "owner", NULL};
static const char *const ami_alias_ex[] = {"id", "tags", "name", "owner", NULL};

static const term_kind subnet_terms = {"subnetSelectorTerms",
                                       true,
                                       subnet_sel,
                                       "expected at least one, got none, ['tags', 'id']",
                                       KP_CRD_SUBNET_ID_PATTERN,
                                       tags_only,
                                       "'id' " EXCLUSIVE " a subnet selector term",
                                       NULL,
                                       NULL};
static const term_kind sg_terms = {"securityGroupSelectorTerms",
                                   true,
                                   sg_sel,
                                   "expected at least one, got none, ['tags', 'id', 'name']",
                                   KP_CRD_SECURITY_GROUP_ID_PATTERN,
                                   tags_name,
                                   "'id' " EXCLUSIVE " a security group selector term",
                                   tags_id,
                                   "'name' " EXCLUSIVE " a security group selector term"};
static const term_kind cr_terms = {
    "capacityReservationSelectorTerms",
    false,
    cr_sel,
    "expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']",
    KP_CRD_CAPACITY_RESERVATION_ID_PATTERN,
    cr_id_ex,
    "'id' is mutually exclusive, cannot be set along with other fields in a capacity "
    "reservation selector term",
    NULL,
    NULL};
static const term_kind ami_terms = {
    "amiSelectorTerms",
    true,
    ami_sel,
    "expected at least one, got none, ['tags', 'id', 'name', 'alias', 'ssmParameter']",
    KP_CRD_AMI_ID_PATTERN,
    ami_id_ex,
    "'id' " EXCLUSIVE " amiSelectorTerms",
    NULL,
    NULL};

static bool any_member(const cJSON *term, const char *const *names)
{
    for (size_t i = 0; names[i]; i++)
        if (has_member(term, names[i])) return true;
    return false;
}

/* Selector tags: at most 20, keys and values not empty. */
static void selector_tags(kp_vctx *v, const cJSON *term)
{
    const cJSON *tags = kp_v_string_map(v, term, "tags", KP_CRD_SELECTOR_TAGS_MAX_PROPERTIES);
    const cJSON *e;
    kp_v_push(v, "tags");
    cJSON_ArrayForEach(e, tags)
    {
        if (!*e->string || (cJSON_IsString(e) && !*e->valuestring)) {
            kp_v_invalid_str(v, e->string, "empty tag keys or values aren't supported");
            break;
        }
    }
    kp_v_pop(v);
}

/* 'a', 'b', 'c' */
static const char *quoted_list(kp_vctx *v, const char *const *list)
{
    const char *out = "";
    for (size_t i = 0; list[i]; i++)
        out = kp_arena_printf(v->arena, "%s%s'%s'", out, i ? ", " : "", list[i]);
    return out;
}

static void alias(kp_vctx *v, const char *a)
{
    kp_v_push(v, "alias");
    const char *at = strchr(a, '@');
    size_t fam = at ? (size_t)(at - a) : strlen(a);
    bool shaped = at && fam > 0 && at[1] &&
                  strspn(a, "abcdefghijklmnopqrstuvwxyz"
                            "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == fam;
    size_t known = 0;
    while (alias_families[known] &&
           !(strlen(alias_families[known]) == fam && strncmp(a, alias_families[known], fam) == 0))
        known++;
    if (strlen(a) > KP_CRD_AMI_ALIAS_MAX_LENGTH) kp_v_too_long(v, KP_CRD_AMI_ALIAS_MAX_LENGTH);
    if (!shaped)
        kp_v_invalid_str(v, a,
                         "'alias' is improperly formatted, must match the format "
                         "'family@version'");
    if (!alias_families[known])
        kp_v_invalid_str(v, a, "family is not supported, must be one of the following: %s",
                         quoted_list(v, alias_families));
    else if (strncmp(alias_families[known], "windows", 7) == 0 &&
             (!at || strncmp(at + 1, "latest", 6) != 0 || (at[7] != '\0' && at[7] != '@')))
        kp_v_invalid_str(v, a, "windows families may only specify version 'latest'");
    kp_v_pop(v);
}

static void exclusive(kp_vctx *v, const cJSON *term, const char *field, const char *const *others,
                      const char *message)
{
    if (others && has_member(term, field) && any_member(term, others))
        kp_v_invalid(v, term, "%s", message);
}

static void selector_term(kp_vctx *v, const term_kind *k, const cJSON *term)
{
    if (!cJSON_IsObject(term)) {
        kp_v_type(v, term, "object");
        return;
    }
    if (!any_member(term, k->selectors)) kp_v_invalid(v, term, "%s", k->at_least);
    if (k == &ami_terms) {
        exclusive(v, term, "id", k->id_excludes, k->id_message);
        exclusive(v, term, "alias", ami_alias_ex, "'alias' " EXCLUSIVE " amiSelectorTerms");
    }
    selector_tags(v, term);
    const char *id = kp_v_string(v, term, "id");
    if (id && !id_like(id, k->id_pattern)) {
        kp_v_push(v, "id");
        kp_v_pattern(v, id, k->id_pattern);
        kp_v_pop(v);
    }
    kp_v_string(v, term, "name");
    kp_v_string(v, term, "owner");
    kp_v_string(v, term, "ssmParameter");
    const char *a = k == &ami_terms ? kp_v_string(v, term, "alias") : NULL;
    if (a) alias(v, a);
}

static void capacity_reservation_fields(kp_vctx *v, const cJSON *term)
{
    kp_v_enum(v, term, "instanceMatchCriteria", kp_crd_instance_match_criteria_names);
    const char *owner = kp_v_string(v, term, "ownerID");
    if (owner && (strlen(owner) != 12 || strspn(owner, "0123456789") != 12)) {
        kp_v_push(v, "ownerID");
        kp_v_pattern(v, owner, KP_CRD_OWNER_ID_PATTERN);
        kp_v_pop(v);
    }
}

/* Karpenter's subnet, security group and capacity reservation rules read
 * !self.all(x, <field set with another>): weaker than their messages, they
 * refuse a list only when every term (or no term at all: all() of an empty
 * list is true) combines the fields. The API server admits a list that
 * mixes such a term with others, and so do we. (The AMI rules use exists()
 * and refuse each term.) */
static void exclusive_all(kp_vctx *v, const cJSON *terms, const char *field,
                          const char *const *others, const char *message)
{
    if (!others) return;
    const cJSON *t;
    cJSON_ArrayForEach(t, terms)
    {
        if (!cJSON_IsObject(t) || !has_member(t, field) || !any_member(t, others)) return;
    }
    kp_v_invalid(v, terms, "%s", message);
}

static const cJSON *selector_terms(kp_vctx *v, const cJSON *spec, const term_kind *k)
{
    if (k->required && !kp_v_has(spec, k->list)) {
        kp_v_required(v, k->list);
        return NULL;
    }
    const cJSON *terms = kp_v_array(v, spec, k->list, KP_CRD_SELECTOR_TERMS_MAX_ITEMS);
    if (!terms) return NULL;
    kp_v_push(v, k->list);
    if (k->required && !terms->child) {
        if (k == &ami_terms)
            kp_v_invalid(v, terms, "should have at least 1 items");
        else
            kp_v_invalid(v, terms, "%s cannot be empty", k->list);
    }
    size_t i = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, terms)
    {
        kp_v_push_index(v, i++);
        selector_term(v, k, t);
        if (k == &cr_terms && cJSON_IsObject(t)) capacity_reservation_fields(v, t);
        kp_v_pop(v);
    }
    if (k != &ami_terms) {
        exclusive_all(v, terms, "id", k->id_excludes, k->id_message);
        exclusive_all(v, terms, "name", k->name_excludes, k->name_message);
    }
    if (k == &ami_terms && i > 1) {
        cJSON_ArrayForEach(t, terms)
        {
            if (!has_member(t, "alias")) continue;
            kp_v_invalid(v, terms,
                         "'alias' is mutually exclusive, cannot be set with a "
                         "combination of other amiSelectorTerms");
            break;
        }
    }
    kp_v_pop(v);
    return terms;
}

/* ---------------------------------------------------------------- AMI family, role */

static void ami_family(kp_vctx *v, const cJSON *spec, const cJSON *terms)
{
    const char *const *implied = kp_crd_ami_alias_implied_family_names;
    const char *const *article = kp_crd_ami_alias_article_names;
    const char *family = kp_v_enum(v, spec, "amiFamily", kp_crd_ami_family_names);
    bool any_alias = false;
    const cJSON *t;
    cJSON_ArrayForEach(t, terms)
    {
        const cJSON *a = kp_v_get(t, "alias");
        if (!cJSON_IsString(a)) continue;
        any_alias = true;
        size_t fam = strcspn(a->valuestring, "@");
        for (size_t i = 0; family && alias_families[i]; i++) {
            if (strlen(alias_families[i]) != fam || strncmp(a->valuestring, alias_families[i], fam))
                continue;
            if (strcmp(family, "Custom") != 0 && strcmp(family, implied[i]) != 0) {
                kp_v_push(v, "amiFamily");
                kp_v_invalid_str(v, family,
                                 "if set, amiFamily must be '%s' or 'Custom' when "
                                 "using %s %s alias",
                                 implied[i], article[i], implied[i]);
                kp_v_pop(v);
            }
        }
    }
    if (terms && !any_alias && !kp_v_has(spec, "amiFamily")) {
        kp_v_push(v, "amiFamily");
        kp_field_errors_add(v->errs, KP_FIELD_REQUIRED, kp_v_here(v), NULL,
                            "must specify amiFamily if amiSelectorTerms does not contain an alias");
        kp_v_pop(v);
    }
}

static void role(kp_vctx *v, const cJSON *spec)
{
    static const char *const fields[] = {"role", "instanceProfile"};
    for (size_t i = 0; i < 2; i++) {
        const char *s = kp_v_string(v, spec, fields[i]);
        if (!s || *s) continue;
        kp_v_push(v, fields[i]);
        kp_v_invalid_str(v, s, "%s cannot be empty", fields[i]);
        kp_v_pop(v);
    }
    if (kp_v_has(spec, "role") == kp_v_has(spec, "instanceProfile"))
        kp_v_invalid(v, spec, "must specify exactly one of ['role', 'instanceProfile']");
}

/* ---------------------------------------------------------------- tags */

static void tags(kp_vctx *v, const cJSON *spec)
{
    const char *const *exact = kp_crd_restricted_tag_names;
    const char *const *prefixes = kp_crd_restricted_tag_prefix_names;
    const cJSON *map = kp_v_string_map(v, spec, "tags", 0);
    const cJSON *e;
    kp_v_push(v, "tags");
    cJSON_ArrayForEach(e, map)
    {
        const char *k = e->string, *match = NULL;
        for (size_t i = 0; exact[i]; i++)
            if (strcmp(k, exact[i]) == 0) match = exact[i];
        for (size_t i = 0; prefixes[i]; i++)
            if (strncmp(k, prefixes[i], strlen(prefixes[i])) == 0)
                match = kp_arena_printf(v->arena, "%s/", prefixes[i]);
        if (!*k) kp_v_invalid_str(v, k, "empty tag keys aren't supported");
        if (match)
            kp_v_invalid_str(v, k, "tag contains a restricted tag matching %s; Karpenter sets it",
                             match);
        if (strlen(k) > 128 || (cJSON_IsString(e) && strlen(e->valuestring) > 256))
            kp_v_warn(v, "tag %s is longer than EC2 allows (keys 128, values 256 characters)",
                      kp_quote(v->arena, k));
        if (strncmp(k, "aws:", 4) == 0)
            kp_v_warn(v, "tag %s uses the aws: prefix, which EC2 reserves", kp_quote(v->arena, k));
    }
    kp_v_pop(v);
}

/* ---------------------------------------------------------------- block devices */

/* The CRD's volumeSize pattern: 1-59000Gi, 1-64000G, 1-9 or 10-17 ... 50-57
 * or 58 Ti (the pattern's odd ranges, kept), 1-64T. The pattern also admits a
 * bare "Ti" or "T" (an empty alternative); that is zero bytes, refused here. */
static bool volume_size(const char *s)
{
    size_t n = strspn(s, "0123456789");
    const char *unit = s + n;
    if (n == 0 || s[0] == '0' || n > 5) return false;
    long value = 0;
    for (size_t i = 0; i < n; i++)
        value = value * 10 + (s[i] - '0');
    if (strcmp(unit, "Gi") == 0) return value <= 59000;
    if (strcmp(unit, "G") == 0) return value <= 64000;
    if (strcmp(unit, "Ti") == 0)
        return value <= 9 || (value >= 10 && value <= 57 && value % 10 <= 7) || value == 58;
    if (strcmp(unit, "T") == 0) return value <= 64;
    return false;
}

static void ebs_warnings(kp_vctx *v, const char *type, bool has_iops, bool has_throughput,
                         int64_t throughput)
{
    if (!type) type = "gp3";
    if (has_iops && strcmp(type, "gp3") && strcmp(type, "io1") && strcmp(type, "io2"))
        kp_v_warn(v, "iops is only supported for gp3, io1 and io2 volumes, not %s", type);
    if (has_throughput && strcmp(type, "gp3") != 0)
        kp_v_warn(v, "throughput is only supported for gp3 volumes, not %s", type);
    else if (has_throughput && (throughput < 125 || throughput > 1000))
        kp_v_warn(v, "throughput %lld MiB/s is outside EC2's 125-1000 range for gp3",
                  (long long)throughput);
}

static void ebs(kp_vctx *v, const cJSON *bdm)
{
    const cJSON *e = kp_v_object(v, bdm, "ebs");
    if (!e) return;
    kp_v_push(v, "ebs");
    const char *size = kp_v_string(v, e, "volumeSize");
    if (size && !volume_size(size)) {
        kp_v_push(v, "volumeSize");
        kp_v_pattern(v, size, KP_CRD_VOLUME_SIZE_PATTERN);
        kp_v_pop(v);
    }
    const char *snapshot = kp_v_string(v, e, "snapshotID");
    const char *type = kp_v_enum(v, e, "volumeType", kp_crd_volume_type_names);
    int64_t throughput = 0;
    bool has_iops = kp_v_int(v, e, "iops", INT64_MIN, INT64_MAX, NULL);
    bool has_throughput = kp_v_int(v, e, "throughput", INT64_MIN, INT64_MAX, &throughput);
    kp_v_int(v, e, "volumeInitializationRate", KP_CRD_VOLUME_INITIALIZATION_RATE_MIN,
             KP_CRD_VOLUME_INITIALIZATION_RATE_MAX, NULL);
    kp_v_bool(v, e, "deleteOnTermination", NULL);
    kp_v_bool(v, e, "encrypted", NULL);
    kp_v_string(v, e, "kmsKeyID");
    if (!kp_v_has(e, "snapshotID") && !kp_v_has(e, "volumeSize"))
        kp_v_invalid(v, e, "snapshotID or volumeSize must be defined");
    if (kp_v_has(e, "volumeInitializationRate") && (!snapshot || !*snapshot))
        kp_v_invalid(v, e, "snapshotID must be set when volumeInitializationRate is set");
    ebs_warnings(v, type, has_iops, has_throughput, throughput);
    kp_v_pop(v);
}

static void block_devices(kp_vctx *v, const cJSON *spec)
{
    const cJSON *list =
        kp_v_array(v, spec, "blockDeviceMappings", KP_CRD_BLOCK_DEVICE_MAPPINGS_MAX_ITEMS);
    kp_v_push(v, "blockDeviceMappings");
    size_t i = 0, roots = 0;
    const cJSON *b;
    cJSON_ArrayForEach(b, list)
    {
        kp_v_push_index(v, i++);
        bool root = false;
        if (!cJSON_IsObject(b)) {
            kp_v_type(v, b, "object");
        } else {
            kp_v_string(v, b, "deviceName");
            if (kp_v_bool(v, b, "rootVolume", &root) && root) roots++;
            ebs(v, b);
        }
        kp_v_pop(v);
    }
    if (roots > 1) kp_v_invalid(v, list, "must have only one blockDeviceMappings with rootVolume");
    kp_v_pop(v);
}

/* ---------------------------------------------------------------- network */

#define NI_DUPLICATE                                                                               \
    "networkInterfaces must not have duplicate networkCardIndex and deviceIndex pairs, and can "   \
    "have at most one efa device per network card"

static void network_interfaces(kp_vctx *v, const cJSON *spec)
{
    static const char *const required[] = {"networkCardIndex", "deviceIndex", "interfaceType"};
    const cJSON *list =
        kp_v_array(v, spec, "networkInterfaces", KP_CRD_NETWORK_INTERFACES_MAX_ITEMS);
    if (!list) return;
    size_t n = (size_t)cJSON_GetArraySize(list), i = 0;
    int64_t *card = KP_ARENA_NEW(v->arena, int64_t, n + 1);
    int64_t *dev = KP_ARENA_NEW(v->arena, int64_t, n + 1);
    const char **type = KP_ARENA_NEW(v->arena, const char *, n + 1);
    bool primary = false;
    kp_v_push(v, "networkInterfaces");
    const cJSON *ni;
    cJSON_ArrayForEach(ni, list)
    {
        kp_v_push_index(v, i);
        card[i] = dev[i] = -1;
        if (!cJSON_IsObject(ni)) kp_v_type(v, ni, "object");
        for (size_t r = 0; r < 3 && cJSON_IsObject(ni); r++)
            if (!kp_v_has(ni, required[r])) kp_v_required(v, required[r]);
        kp_v_int(v, ni, "networkCardIndex", KP_CRD_NETWORK_CARD_INDEX_MIN, INT32_MAX, &card[i]);
        kp_v_int(v, ni, "deviceIndex", KP_CRD_NETWORK_CARD_INDEX_MIN, INT32_MAX, &dev[i]);
        type[i] = kp_v_enum(v, ni, "interfaceType", kp_crd_interface_type_names);
        primary =
            primary || (card[i] == 0 && dev[i] == 0 && type[i] && !strcmp(type[i], "interface"));
        for (size_t j = 0; j < i && card[i] >= 0; j++) {
            bool same_slot = card[j] == card[i] && dev[j] == dev[i] && dev[i] >= 0;
            bool two_efa = card[j] == card[i] && type[i] && type[j] &&
                           !strcmp(type[i], "efa-only") && !strcmp(type[j], "efa-only");
            if (same_slot || two_efa) {
                kp_v_invalid(v, ni, NI_DUPLICATE);
                break;
            }
        }
        kp_v_pop(v);
        i++;
    }
    if (n > 0 && !primary)
        kp_v_invalid(v, list,
                     "networkInterfaces must include a primary interface with "
                     "interfaceType='interface'");
    kp_v_pop(v);
}

static void placement_group(kp_vctx *v, const cJSON *spec)
{
    const cJSON *pg = kp_v_object(v, spec, "placementGroupSelector");
    if (!pg) return;
    kp_v_push(v, "placementGroupSelector");
    const char *name = kp_v_string(v, pg, "name");
    const char *id = kp_v_string(v, pg, "id");
    if (!kp_v_has(pg, "name") && !kp_v_has(pg, "id"))
        kp_v_invalid(v, pg, "expected at least one, got none, ['name', 'id']");
    if (kp_v_has(pg, "name") && kp_v_has(pg, "id"))
        kp_v_invalid(v, pg, "'name' and 'id' are mutually exclusive");
    kp_v_push(v, "name");
    if (name && strlen(name) < KP_CRD_PLACEMENT_GROUP_NAME_MIN_LENGTH)
        kp_v_too_short(v, name, KP_CRD_PLACEMENT_GROUP_NAME_MIN_LENGTH);
    kp_v_pop(v);
    kp_v_push(v, "id");
    if (id && !id_like(id, KP_CRD_PLACEMENT_GROUP_ID_PATTERN))
        kp_v_pattern(v, id, KP_CRD_PLACEMENT_GROUP_ID_PATTERN);
    kp_v_pop(v);
    kp_v_pop(v);
}

static void metadata_options(kp_vctx *v, const cJSON *spec)
{
    const cJSON *m = kp_v_object(v, spec, "metadataOptions");
    if (!m) return;
    kp_v_push(v, "metadataOptions");
    kp_v_enum(v, m, "httpEndpoint", kp_crd_http_endpoint_names);
    kp_v_enum(v, m, "httpProtocolIPv6", kp_crd_http_endpoint_names);
    kp_v_int(v, m, "httpPutResponseHopLimit", KP_CRD_HOP_LIMIT_MIN, KP_CRD_HOP_LIMIT_MAX, NULL);
    const char *t = kp_v_enum(v, m, "httpTokens", kp_crd_http_tokens_names);
    if (t && strcmp(t, "optional") == 0)
        kp_v_warn(v, "httpTokens: optional allows IMDSv1, which hands instance credentials to any "
                     "request that reaches the metadata service");
    kp_v_pop(v);
}

static void connection_tracking(kp_vctx *v, const cJSON *spec)
{
    const cJSON *ct = kp_v_object(v, spec, "connectionTracking");
    if (!ct) return;
    kp_v_push(v, "connectionTracking");
    bool any = kp_v_has(ct, "tcpEstablishedTimeout") || kp_v_has(ct, "udpStreamTimeout") ||
               kp_v_has(ct, "udpTimeout");
    if (!any)
        kp_v_invalid(v, ct,
                     "at least one of tcpEstablishedTimeout, udpStreamTimeout, or "
                     "udpTimeout must be set");
    kp_v_int(v, ct, "tcpEstablishedTimeout", KP_CRD_TCP_ESTABLISHED_TIMEOUT_MIN,
             KP_CRD_TCP_ESTABLISHED_TIMEOUT_MAX, NULL);
    kp_v_int(v, ct, "udpStreamTimeout", KP_CRD_UDP_STREAM_TIMEOUT_MIN,
             KP_CRD_UDP_STREAM_TIMEOUT_MAX, NULL);
    kp_v_int(v, ct, "udpTimeout", KP_CRD_UDP_TIMEOUT_MIN, KP_CRD_UDP_TIMEOUT_MAX, NULL);
    kp_v_pop(v);
}

static void scalars(kp_vctx *v, const cJSON *spec)
{
    kp_v_bool(v, spec, "associatePublicIPAddress", NULL);
    kp_v_bool(v, spec, "detailedMonitoring", NULL);
    kp_v_int(v, spec, "ipPrefixCount", KP_CRD_IP_PREFIX_COUNT_MIN, INT32_MAX, NULL);
    kp_v_string(v, spec, "userData");
    kp_v_string(v, spec, "context");
    kp_v_enum(v, spec, "instanceStorePolicy", kp_crd_instance_store_policy_names);
    const cJSON *cpu = kp_v_object(v, spec, "cpuOptions");
    if (cpu) {
        kp_v_push(v, "cpuOptions");
        kp_v_enum(v, cpu, "nestedVirtualization", kp_crd_nested_virtualization_names);
        kp_v_pop(v);
    }
}

void kp_validate_ec2nodeclass(kp_vctx *v, const cJSON *obj, const cJSON *old)
{
    (void)old; /* no transition rules: role and instanceProfile may be swapped */
    kp_v_name_as_label(v, obj, "karpenter.k8s.aws/ec2nodeclass");
    const cJSON *spec = kp_v_required_object(v, obj, "spec");
    if (!spec) return;
    kp_v_push(v, "spec");
    selector_terms(v, spec, &subnet_terms);
    selector_terms(v, spec, &sg_terms);
    selector_terms(v, spec, &cr_terms);
    ami_family(v, spec, selector_terms(v, spec, &ami_terms));
    role(v, spec);
    tags(v, spec);
    block_devices(v, spec);
    network_interfaces(v, spec);
    placement_group(v, spec);
    metadata_options(v, spec);
    connection_tracking(v, spec);
    scalars(v, spec);
    kp_v_kubelet(v, spec);
    kp_v_pop(v);
}

/* ---------------------------------------------------------------- kubelet */

static const char *const eviction_signals[] = {"memory.available",
                                               "nodefs.available",
                                               "nodefs.inodesFree",
                                               "imagefs.available",
                                               "imagefs.inodesFree",
                                               "pid.available",
                                               NULL};
static const char *const reservable[] = {"cpu", "memory", "ephemeral-storage", "pid", NULL};

/* Top-level fields of the kubelet's KubeletConfiguration (config/v1beta1).
 * Others are passed through by Karpenter but fail its kubelet validation. */
/* clang-format off */
static const char *const kubelet_fields[] = {
    "apiVersion", "kind", "enableServer", "staticPodPath", "podLogsDir", "syncFrequency",
    "fileCheckFrequency", "httpCheckFrequency", "staticPodURL", "staticPodURLHeader", "address",
    "port", "readOnlyPort", "tlsCertFile", "tlsPrivateKeyFile", "tlsCipherSuites", "tlsMinVersion",
    "rotateCertificates", "serverTLSBootstrap", "authentication", "authorization",
    "registryPullQPS", "registryBurst", "imagePullCredentialsVerificationPolicy",
    "preloadedImagesVerificationAllowlist", "eventRecordQPS", "eventBurst",
    "enableDebuggingHandlers", "enableContentionProfiling", "healthzPort", "healthzBindAddress",
    "oomScoreAdj", "clusterDomain", "clusterDNS", "streamingConnectionIdleTimeout",
    "nodeStatusUpdateFrequency", "nodeStatusReportFrequency", "nodeLeaseDurationSeconds",
    "imageMinimumGCAge", "imageMaximumGCAge", "imageGCHighThresholdPercent",
    "imageGCLowThresholdPercent", "volumeStatsAggPeriod", "kubeletCgroups", "systemCgroups",
    "cgroupRoot", "cgroupsPerQOS", "cgroupDriver", "cpuManagerPolicy", "singleProcessOOMKill",
    "cpuManagerPolicyOptions", "cpuManagerReconcilePeriod", "memoryManagerPolicy",
    "topologyManagerPolicy", "topologyManagerScope", "topologyManagerPolicyOptions", "qosReserved",
    "runtimeRequestTimeout", "hairpinMode", "maxPods", "podCIDR", "podPidsLimit", "resolvConf",
    "runOnce", "cpuCFSQuota", "cpuCFSQuotaPeriod", "nodeStatusMaxImages", "maxOpenFiles",
    "contentType", "kubeAPIQPS", "kubeAPIBurst", "serializeImagePulls", "maxParallelImagePulls",
    "evictionHard", "evictionSoft", "evictionSoftGracePeriod", "evictionPressureTransitionPeriod",
    "evictionMaxPodGracePeriod", "evictionMinimumReclaim", "mergeDefaultEvictionSettings",
    "podsPerCore", "enableControllerAttachDetach", "protectKernelDefaults",
    "makeIPTablesUtilChains", "iptablesMasqueradeBit", "iptablesDropBit", "featureGates",
    "failSwapOn", "memorySwap", "containerLogMaxSize", "containerLogMaxFiles",
    "containerLogMaxWorkers", "containerLogMonitorInterval",
    "configMapAndSecretChangeDetectionStrategy", "systemReserved", "kubeReserved",
    "reservedSystemCPUs", "showHiddenMetricsForVersion", "systemReservedCgroup",
    "kubeReservedCgroup", "enforceNodeAllocatable", "allowedUnsafeSysctls", "volumePluginDir",
    "providerID", "kernelMemcgNotification", "logging", "enableSystemLogHandler",
    "enableSystemLogQuery", "shutdownGracePeriod", "shutdownGracePeriodCriticalPods",
    "shutdownGracePeriodByPodPriority", "crashLoopBackOff", "reservedMemory",
    "enableProfilingHandler", "enableDebugFlagsHandler", "seccompDefault",
    "memoryThrottlingFactor", "registerWithTaints", "registerNode", "tracing",
    "localStorageCapacityIsolation", "containerRuntimeEndpoint", "imageServiceEndpoint",
    "failCgroupV1", "userNamespaces", NULL};
/* clang-format on */

static bool listed(const char *const *list, const char *s)
{
    for (size_t i = 0; list[i]; i++)
        if (strcmp(list[i], s) == 0) return true;
    return false;
}

/* A percentage in [0, 100] ("5%"), or a non-negative quantity ("500Mi"). */
static void eviction_threshold(kp_vctx *v, const char *value)
{
    size_t len = strlen(value);
    if (len && value[len - 1] == '%') {
        char *end = NULL;
        double pct = len > 1 && value[0] != ' ' ? strtod(value, &end) : -1;
        if (end != value + len - 1 || !(pct >= 0 && pct <= 100))
            kp_v_invalid_str(v, value, "must be a percentage or a resource quantity");
        return;
    }
    kp_quantity q;
    if (kp_quantity_parse(value, &q) < 0)
        kp_v_invalid_str(v, value, "must be a percentage or a resource quantity");
    else if (q.milli < 0)
        kp_v_invalid_str(v, value, "can't be a negative resource quantity");
}

static void grace_period(kp_vctx *v, const char *value)
{
    kp_duration d;
    if (kp_duration_parse(value, &d) < 0)
        kp_v_invalid_str(v, value, "must be a duration");
    else if (d.ns < 0)
        kp_v_invalid_str(v, value, "can't be a negative duration");
}

/* An eviction or reservation map: keys from `keys`, values by `check`. */
static const cJSON *kubelet_map(kp_vctx *v, const cJSON *k, const char *field,
                                const char *const *keys, void (*check)(kp_vctx *, const char *))
{
    const cJSON *map = kp_v_string_map(v, k, field, 0);
    const cJSON *e;
    kp_v_push(v, field);
    cJSON_ArrayForEach(e, map)
    {
        kp_v_push_key(v, e->string);
        if (!listed(keys, e->string)) kp_v_not_supported(v, e->string, keys);
        if (cJSON_IsString(e) && check) check(v, e->valuestring);
        kp_v_pop(v);
    }
    kp_v_pop(v);
    return map;
}

static void not_negative_reservation(kp_vctx *v, const char *value)
{
    /* May be a CEL expression ("vcpus * 10m") resolved per instance type. */
    if (value[0] == '-') kp_v_invalid_str(v, value, "can't be a negative resource quantity");
}

/* evictionSoft and evictionSoftGracePeriod name the same signals. */
static void soft_pairs(kp_vctx *v, const cJSON *soft, const cJSON *grace)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, soft)
    {
        if (cJSON_GetObjectItemCaseSensitive(grace, e->string)) continue;
        kp_v_push(v, "evictionSoft");
        kp_v_push_key(v, e->string);
        kp_v_forbidden(v, "has no matching evictionSoftGracePeriod");
        kp_v_pop(v);
        kp_v_pop(v);
    }
    cJSON_ArrayForEach(e, grace)
    {
        if (cJSON_GetObjectItemCaseSensitive(soft, e->string)) continue;
        kp_v_push(v, "evictionSoftGracePeriod");
        kp_v_push_key(v, e->string);
        kp_v_forbidden(v, "has no matching evictionSoft");
        kp_v_pop(v);
        kp_v_pop(v);
    }
}

static void kubelet_scalars(kp_vctx *v, const cJSON *k)
{
    const cJSON *max_pods = kp_v_get(k, "maxPods");
    if (max_pods && !cJSON_IsString(max_pods)) /* a string is a CEL expression */
        kp_v_int(v, k, "maxPods", 0, INT32_MAX, NULL);
    kp_v_int(v, k, "podsPerCore", 0, INT32_MAX, NULL);
    kp_v_int(v, k, "evictionMaxPodGracePeriod", 0, INT32_MAX, NULL);
    kp_v_bool(v, k, "cpuCFSQuota", NULL);
    const cJSON *dns = kp_v_array(v, k, "clusterDNS", 0);
    const cJSON *e;
    size_t i = 0;
    kp_v_push(v, "clusterDNS");
    cJSON_ArrayForEach(e, dns)
    {
        kp_v_push_index(v, i++);
        if (!cJSON_IsString(e)) kp_v_type(v, e, "string");
        kp_v_pop(v);
    }
    kp_v_pop(v);
    int64_t high = 0, low = 0;
    bool has_high = kp_v_int(v, k, "imageGCHighThresholdPercent", 0, 100, &high);
    bool has_low = kp_v_int(v, k, "imageGCLowThresholdPercent", 0, 100, &low);
    if (has_high && has_low && high <= low) {
        kp_v_push(v, "imageGCHighThresholdPercent");
        kp_v_invalid(v, kp_v_get(k, "imageGCHighThresholdPercent"),
                     "must be greater than imageGCLowThresholdPercent (%lld)", (long long)low);
        kp_v_pop(v);
    }
}

void kp_v_kubelet(kp_vctx *v, const cJSON *spec)
{
    const cJSON *k = kp_v_object(v, spec, "kubelet");
    if (!k) return;
    kp_v_push(v, "kubelet");
    if (kp_v_has(k, "registerWithTaints")) {
        kp_v_push(v, "registerWithTaints");
        kp_v_forbidden(v, "can't be set: Karpenter sets it from the NodeClaim's taints so the "
                          "node registers unschedulable until it is ready");
        kp_v_pop(v);
    }
    kubelet_scalars(v, k);
    kubelet_map(v, k, "evictionHard", eviction_signals, eviction_threshold);
    kubelet_map(v, k, "evictionMinimumReclaim", eviction_signals, eviction_threshold);
    const cJSON *soft = kubelet_map(v, k, "evictionSoft", eviction_signals, eviction_threshold);
    const cJSON *grace =
        kubelet_map(v, k, "evictionSoftGracePeriod", eviction_signals, grace_period);
    soft_pairs(v, soft, grace);
    kubelet_map(v, k, "kubeReserved", reservable, not_negative_reservation);
    kubelet_map(v, k, "systemReserved", reservable, not_negative_reservation);
    const cJSON *e;
    cJSON_ArrayForEach(e, k)
    {
        if (!listed(kubelet_fields, e->string))
            kp_v_warn(v,
                      "%s is not a kubelet configuration field; Karpenter will report the "
                      "EC2NodeClass as not valid",
                      kp_quote(v->arena, e->string));
    }
    kp_v_pop(v);
}
