/*
 * Leader election on a Lease (see leader.h).
 */
#include "kube/leader.h"
#include "base/error.h"
#include "base/log.h"
#include "base/xalloc.h"
#include "kube/ops.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct kp_leader_elector {
    kp_kube_client *client;
    kp_leader_opts opts; /* strings owned */
    const kp_clock *clock;
    kp_kube_cancel *cancel;
    pthread_t thread;
    bool running;

    pthread_mutex_t lock; /* leader, holder */
    bool leader;
    char *holder;

    /* The elector thread's own. */
    char *observed;      /* the lease spec last seen, serialised */
    int64_t observed_at; /* monotonic ns when it last changed */
    unsigned seed;
};

void kp_leader_format_time(int64_t ns, char *buf, unsigned long size)
{
    time_t secs = (time_t)(ns / KP_NS_PER_SEC);
    long micros = (long)(ns % KP_NS_PER_SEC / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char date[32];
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, size, "%s.%06ldZ", date, micros);
}

static int check_opts(const kp_leader_opts *o)
{
    if (!o->namespace || !*o->namespace || !o->name || !*o->name)
        return kp_error_set(KP_EINVALID,
                            "leader election: the lease namespace and name are required");
    if (!o->identity || !*o->identity)
        return kp_error_set(KP_EINVALID, "leader election: an identity is required");
    if (o->retry_period_ms <= 0 || o->renew_deadline_ms <= o->retry_period_ms ||
        o->lease_duration_ms <= o->renew_deadline_ms)
        return kp_error_set(KP_EINVALID,
                            "leader election: need lease duration (%lld ms) > renew "
                            "deadline (%lld ms) > retry period (%lld ms) > 0",
                            (long long)o->lease_duration_ms, (long long)o->renew_deadline_ms,
                            (long long)o->retry_period_ms);
    return 0;
}

int kp_leader_elector_new(kp_leader_elector **out, kp_kube_client *client,
                          const kp_leader_opts *opts)
{
    int err = check_opts(opts);
    if (err < 0) return err;
    kp_leader_elector *le = kp_xcalloc(1, sizeof(*le));
    le->client = client;
    le->opts = *opts;
    le->opts.namespace = kp_xstrdup(opts->namespace);
    le->opts.name = kp_xstrdup(opts->name);
    le->opts.identity = kp_xstrdup(opts->identity);
    le->clock = opts->clock ? opts->clock : kp_clock_system();
    le->cancel = kp_kube_cancel_new();
    pthread_mutex_init(&le->lock, NULL);
    le->seed = (unsigned)le->clock->monotonic(le->clock) ^ (unsigned)(uintptr_t)le;
    *out = le;
    return 0;
}

kp_leader_elector *kp_leader_elector_free(kp_leader_elector *le)
{
    if (!le) return NULL;
    kp_leader_elector_stop(le);
    kp_kube_cancel_free(le->cancel);
    pthread_mutex_destroy(&le->lock);
    free((char *)le->opts.namespace);
    free((char *)le->opts.name);
    free((char *)le->opts.identity);
    free(le->holder);
    free(le->observed);
    free(le);
    return NULL;
}

bool kp_leader_elector_is_leader(kp_leader_elector *le)
{
    pthread_mutex_lock(&le->lock);
    bool leader = le->leader;
    pthread_mutex_unlock(&le->lock);
    return leader;
}

char *kp_leader_elector_holder(kp_leader_elector *le)
{
    pthread_mutex_lock(&le->lock);
    char *holder = le->holder ? kp_xstrdup(le->holder) : NULL;
    pthread_mutex_unlock(&le->lock);
    return holder;
}

static void set_leader(kp_leader_elector *le, bool leader)
{
    pthread_mutex_lock(&le->lock);
    le->leader = leader;
    pthread_mutex_unlock(&le->lock);
    const kp_leader_callbacks *cb = &le->opts.callbacks;
    if (leader && cb->started)
        cb->started(cb->ctx);
    else if (!leader && cb->stopped)
        cb->stopped(cb->ctx);
}

/* ------------------------------------------------------- the record */

static const char *spec_holder(const cJSON *spec)
{
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(spec, "holderIdentity");
    return cJSON_IsString(h) ? h->valuestring : "";
}

