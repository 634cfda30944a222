/* Feature gates, and checking what `run` was given (see options.h). */
#include "controller/options.h"
#include "base/error.h"
#include "base/log.h"
#include "controller/node_health.h"
#include "controller/options_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void kp_ctrl_opts_warn(kp_ctrl_opts *o, const char *fmt, ...)
{
    if (o->n_warnings >= KP_CTRL_MAX_WARNINGS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->warnings[o->n_warnings++], sizeof(o->warnings[0]), fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------ gates */

typedef struct gate {
    const char *name;
    size_t offset;    /* in kp_ctrl_opts; 0: not implemented */
    const char *why;  /* when not implemented: why true is refused */
} gate;

#define G(field) offsetof(kp_ctrl_opts, field)

static const gate core_gates[] = {
    {"SpotToSpotConsolidation", G(spot_to_spot), NULL},
    {"ReservedCapacity", G(reserved_capacity), NULL},
    {"NodeRepair", G(node_repair), NULL},
    {"NodeOverlay", G(node_overlay), NULL},
    {"StaticCapacity", G(static_capacity), NULL},
    {"CapacityBuffer", G(capacity_buffer), NULL},
};

static const gate aws_gates[] = {
    {"NodeClassCEL", 0, "CEL in EC2NodeClasses is not supported"},
    {"DRANVIDIAGPU", 0, "Dynamic Resource Allocation is not supported"},
    {"DRAEFA", 0, "Dynamic Resource Allocation is not supported"},
    {"RebootForRepair", 0, "repair by reboot is not supported"},
};

/* One "Name=value" of a gate list; `len` bytes at `p`, spaces trimmed. */
static int one_gate(kp_ctrl_opts *o, const gate *table, size_t n, const char *p, size_t len, const char *source)
{
    while (len && isspace((unsigned char)*p))
        p++, len--;
    while (len && isspace((unsigned char)p[len - 1]))
        len--;
    const char *eq = memchr(p, '=', len);
    char name[64], value[16];
    size_t nlen = eq ? (size_t)(eq - p) : 0, vlen = eq ? len - nlen - 1 : 0;
    bool b;
    if (!eq || nlen == 0 || nlen >= sizeof(name) || vlen >= sizeof(value))
        return kp_error_set(KP_EINVALID, "%s: \"%.*s\" is not Name=true|false", source, (int)len, p);
    memcpy(name, p, nlen), name[nlen] = '\0';
    memcpy(value, eq + 1, vlen), value[vlen] = '\0';
    if (kp_ctrl_parse_bool(value, &b) < 0 || !*value)
        return kp_error_set(KP_EINVALID, "%s: %s=%s is not true or false", source, name, value);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(table[i].name, name) != 0)
            continue;
        if (table[i].offset)
            *(bool *)((char *)o + table[i].offset) = b;
        else if (b)
            return kp_error_set(KP_EINVALID, "%s: %s=true: %s; refusing to start rather than ignore it", source,
                                name, table[i].why);
        return 0;
    }
    kp_ctrl_opts_warn(o, "%s: unknown feature gate %s (ignored)", source, name);
    return 0;
}

static int gates(kp_ctrl_opts *o, const gate *table, size_t n, const char *v, const char *source)
{
    for (const char *p = v; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        int err = len ? one_gate(o, table, n, p, len, source) : 0;
        if (err < 0)
            return err;
        p += len + (end ? 1 : 0);
    }
    return 0;
}

int kp_ctrl_parse_gates(kp_ctrl_opts *o, const char *v, const char *source)
{
    return gates(o, core_gates, sizeof(core_gates) / sizeof(core_gates[0]), v, source);
}

int kp_ctrl_parse_aws_gates(kp_ctrl_opts *o, const char *v, const char *source)
{
    return gates(o, aws_gates, sizeof(aws_gates) / sizeof(aws_gates[0]), v, source);
}

/* ------------------------------------------------------------------ check */

static int refuse(const char *setting, const char *why)
{
    return kp_error_set(KP_EINVALID, "%s: %s; refusing to start rather than ignore it", setting, why);
}

/* Gates and policies this build cannot honour change what gets launched or
 * removed: starting anyway would be accepting and ignoring them. */
static int check_supported(const kp_ctrl_opts *o)
{
    if (!o->ignore_dra_requests)
        return refuse("IGNORE_DRA_REQUESTS=false", "scheduling with Dynamic Resource Allocation is not supported");
    return 0;
}

