/*
 * EC2 capacity reservations for the AWS provider, as Karpenter's
 * capacityreservation provider: the reservations an EC2NodeClass's
 * capacityReservationSelectorTerms select, and how many instances each can
 * still take.
 *
 * Listing: one DescribeCapacityReservations per query (an id term is its own
 * query by id; a term with tags or instanceMatchCriteria, with its ownerID, is
 * a filter query), always state=active, answers cached per query for
 * KP_AWS_CR_TTL_NS. Reservations are merged by id, those whose end has passed
 * dropped, those with a match criteria or type Karpenter does not know left
 * out. An id EC2 does not know (InvalidCapacityReservationId.NotFound) is an
 * empty answer, as in Karpenter.
 *
 * Availability: every answer resets the remaining count of each reservation
 * it lists (kept KP_AWS_CR_AVAILABILITY_TTL_NS); a launch into a reservation
 * takes one, a termination gives one back, and a launch EC2 refused for
 * capacity (or an interruption warning) sets it to zero until the next
 * answer. A sequence number moves whenever a count changes, so catalogs
 * (whose reserved offerings carry the count a solve plans against) rebuild.
 *
 * The status form (kp_aws_crs_status_json) is what EC2NodeClass
 * status.capacityReservations holds, sorted by id; a capacity block within
 * KP_AWS_CR_EXPIRING_NS of its end is "expiring" (Karpenter stops launching
 * into it and its nodes are replaced before EC2 reclaims them).
 *
 * Owns its caches; borrows the clock and, per call, the EC2 client.
 * Thread-safe.
 */
#ifndef KP_CLOUD_AWS_CAPACITYRESERVATION_H
#define KP_CLOUD_AWS_CAPACITYRESERVATION_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/objects.h"
#include "base/clock.h"
#include "cloud/aws/aws_http.h"

#define KP_AWS_CR_TTL_NS              (INT64_C(60) * KP_NS_PER_SEC)
#define KP_AWS_CR_AVAILABILITY_TTL_NS (INT64_C(24) * 3600 * KP_NS_PER_SEC)
#define KP_AWS_CR_EXPIRING_NS         (INT64_C(40) * 60 * KP_NS_PER_SEC)

/* Label keys of reserved capacity (karpenter.k8s.aws). */
#define KP_AWS_LABEL_CR_ID            "karpenter.k8s.aws/capacity-reservation-id"
#define KP_AWS_LABEL_CR_TYPE          "karpenter.k8s.aws/capacity-reservation-type"
#define KP_AWS_LABEL_CR_INTERRUPTIBLE "karpenter.k8s.aws/capacity-reservation-interruptible"

typedef struct kp_aws_reservations kp_aws_reservations;

kp_aws_reservations *kp_aws_reservations_new(const kp_clock *clock);
kp_aws_reservations *kp_aws_reservations_free(kp_aws_reservations *r);

/*
 * The reservations `terms` select, in status form (a JSON array the caller
 * deletes; see above). AWS errors are returned (KP_ERETRY for throttling and
 * server errors, KP_EFORBIDDEN for a missing permission ...) with the EC2
 * error readable on the client.
 */
int kp_aws_crs_list(kp_aws_reservations *r, kp_aws_client *ec2, const kp_ec2_selector_term *terms,
                    size_t n_terms, cJSON **status);

/* Instances reservation `id` can still take (0 when unknown). */
int32_t kp_aws_crs_available(kp_aws_reservations *r, const char *id);
void kp_aws_crs_mark_launched(kp_aws_reservations *r, const char *id);
void kp_aws_crs_mark_terminated(kp_aws_reservations *r, const char *id);
void kp_aws_crs_mark_unavailable(kp_aws_reservations *r, const char *id);
/* Set a count as an EC2 answer would (tests, and the interruption path). */
void kp_aws_crs_set_available(kp_aws_reservations *r, const char *id, int32_t count);
uint64_t kp_aws_crs_seqnum(kp_aws_reservations *r);

/* The reservation `id` in a class's status, NULL when it has none. */
const kp_nc_capacity_reservation *kp_aws_nc_reservation(const kp_ec2nodeclass *nc,
                                                        const char *id);
/* "default" or "capacity-block" for a status entry (an empty type is "default"). */
const char *kp_aws_cr_type(const kp_nc_capacity_reservation *cr);
/* Whether a status entry is expiring (a capacity block near its end). */
bool kp_aws_cr_expiring(const kp_nc_capacity_reservation *cr);

#endif