static double spec_number(const cJSON *spec, const char *field)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, field);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* Note the record; if it changed, restart the expiry clock. */
static void observe(kp_leader_elector *le, const cJSON *spec)
{
    char *text = cJSON_PrintUnformatted(spec);
    if (le->observed && text && strcmp(le->observed, text) == 0) {
        cJSON_free(text);
        return;
    }
    free(le->observed);
    le->observed = text ? kp_xstrdup(text) : NULL;
    cJSON_free(text);
    le->observed_at = le->clock->monotonic(le->clock);
    const char *holder = spec_holder(spec);
    pthread_mutex_lock(&le->lock);
    bool changed = !le->holder || strcmp(le->holder, holder) != 0;
    free(le->holder);
    le->holder = kp_xstrdup(holder);
    pthread_mutex_unlock(&le->lock);
    if (changed && *holder && le->opts.callbacks.new_leader)
        le->opts.callbacks.new_leader(le->opts.callbacks.ctx, holder);
}

static bool held_by_other(kp_leader_elector *le, const cJSON *spec)
{
    const char *holder = spec_holder(spec);
    if (!*holder || strcmp(holder, le->opts.identity) == 0) return false;
    double secs = spec_number(spec, "leaseDurationSeconds");
    int64_t duration = secs > 0 ? (int64_t)(secs * 1000) : le->opts.lease_duration_ms;
    return le->clock->monotonic(le->clock) < le->observed_at + duration * KP_NS_PER_MS;
}

static void set_string(cJSON *obj, const char *field, const char *value)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, field);
    cJSON_AddStringToObject(obj, field, value);
}

static void set_number(cJSON *obj, const char *field, double value)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, field);
    cJSON_AddNumberToObject(obj, field, value);
}

/* Make `spec` say we hold the lease as of now. */
static void claim(kp_leader_elector *le, cJSON *spec)
{
    char now[40];
    kp_leader_format_time(le->clock->now(le->clock), now, sizeof(now));
    if (strcmp(spec_holder(spec), le->opts.identity) != 0) {
        set_string(spec, "acquireTime", now);
        set_number(spec, "leaseTransitions", spec_number(spec, "leaseTransitions") + 1);
    }
    set_string(spec, "holderIdentity", le->opts.identity);
    set_number(spec, "leaseDurationSeconds", (double)((le->opts.lease_duration_ms + 999) / 1000));
    set_string(spec, "renewTime", now);
}

static int create_lease(kp_leader_elector *le)
{
    cJSON *lease = cJSON_CreateObject();
    cJSON_AddStringToObject(lease, "apiVersion", "coordination.k8s.io/v1");
    cJSON_AddStringToObject(lease, "kind", "Lease");
    cJSON *meta = cJSON_AddObjectToObject(lease, "metadata");
    cJSON_AddStringToObject(meta, "name", le->opts.name);
    cJSON_AddStringToObject(meta, "namespace", le->opts.namespace);
    cJSON *spec = cJSON_AddObjectToObject(lease, "spec");
    claim(le, spec);
    set_number(spec, "leaseTransitions", 0);
    cJSON *created = NULL;
    int err = kp_kube_create(le->client, KP_RES_LEASE, le->opts.namespace, lease, &created);
    if (!err) observe(le, cJSON_GetObjectItemCaseSensitive(created, "spec"));
    cJSON_Delete(created);
    cJSON_Delete(lease);
    return err;
}

static cJSON *lease_spec(cJSON *lease)
{
    cJSON *spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
    if (!cJSON_IsObject(spec)) {
        cJSON_DeleteItemFromObjectCaseSensitive(lease, "spec");
        spec = cJSON_AddObjectToObject(lease, "spec");
    }
    return spec;
}

