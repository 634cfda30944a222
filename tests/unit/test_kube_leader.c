/* Leader election (shared/kube/leader.h): electors against the fake API server's Lease. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "helpers/fake_apiserver.h"
#include "kube/leader.h"
#include "helpers/assert.h"

static fake_api *fa;
static kp_kube_client *client;

#define LEASE "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/karpenter-leader-election"

static void setup(void)
{
    fa = fake_api_start();
    cr_assert_not_null(fa);
    kp_kube_config cfg = {0};
    cfg.server = (char *)fake_api_url(fa);
    kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
    o.qps = 0;
    o.timeout_ms = 2000;
    cr_assert_eq(kp_kube_client_new(&client, &cfg, &o), 0);
}

static void teardown(void)
{
    kp_kube_client_free(client);
    fake_api_stop(fa);
}

TestSuite(leader, .init = setup, .fini = teardown, .timeout = 120);

typedef struct replica {
    kp_leader_elector *le;
    atomic_int started, stopped;
    char new_leader[32];
    pthread_mutex_t lock;
} replica;

static void on_started(void *ctx)
{
    atomic_fetch_add(&((replica *)ctx)->started, 1);
}

static void on_stopped(void *ctx)
{
    atomic_fetch_add(&((replica *)ctx)->stopped, 1);
}

static void on_new_leader(void *ctx, const char *id)
{
    replica *r = ctx;
    pthread_mutex_lock(&r->lock);
    snprintf(r->new_leader, sizeof(r->new_leader), "%s", id);
    pthread_mutex_unlock(&r->lock);
}

static void make(replica *r, const char *id, int64_t lease_ms, bool release)
{
    memset(r, 0, sizeof(*r));
    pthread_mutex_init(&r->lock, NULL);
    kp_leader_opts o = KP_LEADER_OPTS_INIT;
    o.namespace = "kube-system";
    o.name = "karpenter-leader-election";
    o.identity = id;
    o.lease_duration_ms = lease_ms;
    o.renew_deadline_ms = 1000;
    o.retry_period_ms = 150;
    o.release_on_stop = release;
    o.callbacks = (kp_leader_callbacks){on_started, on_stopped, on_new_leader, r};
    KP_ASSERT_OK(kp_leader_elector_new(&r->le, client, &o));
}

static void destroy(replica *r)
{
    kp_leader_elector_free(r->le);
    pthread_mutex_destroy(&r->lock);
}

static bool wait_leader(replica *r, int timeout_ms)
{
    for (int t = 0; t < timeout_ms && !kp_leader_elector_is_leader(r->le); t += 10)
        usleep(10 * 1000);
    return kp_leader_elector_is_leader(r->le);
}

static cJSON *lease_spec(void)
{
    cJSON *lease = fake_api_get(fa, LEASE);
    cr_assert_not_null(lease);
    cJSON *spec = cJSON_DetachItemFromObject(lease, "spec");
    cJSON_Delete(lease);
    return spec;
}

static const char *field(const cJSON *spec, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(spec, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

Test(leader, first_replica_creates_the_lease)
{
    replica a;
    make(&a, "replica-a", 3000, true);
    cr_assert_eq(kp_leader_elector_start(a.le), 0);
    cr_assert(wait_leader(&a, 10000));
    cr_assert_eq(atomic_load(&a.started), 1);
    cJSON *spec = lease_spec();
    cr_assert_str_eq(field(spec, "holderIdentity"), "replica-a");
    cr_assert_eq(cJSON_GetObjectItem(spec, "leaseDurationSeconds")->valueint, 3);
    cr_assert_eq(cJSON_GetObjectItem(spec, "leaseTransitions")->valueint, 0);
    const char *t = field(spec, "renewTime");
    cr_assert_eq(strlen(t), strlen("2026-01-02T03:04:05.000000Z"), "%s", t);
    cr_assert_eq(t[19], '.');
    cr_assert_not_null(field(spec, "acquireTime"));
    cJSON_Delete(spec);
    char *holder = kp_leader_elector_holder(a.le);
    cr_assert_str_eq(holder, "replica-a");
    free(holder);
    usleep(400 * 1000);
    cr_assert_geq(fake_api_count(fa, "PUT", LEASE), 1, "the leader renews");
    kp_leader_elector_stop(a.le);
    cr_assert_not(kp_leader_elector_is_leader(a.le));
    cr_assert_eq(atomic_load(&a.stopped), 1);
    spec = lease_spec();
    cr_assert_str_eq(field(spec, "holderIdentity"), "", "released on stop");
    cJSON_Delete(spec);
    destroy(&a);
}

typedef struct monitor {
    replica *a, *b;
    atomic_bool stop;
    atomic_int both;
} monitor;

static void *watch_both(void *arg)
{
    monitor *m = arg;
    while (!atomic_load(&m->stop)) {
        if (kp_leader_elector_is_leader(m->a->le) && kp_leader_elector_is_leader(m->b->le))
            atomic_fetch_add(&m->both, 1);
        usleep(2000);
    }
    return NULL;
}

Test(leader, second_replica_takes_over_when_the_leader_stops_renewing)
{
    replica a, b;
    make(&a, "a", 1500, false); /* a "crash": no release */
    make(&b, "b", 1500, false);
    monitor m = {&a, &b, false, 0};
    pthread_t mon;
    pthread_create(&mon, NULL, watch_both, &m);
    cr_assert_eq(kp_leader_elector_start(a.le), 0);
    cr_assert(wait_leader(&a, 10000));
    cr_assert_eq(kp_leader_elector_start(b.le), 0);
    /* Over three lease durations, b must stay a follower while a renews. */
    usleep(4500 * 1000);
    cr_assert(kp_leader_elector_is_leader(a.le));
    cr_assert_not(kp_leader_elector_is_leader(b.le));
    pthread_mutex_lock(&b.lock);
    cr_assert_str_eq(b.new_leader, "a");
    pthread_mutex_unlock(&b.lock);
    kp_leader_elector_stop(a.le);
    cr_assert(wait_leader(&b, 10000), "b takes over once the lease expires");
    atomic_store(&m.stop, true);
    pthread_join(mon, NULL);
    cr_assert_eq(atomic_load(&m.both), 0, "never two leaders at once");
    cJSON *spec = lease_spec();
    cr_assert_str_eq(field(spec, "holderIdentity"), "b");
    cr_assert_eq(cJSON_GetObjectItem(spec, "leaseTransitions")->valueint, 1);
    cJSON_Delete(spec);
    cr_assert_eq(atomic_load(&a.stopped), 1);
    cr_assert_eq(atomic_load(&b.started), 1);
    destroy(&a);
    destroy(&b);
}

