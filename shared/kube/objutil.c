/* Reading objects as JSON (see objutil.h). */
#include "kube/objutil.h"

#include "base/clock.h"

#include <string.h>

const cJSON *kp_obj_get(const cJSON *obj, const char *path)
{
    char field[256];
    while (obj && *path) {
        size_t len = strcspn(path, ".");
        if (len >= sizeof(field)) return NULL;
        memcpy(field, path, len);
        field[len] = '\0';
        obj = cJSON_GetObjectItemCaseSensitive(obj, field);
        path += len + (path[len] == '.');
    }
    return obj;
}

const char *kp_obj_str(const cJSON *obj, const char *path)
{
    return cJSON_GetStringValue(kp_obj_get(obj, path));
}

const cJSON *kp_obj_condition_get(const cJSON *obj, const char *type)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, kp_obj_get(obj, "status.conditions"))
    {
        const char *t = kp_obj_str(c, "type");
        if (t && strcmp(t, type) == 0) return c;
    }
    return NULL;
}

const char *kp_obj_condition(const cJSON *obj, const char *type)
{
    return kp_obj_str(kp_obj_condition_get(obj, type), "status");
}

bool kp_obj_condition_is_true(const cJSON *obj, const char *type)
{
    const char *status = kp_obj_condition(obj, type);
    return status && strcmp(status, "True") == 0;
}

int64_t kp_obj_condition_since(const cJSON *obj, const char *type)
{
    const char *t = kp_obj_str(kp_obj_condition_get(obj, type), "lastTransitionTime");
    int64_t ns = 0;
    if (t && kp_time_parse_rfc3339(t, &ns) < 0) ns = 0;
    return ns;
}

bool kp_node_is_ready(const cJSON *node)
{
    return kp_obj_condition_is_true(node, "Ready");
}
