#include "kube/ratelimit.h"
#include "base/clock.h"

void kp_ratelimit_init(kp_ratelimit *rl, double qps, int burst, int64_t now_ns)
{
    pthread_mutex_init(&rl->lock, NULL);
    rl->qps = qps;
    rl->burst = burst < 1 ? 1.0 : (double)burst;
    rl->tokens = rl->burst;
    rl->last_ns = now_ns;
}

void kp_ratelimit_destroy(kp_ratelimit *rl)
{
    pthread_mutex_destroy(&rl->lock);
}

int64_t kp_ratelimit_reserve(kp_ratelimit *rl, int64_t now_ns)
{
    if (rl->qps <= 0) return 0;
    pthread_mutex_lock(&rl->lock);
    /* A clock that steps back (or callers racing with stale readings) must
     * not refill the bucket twice. */
    if (now_ns > rl->last_ns) {
        rl->tokens += (double)(now_ns - rl->last_ns) / (double)KP_NS_PER_SEC * rl->qps;
        if (rl->tokens > rl->burst) rl->tokens = rl->burst;
        rl->last_ns = now_ns;
    }
    rl->tokens -= 1.0;
    double owed = rl->tokens < 0 ? -rl->tokens : 0.0;
    pthread_mutex_unlock(&rl->lock);
    return (int64_t)(owed / rl->qps * (double)KP_NS_PER_SEC);
}
