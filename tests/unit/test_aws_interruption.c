/*
 * AWS interruption notices: every EventBridge event kind Karpenter acts on
 * (files under tests/unit/data/aws/interruption/), the ones it ignores, the
 * malformed ones (still acknowledgeable), and the SQS-backed source on the
 * in-process double: queue lookup, long poll, acknowledgement, ICE marking.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cloud/aws/interruption.h"
#include "test_aws_double.h"
#include "helpers/assert.h"

typedef struct parse_case {
    const char *file;
    enum kp_interruption_kind kind;
    const char *ids; /* space-separated, "" for none */
    int err;
} parse_case;

static const parse_case CASES[] = {
    {"spot-warning.json", KP_INTERRUPT_SPOT, "i-0123456789abcdef0", 0},
    {"rebalance.json", KP_INTERRUPT_REBALANCE, "i-0aaaabbbbccccdddd", 0},
    {"state-stopping.json", KP_INTERRUPT_STOPPING, "i-0feedfacecafe0001", 0},
    {"state-stopped.json", KP_INTERRUPT_STOPPING, "i-0feedfacecafe0001", 0},
    {"state-shutting-down.json", KP_INTERRUPT_TERMINATING, "i-0feedfacecafe0001", 0},
    {"state-terminated.json", KP_INTERRUPT_TERMINATING, "i-0feedfacecafe0001", 0},
    {"state-uppercase.json", KP_INTERRUPT_TERMINATING, "i-0feedfacecafe0002", 0},
    {"state-running.json", KP_INTERRUPT_NOOP, "", 0},
    {"state-pending.json", KP_INTERRUPT_NOOP, "", 0},
    {"capacity-reservation.json", KP_INTERRUPT_CAPACITY_RESERVATION, "i-0c0ffee000000beef", 0},
    {"health-scheduled-change.json", KP_INTERRUPT_SCHEDULED_CHANGE,
     "i-01111111111111111 i-02222222222222222", 0},
    {"health-issue.json", KP_INTERRUPT_NOOP, "", 0},
    {"health-other-service.json", KP_INTERRUPT_NOOP, "", 0},
    {"unknown-detail-type.json", KP_INTERRUPT_NOOP, "", 0},
    {"spot-version-1.json", KP_INTERRUPT_NOOP, "", 0},
    {"spot-id-not-string.json", KP_INTERRUPT_NOOP, "", KP_EINVALID},
    {"spot-bad-time.json", KP_INTERRUPT_NOOP, "", KP_EINVALID},
    {"spot-detail-not-object.json", KP_INTERRUPT_NOOP, "", KP_EINVALID},
    {"health-entities-not-list.json", KP_INTERRUPT_NOOP, "", KP_EINVALID},
    {"truncated.json", KP_INTERRUPT_NOOP, "", KP_EINVALID},
    {"not-object.json", KP_INTERRUPT_NOOP, "", KP_EINVALID},
};

static char *fixture(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "interruption/%s", name);
    return dbl_fixture(path);
}

static void check_case(const parse_case *c)
{
    char *body = fixture(c->file);
    kp_arena *a = kp_arena_new();
    kp_interruption m;
    memset(&m, 0xA5, sizeof(m)); /* the parser must set every field */
    int err = kp_aws_interruption_parse(body, a, &m);
    cr_assert_eq(err, c->err, "%s: %d (%s)", c->file, err, kp_error_last());
    cr_expect_eq(m.kind, c->kind, "%s: kind %d", c->file, m.kind);
    cr_expect_str_eq(m.kind_name, kp_interruption_kind_name(c->kind));
    char got[256] = "";
    for (uint32_t i = 0; i < m.n_ids; i++)
        snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "",
                 m.instance_ids[i]);
    cr_expect_str_eq(got, c->ids, "%s", c->file);
    cr_expect_null(m.handle);
    if (c->err) {
        cr_expect_not_null(m.parse_error);
        cr_expect_neq(strlen(m.parse_error), 0);
    } else {
        cr_expect_null(m.parse_error, "%s: %s", c->file, m.parse_error);
        cr_expect_not_null(m.id);
        cr_expect_gt(m.start_ns, 0);
    }
    kp_arena_free(a);
    free(body);
}

Test(interruption, every_event_kind)
{
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++)
        check_case(&CASES[i]);
}

