/*
 * A kp_ctrl for unit tests of the controllers: the fake API server, a client,
 * every informer the controller runs (started and synced, with its indexes),
 * metrics, the background event writer, a fake clock, and a fake cloud
 * provider that counts its calls and fails on demand. Objects are put into
 * the fake server with harness_put(), which waits for the caches to see them.
 *
 * The fake provider owns node class karpenter.test/FakeNodeClass and provider
 * IDs "fake://NAME"; its instances are a list the test fills (instances
 * listed / got) and its answers can be forced per call.
 */
#ifndef KP_TEST_CTRL_HARNESS_H
#define KP_TEST_CTRL_HARNESS_H

#include "controller/ctrl.h"
#include "controller/metrics_ctrl.h"
#include "helpers/fake_apiserver.h"

#include <stdbool.h>

typedef struct fake_cloud {
    kp_cloud_provider base;
    int creates, deletes, gets, lists;
    int create_err, delete_err, get_err, list_err; /* forced answers; 0: normal */
    char instances[16][128];                       /* provider IDs that exist */
    const char *drift_reason;                      /* what is_drifted answers (NULL: not drifted) */
    int drift_checks;
    kp_catalog *catalog;                           /* instance_types(): the built-in AWS catalog */
    int n_instances;
} fake_cloud;

typedef struct harness {
    fake_api *fa;
    kp_ctrl c;
    kp_ctrl_metrics m;
    kp_fake_clock clock;
    fake_cloud cloud;
} harness;

/* Start everything (the clock at `now_ns`); free with harness_stop. */
void harness_start(harness *h, int64_t now_ns);
void harness_stop(harness *h);

/* Put a JSON object into the fake server at `collection` ("/api/v1/nodes")
 * and wait until the informer of `kind` has it (key "ns/name" or "name"). */
void harness_put(harness *h, enum kp_ctrl_kind kind, const char *collection, const char *key, const char *json);
/* Wait until the informer of `kind` has (present) or lacks `key`. */
bool harness_wait(harness *h, enum kp_ctrl_kind kind, const char *key, bool present);

/* A cached object (cJSON_Delete it), or NULL. */
cJSON *harness_get(harness *h, enum kp_ctrl_kind kind, const char *key);
/* The status of condition `type` of a cached object, or NULL. */
const char *harness_condition(harness *h, enum kp_ctrl_kind kind, const char *key, const char *type, char *buf,
                              size_t size);

/* Events written so far with `reason` (flushes the writer first). */
int harness_events(harness *h, const char *reason, const char *message_part);

#endif