static int check_policies(kp_ctrl_opts *o)
{
    if (strcmp(o->preference_policy, "Respect") && strcmp(o->preference_policy, "Ignore"))
        return kp_error_set(KP_EINVALID, "PREFERENCE_POLICY: invalid value \"%s\" (Respect or Ignore)",
                            o->preference_policy);
    if (strcmp(o->min_values_policy, "Strict") && strcmp(o->min_values_policy, "BestEffort"))
        return kp_error_set(KP_EINVALID, "MIN_VALUES_POLICY: invalid value \"%s\" (Strict or BestEffort)",
                            o->min_values_policy);
    o->ignore_preferences = !strcmp(o->preference_policy, "Ignore");
    o->min_values_best_effort = !strcmp(o->min_values_policy, "BestEffort");
    if (kp_node_health_allowed(o->node_repair_threshold, 100) < 0)
        return kp_error_set(KP_EINVALID, "NODE_REPAIR_UNHEALTHY_THRESHOLD: invalid value \"%s\" (a percentage such as "
                            "20%% or a count)", o->node_repair_threshold);
    if (o->consolidation_split_max < 1 || o->consolidation_split_max > 10)
        return kp_error_set(KP_EINVALID, "CONSOLIDATION_SPLIT_MAX: invalid value %d (1 to 10; 1: never split)",
                            o->consolidation_split_max);
    if (o->ami_refresh_ms < 60000 || o->subnet_refresh_ms < 60000)
        return kp_error_set(KP_EINVALID, "%s: must be at least 1m",
                            o->ami_refresh_ms < 60000 ? "AMI_REFRESH_INTERVAL" : "SUBNET_REFRESH_INTERVAL");
    return 0;
}

/* Karpenter's LOG_LEVEL takes any case ("INFO" works). */
static int check_log_level(const kp_ctrl_opts *o)
{
    int level = kp_log_level_parse(o->log_level);
    if (level < 0 || level == KP_LOG_OFF)
        return kp_error_set(KP_EINVALID, "--log-level: invalid value \"%s\" (debug, info, warn or error)",
                            o->log_level);
    return 0;
}

static bool set_str(const char *s)
{
    return s && *s;
}

/* Settings of the other provider: named, not silently dropped. */
static void provider_warnings(kp_ctrl_opts *o)
{
    bool aws = !strcmp(o->cloud_provider, "aws");
    const char *other = aws ? "kwok" : "aws";
    const struct {
        const char *name;
        bool set, aws_only;
    } s[] = {
        {"CLUSTER_ENDPOINT", set_str(o->cluster_endpoint), true},
        {"CLUSTER_CA_BUNDLE", set_str(o->cluster_ca_bundle), true},
        {"CLUSTER_CIDR", set_str(o->cluster_cidr), true},
        {"KUBERNETES_VERSION", set_str(o->kubernetes_version), true},
        {"AWS_ENDPOINT_URL", set_str(o->aws_endpoint_url), true},
        {"VM_MEMORY_OVERHEAD_PERCENT", o->vm_memory_overhead_percent != 0.075, true},
        {"RESERVED_ENIS", o->reserved_enis != 0, true},
        {"ISOLATED_VPC", o->isolated_vpc, true},
        {"DISABLE_DRY_RUN", o->disable_dry_run, true},
        {"EKS_CONTROL_PLANE", o->eks_control_plane, true},
        {"AMI_REFRESH_INTERVAL", o->ami_refresh_ms != 60000, true},
        {"SUBNET_REFRESH_INTERVAL", o->subnet_refresh_ms != 60000, true},
        {"INSTANCE_TYPES", strcmp(o->instance_types, "builtin") != 0, false},
        {"KWOK_FINISH_PODS_IMMEDIATELY", o->kwok_finish_immediately, false},
    };
    for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
        if (s[i].set && s[i].aws_only != aws)
            kp_ctrl_opts_warn(o, "%s is set and has no effect: it is a setting of the %s provider", s[i].name,
                              other);
}

int kp_ctrl_opts_check(kp_ctrl_opts *o)
{
    if (!set_str(o->cloud_provider))
        return kp_error_set(KP_EINVALID, "no cloud provider: set --cloud-provider (or CLOUD_PROVIDER) to aws or kwok; "
                            "there is no default, so a controller never acts on a cluster's nodes by accident");
    if (strcmp(o->cloud_provider, "kwok") && strcmp(o->cloud_provider, "aws"))
        return kp_error_set(KP_EINVALID, "--cloud-provider: invalid value \"%s\" (aws or kwok)", o->cloud_provider);
    int err = check_log_level(o);
    if (!err)
        err = check_policies(o);
    if (!err)
        err = check_supported(o);
    if (err < 0)
        return err;
    if (o->cpu_requests <= 0)
        o->cpu_requests = 1000;
    o->lease_namespace = set_str(o->lease_namespace_set)  ? o->lease_namespace_set
                         : set_str(o->system_namespace) ? o->system_namespace
                                                          : "kube-system";
    provider_warnings(o);
    return 0;
}
