/*
 * CapacityBuffers (shared/api/capacitybuffer.c, their expansion in
 * shared/scheduling/manifests.c and their place in the disruption planner),
 * from the behaviours Karpenter's suites assert
 * (pkg/controllers/capacitybuffer/{helpers,suite}_test.go and
 * pkg/controllers/provisioning/buffers_test.go): the chunks from replicas,
 * percentage and limits, the virtual pods' shape, the conditions, and a node
 * that holds buffer room kept from emptiness.
 */
#include "disruption_scenarios.h"
#include "api/capacitybuffer.h"

static kp_arena *arena;

static void setup(void)
{
    arena = kp_arena_new();
}

static void teardown(void)
{
    kp_arena_free(arena);
}

TestSuite(capacitybuffer, .init = setup, .fini = teardown);

static int decode(const char *json, kp_capacity_buffer *out)
{
    cJSON *obj = cJSON_Parse(json);
    cr_assert_not_null(obj, "bad test JSON: %s", json);
    int err = kp_decode_capacity_buffer(arena, obj, out);
    cJSON_Delete(obj);
    return err;
}

#define BUFFER(spec)                                                                                             \
    "{\"apiVersion\":\"autoscaling.x-k8s.io/v1beta1\",\"kind\":\"CapacityBuffer\",\"metadata\":{\"name\":\"b\","  \
    "\"namespace\":\"ns\",\"uid\":\"u\"},\"spec\":{" spec "}}"

static kp_pod *pod_of(const char *template_json)
{
    cJSON *obj = cJSON_Parse(template_json);
    kp_pod *pod = KP_ARENA_NEW(arena, kp_pod, 1);
    cr_assert_eq(kp_decode_pod_template_object(arena, obj, pod), 0, "%s", kp_error_last());
    cJSON_Delete(obj);
    return pod;
}

#define TEMPLATE(containers)                                                                                     \
    "{\"apiVersion\":\"v1\",\"kind\":\"PodTemplate\",\"metadata\":{\"name\":\"t\",\"namespace\":\"ns\","         \
    "\"generation\":3},\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{" containers "}}}"

#define ONE_CPU "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]"

typedef struct chunks_case {
    const char *name;
    const char *spec;
    int32_t scalable; /* the workload's replicas, -1: none */
    int32_t want;
} chunks_case;

static const chunks_case chunks_cases[] = {
    {"replicas", "\"podTemplateRef\":{\"name\":\"t\"},\"replicas\":3", -1, 3},
    {"limits alone: as many as fit, floored", "\"podTemplateRef\":{\"name\":\"t\"},\"limits\":{\"cpu\":\"4500m\"}", -1,
     4},
    {"the least over several limits", "\"podTemplateRef\":{\"name\":\"t\"},\"limits\":{\"cpu\":\"8\",\"memory\":\"3Gi\"}",
     -1, 3},
    {"limits cap replicas", "\"podTemplateRef\":{\"name\":\"t\"},\"replicas\":10,\"limits\":{\"cpu\":\"2\"}", -1, 2},
    {"limits above replicas change nothing", "\"podTemplateRef\":{\"name\":\"t\"},\"replicas\":2,\"limits\":{\"cpu\":\"9\"}",
     -1, 2},
    {"a limit below one pod: none", "\"podTemplateRef\":{\"name\":\"t\"},\"limits\":{\"cpu\":\"500m\"}", -1, 0},
    {"a limit the pod does not request constrains nothing",
     "\"podTemplateRef\":{\"name\":\"t\"},\"replicas\":5,\"limits\":{\"nvidia.com/gpu\":\"1\"}", -1, 5},
    {"percentage, rounded up", "\"scalableRef\":{\"kind\":\"Deployment\",\"name\":\"d\"},\"percentage\":20", 11, 3},
    {"a percentage of a running workload is at least one",
     "\"scalableRef\":{\"kind\":\"Deployment\",\"name\":\"d\"},\"percentage\":1", 3, 1},
    {"a percentage of nothing is nothing", "\"scalableRef\":{\"kind\":\"Deployment\",\"name\":\"d\"},\"percentage\":50",
     0, 0},
    {"percentage and replicas: the larger",
     "\"scalableRef\":{\"kind\":\"Deployment\",\"name\":\"d\"},\"percentage\":50,\"replicas\":2", 10, 5},
    {"replicas and percentage: the larger the other way",
     "\"scalableRef\":{\"kind\":\"Deployment\",\"name\":\"d\"},\"percentage\":10,\"replicas\":4", 10, 4},
    {"percentage over 100", "\"scalableRef\":{\"kind\":\"Deployment\",\"name\":\"d\"},\"percentage\":200", 5, 10},
};