static int64_t at(const char *rfc3339)
{
    int64_t ns = 0;
    cr_assert_eq(kp_time_parse_rfc3339(rfc3339, &ns), 0);
    return ns;
}

Test(interruption, spot_deadline_is_two_minutes_after_the_warning)
{
    char *body = fixture("spot-warning.json");
    kp_arena *a = kp_arena_new();
    kp_interruption m;
    cr_assert_eq(kp_aws_interruption_parse(body, a, &m), 0);
    cr_expect_eq(m.start_ns, at("2026-03-04T05:06:07Z"));
    cr_expect_eq(m.deadline_ns, at("2026-03-04T05:08:07Z"));
    cr_expect_str_eq(m.id, "7f0c0a2e-1111-4c3b-9d5e-000000000001");
    cr_expect_str_eq(m.kind_name, "spot_interrupted");
    kp_arena_free(a);
    free(body);
}

Test(interruption, scheduled_change_deadline_is_the_health_event_start)
{
    char *body = fixture("health-scheduled-change.json");
    kp_arena *a = kp_arena_new();
    kp_interruption m;
    cr_assert_eq(kp_aws_interruption_parse(body, a, &m), 0);
    cr_expect_eq(m.start_ns, at("2026-03-01T08:00:00Z"));
    cr_expect_eq(m.deadline_ns, at("2026-03-10T22:30:00Z"));
    kp_arena_free(a);
    free(body);
}

Test(interruption, other_kinds_have_no_deadline)
{
    const char *files[] = {"rebalance.json", "state-stopping.json", "capacity-reservation.json"};
    for (size_t i = 0; i < 3; i++) {
        char *body = fixture(files[i]);
        kp_arena *a = kp_arena_new();
        kp_interruption m;
        cr_assert_eq(kp_aws_interruption_parse(body, a, &m), 0);
        cr_expect_eq(m.deadline_ns, 0, "%s", files[i]);
        kp_arena_free(a);
        free(body);
    }
}

Test(interruption, empty_bodies_are_noops_without_error)
{
    kp_arena *a = kp_arena_new();
    kp_interruption m;
    cr_expect_eq(kp_aws_interruption_parse("", a, &m), 0);
    cr_expect_eq(m.kind, KP_INTERRUPT_NOOP);
    cr_expect_eq(kp_aws_interruption_parse(NULL, a, &m), 0);
    cr_expect_eq(m.n_ids, 0);
    cr_expect_str_eq(m.kind_name, "no_op");
    kp_arena_free(a);
}

Test(interruption, kind_names_and_actions_follow_karpenter)
{
    struct {
        enum kp_interruption_kind k;
        const char *name;
        bool deletes;
    } t[] = {
        {KP_INTERRUPT_SPOT, "spot_interrupted", true},
        {KP_INTERRUPT_SCHEDULED_CHANGE, "scheduled_change", true},
        {KP_INTERRUPT_STOPPING, "instance_stopped", true},
        {KP_INTERRUPT_TERMINATING, "instance_terminated", true},
        {KP_INTERRUPT_REBALANCE, "rebalance_recommendation", false},
        {KP_INTERRUPT_CAPACITY_RESERVATION, "capacity_reservation_interrupted", true},
        {KP_INTERRUPT_NOOP, "no_op", false},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        cr_expect_str_eq(kp_interruption_kind_name(t[i].k), t[i].name);
        cr_expect_eq(kp_interruption_kind_deletes(t[i].k), t[i].deletes, "%s", t[i].name);
    }
}

/* ---- the SQS source on the double -------------------------------------- */

static dbl_server server;
static kp_aws_credentials *creds;
static kp_aws_client *client;
static kp_interruption_source *src;
static kp_aws_ice_cache *ice;
static kp_fake_clock clk;
static char *bodies[4];

static void serve(const dbl_response *script, size_t n, const char *queue)
{
    dbl_start(&server, script, n);
    kp_aws_creds c = {.access_key_id = "AKIDTEST", .secret_access_key = "secret"};
    cr_assert_eq(kp_aws_credentials_new_static(&creds, &c), 0);
    kp_aws_client_options o = {
        .region = "eu-west-1", .endpoint_url = server.url, .credentials = creds, .max_attempts = 1};
    KP_ASSERT_OK(kp_aws_client_new(&client, &o));
    kp_fake_clock_init(&clk, 1000 * KP_NS_PER_SEC);
    ice = kp_aws_ice_cache_new(&clk.base);
    kp_aws_interruption_opts io = {.sqs = client, .queue_name = queue, .ice = ice};
    KP_ASSERT_OK(kp_aws_interruption_source_new(&io, &src));
}

