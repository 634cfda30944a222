/*
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's rules,
 * so that of several controller replicas only one acts at a time:
 *
 *   - The lease records holderIdentity, leaseDurationSeconds, acquireTime,
 *     renewTime and leaseTransitions; every write carries the
 *     resourceVersion read, so two candidates cannot both win a round.
 *   - A candidate tries every retry period (with jitter). It takes the lease
 *     when there is none, when it is released (empty holder), or when the
 *     record has not changed for lease_duration as measured on the
 *     candidate's own clock since it last saw it change (so clock skew
 *     between replicas does not matter).
 *   - The leader renews every retry period; if it has not managed to for
 *     renew_deadline it stops leading (renew_deadline < lease_duration, so
 *     it stops before anyone else may start). It then becomes a candidate
 *     again.
 *   - On stop, a leader with release_on_stop empties the holder so that a
 *     successor takes over at once instead of after lease_duration.
 *
 * Callbacks run on the elector's thread: started when this replica begins
 * leading, stopped when it stops (lost, or kp_leader_elector_stop),
 * new_leader when the observed holder changes (may be NULL).
 */
#ifndef KP_KUBE_LEADER_H
#define KP_KUBE_LEADER_H

#include "base/clock.h"
#include "kube/rest.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct kp_leader_elector kp_leader_elector;

typedef struct kp_leader_callbacks {
    void (*started)(void *ctx);
    void (*stopped)(void *ctx);
    void (*new_leader)(void *ctx, const char *identity);
    void *ctx;
} kp_leader_callbacks;

typedef struct kp_leader_opts {
    const char *namespace; /* of the Lease */
    const char *name;      /* of the Lease */
    const char *identity;  /* this replica (e.g. the Pod name); unique */
    int64_t lease_duration_ms;
    int64_t renew_deadline_ms;
    int64_t retry_period_ms;
    bool release_on_stop;
    kp_leader_callbacks callbacks;
    const kp_clock *clock; /* NULL: the system clock */
} kp_leader_opts;

/* controller-runtime's defaults: 15 s, 10 s, 2 s. */
#define KP_LEADER_OPTS_INIT                                                                        \
    {                                                                                              \
        NULL, NULL, NULL, 15000, 10000, 2000, true, {NULL, NULL, NULL, NULL}, NULL                 \
    }

/* KP_EINVALID for missing names or durations that break
 * lease_duration > renew_deadline > retry_period. Strings are copied; the
 * client is borrowed and must outlive the elector. */
int kp_leader_elector_new(kp_leader_elector **out, kp_kube_client *client,
                          const kp_leader_opts *opts);
int kp_leader_elector_start(kp_leader_elector *le);
/* Stop campaigning (and release the lease if leading and release_on_stop);
 * returns once the thread has ended and `stopped` has been called. */
void kp_leader_elector_stop(kp_leader_elector *le);
/* Stops first. Accepts NULL, returns NULL. */
kp_leader_elector *kp_leader_elector_free(kp_leader_elector *le);

bool kp_leader_elector_is_leader(kp_leader_elector *le);
/* The holder last observed (malloc'd), or NULL. */
char *kp_leader_elector_holder(kp_leader_elector *le);

/* A Lease time (MicroTime: "2006-01-02T15:04:05.000000Z") for `ns` since
 * the epoch, into buf (>= 28 bytes). */
void kp_leader_format_time(int64_t ns, char *buf, unsigned long size);

#endif
