/* CapacityBuffers in the controller (controller/capacitybuffer_ctrl.c and the
 * provisioner's part) against the fake API server: status as Karpenter
 * writes it, NodeClaims launched for the virtual pods with no event on pods
 * that do not exist, the Provisioning condition moving from
 * RequiresNewCapacity to FitsExistingCapacity once the room is there, and a
 * buffer whose template is missing or that is deleted wanting nothing. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "controller/capacitybuffer_ctrl.h"
#include "controller/provisioner.h"
#include "helpers/ctrl_harness.h"

#define T0 INT64_C(1767225600000000000) /* 2026-01-01T00:00:00Z */
#define CLAIMS "/apis/karpenter.sh/v1/nodeclaims"
#define POOLS "/apis/karpenter.sh/v1/nodepools"
#define BUFFERS "/apis/autoscaling.x-k8s.io/v1beta1/namespaces/default/capacitybuffers"
#define TEMPLATES "/api/v1/namespaces/default/podtemplates"

static harness h;
static kp_buffers *buffers;
static kp_provisioner *prov;

static void setup(void)
{
    harness_start(&h, T0);
    h.c.opts.capacity_buffer = true;
    buffers = kp_buffers_new();
    h.c.buffers = buffers;
    prov = kp_provisioner_new(&h.c);
    h.c.provisioner = prov;
    harness_put(&h, KP_CK_NODEPOOL, POOLS, "default",
                "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":\"default\",\"uid\":"
                "\"p1\"},\"spec\":{\"template\":{\"spec\":{\"requirements\":[{\"key\":\"karpenter.sh/capacity-type\","
                "\"operator\":\"In\",\"values\":[\"on-demand\"]},{\"key\":\"node.kubernetes.io/instance-type\","
                "\"operator\":\"In\",\"values\":[\"m5.large\",\"m5.xlarge\"]}],\"nodeClassRef\":{\"group\":"
                "\"karpenter.test\",\"kind\":\"FakeNodeClass\",\"name\":\"d\"}}}},\"status\":{" HARNESS_POOL_READY "}}");
}

static void teardown(void)
{
    h.c.provisioner = NULL;
    prov = kp_provisioner_free(prov);
    h.c.buffers = NULL;
    buffers = kp_buffers_free(buffers);
    harness_stop(&h);
}

TestSuite(buffer_ctrl, .init = setup, .fini = teardown, .timeout = 90);

static void put_template(void)
{
    fake_api_put(h.fa, TEMPLATES,
                 "{\"apiVersion\":\"v1\",\"kind\":\"PodTemplate\",\"metadata\":{\"name\":\"slot\",\"namespace\":"
                 "\"default\",\"generation\":4},\"template\":{\"metadata\":{\"labels\":{\"app\":\"slot\"}},\"spec\":"
                 "{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":"
                 "\"512Mi\"}}}]}}}");
}

static void put_buffer(const char *name, const char *spec)
{
    char json[1024], key[128];
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"autoscaling.x-k8s.io/v1beta1\",\"kind\":\"CapacityBuffer\",\"metadata\":{\"name\":"
             "\"%s\",\"namespace\":\"default\",\"uid\":\"b-%s\",\"generation\":1},\"spec\":{%s}}",
             name, name, spec);
    snprintf(key, sizeof(key), "default/%s", name);
    harness_put(&h, KP_CK_CAPACITYBUFFER, BUFFERS, key, json);
}

static void reconcile(const char *key)
{
    int64_t requeue = 0;
    cr_assert_eq(kp_buffer_reconcile(&h.c, buffers, key, &requeue), 0, "%s", kp_error_last());
    cr_expect_eq(requeue, 30000, "resolved again in 30 s");
}

/* The buffer as the server has it (cJSON_Delete it). */
static cJSON *server_buffer(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), BUFFERS "/%s", name);
    cJSON *o = fake_api_get(h.fa, path);
    cr_assert_not_null(o);
    return o;
}

static const char *cond(const cJSON *obj, const char *type, const char *field)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "status"),
                                                          "conditions"))
    {
        const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type"));
        if (t && !strcmp(t, type))
            return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, field));
    }
    return NULL;
}

static void count_one(void *ctx, const char *key, const cJSON *obj)
{
    (void)key, (void)obj;
    ++*(int *)ctx;
}

static int claims(void)
{
    int n = 0;
    kp_informer_foreach(h.c.informers[KP_CK_NODECLAIM], count_one, &n);
    return n;
}

/* Wait until the cache has the buffer's status as written. */
static void sync_buffer(const char *name, const char *cond_type, const char *reason)
{
    char key[128];
    snprintf(key, sizeof(key), "default/%s", name);
    for (int i = 0; i < 200; i++) {
        cJSON *o = harness_get(&h, KP_CK_CAPACITYBUFFER, key);
        const char *r = o ? cond(o, cond_type, "reason") : NULL;
        bool ok = r && !strcmp(r, reason);
        cJSON_Delete(o);
        if (ok)
            return;
        usleep(10000);
    }
    cr_assert_fail("%s never got %s=%s in the cache", name, cond_type, reason);
}

