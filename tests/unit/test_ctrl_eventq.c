/* The background event writer (controller/eventq.h) against the fake API server:
 * Karpenter's dedupe of the same event about the same object. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "controller/eventq.h"
#include "helpers/fake_apiserver.h"

static fake_api *fa;
static kp_kube_client *client;

static void setup(void)
{
    fa = fake_api_start();
    cr_assert_not_null(fa);
    kp_kube_config cfg = {0};
    cfg.server = (char *)fake_api_url(fa);
    kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
    o.qps = 0;
    cr_assert_eq(kp_kube_client_new(&client, &cfg, &o), 0);
}

static void teardown(void)
{
    kp_kube_client_free(client);
    fake_api_stop(fa);
}

TestSuite(eventq, .init = setup, .fini = teardown);

static cJSON *node(const char *name, const char *uid)
{
    char json[256];
    snprintf(json, sizeof(json), "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"uid\":\"%s\"}}",
             name, uid);
    return cJSON_Parse(json);
}

static size_t events_written(void)
{
    return fake_api_count(fa, "POST", "/api/v1/namespaces/default/events") +
           fake_api_count(fa, "PATCH", "/api/v1/namespaces/default/events");
}

Test(eventq, the_same_event_about_the_same_object_is_written_once_per_window)
{
    kp_eventq *q = kp_eventq_start(client, "karpenter", 64);
    cJSON *a = node("a", "uid-a"), *b = node("b", "uid-b");
    for (int i = 0; i < 5; i++)
        kp_eventq_post(q, KP_RES_NODE, a, "Warning", "FailedDraining", "Failed to drain node, x");
    kp_eventq_post(q, KP_RES_NODE, b, "Warning", "FailedDraining", "Failed to drain node, x");
    kp_eventq_post(q, KP_RES_NODE, a, "Warning", "FailedDraining", "Failed to drain node, y");
    kp_eventq_post_dedupe(q, KP_RES_NODE, a, "Normal", "Evicted", "Evicted pod: Drifted", NULL, 0);
    kp_eventq_post_dedupe(q, KP_RES_NODE, a, "Normal", "Evicted", "Evicted pod: Drifted", NULL, 0);
    kp_eventq_post_dedupe(q, KP_RES_NODE, a, "Normal", "Unconsolidatable", "one", "a-key", 60LL * 1000000000);
    kp_eventq_post_dedupe(q, KP_RES_NODE, a, "Normal", "Unconsolidatable", "another message, same key", "a-key",
                          60LL * 1000000000);
    q = kp_eventq_stop(q);
    /* a x1, b x1, a with another message x1, two undeduped, one per key. */
    cr_expect_eq(events_written(), 6, "%zu written", events_written());
    cJSON_Delete(a), cJSON_Delete(b);
}

/* One key per object and reason: a controller that saw 20,000 pods come and
 * go must not remember each of them for ever. */
Test(eventq, dedupe_keys_whose_window_passed_are_forgotten)
{
    kp_eventq *q = kp_eventq_start(client, "karpenter", 1);
    cJSON *a = node("a", "uid-a");
    char key[64];
    for (int i = 0; i < 3000; i++) {
        snprintf(key, sizeof(key), "pod-%d", i);
        kp_eventq_post_dedupe(q, KP_RES_NODE, a, "Normal", "Nominated", "x", key, 1); /* a 1 ns window */
    }
    size_t remembered = kp_eventq_remembered(q);
    cr_expect_lt(remembered, 2048, "%zu keys remembered of 3000 expired ones", remembered);
    /* A key still inside its window is kept, and still deduplicates. */
    kp_eventq_post_dedupe(q, KP_RES_NODE, a, "Normal", "Nominated", "x", "long", 600LL * 1000000000);
    for (int i = 0; i < 3000; i++) {
        snprintf(key, sizeof(key), "again-%d", i);
        kp_eventq_post_dedupe(q, KP_RES_NODE, a, "Normal", "Nominated", "x", key, 1);
    }
    size_t deduped = kp_eventq_deduped(q);
    kp_eventq_post_dedupe(q, KP_RES_NODE, a, "Normal", "Nominated", "x", "long", 600LL * 1000000000);
    cr_expect_eq(kp_eventq_deduped(q), deduped + 1, "the live key was forgotten");
    q = kp_eventq_stop(q);
    cJSON_Delete(a);
}
