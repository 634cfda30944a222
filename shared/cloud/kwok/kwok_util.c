/* JSON, time and address helpers of the kwok provider (see kwok_internal.h). */
#include "cloud/kwok/kwok_internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

bool kwok_is_kwok_node(const cJSON *node)
{
    const char *id = kp_obj_str(node, "spec.providerID");
    return id && strncmp(id, KP_KWOK_PROVIDER_PREFIX, strlen(KP_KWOK_PROVIDER_PREFIX)) == 0;
}

cJSON *kwok_condition(const char *type, const char *status, const char *reason, const char *message,
                      const char *heartbeat, const char *transition)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "type", type);
    cJSON_AddStringToObject(c, "status", status);
    if (heartbeat) cJSON_AddStringToObject(c, "lastHeartbeatTime", heartbeat);
    cJSON_AddStringToObject(c, "lastTransitionTime", transition);
    cJSON_AddStringToObject(c, "reason", reason);
    cJSON_AddStringToObject(c, "message", message);
    return c;
}

void kwok_time(int64_t ns, char *buf, size_t size)
{
    kp_time_format_rfc3339(ns, buf, size);
}

void kwok_micro_time(int64_t ns, char *buf, size_t size)
{
    time_t secs = (time_t)(ns / KP_NS_PER_SEC);
    long micros = (long)((ns % KP_NS_PER_SEC) / 1000);
    if (micros < 0) {
        secs--;
        micros += 1000000;
    }
    struct tm tm;
    gmtime_r(&secs, &tm);
    snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, micros);
}

/* FNV-1a: cheap, stable across runs and platforms. */
static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

void kwok_made_up_ip(const char *seed, bool pod, char *buf, size_t size)
{
    uint32_t h = fnv1a(seed);
    unsigned a = ((h >> 16) & 0x7f) | (pod ? 0x80u : 0u);
    unsigned b = (h >> 8) & 0xff;
    unsigned c = (h & 0xff) % 254 + 1; /* neither a network nor a broadcast address */
    snprintf(buf, size, "10.%u.%u.%u", a, b, c);
}

int64_t kwok_ms_until(int64_t now_ns, int64_t due_ns)
{
    if (due_ns <= now_ns) return 1;
    int64_t ms = (due_ns - now_ns + KP_NS_PER_MS - 1) / KP_NS_PER_MS;
    return ms > 0 ? ms : 1;
}

cJSON *kwok_node_conditions(const cJSON *old_node, const char *now)
{
    /* The kubelet's reasons (tools match on them); our own messages. */
    static const char *const table[][4] = {
        {"MemoryPressure", "False", "KubeletHasSufficientMemory", "kwok: no memory pressure"},
        {"DiskPressure", "False", "KubeletHasNoDiskPressure", "kwok: no disk pressure"},
        {"PIDPressure", "False", "KubeletHasSufficientPID", "kwok: no PID pressure"},
        {"Ready", "True", "KubeletReady", "kwok: the node is ready"},
    };
    cJSON *list = cJSON_CreateArray();
    for (size_t i = 0; i < sizeof(table) / sizeof(*table); i++) {
        const cJSON *old = kp_obj_condition_get(old_node, table[i][0]);
        const char *old_status = kp_obj_str(old, "status");
        const char *since = kp_obj_str(old, "lastTransitionTime");
        if (!old_status || strcmp(old_status, table[i][1]) != 0 || !since) since = now;
        cJSON_AddItemToArray(
            list, kwok_condition(table[i][0], table[i][1], table[i][2], table[i][3], now, since));
    }
    return list;
}

cJSON *kwok_node_addresses(const char *name)
{
    char ip[32];
    kwok_made_up_ip(name, false, ip, sizeof(ip));
    const char *pairs[2][2] = {{"InternalIP", ip}, {"Hostname", name}};
    cJSON *list = cJSON_CreateArray();
    for (int i = 0; i < 2; i++) {
        cJSON *a = cJSON_CreateObject();
        cJSON_AddStringToObject(a, "type", pairs[i][0]);
        cJSON_AddStringToObject(a, "address", pairs[i][1]);
        cJSON_AddItemToArray(list, a);
    }
    return list;
}

const char *kwok_node_internal_ip(const cJSON *node)
{
    const cJSON *a;
    cJSON_ArrayForEach(a, kp_obj_get(node, "status.addresses"))
    {
        const char *type = kp_obj_str(a, "type"), *ip = kp_obj_str(a, "address");
        if (type && ip && strcmp(type, "InternalIP") == 0) return ip;
    }
    return NULL;
}