Test(capacitybuffer, chunks_follow_replicas_percentage_and_limits)
{
    kp_pod *pod = pod_of(TEMPLATE(ONE_CPU));
    for (size_t i = 0; i < sizeof(chunks_cases) / sizeof(chunks_cases[0]); i++) {
        const chunks_case *c = &chunks_cases[i];
        char json[1024];
        snprintf(json, sizeof(json), BUFFER("%s"), c->spec);
        kp_capacity_buffer cb;
        cr_assert_eq(decode(json, &cb), 0, "%s: %s", c->name, kp_error_last());
        cr_expect_eq(kp_capacity_buffer_replicas(&cb, pod, c->scalable), c->want, "%s: %d chunks, want %d", c->name,
                     kp_capacity_buffer_replicas(&cb, pod, c->scalable), c->want);
    }
}

Test(capacitybuffer, limits_meet_the_effective_requests_with_init_containers)
{
    kp_pod *pod = pod_of(TEMPLATE("\"initContainers\":[{\"name\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}],"
                                  "\"containers\":[{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"500m\"}}},"
                                  "{\"name\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"500m\"}}}]"));
    kp_capacity_buffer cb;
    cr_assert_eq(decode(BUFFER("\"podTemplateRef\":{\"name\":\"t\"},\"limits\":{\"cpu\":\"5\"}"), &cb), 0);
    cr_expect_eq(kp_capacity_buffer_replicas(&cb, pod, -1), 2, "an init container of 2 CPUs outweighs 1 CPU of the "
                                                               "containers");
}

typedef struct bad_case {
    const char *spec;
    const char *message;
} bad_case;

static const bad_case bad_cases[] = {
    {"\"podTemplateRef\":{\"name\":\"t\"},\"replicas\":-1", "spec.replicas: Invalid value: -1"},
    {"\"scalableRef\":{\"kind\":\"Deployment\",\"name\":\"d\"},\"percentage\":-5", "spec.percentage: Invalid value"},
    {"\"podTemplateRef\":{\"name\":\"t\"},\"scalableRef\":{\"kind\":\"Deployment\",\"name\":\"d\"},\"replicas\":1",
     "not both"},
    {"\"podTemplateRef\":{\"name\":\"t\"}", "replicas or limits must also be set"},
    {"\"podTemplateRef\":{},\"replicas\":1", "spec.podTemplateRef.name: Required value"},
    {"\"scalableRef\":{\"name\":\"d\"}", "spec.scalableRef.kind: Required value"},
    {"\"replicas\":\"two\"", "spec.replicas"},
    {"\"podTemplateRef\":{\"name\":\"t\"},\"limits\":{\"cpu\":\"lots\"}", "spec.limits"},
};

Test(capacitybuffer, malformed_buffers_are_refused_naming_the_field)
{
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
        char json[1024];
        snprintf(json, sizeof(json), BUFFER("%s"), bad_cases[i].spec);
        kp_capacity_buffer cb;
        cr_expect_eq(decode(json, &cb), KP_EINVALID, "%s accepted", bad_cases[i].spec);
        cr_expect(strstr(kp_error_last(), bad_cases[i].message), "%s: %s", bad_cases[i].spec, kp_error_last());
    }
    kp_capacity_buffer cb;
    cr_expect_eq(decode("{\"metadata\":{\"name\":\"b\"}}", &cb), KP_EINVALID, "no spec");
    cr_expect_eq(decode(BUFFER(""), &cb), 0, "neither reference: decoded, not ready (below)");
}

/* ---------------------------------------------------------------- resolve */

static int lookup_template(void *ctx, const char *ns, const char *name, kp_arena *a, kp_pod *out, int64_t *gen)
{
    (void)a;
    if (strcmp(ns, "ns") || strcmp(name, "t"))
        return kp_error_set(KP_ENOTFOUND, "podtemplates \"%s\" not found", name);
    *out = *(const kp_pod *)ctx;
    *gen = 3;
    return 0;
}

