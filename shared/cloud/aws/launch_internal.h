/* Shared by launch_select.c and launch_reserved.c: the selection state. Not an interface. */
#ifndef KP_CLOUD_AWS_LAUNCH_INTERNAL_H
#define KP_CLOUD_AWS_LAUNCH_INTERNAL_H

#include "api/requirements.h"
#include "cloud/aws/launch.h"

#define SPOT      "spot"
#define ON_DEMAND "on-demand"
#define RESERVED  "reserved"

/* A type still in the running, with the offerings it may use. */
typedef struct cand {
    const kp_instance_type *type;
    bool *ok; /* per offering */
    double price;
    size_t index;
} cand;

typedef struct sel {
    kp_symtab *symtab;
    kp_arena *tmp;
    kp_requirements claim;
    bool min_values;
    kp_aws_ice_cache *ice;
    const char *forced;
    const kp_aws_launch_reservations *crs; /* NULL: no reservation is usable */
    kp_sym k_cr_id, k_cr_type, k_cr_interruptible;
} sel;

/* Whether the claim's requirement on `key` admits `value` (none: yes). */
bool kp_aws_sel_allows(sel *s, kp_sym key, const char *value);
/* Whether `o` is of capacity type `ct`. */
bool kp_aws_offering_is(const kp_offering *o, const char *ct);
/* Re-price `c` from its usable offerings; false when none is left. */
bool kp_aws_cand_reprice(cand *c);

/* A reserved offering the launch may use (see launch.h). */
bool kp_aws_reservation_usable(sel *s, const kp_offering *o);
/* Whether any candidate has a usable offering of capacity type `ct`. */
bool kp_aws_any_usable(const cand *c, size_t n, const char *ct);
/* Karpenter's reserved filters; the kind chosen goes to `out`. Returns the
 * candidates left (their usable offerings: reserved ones of that kind). */
size_t kp_aws_filter_reserved(sel *s, cand *c, size_t n, kp_aws_launch_choice *out);

#endif