/* One round: 0 with *held set to whether we hold the lease now. */
static int try_acquire_or_renew(kp_leader_elector *le, bool *held)
{
    *held = false;
    cJSON *lease = NULL, *updated = NULL;
    int err = kp_kube_get(le->client, KP_RES_LEASE, le->opts.namespace, le->opts.name, &lease);
    if (err == KP_ENOTFOUND) {
        err = create_lease(le);
        *held = err == 0;
        return err;
    }
    if (err < 0) return err;
    cJSON *spec = lease_spec(lease);
    observe(le, spec);
    if (!held_by_other(le, spec)) {
        claim(le, spec);
        err = kp_kube_update(le->client, KP_RES_LEASE, lease, 0, &updated);
        if (!err) {
            observe(le, cJSON_GetObjectItemCaseSensitive(updated, "spec"));
            *held = true;
        }
    }
    cJSON_Delete(updated);
    cJSON_Delete(lease);
    return err;
}

/* Hand the lease back so that a successor need not wait for it to expire. */
static void release(kp_leader_elector *le)
{
    cJSON *lease = NULL;
    if (kp_kube_get(le->client, KP_RES_LEASE, le->opts.namespace, le->opts.name, &lease) < 0)
        return;
    cJSON *spec = lease_spec(lease);
    if (strcmp(spec_holder(spec), le->opts.identity) == 0) {
        char now[40];
        kp_leader_format_time(le->clock->now(le->clock), now, sizeof(now));
        set_string(spec, "holderIdentity", "");
        set_number(spec, "leaseDurationSeconds", 1);
        set_string(spec, "acquireTime", now);
        set_string(spec, "renewTime", now);
        if (kp_kube_update(le->client, KP_RES_LEASE, lease, 0, NULL) < 0)
            KP_LOG(KP_LOG_DEBUG, "leader", "releasing the lease failed", "error", kp_error_last());
    }
    cJSON_Delete(lease);
}

/* ------------------------------------------------------------ loops */

static int64_t jittered(kp_leader_elector *le)
{
    /* client-go's JitterUntil with factor 1.2 */
    double f = (double)rand_r(&le->seed) / (double)RAND_MAX * 1.2;
    return le->opts.retry_period_ms + (int64_t)((double)le->opts.retry_period_ms * f);
}

/* Until we hold the lease (true) or are stopped (false). */
static bool acquire(kp_leader_elector *le)
{
    while (!kp_kube_cancel_fired(le->cancel)) {
        bool held;
        if (try_acquire_or_renew(le, &held) < 0)
            KP_LOG(KP_LOG_DEBUG, "leader", "lease round failed", "error", kp_error_last());
        if (held) return true;
        if (kp_kube_cancel_sleep(le->cancel, jittered(le))) return false;
    }
    return false;
}

/* Renew until stopped or until renewals have failed for renew_deadline. */
static void renew(kp_leader_elector *le)
{
    int64_t last = le->clock->monotonic(le->clock);
    while (!kp_kube_cancel_sleep(le->cancel, le->opts.retry_period_ms)) {
        bool held;
        int err = try_acquire_or_renew(le, &held);
        int64_t now = le->clock->monotonic(le->clock);
        if (held) {
            last = now;
            continue;
        }
        if (!err) /* someone else holds it: do not wait for the deadline */
            return;
        if (now - last >= le->opts.renew_deadline_ms * KP_NS_PER_MS) return;
    }
}

static void *run(void *arg)
{
    kp_leader_elector *le = arg;
    while (acquire(le)) {
        set_leader(le, true);
        renew(le);
        pthread_mutex_lock(&le->lock);
        le->leader = false;
        pthread_mutex_unlock(&le->lock);
        if (kp_kube_cancel_fired(le->cancel) && le->opts.release_on_stop) release(le);
        set_leader(le, false);
    }
    return NULL;
}

int kp_leader_elector_start(kp_leader_elector *le)
{
    if (le->running) return kp_error_set(KP_EINVALID, "leader election already running");
    if (!le->cancel) return kp_error_set(KP_EIO, "leader election: cannot create a cancel token");
    kp_kube_cancel_reset(le->cancel);
    if (pthread_create(&le->thread, NULL, run, le) != 0)
        return kp_error_set(KP_ERROR, "leader election: cannot start a thread");
    le->running = true;
    return 0;
}

void kp_leader_elector_stop(kp_leader_elector *le)
{
    if (!le->running) return;
    kp_kube_cancel_fire(le->cancel);
    pthread_join(le->thread, NULL);
    le->running = false;
}
