#include "webhook/handler.h"

#include "api/admission.h"
#include "api/jsonpatch.h"
#include "base/error.h"
#include "webhook/review.h"

#include <string.h>

typedef struct request {
    const kp_policy *policy;
    const kp_webhook_advisor *advisor;
    enum kp_webhook_endpoint endpoint;
    kp_arena *arena;
    kp_review review;
    int kind; /* enum kp_admission_kind, KIND_POD, or -1 */
    kp_admission_result checks, rules;
    kp_review_response resp;
    kp_webhook_outcome *outcome;
} request;

enum { KIND_POD = 100 };

static const char *kind_label(int kind)
{
    if (kind == KIND_POD) return "Pod";
    const char *name = kind >= 0 ? kp_admission_kind_name((enum kp_admission_kind)kind) : "";
    return *name ? name : "other";
}

static const char *op_label(enum kp_review_op op)
{
    static const char *const labels[] = {"other", "CREATE", "UPDATE", "DELETE", "CONNECT"};
    return labels[op];
}

static int lookup_kind(const kp_review *r)
{
    if (r->group && r->version && r->kind && !*r->group && strcmp(r->version, "v1") == 0 &&
        strcmp(r->kind, "Pod") == 0)
        return KIND_POD;
    return kp_admission_kind_lookup(r->group, r->version, r->kind);
}

static void deny(request *rq, int code, const char *reason, const char *message)
{
    rq->resp.allowed = false;
    rq->resp.code = code;
    rq->resp.reason = reason;
    rq->resp.message = message;
}

/* "NodePool \"default\"" for messages. */
static const char *object_name(request *rq)
{
    const char *name = rq->review.name;
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(rq->review.object, "metadata");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(meta, "name");
    if ((!name || !*name) && cJSON_IsString(n)) name = n->valuestring;
    return kp_arena_printf(rq->arena, "%s \"%s\"", kind_label(rq->kind), name ? name : "");
}

static void validate_karpenter(request *rq)
{
    enum kp_admission_op op =
        rq->review.op == KP_REVIEW_OP_UPDATE ? KP_ADMIT_UPDATE : KP_ADMIT_CREATE;
    int err = kp_admission_validate((enum kp_admission_kind)rq->kind, op, rq->review.object,
                                    rq->review.old_object, &rq->checks);
    if (err < 0) {
        deny(rq, 500, "InternalError",
             kp_arena_printf(rq->arena, "validation could not run: %s", kp_error_last()));
        return;
    }
    if (rq->checks.errors.count) {
        deny(rq, 400, "Invalid",
             kp_arena_printf(rq->arena, "%s is invalid: %s", object_name(rq),
                             kp_field_errors_string(rq->arena, &rq->checks.errors)));
        return;
    }
    if (rq->kind == KP_ADMIT_NODEPOOL)
        kp_policy_check_nodepool(rq->policy, rq->review.object, &rq->rules);
    else if (rq->kind == KP_ADMIT_EC2NODECLASS)
        kp_policy_check_nodeclass(rq->policy, rq->review.object, &rq->rules);
    if (rq->rules.errors.count)
        deny(rq, 403, "Forbidden",
             kp_arena_printf(rq->arena, "%s is refused by policy: %s", object_name(rq),
                             kp_field_errors_string(rq->arena, &rq->rules.errors)));
}

static void default_karpenter(request *rq)
{
    int err =
        kp_admission_default((enum kp_admission_kind)rq->kind, rq->review.object, &rq->checks);
    if (err < 0)
        deny(rq, 500, "InternalError",
             kp_arena_printf(rq->arena, "defaulting could not run: %s", kp_error_last()));
}