Test(buffer_ctrl, a_ready_buffer_gets_room_and_then_fits_it)
{
    put_template();
    put_buffer("warm", "\"podTemplateRef\":{\"name\":\"slot\"},\"replicas\":2,\"provisioningStrategy\":"
                       "\"buffer.x-k8s.io/active-capacity\"");
    reconcile("default/warm");
    cJSON *b = server_buffer("warm");
    char *text = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(b, "status"));
    cr_expect(strstr(text, "\"replicas\":2"), "%s", text);
    cr_expect(strstr(text, "\"podTemplateRef\":{\"name\":\"slot\"}"), "%s", text);
    cr_expect(strstr(text, "\"podTemplateGeneration\":4"), "%s", text);
    cr_expect(strstr(text, "\"provisioningStrategy\":\"buffer.x-k8s.io/active-capacity\""), "%s", text);
    cr_expect_str_eq(cond(b, "ReadyForProvisioning", "status"), "True");
    cr_expect_str_eq(cond(b, "ReadyForProvisioning", "reason"), "Resolved");
    cJSON_free(text);
    cJSON_Delete(b);
    sync_buffer("warm", "ReadyForProvisioning", "Resolved");

    kp_provision_result r;
    cr_assert_eq(kp_provisioner_run_once(prov, &r), 0, "%s", kp_error_last());
    cr_expect_eq(r.pending, 2, "the two chunks are planned as pods");
    cr_expect_eq(r.claims_created, 1);
    cr_expect_eq(claims(), 1);
    b = server_buffer("warm");
    cr_expect_str_eq(cond(b, "Provisioning", "reason"), "RequiresNewCapacity");
    cr_expect_str_eq(cond(b, "Provisioning", "message"), "2/2 virtual pods required new capacity, 0 failed");
    cJSON_Delete(b);
    cr_expect_eq(harness_events(&h, "Nominated", NULL), 0, "no event on pods that do not exist");
    sync_buffer("warm", "Provisioning", "RequiresNewCapacity");

    cr_assert_eq(kp_provisioner_run_once(prov, &r), 0, "%s", kp_error_last());
    cr_expect_eq(r.claims_created, 0, "the room is there: the claim in flight holds it");
    b = server_buffer("warm");
    cr_expect_str_eq(cond(b, "Provisioning", "status"), "True");
    cr_expect_str_eq(cond(b, "Provisioning", "reason"), "FitsExistingCapacity");
    cJSON_Delete(b);
}

Test(buffer_ctrl, a_buffer_without_its_template_wants_nothing)
{
    put_buffer("lost", "\"podTemplateRef\":{\"name\":\"nope\"},\"replicas\":2");
    reconcile("default/lost");
    cJSON *b = server_buffer("lost");
    cr_expect_str_eq(cond(b, "ReadyForProvisioning", "status"), "False");
    cr_expect_str_eq(cond(b, "ReadyForProvisioning", "reason"), "PodTemplateNotFound");
    cr_expect_str_eq(cond(b, "ReadyForProvisioning", "message"), "podtemplates \"nope\" not found");
    cJSON_Delete(b);
    sync_buffer("lost", "ReadyForProvisioning", "PodTemplateNotFound");
    kp_provision_result r;
    cr_assert_eq(kp_provisioner_run_once(prov, &r), 0, "%s", kp_error_last());
    cr_expect_eq(r.pending, 0);
    cr_expect_eq(claims(), 0);
    b = server_buffer("lost");
    cr_expect_str_eq(cond(b, "Provisioning", "reason"), "NotReadyForProvisioning");
    cJSON_Delete(b);
}

Test(buffer_ctrl, a_deleted_buffer_takes_its_pods_away)
{
    put_template();
    put_buffer("warm", "\"podTemplateRef\":{\"name\":\"slot\"},\"replicas\":3");
    reconcile("default/warm");
    kp_arena *a = kp_arena_new();
    const kp_pod **pods;
    cr_expect_eq(kp_buffers_virtual_pods(buffers, a, &pods), 3);
    cr_expect_str_eq(pods[0]->meta.namespace, "default");
    cr_assert(fake_api_remove(h.fa, BUFFERS "/warm"));
    cr_assert(harness_wait(&h, KP_CK_CAPACITYBUFFER, "default/warm", false));
    int64_t requeue = 0;
    cr_assert_eq(kp_buffer_reconcile(&h.c, buffers, "default/warm", &requeue), 0);
    cr_expect_eq(kp_buffers_virtual_pods(buffers, a, &pods), 0);
    kp_arena_free(a);
}