static int lookup_workload(void *ctx, const char *ns, const char *kind, const char *name, kp_arena *a,
                           kp_workload *out)
{
    (void)a, (void)ns;
    if (strcmp(name, "d"))
        return kp_error_set(strcmp(name, "flaky") ? KP_ENOTFOUND : KP_ERETRY, "%s \"%s\" not found", kind, name);
    memset(out, 0, sizeof(*out));
    out->template = *(const kp_pod *)ctx;
    out->replicas = 10;
    return 0;
}

static int resolve(const char *spec, kp_buffer_resolved *r)
{
    kp_pod *pod = pod_of(TEMPLATE(ONE_CPU));
    kp_buffer_lookup lookup = {lookup_template, lookup_workload, pod};
    char json[1024];
    snprintf(json, sizeof(json), BUFFER("%s"), spec);
    kp_capacity_buffer cb;
    cr_assert_eq(decode(json, &cb), 0, "%s", kp_error_last());
    return kp_capacity_buffer_resolve(&cb, &lookup, arena, r);
}

Test(capacitybuffer, resolution_says_ready_or_why_not_with_karpenters_reasons)
{
    kp_buffer_resolved r;
    cr_assert_eq(resolve("\"podTemplateRef\":{\"name\":\"t\"},\"replicas\":2", &r), 0);
    cr_expect(r.ready);
    cr_expect_str_eq(r.reason, "Resolved");
    cr_expect_str_eq(r.pod_template, "t");
    cr_expect_eq(r.pod_template_generation, 3);
    cr_expect_eq(r.replicas, 2);
    cr_assert_eq(resolve("\"scalableRef\":{\"apiGroup\":\"apps\",\"kind\":\"Deployment\",\"name\":\"d\"},"
                         "\"percentage\":30",
                         &r),
                 0);
    cr_expect(r.ready);
    cr_expect_eq(r.replicas, 3);
    cr_expect_null(r.pod_template, "a scalableRef names no PodTemplate");
    struct {
        const char *spec, *reason, *message;
        int err;
    } not_ready[] = {
        {"\"podTemplateRef\":{\"name\":\"gone\"},\"replicas\":1", "PodTemplateNotFound", "podtemplates \"gone\"", 0},
        {"\"scalableRef\":{\"kind\":\"Deployment\",\"name\":\"gone\"}", "ScalableRefNotFound", "not found", 0},
        {"\"scalableRef\":{\"kind\":\"CronJob\",\"name\":\"d\"}", "ResolutionFailed", "unsupported kind \"CronJob\"", 0},
        {"\"scalableRef\":{\"apiGroup\":\"batch\",\"kind\":\"Job\",\"name\":\"d\"}", "ResolutionFailed",
         "unsupported scalableRef API group \"batch\"", 0},
        {"", "ResolutionFailed", "Neither podTemplateRef nor scalableRef is set", 0},
        {"\"provisioningStrategy\":\"other\",\"podTemplateRef\":{\"name\":\"t\"},\"replicas\":1", "ResolutionFailed",
         "provisioningStrategy \"other\" is not supported", 0},
        {"\"scalableRef\":{\"kind\":\"Deployment\",\"name\":\"flaky\"}", "ResolutionFailed", "flaky", KP_ERETRY},
    };
    for (size_t i = 0; i < sizeof(not_ready) / sizeof(not_ready[0]); i++) {
        cr_expect_eq(resolve(not_ready[i].spec, &r), not_ready[i].err, "%s", not_ready[i].spec);
        cr_expect(!r.ready, "%s", not_ready[i].spec);
        cr_expect_str_eq(r.reason, not_ready[i].reason, "%s", not_ready[i].spec);
        cr_expect(r.message && strstr(r.message, not_ready[i].message), "%s: %s", not_ready[i].spec,
                  r.message ? r.message : "(none)");
    }
}

/* ----------------------------------------------------------- virtual pods */

