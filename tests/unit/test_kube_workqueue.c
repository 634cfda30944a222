/* Work queues (shared/kube/workqueue.h): client-go's semantics. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "kube/workqueue.h"

static char *take(kp_workqueue *q, int64_t timeout_ms)
{
    char *key = NULL;
    int err = kp_workqueue_get(q, timeout_ms, &key);
    return err == 0 ? key : NULL;
}

Test(workqueue, fifo_order_and_deduplication)
{
    kp_workqueue *q = kp_workqueue_new(NULL);
    kp_workqueue_add(q, "a");
    kp_workqueue_add(q, "b");
    kp_workqueue_add(q, "a");
    kp_workqueue_add(q, "c");
    cr_assert_eq(kp_workqueue_len(q), 3);
    const char *want[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        char *k = take(q, 0);
        cr_assert_not_null(k);
        cr_assert_str_eq(k, want[i]);
        kp_workqueue_done(q, k);
        free(k);
    }
    char *k = NULL;
    cr_assert_eq(kp_workqueue_get(q, 0, &k), KP_ETIMEOUT);
    cr_assert_null(k);
    kp_workqueue_free(q);
}

Test(workqueue, key_added_while_processing_is_requeued_after_done)
{
    kp_workqueue *q = kp_workqueue_new(NULL);
    kp_workqueue_add(q, "a");
    char *k = take(q, 0);
    cr_assert_str_eq(k, "a");
    kp_workqueue_add(q, "a");
    kp_workqueue_add(q, "a");
    cr_assert_eq(kp_workqueue_len(q), 0, "not handed to a second worker meanwhile");
    cr_assert_null(take(q, 0));
    kp_workqueue_done(q, k);
    free(k);
    cr_assert_eq(kp_workqueue_len(q), 1, "queued once again after done");
    k = take(q, 0);
    cr_assert_str_eq(k, "a");
    kp_workqueue_done(q, k);
    free(k);
    cr_assert_eq(kp_workqueue_len(q), 0);
    kp_workqueue_free(q);
}

Test(workqueue, delayed_adds)
{
    kp_workqueue *q = kp_workqueue_new(NULL);
    kp_workqueue_add_after(q, "later", 60000);
    kp_workqueue_add_after(q, "soon", 50);
    kp_workqueue_add_after(q, "now", 0);
    cr_assert_eq(kp_workqueue_len(q), 1);
    char *k = take(q, 0);
    cr_assert_str_eq(k, "now");
    kp_workqueue_done(q, k);
    free(k);
    k = take(q, 10000);
    cr_assert_not_null(k, "the delayed key arrives");
    cr_assert_str_eq(k, "soon");
    kp_workqueue_done(q, k);
    free(k);
    /* An earlier time wins over a later one for a key already waiting. */
    kp_workqueue_add_after(q, "later", 10);
    k = take(q, 10000);
    cr_assert_str_eq(k, "later");
    kp_workqueue_done(q, k);
    free(k);
    cr_assert_null(take(q, 100), "the stale 60 s entry does not come back");
    kp_workqueue_free(q); /* with nothing left waiting */
}

Test(workqueue, rate_limited_backoff_doubles_per_key_and_forget_resets)
{
    kp_workqueue_opts o = {1, 8};
    kp_workqueue *q = kp_workqueue_new(&o);
    for (int i = 0; i < 6; i++) {
        kp_workqueue_add_rate_limited(q, "flaky");
        char *k = take(q, 10000);
        cr_assert_str_eq(k, "flaky");
        kp_workqueue_done(q, k);
        free(k);
    }
    cr_assert_eq(kp_workqueue_requeues(q, "flaky"), 6);
    cr_assert_eq(kp_workqueue_requeues(q, "other"), 0);
    kp_workqueue_forget(q, "flaky");
    cr_assert_eq(kp_workqueue_requeues(q, "flaky"), 0);
    kp_workqueue_free(q);
}