/* The advisor sees the Pod as it will be created: with the policy's patch. */
static void advise_pod(request *rq)
{
    cJSON *pod = cJSON_Duplicate(rq->review.object, 1);
    if (cJSON_GetArraySize(rq->rules.patch) > 0 && kp_jsonpatch_apply(pod, rq->rules.patch) < 0) {
        cJSON_Delete(pod);
        pod = cJSON_Duplicate(rq->review.object, 1);
    }
    const char *w = rq->advisor->pod(rq->advisor->ctx, pod, rq->review.namespace_, rq->arena);
    if (w)
        kp_admission_warn(&rq->rules, "%s", w);
    cJSON_Delete(pod);
}

static void mutate_pod(request *rq)
{
    if (rq->review.op != KP_REVIEW_OP_CREATE) return;
    rq->rules.patch = cJSON_CreateArray();
    int err = kp_policy_mutate_pod(rq->policy, rq->review.object, rq->review.namespace_,
                                   rq->rules.patch, &rq->rules);
    if (err < 0)
        deny(rq, 500, "InternalError",
             kp_arena_printf(rq->arena, "Pod mutation could not run: %s", kp_error_last()));
    else if (rq->advisor && rq->advisor->pod)
        advise_pod(rq);
}

/* Refusals that do not depend on the kind's own rules. */
static bool refuse_shape(request *rq)
{
    const kp_review *r = &rq->review;
    if (r->op == KP_REVIEW_OP_UNKNOWN)
        deny(rq, 400, "BadRequest",
             kp_arena_printf(rq->arena, "unsupported operation %s",
                             r->operation ? r->operation : "(none)"));
    else if (rq->kind < 0)
        deny(rq, 400, "BadRequest",
             kp_arena_printf(rq->arena, "unsupported kind %s/%s, Kind=%s", r->group ? r->group : "",
                             r->version ? r->version : "", r->kind ? r->kind : ""));
    else if (r->op == KP_REVIEW_OP_DELETE || r->op == KP_REVIEW_OP_CONNECT)
        return true; /* nothing to check: allowed */
    else if (!cJSON_IsObject(r->object))
        deny(rq, 400, "BadRequest", "request.object is missing or not an object");
    else if (r->op == KP_REVIEW_OP_UPDATE && !cJSON_IsObject(r->old_object))
        deny(rq, 400, "BadRequest", "request.oldObject is missing on UPDATE");
    else if (kp_review_metadata_problem(r->object))
        deny(rq, 400, "BadRequest",
             kp_arena_printf(rq->arena, "request.object.%s",
                             kp_review_metadata_problem(r->object)));
    else if (r->old_object && kp_review_metadata_problem(r->old_object))
        deny(rq, 400, "BadRequest",
             kp_arena_printf(rq->arena, "request.oldObject.%s",
                             kp_review_metadata_problem(r->old_object)));
    else if (rq->kind == KIND_POD && rq->endpoint == KP_WEBHOOK_VALIDATE)
        deny(rq, 400, "BadRequest", "Pods are not validated by this webhook; send them to /mutate");
    else
        return false;
    return true;
}

static void dispatch(request *rq)
{
    if (refuse_shape(rq)) return;
    if (rq->kind == KIND_POD)
        mutate_pod(rq);
    else if (rq->endpoint == KP_WEBHOOK_VALIDATE)
        validate_karpenter(rq);
    else
        default_karpenter(rq);
}

static void collect_warnings(request *rq)
{
    size_t n = rq->checks.n_warnings + rq->rules.n_warnings;
    if (n == 0) return;
    const char **all = KP_ARENA_NEW(rq->arena, const char *, n);
    for (size_t i = 0; i < rq->checks.n_warnings; i++)
        all[i] = rq->checks.warnings[i];
    for (size_t i = 0; i < rq->rules.n_warnings; i++)
        all[rq->checks.n_warnings + i] = rq->rules.warnings[i];
    rq->resp.warnings = all;
    rq->resp.n_warnings = n;
}

static void respond_http_error(kp_buf *out, kp_webhook_outcome *outcome, int status,
                               const char *reason, const char *message)
{
    kp_buf_reset(out);
    kp_review_status_write(out, status, reason, message);
    outcome->http_status = status;
    outcome->result = "rejected";
}

