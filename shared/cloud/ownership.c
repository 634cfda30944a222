/* What a cloud provider owns (see ownership.h). */
#include "cloud/ownership.h"

#include <stdio.h>
#include <string.h>

static bool same(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

bool kp_cloud_serves_node_class(const kp_cloud_provider *cp, const char *group, const char *kind)
{
    return cp && same(group, cp->ops->node_class_group) && same(kind, cp->ops->node_class_kind);
}

bool kp_cloud_owns_provider_id(const kp_cloud_provider *cp, const char *provider_id)
{
    const char *scheme = cp ? cp->ops->provider_id_scheme : NULL;
    if (!scheme || !provider_id)
        return false;
    size_t n = strlen(scheme);
    return strncmp(provider_id, scheme, n) == 0 && strncmp(provider_id + n, "://", 3) == 0;
}

static const char *or_none(const char *s)
{
    return s && *s ? s : "<none>";
}

const char *kp_cloud_pool_foreign(const kp_cloud_provider *cp, const char *group, const char *kind, char *buf,
                                  size_t size)
{
    if (kp_cloud_serves_node_class(cp, group, kind))
        return NULL;
    snprintf(buf, size, "its nodeClassRef %s/%s is not served by the %s provider (which serves %s/%s)",
             or_none(group), or_none(kind), cp ? cp->ops->name(cp) : "?", cp ? cp->ops->node_class_group : "?",
             cp ? cp->ops->node_class_kind : "?");
    return buf;
}

const char *kp_cloud_claim_foreign(const kp_cloud_provider *cp, const char *group, const char *kind,
                                   const char *provider_id, char *buf, size_t size)
{
    const char *why = kp_cloud_pool_foreign(cp, group, kind, buf, size);
    if (why || !provider_id || !*provider_id)
        return why;
    return kp_cloud_node_foreign(cp, provider_id, buf, size);
}

const char *kp_cloud_node_foreign(const kp_cloud_provider *cp, const char *provider_id, char *buf, size_t size)
{
    if (kp_cloud_owns_provider_id(cp, provider_id))
        return NULL;
    if (!provider_id || !*provider_id)
        snprintf(buf, size, "it has no provider ID");
    else
        snprintf(buf, size, "its provider ID %.200s is not of the %s provider (%s://)", provider_id,
                 cp ? cp->ops->name(cp) : "?", cp ? cp->ops->provider_id_scheme : "?");
    return buf;
}