Test(workqueue, backoff_keeps_a_failing_key_away_for_a_while)
{
    kp_workqueue_opts o = {10000, 10000};
    kp_workqueue *q = kp_workqueue_new(&o);
    kp_workqueue_add_rate_limited(q, "k");
    cr_assert_null(take(q, 50), "not before its back-off");
    kp_workqueue_add(q, "k");
    char *k = take(q, 0);
    cr_assert_str_eq(k, "k", "a plain add is not delayed");
    kp_workqueue_done(q, k);
    free(k);
    kp_workqueue_free(q);
}

Test(workqueue, shutdown_drains_then_reports_gone)
{
    kp_workqueue *q = kp_workqueue_new(NULL);
    kp_workqueue_add(q, "a");
    kp_workqueue_add_after(q, "delayed", 10);
    kp_workqueue_shutdown(q);
    cr_assert(kp_workqueue_shutting_down(q));
    kp_workqueue_add(q, "ignored");
    char *k = take(q, -1);
    cr_assert_str_eq(k, "a");
    kp_workqueue_done(q, k);
    free(k);
    cr_assert_eq(kp_workqueue_get(q, -1, &k), KP_EGONE);
    cr_assert_eq(kp_workqueue_get(q, 100, &k), KP_EGONE);
    kp_workqueue_free(q);
}

/* --------------------------------------------------------- concurrency */

enum { WORKERS = 4, KEYS = 50, ROUNDS = 20 };

typedef struct shared {
    kp_workqueue *q;
    atomic_int active[KEYS]; /* workers holding each key right now */
    atomic_int processed;
    atomic_int overlaps;
} shared;

static int key_index(const char *k)
{
    return (int)strtol(k + 1, NULL, 10);
}

static void *worker(void *arg)
{
    shared *s = arg;
    char *k;
    while (kp_workqueue_get(s->q, -1, &k) == 0) {
        int i = key_index(k);
        if (atomic_fetch_add(&s->active[i], 1) != 0) atomic_fetch_add(&s->overlaps, 1);
        usleep(100);
        atomic_fetch_sub(&s->active[i], 1);
        atomic_fetch_add(&s->processed, 1);
        kp_workqueue_done(s->q, k);
        free(k);
    }
    return NULL;
}

static void *producer(void *arg)
{
    shared *s = arg;
    char key[16];
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < KEYS; i++) {
            snprintf(key, sizeof(key), "k%d", i);
            kp_workqueue_add(s->q, key);
        }
    return NULL;
}

Test(workqueue, several_workers_never_share_a_key)
{
    shared s = {.q = kp_workqueue_new(NULL)};
    pthread_t workers[WORKERS], producers[2];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&workers[i], NULL, worker, &s);
    for (int i = 0; i < 2; i++)
        pthread_create(&producers[i], NULL, producer, &s);
    for (int i = 0; i < 2; i++)
        pthread_join(producers[i], NULL);
    kp_workqueue_shutdown(s.q);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(workers[i], NULL);
    cr_assert_eq(atomic_load(&s.overlaps), 0, "a key was handed to two workers at once");
    int n = atomic_load(&s.processed);
    cr_assert_geq(n, KEYS, "every key processed at least once");
    cr_assert_leq(n, 2 * ROUNDS * KEYS, "de-duplicated: at most one run per add");
    cr_assert_eq(kp_workqueue_len(s.q), 0);
    kp_workqueue_free(s.q);
}

Test(workqueue, a_blocked_worker_wakes_for_new_work_and_shutdown)
{
    shared s = {.q = kp_workqueue_new(NULL)};
    pthread_t t;
    pthread_create(&t, NULL, worker, &s);
    usleep(20 * 1000);
    kp_workqueue_add(s.q, "k1");
    kp_workqueue_add_after(s.q, "k2", 30);
    while (atomic_load(&s.processed) < 2)
        usleep(1000);
    kp_workqueue_shutdown(s.q);
    pthread_join(t, NULL);
    cr_assert_eq(atomic_load(&s.processed), 2);
    kp_workqueue_free(s.q);
}