static void sqs_teardown(void)
{
    src = kp_interruption_source_free(src);
    ice = kp_aws_ice_cache_free(ice);
    client = kp_aws_client_free(client);
    creds = kp_aws_credentials_free(creds);
    dbl_free(&server);
    for (size_t i = 0; i < 4; i++) {
        free(bodies[i]);
        bodies[i] = NULL;
    }
}

TestSuite(interruption_sqs, .fini = sqs_teardown);

/* A ReceiveMessage answer carrying the given bodies (JSON-escaped). */
static char *receive_answer(const char *const *msgs, size_t n)
{
    kp_buf b = KP_BUF_INIT(1 << 20);
    KP_ASSERT_OK(kp_buf_puts(&b, "{\"Messages\":["));
    for (size_t i = 0; i < n; i++) {
        KP_ASSERT_OK(kp_buf_printf(&b,
                                   "%s{\"MessageId\":\"m-%zu\",\"ReceiptHandle\":\"rh-%zu\","
                                   "\"Attributes\":{\"SentTimestamp\":\"1772600000000\"},\"Body\":",
                                   i ? "," : "", i, i));
        KP_ASSERT_OK(kp_buf_json_string(&b, msgs[i]));
        KP_ASSERT_OK(kp_buf_puts(&b, "}"));
    }
    KP_ASSERT_OK(kp_buf_puts(&b, "]}"));
    return kp_buf_detach(&b);
}

Test(interruption_sqs, receive_parse_observe_and_ack)
{
    bodies[0] = fixture("spot-warning.json");
    bodies[1] = fixture("truncated.json");
    const char *msgs[] = {bodies[0], bodies[1], ""};
    bodies[2] = receive_answer(msgs, 3);
    dbl_response script[] = {
        {200, NULL, "{\"QueueUrl\":\"http://127.0.0.1/123456789012/kp-interruption\"}"},
        {200, NULL, bodies[2]},
        {200, NULL, "{}"},
        {200, NULL, "{}"},
    };
    serve(script, 4, "kp-interruption");
    cr_expect_str_eq(src->ops->name(src), "kp-interruption");
    kp_arena *a = kp_arena_new();
    kp_interruption *got = NULL;
    uint32_t n = 0;
    cr_assert_eq(src->ops->receive(src, a, &got, &n, 20), 0, "%s", kp_error_last());
    cr_assert_eq(n, 3);
    cr_expect_eq(got[0].kind, KP_INTERRUPT_SPOT);
    cr_expect_str_eq(got[0].handle, "rh-0");
    cr_expect_eq(got[1].kind, KP_INTERRUPT_NOOP);
    cr_expect_not_null(got[1].parse_error, "a bad body still comes back, to be acknowledged");
    cr_expect_str_eq(got[1].handle, "rh-1");
    cr_expect_str_eq(got[1].id, "m-1", "without an event id the SQS message id is used");
    cr_expect_eq(got[2].kind, KP_INTERRUPT_NOOP);
    cr_expect_null(got[2].parse_error);
    cr_expect_eq(got[2].start_ns, INT64_C(1772600000000) * KP_NS_PER_MS, "SentTimestamp");

    src->ops->observe(src, &got[0], "m5.large", "eu-west-1a", "spot", NULL);
    cr_expect(kp_aws_ice_unavailable(ice, "spot", "m5.large", "eu-west-1a"));
    src->ops->observe(src, &got[2], "c5.large", "eu-west-1a", "spot", NULL);
    cr_expect_not(kp_aws_ice_unavailable(ice, "spot", "c5.large", "eu-west-1a"),
                  "only spot interruptions mark offerings");

    cr_assert_eq(src->ops->ack(src, &got[0]), 0, "%s", kp_error_last());
    cr_assert_eq(src->ops->ack(src, &got[1]), 0, "%s", kp_error_last());
    dbl_stop(&server);
    cr_assert_eq(server.n_requests, 4, "the queue URL is looked up once");
    char h[256];
    cr_expect_str_eq(dbl_header(&server.requests[0], "X-Amz-Target", h, sizeof(h)),
                     "AmazonSQS.GetQueueUrl");
    const char *rx = server.requests[1].body;
    cr_expect(strstr(rx, "\"MaxNumberOfMessages\":10") != NULL, "%s", rx);
    cr_expect(strstr(rx, "\"VisibilityTimeout\":20") != NULL, "%s", rx);
    cr_expect(strstr(rx, "\"WaitTimeSeconds\":20") != NULL, "%s", rx);
    cr_expect(strstr(rx, "SentTimestamp") != NULL);
    cr_expect(strstr(server.requests[2].body, "\"ReceiptHandle\":\"rh-0\"") != NULL);
    cr_expect(strstr(server.requests[3].body, "\"ReceiptHandle\":\"rh-1\"") != NULL);
    kp_arena_free(a);
}