Test(capacitybuffer, virtual_pods_keep_the_spec_and_drop_claims_and_labels)
{
    kp_pod *t = pod_of(TEMPLATE("\"tolerations\":[{\"key\":\"gpu\",\"operator\":\"Exists\"}],\"nodeSelector\":{\"a\":"
                                "\"b\"},\"volumes\":[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"x\"}},"
                                "{\"name\":\"tmp\",\"emptyDir\":{}},{\"name\":\"e\",\"ephemeral\":{\"volumeClaimTemplate\":"
                                "{\"spec\":{}}}}]," ONE_CPU));
    kp_capacity_buffer cb;
    cr_assert_eq(decode(BUFFER("\"podTemplateRef\":{\"name\":\"t\"},\"replicas\":2"), &cb), 0);
    kp_pod *p = kp_capacity_buffer_virtual_pod(arena, &cb, t, 2);
    cr_expect_str_eq(p->meta.name, "capacity-buffer-b-2");
    cr_expect_str_eq(p->meta.namespace, "ns");
    cr_expect_str_eq(p->meta.uid, "u-2");
    cr_expect_null(kp_labels_get(&p->meta.labels, "app"), "the template's labels are not the pod's");
    cr_expect_str_eq(kp_labels_get(&p->meta.labels, KP_BUFFER_NAME_LABEL), "b");
    cr_expect_str_eq(kp_labels_get(&p->meta.labels, KP_BUFFER_NAMESPACE_LABEL), "ns");
    cr_expect(p->has_priority && p->priority == INT32_MIN);
    cr_expect(p->failed_to_schedule);
    cr_expect_eq(p->n_volumes, 1, "only the emptyDir is left");
    cr_expect_str_eq(p->volumes[0].name, "tmp");
    cr_expect_eq(p->n_tolerations, 1);
    cr_expect_str_eq(kp_labels_get(&p->node_selector, "a"), "b");
    cr_expect_eq(kp_resource_list_milli(&p->requests, "cpu"), 1000);
    const char *ns, *name;
    cr_expect(kp_pod_is_buffer_virtual(p, &ns, &name));
    cr_expect_str_eq(ns, "ns");
    cr_expect_str_eq(name, "b");
    cr_expect(!kp_pod_is_buffer_virtual(t, NULL, NULL), "a real pod is not");
}

/* ------------------------------------------------------------- condition */

Test(capacitybuffer, provisioning_condition_as_karpenter_writes_it)
{
    kp_capacity_buffer cb;
    const char *status, *reason;
    char msg[256];
    cr_assert_eq(decode(BUFFER("\"podTemplateRef\":{\"name\":\"t\"},\"replicas\":2}, \"status\":{\"replicas\":2,"
                               "\"conditions\":[{\"type\":\"ReadyForProvisioning\",\"status\":\"True\"}]"),
                        &cb),
                 0, "%s", kp_error_last());
    kp_buffer_outcome fits = {2, 0, 0}, grows = {1, 1, 0}, fails = {0, 0, 2};
    cr_assert(kp_capacity_buffer_provisioning(&cb, &fits, &status, &reason, msg, sizeof(msg)));
    cr_expect_str_eq(status, "True");
    cr_expect_str_eq(reason, "FitsExistingCapacity");
    cr_expect_str_eq(msg, "All 2 virtual pods fit on existing capacity");
    cr_assert(kp_capacity_buffer_provisioning(&cb, &grows, &status, &reason, msg, sizeof(msg)));
    cr_expect_str_eq(reason, "RequiresNewCapacity");
    cr_expect_str_eq(msg, "1/2 virtual pods required new capacity, 0 failed");
    cr_assert(kp_capacity_buffer_provisioning(&cb, &fails, &status, &reason, msg, sizeof(msg)));
    cr_expect_str_eq(status, "False");
    cr_expect(!kp_capacity_buffer_provisioning(&cb, NULL, &status, &reason, msg, sizeof(msg)),
              "nothing observed: left as it is");
    cr_assert_eq(decode(BUFFER("\"podTemplateRef\":{\"name\":\"t\"},\"replicas\":0}, \"status\":{\"replicas\":0,"
                               "\"conditions\":[{\"type\":\"ReadyForProvisioning\",\"status\":\"True\"}]"),
                        &cb),
                 0);
    cr_assert(kp_capacity_buffer_provisioning(&cb, NULL, &status, &reason, msg, sizeof(msg)));
    cr_expect_str_eq(reason, "BufferEmpty");
    cr_assert_eq(decode(BUFFER("\"podTemplateRef\":{\"name\":\"t\"},\"replicas\":1"), &cb), 0);
    cr_assert(kp_capacity_buffer_provisioning(&cb, &fits, &status, &reason, msg, sizeof(msg)));
    cr_expect_str_eq(reason, "NotReadyForProvisioning");
}