Test(leader, release_hands_over_without_waiting_for_expiry)
{
    replica a, b;
    make(&a, "a", 60000, true);
    make(&b, "b", 60000, true);
    cr_assert_eq(kp_leader_elector_start(a.le), 0);
    cr_assert(wait_leader(&a, 10000));
    cr_assert_eq(kp_leader_elector_start(b.le), 0);
    usleep(300 * 1000);
    kp_leader_elector_stop(a.le);
    /* A 60 s lease: only the release lets b in within the wait. */
    cr_assert(wait_leader(&b, 10000));
    cJSON *spec = lease_spec();
    cr_assert_eq(cJSON_GetObjectItem(spec, "leaseTransitions")->valueint, 1);
    cJSON_Delete(spec);
    destroy(&a);
    destroy(&b);
}

Test(leader, simultaneous_candidates_elect_one)
{
    replica a, b;
    make(&a, "a", 1500, true);
    make(&b, "b", 1500, true);
    monitor m = {&a, &b, false, 0};
    pthread_t mon;
    pthread_create(&mon, NULL, watch_both, &m);
    cr_assert_eq(kp_leader_elector_start(a.le), 0);
    cr_assert_eq(kp_leader_elector_start(b.le), 0);
    for (int i = 0;
         i < 1000 && !kp_leader_elector_is_leader(a.le) && !kp_leader_elector_is_leader(b.le); i++)
        usleep(10 * 1000);
    usleep(1000 * 1000);
    atomic_store(&m.stop, true);
    pthread_join(mon, NULL);
    cr_assert_eq(atomic_load(&m.both), 0);
    cr_assert_neq(kp_leader_elector_is_leader(a.le), kp_leader_elector_is_leader(b.le));
    destroy(&a);
    destroy(&b);
}

static atomic_bool outage;

static void api_down(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx, (void)req;
    if (atomic_load(&outage)) resp->status = 503;
}

Test(leader, leader_steps_down_when_it_cannot_renew)
{
    fake_api_set_hook(fa, api_down, NULL);
    replica a;
    make(&a, "a", 1500, true);
    cr_assert_eq(kp_leader_elector_start(a.le), 0);
    cr_assert(wait_leader(&a, 10000));
    atomic_store(&outage, true);
    for (int i = 0; i < 1000 && kp_leader_elector_is_leader(a.le); i++)
        usleep(10 * 1000);
    cr_assert_not(kp_leader_elector_is_leader(a.le), "stops leading after the renew deadline");
    cr_assert_eq(atomic_load(&a.stopped), 1);
    atomic_store(&outage, false);
    cr_assert(wait_leader(&a, 10000), "and campaigns again");
    cr_assert_eq(atomic_load(&a.started), 2);
    destroy(&a);
}

Test(leader, options_are_checked)
{
    kp_leader_elector *le = NULL;
    kp_leader_opts o = KP_LEADER_OPTS_INIT;
    cr_assert_eq(kp_leader_elector_new(&le, client, &o), KP_EINVALID);
    o.namespace = "ns";
    o.name = "l";
    cr_assert_eq(kp_leader_elector_new(&le, client, &o), KP_EINVALID);
    cr_assert(strstr(kp_error_last(), "identity"));
    o.identity = "me";
    o.renew_deadline_ms = o.lease_duration_ms;
    cr_assert_eq(kp_leader_elector_new(&le, client, &o), KP_EINVALID);
    cr_assert(strstr(kp_error_last(), "lease duration (15000 ms) > renew deadline (15000 ms)"),
              "%s", kp_error_last());
    cr_assert_null(le);
    o.renew_deadline_ms = 10000;
    cr_assert_eq(kp_leader_elector_new(&le, client, &o), 0);
    kp_leader_elector_stop(le); /* never started: nothing to do */
    cr_assert_null(kp_leader_elector_free(le));
}

Test(leader, micro_time_format)
{
    char buf[40];
    kp_leader_format_time(INT64_C(1767323045123456789), buf, sizeof(buf));
    cr_assert_str_eq(buf, "2026-01-02T03:04:05.123456Z");
}
