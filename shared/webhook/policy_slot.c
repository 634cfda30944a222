/*
 * The current policy behind a lock held only long enough to take a
 * reference: requests keep the policy they started with while a reload
 * installs the next one, and the old one is freed by its last user.
 */
#include "webhook/policy_internal.h"

#include "base/xalloc.h"

#include <pthread.h>
#include <stdlib.h>

struct kp_policy_slot {
    pthread_mutex_t lock;
    kp_policy *current;
};

kp_policy_slot *kp_policy_slot_new(kp_policy *initial)
{
    kp_policy_slot *slot = kp_xcalloc(1, sizeof(*slot));
    pthread_mutex_init(&slot->lock, NULL);
    slot->current = initial;
    return slot;
}

kp_policy_slot *kp_policy_slot_free(kp_policy_slot *slot)
{
    if (!slot) return NULL;
    kp_policy_unref(slot->current);
    pthread_mutex_destroy(&slot->lock);
    free(slot);
    return NULL;
}

kp_policy *kp_policy_slot_get(kp_policy_slot *slot)
{
    pthread_mutex_lock(&slot->lock);
    kp_policy *p = kp_policy_ref(slot->current);
    pthread_mutex_unlock(&slot->lock);
    return p;
}

void kp_policy_slot_set(kp_policy_slot *slot, kp_policy *next)
{
    pthread_mutex_lock(&slot->lock);
    kp_policy *old = slot->current;
    slot->current = next;
    pthread_mutex_unlock(&slot->lock);
    kp_policy_unref(old);
}