/* ------------------------------------------------------- in plans (simulate) */

#define WARM_TEMPLATE                                                                                            \
    "---\napiVersion: v1\nkind: PodTemplate\nmetadata: {name: warm, namespace: default}\n"                        \
    "template: {spec: {containers: [{name: c, resources: {requests: {cpu: '1', memory: 1Gi}}}]}}\n"

Test(capacitybuffer, simulate_plans_the_virtual_pods_and_notes_what_is_not_ready)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", NULL, NULL);
    add(&c, WARM_TEMPLATE "---\napiVersion: autoscaling.x-k8s.io/v1beta1\nkind: CapacityBuffer\n"
                          "metadata: {name: warm, namespace: default}\nspec: {podTemplateRef: {name: warm}, replicas: 3}\n"
                          "---\napiVersion: autoscaling.x-k8s.io/v1beta1\nkind: CapacityBuffer\n"
                          "metadata: {name: lost, namespace: default}\nspec: {podTemplateRef: {name: nope}, replicas: 1}\n");
    KP_ASSERT_OK(kp_buf_puts(&c.catalog, "]"));
    c.ran = true;
    cr_assert_eq(kp_scenario_run(&c.s, kp_yaml_text(&c.yaml), kp_buf_cstr(&c.catalog), NULL), 0, "%s",
                 kp_error_last());
    cr_expect_eq(c.s.n_pending, 3, "three chunks of warm, none of lost");
    for (int i = 1; i <= 3; i++) {
        char name[64];
        snprintf(name, sizeof(name), "capacity-buffer-warm-%d", i);
        cr_expect_geq(kp_scenario_claim_of(&c.s, name), 0, "%s planned onto a new NodeClaim", name);
    }
    bool noted = false;
    for (size_t i = 0; i < kp_manifests_note_count(c.s.manifests); i++)
        noted |= strstr(kp_manifests_note(c.s.manifests, i), "capacitybuffer default/lost is not "
                                                               "ReadyForProvisioning (PodTemplateNotFound)") != NULL;
    cr_expect(noted, "a note says why lost has no pods");
    sc_free(&c);
}

Test(capacitybuffer, an_empty_node_holding_buffer_room_is_kept_from_emptiness)
{
    sc c;
    sc_init(&c, true);
    pool(&c, "default", NULL, "consolidationPolicy: WhenEmpty, consolidateAfter: 0s, budgets: [{nodes: '100%'}]");
    node(&c, "idle", N(.type = "large"));
    node(&c, "held", N(.type = "large", .zone = "test-zone-1b"));
    add(&c, WARM_TEMPLATE "---\napiVersion: autoscaling.x-k8s.io/v1beta1\nkind: CapacityBuffer\n"
                          "metadata: {name: warm, namespace: default}\nspec: {podTemplateRef: {name: warm}, replicas: 2}\n");
    /* Both chunks fit on either node: the solver puts them on one. */
    kp_scenario *s = plan_loops(&c, 1);
    uint32_t empties = 0;
    for (uint32_t i = 0; i < kp_scenario_n_commands(s); i++)
        empties += !strcmp(kp_scenario_command_method(s, i), "emptiness");
    const char *idle = kp_scenario_blocked_reason(s, "idle"), *held = kp_scenario_blocked_reason(s, "held");
    bool one_held = (idle && strstr(idle, "CapacityBuffer virtual pod")) ||
                    (held && strstr(held, "CapacityBuffer virtual pod"));
    cr_expect(one_held, "the node the chunks would use stays: idle=%s held=%s", idle ? idle : "-",
              held ? held : "-");
    cr_expect_eq(kp_scenario_disrupted_by(s, "idle") >= 0 || kp_scenario_disrupted_by(s, "held") >= 0, true,
                 "the other one is empty and goes");
    cr_expect_eq(empties, 1);
    sc_free(&c);
}
