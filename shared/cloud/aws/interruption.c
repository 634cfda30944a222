/*
 * AWS interruption notices: EventBridge events (JSON, cJSON) turned into
 * provider-neutral notices, and the SQS queue they arrive on as an
 * interruption source.
 */
#include "cloud/aws/interruption.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "base/xalloc.h"
#include "cloud/aws/sqs.h"

/* ---- parsing ----------------------------------------------------------- */

/* Member `name` as a string: NULL when absent or null; KP_EINVALID when it has
 * another type (as a typed decoder would refuse it). */
static int str_member(const cJSON *obj, const char *name, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    *out = NULL;
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsString(v))
        return kp_error_set(KP_EINVALID, "interruption message: \"%s\" is not a string", name);
    *out = v->valuestring;
    return 0;
}

/* The object member `name`: NULL when absent or null, KP_EINVALID otherwise. */
static int obj_member(const cJSON *obj, const char *name, const cJSON **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    *out = NULL;
    if (!v || cJSON_IsNull(v)) return 0;
    if (!cJSON_IsObject(v))
        return kp_error_set(KP_EINVALID, "interruption message: \"%s\" is not an object", name);
    *out = v;
    return 0;
}

static void set_kind(kp_interruption *m, enum kp_interruption_kind kind)
{
    m->kind = kind;
    m->kind_name = kp_interruption_kind_name(kind);
}

static void add_id(kp_interruption *m, kp_arena *a, const char *id)
{
    if (!id || !*id) return;
    m->instance_ids =
        kp_arena_grow(a, m->instance_ids, m->n_ids, m->n_ids + 1, sizeof(*m->instance_ids));
    m->instance_ids[m->n_ids++] = kp_arena_strdup(a, id);
}

/* detail.instance-id, the shape of every aws.ec2 event we read. */
static int single_instance(const cJSON *detail, kp_arena *a, kp_interruption *m)
{
    const char *id = NULL;
    int err = str_member(detail, "instance-id", &id);
    if (err == 0) add_id(m, a, id);
    return err;
}

/* State-change events: only the states that end the instance's usefulness. */
static int state_change(const cJSON *detail, kp_arena *a, kp_interruption *m)
{
    const char *state = NULL;
    int err = str_member(detail, "state", &state);
    if (err < 0 || !state) return err;
    if (strcasecmp(state, "stopping") == 0 || strcasecmp(state, "stopped") == 0)
        set_kind(m, KP_INTERRUPT_STOPPING);
    else if (strcasecmp(state, "shutting-down") == 0 || strcasecmp(state, "terminated") == 0)
        set_kind(m, KP_INTERRUPT_TERMINATING);
    else
        return 0;
    return single_instance(detail, a, m);
}

