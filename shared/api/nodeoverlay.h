/*
 * Karpenter's NodeOverlay (karpenter.sh/v1alpha1, alpha, gate NodeOverlay):
 * decoding, its price arithmetic and the order overlays are applied in. What
 * an overlay does to instance types is cloud/overlay.h; its admission rules
 * are api/admission.h (KP_ADMIT_NODEOVERLAY).
 *
 *   price            "1.25": every offering selected costs that per hour
 *   priceAdjustment  "+0.5" / "-0.25": added to the offering's price (not
 *                    below 0); "+10%" / "-15%": that share of it ("-100%" at
 *                    most)
 *   capacity         extended resources the selected types get (never cpu,
 *                    memory, ephemeral-storage or pods)
 *   weight           1..10000, absent 0: heavier overlays win; among equal
 *                    weights the later name comes first
 */
#ifndef KP_API_NODEOVERLAY_H
#define KP_API_NODEOVERLAY_H

#include "api/objects.h"
#include "base/arena.h"

#include <cjson/cJSON.h>

/* Karpenter's annotations on NodeClaims launched from overlaid types. */
#define KP_ANNOTATION_PRICE_OVERLAY_APPLIED "karpenter.sh/price-overlay-applied"
#define KP_ANNOTATION_CAPACITY_OVERLAY_APPLIED "karpenter.sh/capacity-overlay-applied"

#define KP_NODEOVERLAY_API_VERSION "karpenter.sh/v1alpha1"

/* Decode the body (decode.h's rules). price and priceAdjustment must have
 * the CRD's form (KP_EINVALID naming the field otherwise). */
int kp_decode_nodeoverlay(kp_arena *arena, const cJSON *json, kp_nodeoverlay *out);

/* Decode, then run the admission rules (the CRD's and Karpenter's runtime
 * validation): an overlay that decodes but breaks a rule comes back with
 * out->invalid saying why (it is then never applied). KP_EINVALID when it
 * does not decode at all. */
int kp_nodeoverlay_from_json(kp_arena *arena, const cJSON *json, kp_nodeoverlay *out);

enum kp_price_change_kind {
    KP_PRICE_SET = 0, /* price */
    KP_PRICE_ADD,     /* priceAdjustment "+0.5", "-0.25" */
    KP_PRICE_PERCENT, /* priceAdjustment "+10%", "-15%" */
};

typedef struct kp_price_change {
    enum kp_price_change_kind kind;
    double value; /* the price, the amount added, or the percentage (signed) */
} kp_price_change;

/* Parse `text` as a price (`adjustment` false: ^\d+(\.\d+)?$) or a
 * priceAdjustment (true: a signed amount, "+N%", "-N%" below 100, or
 * "-100%"). KP_EINVALID with a message saying what is expected. */
int kp_price_change_parse(const char *text, bool adjustment, kp_price_change *out);

/* The overlay's change, if it has one (false: neither field set). */
bool kp_nodeoverlay_price_change(const kp_nodeoverlay *o, kp_price_change *out);

/* The price after the change; never below 0. */
double kp_price_change_apply(const kp_price_change *change, double price);

/* Karpenter's order (OrderByWeight): heavier first, then the later name. */
int kp_nodeoverlay_cmp(const kp_nodeoverlay *a, const kp_nodeoverlay *b);
void kp_nodeoverlay_sort(const kp_nodeoverlay **items, size_t count);

/* Resources an overlay may not set (Karpenter's WellKnownResources). */
bool kp_nodeoverlay_resource_restricted(const char *name);

#endif
