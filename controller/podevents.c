/* Pod events stamped on NodeClaims (see podevents.h). */
#include "controller/podevents.h"
#include "base/error.h"
#include "controller/lifecycle.h"
#include "kube/objutil.h"
#include "controller/ownership.h"
#include "kube/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEDUPE_NS (10 * KP_NS_PER_SEC)

static bool terminal(const cJSON *pod)
{
    const char *phase = kp_obj_str(pod, "status.phase");
    return phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
}

static bool daemon(const cJSON *pod)
{
    const cJSON *ref;
    cJSON_ArrayForEach(ref, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pod, "metadata"),
                                                            "ownerReferences"))
    {
        const char *kind = kp_obj_str(ref, "kind");
        if (kind && !strcmp(kind, "DaemonSet"))
            return true;
    }
    return false;
}

bool kp_podevent_is_event(const cJSON *old_pod, const cJSON *new_pod)
{
    const char *node = kp_obj_str(new_pod, "spec.nodeName");
    if (!node || !*node || daemon(new_pod))
        return false;
    const char *old_node = old_pod ? kp_obj_str(old_pod, "spec.nodeName") : NULL;
    bool bound = !old_node || !*old_node;
    bool finished = old_pod && !terminal(old_pod) && terminal(new_pod);
    bool terminating = (!old_pod || !kp_obj_str(old_pod, "metadata.deletionTimestamp")) &&
                       kp_obj_str(new_pod, "metadata.deletionTimestamp");
    return bound || finished || terminating;
}

int kp_podevents_reconcile(kp_ctrl *c, void *state, const char *key, int64_t *requeue_ms)
{
    (void)state, (void)requeue_ms;
    cJSON *node = kp_ctrl_get(c, KP_CK_NODE, key);
    char *claim_key = node ? kp_claim_for_provider_id(c, kp_obj_str(node, "spec.providerID")) : NULL;
    cJSON *claim = claim_key ? kp_ctrl_get(c, KP_CK_NODECLAIM, claim_key) : NULL;
    if (claim && !kp_ctrl_owns_claim(c, claim)) {
        cJSON_Delete(claim);
        claim = NULL;
    }
    int err = 0;
    int64_t now = c->clock->now(c->clock), last = 0;
    const char *stamp = claim ? kp_obj_str(claim, "status.lastPodEventTime") : NULL;
    if (stamp && kp_time_parse_rfc3339(stamp, &last) < 0)
        last = 0;
    if (claim && (!last || now - last >= DEDUPE_NS)) {
        char when[32], patch[96];
        kp_time_format_rfc3339(now, when, sizeof(when));
        snprintf(patch, sizeof(patch), "{\"status\":{\"lastPodEventTime\":\"%s\"}}", when);
        err = kp_kube_patch(c->kube, KP_RES_NODECLAIM, NULL, claim_key, KP_PATCH_MERGE, patch, KP_KUBE_STATUS, NULL);
        if (err == KP_ENOTFOUND)
            err = 0;
    }
    cJSON_Delete(claim);
    free(claim_key);
    cJSON_Delete(node);
    return err;
}
