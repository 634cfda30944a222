/*
 * The unavailable-offerings cache ("ICE cache"): offerings EC2 recently
 * refused for lack of capacity, so the catalog marks them unavailable and the
 * launcher stops asking for them for a while.
 *
 * Entries are (capacity type, instance type, zone) and whole capacity types
 * (spot after the service-linked role could not be created); each lives
 * KP_AWS_ICE_TTL_NS from its last mark, read on the cache's clock. Every mark
 * and every expiry that is noticed bumps a sequence number, so callers that
 * derive data from availability (the catalog cache) know when to rebuild.
 *
 * Owns its entries and its strings (copied). Thread-safe: a mutex inside.
 */
#ifndef KP_CLOUD_AWS_ICE_CACHE_H
#define KP_CLOUD_AWS_ICE_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/clock.h"

/* How long an offering stays unavailable after EC2 said no. */
#define KP_AWS_ICE_TTL_NS (INT64_C(180) * KP_NS_PER_SEC)

typedef struct kp_aws_ice_cache kp_aws_ice_cache;

/* `clock` is borrowed and must outlive the cache (NULL: the system clock). */
kp_aws_ice_cache *kp_aws_ice_cache_new(const kp_clock *clock);
kp_aws_ice_cache *kp_aws_ice_cache_free(kp_aws_ice_cache *c);

/* Mark one offering unavailable for KP_AWS_ICE_TTL_NS (again, if already
 * marked: the TTL restarts). `reason` is kept for debugging ("InsufficientInstanceCapacity",
 * "spot_interrupted"); NULL is fine. NULL or empty names are ignored. */
void kp_aws_ice_mark(kp_aws_ice_cache *c, const char *capacity_type, const char *instance_type,
                     const char *zone, const char *reason);

/* Mark every offering of a capacity type unavailable for KP_AWS_ICE_TTL_NS. */
void kp_aws_ice_mark_capacity_type(kp_aws_ice_cache *c, const char *capacity_type,
                                   const char *reason);

/* Whether the offering is currently marked (by itself or by its capacity type). */
bool kp_aws_ice_unavailable(kp_aws_ice_cache *c, const char *capacity_type,
                            const char *instance_type, const char *zone);

/* Changes whenever the set of unavailable offerings changed: a mark, or an
 * entry found expired (expired entries are swept on every call that reads the
 * clock, so the number also moves when time alone made something available). */
uint64_t kp_aws_ice_seqnum(const kp_aws_ice_cache *c);

/* Forget every entry (tests; the operator after fixing a quota). */
void kp_aws_ice_flush(kp_aws_ice_cache *c);

/* Entries currently held, expired ones swept first. */
uint32_t kp_aws_ice_count(kp_aws_ice_cache *c);

#endif
