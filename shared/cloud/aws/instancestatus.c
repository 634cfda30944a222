/* EC2 instance health and the source that turns it into notices (see instancestatus.h). */
#include "cloud/aws/instancestatus.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "base/xalloc.h"
#include "cloud/aws/ec2.h"

static const char *const EVENT_CODES[] = {"instance-reboot", "system-reboot", "system-maintenance",
                                          "instance-retirement", "instance-stop"};

static bool seen(const kp_aws_unhealthy *u, size_t n, const char *id, const char *category)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(u[i].instance_id, id) && !strcmp(u[i].category, category)) return true;
    return false;
}

static bool is_event(const char *code)
{
    for (size_t i = 0; code && i < sizeof(EVENT_CODES) / sizeof(*EVENT_CODES); i++)
        if (!strcmp(code, EVENT_CODES[i])) return true;
    return false;
}

/* Add what one status says, once per (instance, category). */
static size_t add(const kp_ec2_instance_status *s, int64_t now, kp_aws_unhealthy *u, size_t n)
{
    if (!s->instance_id) return n;
    struct {
        bool bad;
        const char *category;
        int64_t since;
    } checks[] = {{s->instance_failed, "instance_status", s->instance_failed_since_ns},
                  {s->system_failed, "system_status", s->system_failed_since_ns},
                  {false, "event_status", now}};
    for (size_t i = 0; i < s->n_events; i++)
        checks[2].bad = checks[2].bad || is_event(s->events[i].code);
    for (size_t i = 0; i < 3; i++) {
        /* a failing check counts after the threshold; an event at once */
        bool counts = checks[i].bad && (i == 2 || (checks[i].since && now - checks[i].since >=
                                                                            KP_AWS_UNHEALTHY_NS));
        if (counts && !seen(u, n, s->instance_id, checks[i].category))
            u[n++] = (kp_aws_unhealthy){s->instance_id, checks[i].category, checks[i].since};
    }
    return n;
}

int kp_aws_instance_health(kp_aws_client *ec2, kp_arena *a, int64_t now, kp_aws_unhealthy **out,
                           size_t *n_out)
{
    static const char *const impaired[] = {"impaired"};
    const kp_ec2_filter filters[] = {
        {"instance-status.status", impaired, 1},
        {"system-status.status", impaired, 1},
        {"event.code", EVENT_CODES, sizeof(EVENT_CODES) / sizeof(*EVENT_CODES)}};
    kp_ec2_instance_status_list all[3];
    size_t total = 0;
    for (size_t i = 0; i < 3; i++) {
        all[i] = (kp_ec2_instance_status_list){0};
        int err = kp_ec2_describe_instance_status(ec2, a, &filters[i], 1, &all[i]);
        if (err < 0) return kp_error_wrap(err, "describing instance status");
        total += all[i].n;
    }
    kp_aws_unhealthy *u = KP_ARENA_NEW(a, kp_aws_unhealthy, 3 * total + 1);
    size_t n = 0;
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < all[i].n; j++)
            n = add(&all[i].items[j], now, u, n);
    *out = u;
    *n_out = n;
    return 0;
}

/* -------------------------------------------------------------------- source */

typedef struct health_source {
    kp_interruption_source base;
    kp_interruption_source *inner;
    kp_aws_client *ec2;
    const kp_clock *clock;
    int64_t next_poll_ns;
} health_source;

static int poll_health(health_source *h, kp_arena *a, kp_interruption **out, uint32_t *n)
{
    int64_t now = h->clock->now(h->clock);
    h->next_poll_ns = now + KP_AWS_HEALTH_PERIOD_NS;
    kp_aws_unhealthy *u = NULL;
    size_t k = 0;
    int err = kp_aws_instance_health(h->ec2, a, now, &u, &k);
    if (err < 0) return err;
    kp_interruption *m = KP_ARENA_NEW(a, kp_interruption, k + 1);
    for (size_t i = 0; i < k; i++) {
        const char **ids = KP_ARENA_NEW(a, const char *, 1);
        ids[0] = u[i].instance_id;
        m[i] = (kp_interruption){KP_INTERRUPT_SCHEDULED_CHANGE,
                                 ids,
                                 1,
                                 u[i].since_ns,
                                 0,
                                 kp_arena_printf(a, "%s/%s", u[i].category, u[i].instance_id),
                                 NULL,
                                 u[i].category,
                                 NULL};
    }
    *out = m;
    *n = (uint32_t)k;
    return 0;
}

/* Wait without a queue to wait on: up to `wait_seconds`, never past the next poll. */
static void idle(health_source *h, int wait_seconds)
{
    int64_t left = h->next_poll_ns - h->clock->now(h->clock);
    int64_t ns = (int64_t)wait_seconds * KP_NS_PER_SEC;
    if (left < ns) ns = left;
    if (ns <= 0) return;
    struct timespec ts = {(time_t)(ns / KP_NS_PER_SEC), (long)(ns % KP_NS_PER_SEC)};
    nanosleep(&ts, NULL);
}

static int health_receive(kp_interruption_source *src, kp_arena *a, kp_interruption **out,
                          uint32_t *n, int wait_seconds)
{
    health_source *h = (health_source *)src;
    *n = 0;
    if (h->clock->now(h->clock) >= h->next_poll_ns) {
        int err = poll_health(h, a, out, n);
        if (err < 0 || *n > 0) return err;
    }
    if (h->inner) return h->inner->ops->receive(h->inner, a, out, n, wait_seconds);
    idle(h, wait_seconds);
    return 0;
}

static int health_ack(kp_interruption_source *src, const kp_interruption *m)
{
    health_source *h = (health_source *)src;
    if (!m->handle) return 0; /* a health notice: nothing to remove */
    return h->inner ? h->inner->ops->ack(h->inner, m) : 0;
}

static void health_observe(kp_interruption_source *src, const kp_interruption *m,
                           const char *type, const char *zone, const char *ct, const char *cr)
{
    health_source *h = (health_source *)src;
    if (m->handle && h->inner && h->inner->ops->observe)
        h->inner->ops->observe(h->inner, m, type, zone, ct, cr);
}

static const char *health_name(const kp_interruption_source *src)
{
    const health_source *h = (const health_source *)src;
    return h->inner ? h->inner->ops->name(h->inner) : "ec2:DescribeInstanceStatus";
}

static void health_free(kp_interruption_source *src)
{
    health_source *h = (health_source *)src;
    kp_interruption_source_free(h->inner);
    kp_aws_client_free(h->ec2);
    free(h);
}

static const kp_interruption_source_ops health_ops = {health_receive, health_ack, health_observe,
                                                      health_name, health_free};

int kp_aws_health_source_new(kp_interruption_source *inner, kp_aws_client *ec2,
                             const kp_clock *clock, kp_interruption_source **out)
{
    if (!ec2) {
        kp_interruption_source_free(inner);
        return kp_error_set(KP_EINVALID, "instance status: an EC2 client is required");
    }
    health_source *h = kp_xcalloc(1, sizeof(*h));
    h->base.ops = &health_ops;
    h->inner = inner;
    h->ec2 = ec2;
    h->clock = clock ? clock : kp_clock_system();
    *out = &h->base;
    return 0;
}