/* A Pod's mutations cannot make the reply too large to send: first the
 * warnings shrink to one that counts them, then the patch goes, with one
 * warning saying so. The Pod is then admitted as it was sent (mutation only
 * adds defaults; failing the request would block the workload instead). */
static bool shrink_pod_reply(request *rq, size_t attempt)
{
    kp_review_response *r = &rq->resp;
    const char **one = KP_ARENA_NEW(rq->arena, const char *, 1);
    if (attempt == 0 && r->n_warnings > 1) {
        one[0] = kp_arena_printf(rq->arena,
                                 "%zu warnings from the admission policy, too many to send; the "
                                 "first: %.256s",
                                 r->n_warnings, r->warnings[0]);
    } else if (r->patch) {
        one[0] = kp_arena_printf(rq->arena,
                                 "the admission policy's Pod mutations (%d patch operations) were "
                                 "not applied: the reply would exceed the %zu MiB limit, so the "
                                 "Pod is admitted as sent",
                                 cJSON_GetArraySize(r->patch), KP_WEBHOOK_MAX_RESPONSE >> 20);
        r->patch = NULL;
    } else {
        return false;
    }
    r->warnings = one;
    r->n_warnings = 1;
    return true;
}

static void respond(request *rq, kp_buf *out)
{
    kp_webhook_outcome *o = rq->outcome;
    collect_warnings(rq);
    const cJSON *patch = rq->kind == KIND_POD ? rq->rules.patch : rq->checks.patch;
    if (rq->resp.allowed) rq->resp.patch = patch;
    o->http_status = 200;
    int err = kp_review_response_write(out, &rq->resp);
    for (size_t attempt = 0;
         err < 0 && rq->kind == KIND_POD && rq->resp.allowed && shrink_pod_reply(rq, attempt);
         attempt++)
        err = kp_review_response_write(out, &rq->resp);
    o->result = !rq->resp.allowed                        ? "denied"
                : cJSON_GetArraySize(rq->resp.patch) > 0 ? "patched"
                                                         : "allowed";
    if (err < 0) respond_http_error(out, o, 500, "InternalError", "the response is too large");
}

void kp_webhook_handle(const kp_policy *policy, enum kp_webhook_endpoint endpoint, const char *body,
                       size_t len, kp_arena *arena, kp_buf *out, kp_webhook_outcome *outcome)
{
    kp_webhook_handle_advised(policy, NULL, endpoint, body, len, arena, out, outcome);
}

void kp_webhook_handle_advised(const kp_policy *policy, const kp_webhook_advisor *advisor,
                               enum kp_webhook_endpoint endpoint, const char *body, size_t len,
                               kp_arena *arena, kp_buf *out, kp_webhook_outcome *outcome)
{
    request rq = {.policy = policy, .advisor = advisor, .endpoint = endpoint, .arena = arena, .outcome = outcome};
    *outcome = (kp_webhook_outcome){400, "none", "none", "rejected", false};
    int err = kp_review_parse(&rq.review, body, len);
    if (err < 0) {
        bool large = err == KP_ETOOLARGE;
        respond_http_error(out, outcome, large ? 413 : 400,
                           large ? "RequestEntityTooLarge" : "BadRequest", kp_error_last());
        return;
    }
    rq.kind = lookup_kind(&rq.review);
    outcome->kind = rq.kind < 0 ? "other" : kind_label(rq.kind);
    outcome->operation = op_label(rq.review.op);
    outcome->dry_run = rq.review.dry_run;
    kp_admission_result_init(&rq.checks, arena);
    kp_admission_result_init(&rq.rules, arena);
    rq.resp.uid = rq.review.uid;
    rq.resp.allowed = true;
    dispatch(&rq);
    respond(&rq, out);
    kp_admission_result_clear(&rq.checks);
    kp_admission_result_clear(&rq.rules);
    kp_review_clear(&rq.review);
}
