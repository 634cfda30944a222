/* NodeOverlay decoding, price arithmetic and order (see nodeoverlay.h). */
#include "api/nodeoverlay.h"

#include "api/admission.h"
#include "api/crd_tables.h"
#include "api/decode_internal.h"
#include "api/wellknown.h"
#include "base/error.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- prices */

/* \d*\.?\d+ over [s, end): digits, at most one '.', ending in a digit. */
static bool decimal(const char *s, const char *end)
{
    bool dot = false;
    if (s >= end || end[-1] < '0' || end[-1] > '9') return false;
    for (const char *p = s; p < end; p++) {
        if (*p == '.' && !dot) dot = true;
        else if (*p < '0' || *p > '9') return false;
    }
    return true;
}

/* ^\d+(\.\d+)?$ */
static bool price_form(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && s[0] >= '0' && s[0] <= '9' && decimal(s, s + n);
}

static bool digits_only(const char *s, const char *end)
{
    if (s >= end) return false;
    for (const char *p = s; p < end; p++)
        if (*p < '0' || *p > '9') return false;
    return true;
}

/* -\d{1,2}(\.\d+)?% : a decrease below 100%. */
static bool small_decrease(const char *digits, const char *end)
{
    size_t whole = strspn(digits, "0123456789");
    const char *rest = digits + whole;
    if (whole < 1 || whole > 2 || rest > end) return false;
    return rest == end || (*rest == '.' && digits_only(rest + 1, end));
}

/* The CRD's pattern for priceAdjustment, spelled out:
 * ^(([+-]\d*\.?\d+)|(\+\d*\.?\d+%)|(-\d{1,2}(\.\d+)?%)|(-100%))$ */
static bool adjustment_form(const char *s, bool *percent)
{
    size_t n = strlen(s);
    if (n < 2 || (s[0] != '+' && s[0] != '-')) return false;
    *percent = s[n - 1] == '%';
    if (!*percent) return decimal(s + 1, s + n);
    if (s[0] == '+') return decimal(s + 1, s + n - 1);
    return strcmp(s, "-100%") == 0 || small_decrease(s + 1, s + n - 1);
}

int kp_price_change_parse(const char *text, bool adjustment, kp_price_change *out)
{
    bool percent = false;
    if (!adjustment && !price_form(text))
        return kp_error_set(KP_EINVALID, "price \"%s\": want a non-negative decimal number such as \"1.25\"",
                            text);
    if (adjustment && !adjustment_form(text, &percent))
        return kp_error_set(KP_EINVALID,
                            "priceAdjustment \"%s\": want a signed amount (\"+0.5\", \"-0.25\") or a "
                            "percentage (\"+10%%\", \"-15%%\", at most \"-100%%\")",
                            text);
    /* The forms above are plain decimals: strtod reads them whole. */
    kp_price_change c = {KP_PRICE_SET, strtod(text, NULL)};
    if (adjustment) c.kind = percent ? KP_PRICE_PERCENT : KP_PRICE_ADD;
    *out = c;
    return 0;
}

bool kp_nodeoverlay_price_change(const kp_nodeoverlay *o, kp_price_change *out)
{
    if (o->has_price) return kp_price_change_parse(o->price, false, out) == 0;
    if (o->has_price_adjustment) return kp_price_change_parse(o->price_adjustment, true, out) == 0;
    return false;
}

double kp_price_change_apply(const kp_price_change *c, double price)
{
    double p = c->kind == KP_PRICE_SET   ? c->value
               : c->kind == KP_PRICE_ADD ? price + c->value
                                         : price * (1 + c->value / 100);
    return p > 0 ? p : 0;
}

/* ---------------------------------------------------------------- order */

int kp_nodeoverlay_cmp(const kp_nodeoverlay *a, const kp_nodeoverlay *b)
{
    int32_t wa = a->has_weight ? a->weight : 0, wb = b->has_weight ? b->weight : 0;
    if (wa != wb) return wa > wb ? -1 : 1;
    return -strcmp(a->meta.name, b->meta.name);
}

static int cmp_ptr(const void *a, const void *b)
{
    return kp_nodeoverlay_cmp(*(const kp_nodeoverlay *const *)a, *(const kp_nodeoverlay *const *)b);
}

void kp_nodeoverlay_sort(const kp_nodeoverlay **items, size_t count)
{
    if (count > 1) qsort(items, count, sizeof(*items), cmp_ptr);
}

bool kp_nodeoverlay_resource_restricted(const char *name)
{
    for (size_t i = 0; kp_crd_overlay_restricted_capacity_names[i]; i++)
        if (strcmp(name, kp_crd_overlay_restricted_capacity_names[i]) == 0) return true;
    return false;
}

/* -------------------------------------------------------------- decoding */

static int decode_price(kp_decoder *d, const cJSON *json, const char *name, bool adjustment, const char **out,
                        bool *present)
{
    int err = kp_dec_string_p(d, json, name, out, present);
    kp_price_change c;
    if (err == 0 && *present && kp_price_change_parse(*out, adjustment, &c) < 0)
        return kp_dec_fail_at(d, name, "%s", kp_error_last());
    return err;
}

static int decode_spec(kp_decoder *d, const cJSON *json, void *out)
{
    kp_nodeoverlay *o = out;
    int err;
    if ((err = kp_dec_node_requirements(d, json, "requirements", true, &o->requirements, &o->n_requirements)) < 0 ||
        (err = decode_price(d, json, "price", false, &o->price, &o->has_price)) < 0 ||
        (err = decode_price(d, json, "priceAdjustment", true, &o->price_adjustment, &o->has_price_adjustment)) <
            0 ||
        (err = kp_dec_resources(d, json, "capacity", &o->capacity)) < 0 ||
        (err = kp_dec_int32(d, json, "weight", &o->weight, &o->has_weight)) < 0)
        return err;
    return 0;
}

static int decode_status(kp_decoder *d, const cJSON *json, void *out)
{
    kp_nodeoverlay *o = out;
    return kp_dec_conditions(d, json, "conditions", &o->conditions);
}

int kp_decode_nodeoverlay(kp_arena *arena, const cJSON *json, kp_nodeoverlay *out)
{
    kp_decoder d;
    kp_nodeoverlay o = {0};
    kp_dec_init(&d, arena);
    int err = kp_dec_expect_object(&d, json);
    if (err == 0) err = kp_dec_meta(&d, json, &o.meta);
    if (err == 0) err = kp_dec_object(&d, json, "spec", decode_spec, &o, NULL);
    if (err == 0) err = kp_dec_object(&d, json, "status", decode_status, &o, NULL);
    if (err == 0) *out = o;
    return err;
}

int kp_nodeoverlay_from_json(kp_arena *arena, const cJSON *json, kp_nodeoverlay *out)
{
    kp_nodeoverlay o;
    int err = kp_decode_nodeoverlay(arena, json, &o);
    if (err < 0) return err;
    kp_admission_result res;
    kp_admission_result_init(&res, arena);
    err = kp_admission_validate(KP_ADMIT_NODEOVERLAY, KP_ADMIT_CREATE, json, NULL, &res);
    if (err < 0) o.invalid = kp_arena_strdup(arena, kp_error_last());
    else if (res.errors.count) o.invalid = kp_field_errors_string(arena, &res.errors);
    kp_admission_result_clear(&res);
    *out = o;
    return 0;
}
