/*
 * Workloads (DaemonSet, Deployment, StatefulSet, ReplicaSet, Job) and
 * PodDisruptionBudgets (policy/v1 and v1beta1).
 */
#include "api/decode_internal.h"

#include "api/decode.h"

#include <string.h>

/* ------------------------------------------------------------- workloads */

typedef struct workload_ctx {
    kp_workload *w;
    enum kp_kind kind;
} workload_ctx;

static int decode_job_fields(kp_decoder *d, const cJSON *json, kp_workload *w)
{
    bool has_parallelism;
    int err;
    w->parallelism = 1;
    if ((err = kp_dec_int32(d, json, "parallelism", &w->parallelism, &has_parallelism)) < 0 ||
        (err = kp_dec_int32(d, json, "completions", &w->completions, &w->has_completions)) < 0)
        return err;
    /* The API server's default: a Job with neither runs one pod once. */
    if (!has_parallelism && !w->has_completions) {
        w->has_completions = true;
        w->completions = 1;
    }
    return 0;
}

static int decode_workload_spec(kp_decoder *d, const cJSON *json, void *out)
{
    workload_ctx *ctx = out;
    kp_workload *w = ctx->w;
    int err = 0;
    if (ctx->kind == KP_KIND_JOB) {
        err = decode_job_fields(d, json, w);
    } else if (ctx->kind != KP_KIND_DAEMONSET) {
        w->replicas = 1;
        err = kp_dec_int32(d, json, "replicas", &w->replicas, NULL);
    }
    if (err < 0 || (err = kp_dec_label_selector(d, json, "selector", &w->selector)) < 0 ||
        (err = kp_dec_pod_template(d, json, "template", &w->template)) < 0)
        return err;
    if (ctx->kind == KP_KIND_STATEFULSET)
        err = kp_dec_array_into(d, json, "volumeClaimTemplates", sizeof(kp_pvc), kp_dec_pvc_body,
                                &w->volume_claim_templates, &w->n_volume_claim_templates, NULL);
    return err;
}

static bool is_workload_kind(enum kp_kind kind)
{
    return kind == KP_KIND_DAEMONSET || kind == KP_KIND_DEPLOYMENT || kind == KP_KIND_STATEFULSET ||
           kind == KP_KIND_REPLICASET || kind == KP_KIND_JOB;
}

int kp_decode_workload(kp_arena *arena, const cJSON *json, enum kp_kind kind, kp_workload *out)
{
    kp_decoder d;
    kp_workload w = {0};
    workload_ctx ctx = {&w, kind};
    kp_dec_init(&d, arena);
    if (!is_workload_kind(kind))
        return kp_dec_fail(&d, "%s is not a workload kind", kp_kind_name(kind));
    int err = kp_dec_expect_object(&d, json);
    if (err == 0) err = kp_dec_meta(&d, json, &w.meta);
    if (err == 0) err = kp_dec_object(&d, json, "spec", decode_workload_spec, &ctx, NULL);
    if (err < 0) return err;
    /* Pods are created in their workload's namespace. */
    if (!*w.template.meta.namespace) w.template.meta.namespace = w.meta.namespace;
    *out = w;
    return 0;
}

/* ------------------------------------------------------------------- PDB */

static int decode_pdb_spec(kp_decoder *d, const cJSON *json, void *out)
{
    kp_pdb *pdb = out;
    const char *policy = kp_dec_empty;
    int err;
    if ((err = kp_dec_label_selector(d, json, "selector", &pdb->selector)) < 0 ||
        (err = kp_dec_int_or_string(d, json, "minAvailable", &pdb->min_available)) < 0 ||
        (err = kp_dec_int_or_string(d, json, "maxUnavailable", &pdb->max_unavailable)) < 0 ||
        (err = kp_dec_string(d, json, "unhealthyPodEvictionPolicy", &policy)) < 0)
        return err;
    pdb->always_allow_unhealthy = strcmp(policy, "AlwaysAllow") == 0;
    return 0;
}

static int decode_pdb_status(kp_decoder *d, const cJSON *json, void *out)
{
    kp_pdb *pdb = out;
    int err;
    if ((err = kp_dec_int32(d, json, "disruptionsAllowed", &pdb->disruptions_allowed, NULL)) < 0 ||
        (err = kp_dec_int32(d, json, "currentHealthy", &pdb->current_healthy, NULL)) < 0 ||
        (err = kp_dec_int32(d, json, "desiredHealthy", &pdb->desired_healthy, NULL)) < 0 ||
        (err = kp_dec_int32(d, json, "expectedPods", &pdb->expected_pods, NULL)) < 0)
        return err;
    return 0;
}

/* No selector selects nothing; an empty one selects everything in policy/v1
 * but nothing in policy/v1beta1. */
static bool selects_none(const kp_pdb *pdb, const char *api_version)
{
    const kp_label_selector *s = &pdb->selector;
    bool empty = s->match_labels.count == 0 && s->n_match_expressions == 0;
    return !s->present || (empty && strcmp(api_version, "policy/v1beta1") == 0);
}

int kp_decode_pdb(kp_arena *arena, const cJSON *json, kp_pdb *out)
{
    kp_decoder d;
    kp_pdb pdb = {0};
    const char *api_version = kp_dec_empty;
    kp_dec_init(&d, arena);
    int err = kp_dec_expect_object(&d, json);
    if (err == 0) err = kp_dec_string(&d, json, "apiVersion", &api_version);
    if (err == 0) err = kp_dec_meta(&d, json, &pdb.meta);
    if (err == 0) err = kp_dec_object(&d, json, "spec", decode_pdb_spec, &pdb, NULL);
    if (err == 0) err = kp_dec_object(&d, json, "status", decode_pdb_status, &pdb, NULL);
    if (err < 0) return err;
    pdb.selects_none = selects_none(&pdb, api_version);
    *out = pdb;
    return 0;
}
