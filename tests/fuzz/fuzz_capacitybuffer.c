/*
 * libFuzzer target for CapacityBuffers as the controller and simulate read
 * them (api/capacitybuffer.h): the input, split at its first NUL, is a
 * CapacityBuffer and a PodTemplate in JSON. Whatever they hold must be
 * decoded or refused with a message, and a decoded pair resolved into its
 * chunks and virtual pods: never a crash, a leak, or a chunk count the
 * buffer does not allow.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/capacitybuffer.h"
#include "base/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int template_of(void *ctx, const char *ns, const char *name, kp_arena *a, kp_pod *out, int64_t *gen)
{
    (void)ns, (void)name, (void)a;
    if (!ctx)
        return kp_error_set(KP_ENOTFOUND, "no template");
    *out = *(const kp_pod *)ctx;
    *gen = 1;
    return 0;
}

static int workload_of(void *ctx, const char *ns, const char *kind, const char *name, kp_arena *a, kp_workload *out)
{
    (void)ns, (void)kind, (void)name, (void)a;
    if (!ctx)
        return kp_error_set(KP_ENOTFOUND, "no workload");
    memset(out, 0, sizeof(*out));
    out->template = *(const kp_pod *)ctx;
    out->replicas = 7;
    return 0;
}

static void exercise(kp_arena *arena, const cJSON *buffer, const cJSON *template)
{
    kp_capacity_buffer cb;
    kp_pod *pod = KP_ARENA_NEW(arena, kp_pod, 1);
    if (kp_decode_capacity_buffer(arena, buffer, &cb) < 0)
        return;
    bool have = template && kp_decode_pod_template_object(arena, template, pod) == 0;
    kp_buffer_lookup lookup = {template_of, workload_of, have ? pod : NULL};
    kp_buffer_resolved r;
    if (kp_capacity_buffer_resolve(&cb, &lookup, arena, &r) < 0 || !r.ready)
        return;
    if (r.replicas < 0 || (cb.has_replicas && !cb.has_percentage && !cb.has_limits && r.replicas != cb.replicas))
        abort(); /* chunks the buffer does not allow */
    for (int32_t i = 1; i <= r.replicas && i <= 3; i++)
        if (!kp_pod_is_buffer_virtual(kp_capacity_buffer_virtual_pod(arena, &cb, r.pod, i), NULL, NULL))
            abort();
    kp_buffer_outcome o = {(uint32_t)r.replicas, 0, 0};
    const char *status, *reason;
    char msg[128];
    kp_capacity_buffer_provisioning(&cb, &o, &status, &reason, msg, sizeof(msg));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t first = nul ? (size_t)(nul - data) : size;
    cJSON *buffer = cJSON_ParseWithLength((const char *)data, first);
    cJSON *template = nul ? cJSON_ParseWithLength((const char *)nul + 1, size - first - 1) : NULL;
    kp_arena *arena = kp_arena_new();
    if (buffer)
        exercise(arena, buffer, template);
    kp_arena_free(arena);
    cJSON_Delete(buffer);
    cJSON_Delete(template);
    return 0;
}