static const char *const MONTHS[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/* AWS Health times: "Mon, 31 Aug 2026 10:00:00 GMT" (RFC 1123). 0 when unreadable. */
static int64_t parse_rfc1123(const char *text)
{
    const char *comma = text ? strchr(text, ',') : NULL;
    int day = 0, year = 0, hh = 0, mm = 0, ss = 0;
    char mon[4] = "";
    if (!comma ||
        sscanf(comma + 1, " %2d %3s %4d %2d:%2d:%2d", &day, mon, &year, &hh, &mm, &ss) != 6)
        return 0;
    for (int i = 0; i < 12; i++) {
        if (strcmp(mon, MONTHS[i]) != 0) continue;
        char iso[40];
        snprintf(iso, sizeof(iso), "%04d-%02d-%02dT%02d:%02d:%02dZ", year, i + 1, day, hh, mm, ss);
        int64_t ns = 0;
        return kp_time_parse_rfc3339(iso, &ns) == 0 ? ns : 0;
    }
    return 0;
}

/* AWS Health: only EC2 scheduled changes, for every affected entity. */
static int health_event(const cJSON *detail, kp_arena *a, kp_interruption *m)
{
    const char *service = NULL, *category = NULL, *start = NULL;
    int err = str_member(detail, "service", &service);
    if (err == 0) err = str_member(detail, "eventTypeCategory", &category);
    if (err == 0) err = str_member(detail, "startTime", &start);
    if (err < 0 || !service || !category || strcmp(service, "EC2") != 0 ||
        strcmp(category, "scheduledChange") != 0)
        return err;
    const cJSON *entities = cJSON_GetObjectItemCaseSensitive(detail, "affectedEntities");
    if (entities && !cJSON_IsNull(entities) && !cJSON_IsArray(entities))
        return kp_error_set(KP_EINVALID,
                            "interruption message: \"affectedEntities\" is not a list");
    const cJSON *e;
    cJSON_ArrayForEach(e, entities)
    {
        const char *id = NULL;
        if (!cJSON_IsObject(e))
            return kp_error_set(KP_EINVALID, "interruption message: an affected entity is not "
                                             "an object");
        if ((err = str_member(e, "entityValue", &id)) < 0) return err;
        add_id(m, a, id);
    }
    set_kind(m, KP_INTERRUPT_SCHEDULED_CHANGE);
    m->deadline_ns = parse_rfc1123(start);
    return 0;
}

typedef struct event_kind {
    const char *source;
    const char *detail_type;
    enum kp_interruption_kind kind; /* NOOP: decided by `parse` */
    int (*parse)(const cJSON *detail, kp_arena *a, kp_interruption *m);
} event_kind;

static const event_kind EVENTS[] = {
    {"aws.ec2", "EC2 Spot Instance Interruption Warning", KP_INTERRUPT_SPOT, single_instance},
    {"aws.ec2", "EC2 Instance Rebalance Recommendation", KP_INTERRUPT_REBALANCE, single_instance},
    {"aws.ec2", "EC2 Instance State-change Notification", KP_INTERRUPT_NOOP, state_change},
    {"aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning",
     KP_INTERRUPT_CAPACITY_RESERVATION, single_instance},
    {"aws.health", "AWS Health Event", KP_INTERRUPT_NOOP, health_event},
};

static const event_kind *find_event(const char *version, const char *source, const char *type)
{
    if (!version || !source || !type || strcmp(version, "0") != 0) return NULL;
    for (size_t i = 0; i < sizeof(EVENTS) / sizeof(EVENTS[0]); i++)
        if (strcmp(EVENTS[i].source, source) == 0 && strcmp(EVENTS[i].detail_type, type) == 0)
            return &EVENTS[i];
    return NULL;
}

/* The envelope: version, source, detail-type, id, time. */
static int parse_event(const cJSON *doc, kp_arena *a, kp_interruption *m)
{
    const char *version = NULL, *source = NULL, *type = NULL, *id = NULL, *time = NULL;
    int err = str_member(doc, "version", &version);
    if (err == 0) err = str_member(doc, "source", &source);
    if (err == 0) err = str_member(doc, "detail-type", &type);
    if (err == 0) err = str_member(doc, "id", &id);
    if (err == 0) err = str_member(doc, "time", &time);
    if (err < 0) return err;
    if (time && kp_time_parse_rfc3339(time, &m->start_ns) < 0)
        return kp_error_set(KP_EINVALID, "interruption message: bad time \"%s\"", time);
    m->id = id ? kp_arena_strdup(a, id) : NULL;
    const event_kind *k = find_event(version, source, type);
    if (!k) return 0;
    const cJSON *detail = NULL;
    if ((err = obj_member(doc, "detail", &detail)) < 0) return err;
    if (k->kind != KP_INTERRUPT_NOOP) set_kind(m, k->kind);
    if ((err = k->parse(detail, a, m)) < 0) return err;
    if (m->kind == KP_INTERRUPT_SPOT && m->start_ns)
        m->deadline_ns = m->start_ns + KP_AWS_SPOT_WARNING_NS;
    return 0;
}

int kp_aws_interruption_parse(const char *body, kp_arena *a, kp_interruption *out)
{
    kp_interruption m = {0};
    set_kind(&m, KP_INTERRUPT_NOOP);
    int err = 0;
    if (body && *body) {
        cJSON *doc = cJSON_Parse(body);
        if (!cJSON_IsObject(doc))
            err = kp_error_set(KP_EINVALID, "interruption message: not a JSON object");
        else
            err = parse_event(doc, a, &m);
        cJSON_Delete(doc);
    }
    if (err < 0) {
        const char *id = m.id;
        m = (kp_interruption){0};
        set_kind(&m, KP_INTERRUPT_NOOP);
        m.id = id;
        m.parse_error = kp_arena_strdup(a, kp_error_last());
    }
    *out = m;
    return err;
}

/* ---- the SQS queue ----------------------------------------------------- */

typedef struct sqs_source {
    kp_interruption_source base;
    kp_aws_client *sqs;
    kp_aws_ice_cache *ice;
    kp_aws_reservations *crs;
    char *queue_name;
    char *queue_url; /* NULL until looked up */
    int32_t max_messages;
    int32_t visibility_timeout;
} sqs_source;

static int ensure_url(sqs_source *s)
{
    if (s->queue_url) return 0;
    if (strncmp(s->queue_name, "http", 4) == 0) {
        s->queue_url = kp_xstrdup(s->queue_name);
        return 0;
    }
    kp_arena *a = kp_arena_new();
    const char *url = NULL;
    int err = kp_sqs_get_queue_url(s->sqs, a, s->queue_name, &url);
    if (err == 0)
        s->queue_url = kp_xstrdup(url);
    else
        kp_error_wrap(err, "interruption queue %s", s->queue_name);
    kp_arena_free(a);
    return err;
}

/* One SQS message as a notice; a body that does not parse still becomes one. */
static void to_notice(kp_arena *a, const kp_sqs_message *msg, kp_interruption *out)
{
    (void)kp_aws_interruption_parse(msg->body, a, out);
    out->handle = msg->receipt_handle;
    if (!out->id) out->id = msg->message_id;
    if (!out->start_ns && msg->sent_timestamp_ms > 0)
        out->start_ns = msg->sent_timestamp_ms * KP_NS_PER_MS;
}

static int sqs_receive(kp_interruption_source *src, kp_arena *a, kp_interruption **out, uint32_t *n,
                       int wait_seconds)
{
    sqs_source *s = (sqs_source *)src;
    int err = ensure_url(s);
    if (err < 0) return err;
    static const char *const attrs[] = {"SentTimestamp"}, *const all[] = {"All"};
    kp_sqs_receive_input in = {
        .queue_url = s->queue_url,
        .max_messages = s->max_messages,
        .visibility_timeout = s->visibility_timeout,
        .wait_time_seconds = wait_seconds < 0    ? 0
                             : wait_seconds > 20 ? 20
                                                 : wait_seconds,
        .attribute_names = attrs,
        .n_attribute_names = 1,
        .message_attribute_names = all,
        .n_message_attribute_names = 1,
    };
    kp_sqs_message_list list = {0};
    if ((err = kp_sqs_receive_message(s->sqs, a, &in, &list)) < 0) {
        if (err == KP_ENOTFOUND) { /* the queue went away: look it up again next time */
            free(s->queue_url);
            s->queue_url = NULL;
        }
        return err;
    }
    kp_interruption *notices = KP_ARENA_NEW(a, kp_interruption, list.n + 1);
    for (size_t i = 0; i < list.n; i++)
        to_notice(a, &list.items[i], &notices[i]);
    *out = notices;
    *n = (uint32_t)list.n;
    return 0;
}

static int sqs_ack(kp_interruption_source *src, const kp_interruption *m)
{
    sqs_source *s = (sqs_source *)src;
    if (!m->handle)
        return kp_error_set(KP_EINVALID, "interruption notice %s has no receipt handle",
                            m->id ? m->id : "?");
    int err = ensure_url(s);
    if (err == 0) err = kp_sqs_delete_message(s->sqs, s->queue_url, m->handle);
    return err;
}

/* A spot reclaim says EC2 is short of that offering: stop asking for it a
 * while. A reservation being reclaimed has no room left (Karpenter zeroes
 * its count). */
static void sqs_observe(kp_interruption_source *src, const kp_interruption *m,
                        const char *instance_type, const char *zone, const char *capacity_type,
                        const char *reservation_id)
{
    sqs_source *s = (sqs_source *)src;
    (void)capacity_type;
    if (m->kind == KP_INTERRUPT_SPOT && s->ice)
        kp_aws_ice_mark(s->ice, "spot", instance_type, zone, m->kind_name);
    if (m->kind == KP_INTERRUPT_CAPACITY_RESERVATION && s->crs && reservation_id)
        kp_aws_crs_mark_unavailable(s->crs, reservation_id);
}

static const char *sqs_name(const kp_interruption_source *src)
{
    return ((const sqs_source *)src)->queue_name;
}

static void sqs_free(kp_interruption_source *src)
{
    sqs_source *s = (sqs_source *)src;
    free(s->queue_name);
    free(s->queue_url);
    free(s);
}

static const kp_interruption_source_ops SQS_OPS = {sqs_receive, sqs_ack, sqs_observe, sqs_name,
                                                   sqs_free};

int kp_aws_interruption_source_new(const kp_aws_interruption_opts *o, kp_interruption_source **out)
{
    if (!o->sqs || !o->queue_name || !*o->queue_name)
        return kp_error_set(KP_EINVALID,
                            "interruption source: an SQS client and a queue are needed");
    if (o->max_messages < 0 || o->max_messages > 10 || o->visibility_timeout < 0)
        return kp_error_set(KP_EINVALID, "interruption source: max messages must be 0..10 and "
                                         "the visibility timeout >= 0");
    sqs_source *s = kp_xcalloc(1, sizeof(*s));
    s->base.ops = &SQS_OPS;
    s->sqs = o->sqs;
    s->ice = o->ice;
    s->crs = o->crs;
    s->queue_name = kp_xstrdup(o->queue_name);
    s->max_messages = o->max_messages ? o->max_messages : 10;
    s->visibility_timeout = o->visibility_timeout ? o->visibility_timeout : 20;
    *out = &s->base;
    return 0;
}