Test(interruption_sqs, a_missing_queue_is_looked_up_again)
{
    const char *gone = "{\"__type\":\"com.amazonaws.sqs#QueueDoesNotExist\","
                       "\"message\":\"The specified queue does not exist.\"}";
    dbl_response script[] = {
        {200, NULL, "{\"QueueUrl\":\"http://127.0.0.1/1/q\"}"},
        {400, NULL, gone},
        {200, NULL, "{\"QueueUrl\":\"http://127.0.0.1/1/q\"}"},
        {200, NULL, "{}"},
    };
    serve(script, 4, "q");
    kp_arena *a = kp_arena_new();
    kp_interruption *got = NULL;
    uint32_t n = 7;
    cr_assert_eq(src->ops->receive(src, a, &got, &n, 0), KP_ENOTFOUND);
    cr_assert_eq(src->ops->receive(src, a, &got, &n, 99), 0, "%s", kp_error_last());
    cr_expect_eq(n, 0);
    dbl_stop(&server);
    cr_assert_eq(server.n_requests, 4);
    char h[256];
    cr_expect_str_eq(dbl_header(&server.requests[2], "X-Amz-Target", h, sizeof(h)),
                     "AmazonSQS.GetQueueUrl");
    cr_expect(strstr(server.requests[3].body, "\"WaitTimeSeconds\":20") != NULL,
              "waits are capped at SQS's 20 s");
    kp_arena_free(a);
}

Test(interruption_sqs, a_queue_url_is_used_as_is_and_options_are_checked)
{
    dbl_response script[] = {{200, NULL, "{}"}};
    char url[128];
    dbl_start(&server, script, 1);
    snprintf(url, sizeof(url), "%s/123456789012/q", server.url);
    kp_aws_creds c = {.access_key_id = "AKIDTEST", .secret_access_key = "secret"};
    cr_assert_eq(kp_aws_credentials_new_static(&creds, &c), 0);
    kp_aws_client_options o = {
        .region = "eu-west-1", .endpoint_url = server.url, .credentials = creds, .max_attempts = 1};
    cr_assert_eq(kp_aws_client_new(&client, &o), 0);
    kp_aws_interruption_opts bad = {.sqs = client, .queue_name = "q", .max_messages = 11};
    cr_expect_eq(kp_aws_interruption_source_new(&bad, &src), KP_EINVALID);
    kp_aws_interruption_opts none = {.sqs = client};
    cr_expect_eq(kp_aws_interruption_source_new(&none, &src), KP_EINVALID);
    cr_assert_null(src);
    kp_aws_interruption_opts io = {
        .sqs = client, .queue_name = url, .max_messages = 3, .visibility_timeout = 45};
    cr_assert_eq(kp_aws_interruption_source_new(&io, &src), 0);
    kp_arena *a = kp_arena_new();
    kp_interruption *got = NULL;
    uint32_t n = 0;
    cr_assert_eq(src->ops->receive(src, a, &got, &n, 0), 0, "%s", kp_error_last());
    kp_interruption no_handle = {.kind = KP_INTERRUPT_NOOP};
    cr_expect_eq(src->ops->ack(src, &no_handle), KP_EINVALID);
    dbl_stop(&server);
    cr_assert_eq(server.n_requests, 1, "no GetQueueUrl for a URL");
    cr_expect(strstr(server.requests[0].body, "\"MaxNumberOfMessages\":3") != NULL);
    cr_expect(strstr(server.requests[0].body, "\"VisibilityTimeout\":45") != NULL);
    kp_arena_free(a);
}
