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
#include "kube/resources.h"

#include <criterion/criterion.h>

#include <stdbool.h>

/* The clock's start (2026-01-01T00:00:00Z) and the collections tests write. */
#define HARNESS_T0 INT64_C(1767225600000000000)
#define HARNESS_NODES "/api/v1/nodes"
#define HARNESS_PODS "/api/v1/namespaces/default/pods"
#define HARNESS_CLAIMS "/apis/karpenter.sh/v1/nodeclaims"
#define HARNESS_POOLS "/apis/karpenter.sh/v1/nodepools"
#define HARNESS_CLASSES "/apis/karpenter.k8s.aws/v1/ec2nodeclasses"
/* A nodeClassRef of the fake provider, one of another provider (AWS), and
 * a provider ID of that other provider. */
#define HARNESS_OUR_CLASS "{\"group\":\"karpenter.test\",\"kind\":\"FakeNodeClass\",\"name\":\"d\"}"
#define HARNESS_AWS_CLASS "{\"group\":\"karpenter.k8s.aws\",\"kind\":\"EC2NodeClass\",\"name\":\"d\"}"
#define HARNESS_AWS_ID "aws:///us-east-1a/i-0123456789abcdef0"
/* A NodePool's status members saying it is Ready (the provisioner plans
 * only for Ready NodePools); harness_put_pool's default. */
#define HARNESS_POOL_READY                                                                       \
    "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"Ready\",\"message\":" \
    "\"\",\"lastTransitionTime\":\"2025-01-01T00:00:00Z\"}]"

typedef struct fake_cloud {
    kp_cloud_provider base;
    int creates, deletes, gets, lists;
    int create_err, delete_err, get_err, list_err; /* forced answers; 0: normal */
    char instances[16][128];                       /* provider IDs that exist */
    int64_t created_ns[16];                        /* when each was made, as list() says (0: unknown) */
    char last_deleted[128];                        /* the provider ID delete() was last asked for */
    const char *drift_reason;                      /* what is_drifted answers (NULL: not drifted) */
    int drift_checks;
    kp_catalog *catalog;                           /* instance_types(): the built-in AWS catalog */
    int types_err;                                 /* forced answer of instance_types(); 0: normal */
    int n_instances;
} fake_cloud;

typedef struct harness {
    fake_api *fa;
    kp_ctrl c;
    kp_ctrl_metrics m;
    kp_fake_clock clock;
    fake_cloud cloud;
} harness;

/* A Criterion suite whose tests each run with `h` (a static harness)
 * started at HARNESS_T0 and stopped after the test. */
#define HARNESS_SUITE(suite)                                                                                           \
    static harness h;                                                                                                  \
    static void harness_suite_init(void)                                                                               \
    {                                                                                                                  \
        harness_start(&h, HARNESS_T0);                                                                                 \
    }                                                                                                                  \
    static void harness_suite_fini(void)                                                                               \
    {                                                                                                                  \
        harness_stop(&h);                                                                                              \
    }                                                                                                                  \
    TestSuite(suite, .init = harness_suite_init, .fini = harness_suite_fini, .timeout = 60)

/* Start everything (the clock at `now_ns`); free with harness_stop. */
void harness_start(harness *h, int64_t now_ns);
void harness_stop(harness *h);

/* Watch `res` as `kind` too (the node class informer the harness does not
 * start: KP_CK_NODECLASS with KP_RES_EC2NODECLASS); synced on return. */
void harness_add_informer(harness *h, enum kp_ctrl_kind kind, enum kp_kube_res res);

/* Put a JSON object into the fake server at `collection` ("/api/v1/nodes")
 * and wait until the informer of `kind` has it (key "ns/name" or "name"). */
void harness_put(harness *h, enum kp_ctrl_kind kind, const char *collection, const char *key, const char *json);
/* Wait until the informer of `kind` holds the version of the object at
 * `path` ("/api/v1/nodes/n1") that the fake server has now, under `key`. */
void harness_sync(harness *h, enum kp_ctrl_kind kind, const char *path, const char *key);
/* Wait until the informer of `kind` has (present) or lacks `key`. */
bool harness_wait(harness *h, enum kp_ctrl_kind kind, const char *key, bool present);

/*
 * Objects for the fake server, as JSON. Every part but `name` may be NULL;
 * `labels`, `annotations`, `meta`, `spec` and `status` are members of those
 * maps (`meta`, `spec`, `status`: more members, written after the ones the
 * builder makes, each starting with a comma). Each is put and waited for.
 */
typedef struct harness_obj {
    const char *name;
    const char *class_ref;   /* nodeClassRef; NULL: HARNESS_OUR_CLASS (claims, pools) */
    const char *provider_id; /* NULL: none */
    const char *node_name;   /* a claim's status.nodeName; NULL: none */
    const char *labels;      /* NULL: "karpenter.sh/nodepool": "default" */
    const char *annotations;
    const char *meta, *spec, *status;
    const char *template;    /* a pool's more spec.template.spec members */
} harness_obj;

/* A NodeClaim of pool default (uid "c-NAME"). */
void harness_put_claim(harness *h, harness_obj o);
/* A Node (uid "n-NAME"). */
void harness_put_node(harness *h, harness_obj o);
/* A NodePool (uid "np-NAME"). */
void harness_put_pool(harness *h, harness_obj o);

/* The object at `path` on the server as `collection`/`name` (cJSON_Delete
 * it), or NULL when it is not there. */
cJSON *harness_stored(harness *h, const char *collection, const char *name);

/* Whether the server has `collection`/`name`. */
bool harness_exists(harness *h, const char *collection, const char *name);

/* A cached object (cJSON_Delete it), or NULL. */
cJSON *harness_get(harness *h, enum kp_ctrl_kind kind, const char *key);
/* The status of condition `type` of a cached object, or NULL. */
const char *harness_condition(harness *h, enum kp_ctrl_kind kind, const char *key, const char *type, char *buf,
                              size_t size);

/* Events written so far with `reason` (flushes the writer first). */
int harness_events(harness *h, const char *reason, const char *message_part);

#endif
