/* Flags and environment for `karpenter-controller run` (see options.h). */
#include "controller/options.h"
#include "api/duration.h"
#include "base/error.h"
#include "base/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum opt_type { OPT_STRING, OPT_DURATION_MS, OPT_INT, OPT_DOUBLE, OPT_BOOL, OPT_NOT_BOOL, OPT_GATES };

typedef struct opt {
    const char *flag; /* without "--" */
    const char *env;  /* NULL: no variable */
    enum opt_type type;
    size_t offset;
    const char *help;
} opt;

#define O(field) offsetof(kp_ctrl_opts, field)

static const opt opts[] = {
    {"kubeconfig", NULL, OPT_STRING, O(kubeconfig), "kubeconfig file (default: in-cluster, then $KUBECONFIG, ~/.kube/config)"},
    {"cloud-provider", "CLOUD_PROVIDER", OPT_STRING, O(cloud_provider), "kwok (default) or aws"},
    {"instance-types", "INSTANCE_TYPES", OPT_STRING, O(instance_types), "kwok's catalog: builtin, synthetic:N or a JSON file"},
    {"cluster-name", "CLUSTER_NAME", OPT_STRING, O(cluster_name), "the cluster's name (tags, user data)"},
    {"batch-idle-duration", "BATCH_IDLE_DURATION", OPT_DURATION_MS, O(batch_idle_ms), "close a provisioning batch after this long without new pods (1s)"},
    {"batch-max-duration", "BATCH_MAX_DURATION", OPT_DURATION_MS, O(batch_max_ms), "close a provisioning batch this long after it opened (10s)"},
    {"disruption-poll-interval", "DISRUPTION_POLL_INTERVAL", OPT_DURATION_MS, O(disruption_poll_ms), "how often disruption is evaluated (10s)"},
    {"registration-ttl", "REGISTRATION_TTL", OPT_DURATION_MS, O(registration_ttl_ms), "delete a launched NodeClaim whose node has not registered after this long (15m)"},
    {"consolidation-validation-period", "CONSOLIDATION_VALIDATION_PERIOD", OPT_DURATION_MS, O(consolidation_validation_ms), "wait before a consolidation is re-checked and run (15s)"},
    {"metrics-port", "METRICS_PORT", OPT_INT, O(metrics_port), "port of /metrics (8080; 0: off)"},
    {"health-probe-port", "HEALTH_PROBE_PORT", OPT_INT, O(health_port), "port of /healthz and /readyz (8081; 0: off)"},
    {"bind-address", "BIND_ADDRESS", OPT_STRING, O(bind_address), "address the ports listen on (0.0.0.0)"},
    {"disable-leader-election", "DISABLE_LEADER_ELECTION", OPT_NOT_BOOL, O(leader_elect), "act without holding the lease"},
    {"leader-election-namespace", "SYSTEM_NAMESPACE", OPT_STRING, O(lease_namespace), "namespace of the Lease (kube-system)"},
    {"leader-election-name", "LEADER_ELECTION_NAME", OPT_STRING, O(lease_name), "name of the Lease (karpenter-leader-election)"},
    {"identity", "POD_NAME", OPT_STRING, O(identity), "this replica's name in the Lease (default host_pid)"},
    {"kube-client-qps", "KUBE_CLIENT_QPS", OPT_DOUBLE, O(kube_qps), "requests per second to the API server (200)"},
    {"kube-client-burst", "KUBE_CLIENT_BURST", OPT_INT, O(kube_burst), "burst of requests to the API server (300)"},
    {"feature-gates", "FEATURE_GATES", OPT_GATES, 0, "e.g. SpotToSpotConsolidation=true"},
    {"interruption-queue", "INTERRUPTION_QUEUE", OPT_STRING, O(interruption_queue), "aws: the SQS queue of interruption events (none: interruption handling off)"},
    {"interruption-dir", "INTERRUPTION_DIR", OPT_STRING, O(interruption_dir), "read interruption events (EventBridge JSON, one per *.json file) from this directory"},
    {"kwok-finish-pods-immediately", "KWOK_FINISH_PODS_IMMEDIATELY", OPT_BOOL, O(kwok_finish_immediately), "kwok: finish deleted pods at once instead of after their grace period"},
    {"log-level", "LOG_LEVEL", OPT_STRING, O(log_level), "debug, info, warn or error (info)"},
};

static void usage(FILE *out)
{
    fputs("usage: karpenter-controller run [flags]\n\nflags (environment variable in brackets):\n", out);
    for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
        fprintf(out, "  --%-32s %s%s%s%s\n", opts[i].flag, opts[i].help, opts[i].env ? " [" : "",
                opts[i].env ? opts[i].env : "", opts[i].env ? "]" : "");
}

static int parse_bool(const char *v, bool *out)
{
    if (!strcmp(v, "true") || !strcmp(v, "1") || !*v)
        *out = true;
    else if (!strcmp(v, "false") || !strcmp(v, "0"))
        *out = false;
    else
        return -1;
    return 0;
}

/* "SpotToSpotConsolidation=true,Other=false": unknown gates are ignored, as
 * Karpenter's own gates come and go between releases. */
static int parse_gates(kp_ctrl_opts *o, const char *v)
{
    const char *p = v;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (!eq)
            return -1;
        char value[16];
        size_t vlen = len - (size_t)(eq + 1 - p);
        if (vlen >= sizeof(value))
            return -1;
        memcpy(value, eq + 1, vlen);
        value[vlen] = '\0';
        bool b;
        if (parse_bool(value, &b) < 0)
            return -1;
        if ((size_t)(eq - p) == strlen("SpotToSpotConsolidation") && !strncmp(p, "SpotToSpotConsolidation", 23))
            o->spot_to_spot = b;
        p += len + (end ? 1 : 0);
    }
    return 0;
}

static int set(kp_ctrl_opts *o, const opt *d, const char *v, const char *source)
{
    char *base = (char *)o, *end;
    kp_duration dur;
    bool b;
    errno = 0;
    switch (d->type) {
    case OPT_STRING: *(const char **)(base + d->offset) = v; return 0;
    case OPT_DURATION_MS:
        if (kp_duration_parse(v, &dur) < 0 || dur.ns < 0)
            break;
        *(int64_t *)(base + d->offset) = dur.ns / 1000000;
        return 0;
    case OPT_INT: {
        long n = strtol(v, &end, 10);
        if (end == v || *end || errno || n < 0 || n > 65535 * 1000)
            break;
        *(int *)(base + d->offset) = (int)n;
        return 0;
    }
    case OPT_DOUBLE: {
        double x = strtod(v, &end);
        if (end == v || *end || errno || x <= 0)
            break;
        *(double *)(base + d->offset) = x;
        return 0;
    }
    case OPT_BOOL:
    case OPT_NOT_BOOL:
        if (parse_bool(v, &b) < 0)
            break;
        *(bool *)(base + d->offset) = d->type == OPT_BOOL ? b : !b;
        return 0;
    case OPT_GATES:
        if (parse_gates(o, v) < 0)
            break;
        return 0;
    }
    return kp_error_set(KP_EINVALID, "%s: invalid value \"%s\" (%s)", source, v, d->help);
}

static const opt *find(const char *flag, size_t len)
{
    for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
        if (strlen(opts[i].flag) == len && !strncmp(opts[i].flag, flag, len))
            return &opts[i];
    return NULL;
}

static int from_env(kp_ctrl_opts *o, const char *(*getenv_fn)(const char *))
{
    for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
        const char *v = opts[i].env ? getenv_fn(opts[i].env) : NULL;
        if (v && *v) {
            int err = set(o, &opts[i], v, opts[i].env);
            if (err < 0)
                return err;
        }
    }
    return 0;
}

static const char *plain_getenv(const char *name)
{
    return getenv(name);
}

int kp_ctrl_opts_parse(kp_ctrl_opts *o, int argc, char **argv, const char *(*getenv_fn)(const char *),
                       FILE *help_out)
{
    kp_ctrl_opts_init(o);
    int err = from_env(o, getenv_fn ? getenv_fn : plain_getenv);
    for (int i = 1; i < argc && !err; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(help_out ? help_out : stdout);
            return 1;
        }
        if (strncmp(a, "--", 2) != 0)
            return kp_error_set(KP_EINVALID, "unexpected argument \"%s\" (flags start with --)", a);
        const char *name = a + 2, *eq = strchr(name, '=');
        const opt *d = find(name, eq ? (size_t)(eq - name) : strlen(name));
        if (!d)
            return kp_error_set(KP_EINVALID, "unknown flag %s (see --help)", a);
        const char *v = eq ? eq + 1 : NULL;
        if (!v && (d->type == OPT_BOOL || d->type == OPT_NOT_BOOL))
            v = "true";
        else if (!v && i + 1 < argc)
            v = argv[++i];
        else if (!v)
            return kp_error_set(KP_EINVALID, "flag --%s needs a value", d->flag);
        char source[64];
        snprintf(source, sizeof(source), "--%s", d->flag);
        err = set(o, d, v, source);
    }
    if (!err && kp_log_level_parse(o->log_level) < 0)
        err = kp_error_set(KP_EINVALID, "--log-level: invalid value \"%s\" (debug, info, warn or error)",
                           o->log_level);
    if (!err && strcmp(o->cloud_provider, "kwok") && strcmp(o->cloud_provider, "aws"))
        err = kp_error_set(KP_EINVALID, "--cloud-provider: invalid value \"%s\" (kwok or aws)", o->cloud_provider);
    return err;
}
