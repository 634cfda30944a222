/* Flags and environment for `karpenter-controller run` (see options.h). */
#include "controller/options.h"
#include "controller/options_internal.h"
#include "api/duration.h"
#include "base/error.h"
#include "api/caps.h"
#include "base/log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum opt_type {
    OPT_STRING,
    OPT_DURATION_MS,
    OPT_INT,
    OPT_INT64,
    OPT_DOUBLE,   /* > 0 */
    OPT_FRACTION, /* >= 0 */
    OPT_BOOL,
    OPT_NOT_BOOL,
    OPT_GATES,     /* FEATURE_GATES */
    OPT_AWS_GATES, /* AWS_FEATURE_GATES */
    OPT_CAP,       /* a cluster-wide cap (api/caps.h), parsed by its flag name */
    OPT_NO_EFFECT, /* Karpenter has it; here it changes nothing: a warning says why */
};

typedef struct opt {
    const char *flag; /* without "--" */
    const char *env;  /* NULL: no variable */
    enum opt_type type;
    size_t offset;
    const char *help; /* OPT_NO_EFFECT: why it has none */
} opt;

#define O(field) offsetof(kp_ctrl_opts, field)

/* Every setting of Karpenter v1.14 (core, AWS, and the variables its Helm
 * chart sets) is here: taken into account, or named in a warning. Values
 * that would change decisions and cannot be honoured are refused in
 * check_supported(). */
static const opt opts[] = {
    {"kubeconfig", NULL, OPT_STRING, O(kubeconfig), "kubeconfig file (default: in-cluster, then $KUBECONFIG, ~/.kube/config)"},
    {"cloud-provider", "CLOUD_PROVIDER", OPT_STRING, O(cloud_provider), "aws or kwok (required: there is no default)"},
    {"instance-types", "INSTANCE_TYPES", OPT_STRING, O(instance_types), "kwok's catalog: builtin, synthetic:N or a JSON file"},
    {"cluster-name", "CLUSTER_NAME", OPT_STRING, O(cluster_name), "the cluster's name (tags, user data; required with aws)"},
    {"batch-idle-duration", "BATCH_IDLE_DURATION", OPT_DURATION_MS, O(batch_idle_ms), "close a provisioning batch after this long without new pods (1s)"},
    {"batch-max-duration", "BATCH_MAX_DURATION", OPT_DURATION_MS, O(batch_max_ms), "close a provisioning batch this long after it opened (10s)"},
    {"disruption-poll-interval", "DISRUPTION_POLL_INTERVAL", OPT_DURATION_MS, O(disruption_poll_ms), "how often disruption is evaluated (10s)"},
    {"consolidation-split-max", "CONSOLIDATION_SPLIT_MAX", OPT_INT, O(consolidation_split_max), "beyond Karpenter: the most NodeClaims single-node consolidation may replace one node with when together they cost less; 1: never, Karpenter's behaviour (3)"},
    {"max-nodes-total", "MAX_NODES_TOTAL", OPT_CAP, 0, "beyond Karpenter (Cluster Autoscaler's name): provisioning adds no Node or NodeClaim past this many in the cluster, whoever made them (none)"},
    {"cores-total", "CORES_TOTAL", OPT_CAP, 0, "beyond Karpenter (Cluster Autoscaler's name): provisioning adds no capacity past this many CPU cores on the cluster's nodes (none)"},
    {"memory-total", "MEMORY_TOTAL", OPT_CAP, 0, "beyond Karpenter (Cluster Autoscaler's name): the same for memory, a quantity such as 512Gi (none)"},
    {"max-hourly-cost", "MAX_HOURLY_COST", OPT_CAP, 0, "beyond Karpenter: provisioning adds no NodeClaim that could take its NodePools' nodes past these dollars an hour (none); per NodePool: the karpenter-c.dev/max-hourly-cost annotation"},
    {"disruption-parallelism", "DISRUPTION_PARALLELISM", OPT_INT, O(disruption_parallelism), "disruption commands started from one plan and in flight at once; 0: as many as the budgets allow, 1: one at a time (Karpenter's serial loop) (0)"},
    {"registration-ttl", "REGISTRATION_TTL", OPT_DURATION_MS, O(registration_ttl_ms), "delete a launched NodeClaim whose node has not registered after this long (15m)"},
    {"consolidation-validation-period", "CONSOLIDATION_VALIDATION_PERIOD", OPT_DURATION_MS, O(consolidation_validation_ms), "wait before a consolidation is re-checked and run (15s)"},
    {"default-termination-grace-period", "DEFAULT_TERMINATION_GRACE_PERIOD", OPT_DURATION_MS, O(default_tgp_ms), "the terminationGracePeriod of NodeClaims whose NodePool sets none (0: wait for pods as long as they take, Karpenter's behaviour)"},
    {"garbage-collection-interval", "GARBAGE_COLLECTION_INTERVAL", OPT_DURATION_MS, O(gc_interval_ms), "how often claims without instances and instances without claims are cleaned up (2m)"},
    {"metrics-port", "METRICS_PORT", OPT_INT, O(metrics_port), "port of /metrics (8080; 0: off)"},
    {"health-probe-port", "HEALTH_PROBE_PORT", OPT_INT, O(health_port), "port of /healthz and /readyz (8081; 0: off)"},
    {"bind-address", "BIND_ADDRESS", OPT_STRING, O(bind_address), "address the ports listen on (0.0.0.0)"},
    {"disable-leader-election", "DISABLE_LEADER_ELECTION", OPT_NOT_BOOL, O(leader_elect), "act without holding the lease"},
    {"system-namespace", "SYSTEM_NAMESPACE", OPT_STRING, O(system_namespace), "the namespace the controller runs in (the Lease's default)"},
    {"leader-election-namespace", "LEADER_ELECTION_NAMESPACE", OPT_STRING, O(lease_namespace_set), "namespace of the Lease (default: the system namespace, else kube-system)"},
    {"leader-election-name", "LEADER_ELECTION_NAME", OPT_STRING, O(lease_name), "name of the Lease (karpenter-leader-election)"},
    {"identity", "POD_NAME", OPT_STRING, O(identity), "this replica's name in the Lease (default host_pid)"},
    {"kube-client-qps", "KUBE_CLIENT_QPS", OPT_DOUBLE, O(kube_qps), "requests per second to the API server (200)"},
    {"kube-client-burst", "KUBE_CLIENT_BURST", OPT_INT, O(kube_burst), "burst of requests to the API server (300)"},
    {"cpu-requests", "CPU_REQUESTS", OPT_INT64, O(cpu_requests), "the container's CPU request in millicores; worker counts scale with it (1000)"},
    {"feature-gates", "FEATURE_GATES", OPT_GATES, 0, "NodeRepair, ReservedCapacity, SpotToSpotConsolidation, NodeOverlay, StaticCapacity, CapacityBuffer (e.g. SpotToSpotConsolidation=true)"},
    {"node-repair-unhealthy-threshold", "NODE_REPAIR_UNHEALTHY_THRESHOLD", OPT_STRING, O(node_repair_threshold), "NodeRepair stops while more of a NodePool's nodes than this are unhealthy: a percentage (rounded up) or a count (20%, Karpenter's fixed value)"},
    {"preference-policy", "PREFERENCE_POLICY", OPT_STRING, O(preference_policy), "Respect or Ignore preferred affinities and ScheduleAnyway spreads (Respect)"},
    {"min-values-policy", "MIN_VALUES_POLICY", OPT_STRING, O(min_values_policy), "Strict or BestEffort minValues (Strict)"},
    {"ignore-dra-requests", "IGNORE_DRA_REQUESTS", OPT_BOOL, O(ignore_dra_requests), "leave pods with resourceClaims unprovisioned, with an event (true; false is not supported)"},
    {"disable-cluster-state-observability", "DISABLE_CLUSTER_STATE_OBSERVABILITY", OPT_BOOL, O(disable_cluster_state_observability), "no cluster-state metrics"},
    {"cluster-endpoint", "CLUSTER_ENDPOINT", OPT_STRING, O(cluster_endpoint), "aws: the API server URL nodes join (default: discovered)"},
    {"cluster-ca-bundle", "CLUSTER_CA_BUNDLE", OPT_STRING, O(cluster_ca_bundle), "aws: base64 of the cluster CA nodes trust (default: discovered)"},
    {"cluster-cidr", "CLUSTER_CIDR", OPT_STRING, O(cluster_cidr), "aws: the service CIDR (AL2023 user data)"},
    {"kubernetes-version", "KUBERNETES_VERSION", OPT_STRING, O(kubernetes_version), "aws: the control plane's minor version for AMI aliases (default: the API server's /version)"},
    {"kubernetes-min-version", "KUBERNETES_MIN_VERSION", OPT_STRING, O(kubernetes_min_version), "refuse to start on an API server older than this"},
    {"aws-region", "AWS_REGION", OPT_STRING, O(aws_region), "aws: the region (default: AWS_DEFAULT_REGION, the profile's)"},
    {"aws-endpoint-url", "AWS_ENDPOINT_URL", OPT_STRING, O(aws_endpoint_url), "aws: one endpoint for every AWS service (tests, emulators)"},
    {"vm-memory-overhead-percent", "VM_MEMORY_OVERHEAD_PERCENT", OPT_FRACTION, O(vm_memory_overhead_percent), "aws: memory the hypervisor keeps, as a fraction (0.075)"},
    {"reserved-enis", "RESERVED_ENIS", OPT_INT, O(reserved_enis), "aws: ENIs kept out of the max-pods arithmetic (0)"},
    {"isolated-vpc", "ISOLATED_VPC", OPT_BOOL, O(isolated_vpc), "aws: no Price List API; use the built-in prices"},
    {"eks-control-plane", "EKS_CONTROL_PLANE", OPT_BOOL, O(eks_control_plane), "aws: discover endpoint, CA and service CIDR with EKS DescribeCluster"},
    {"disable-dry-run", "DISABLE_DRY_RUN", OPT_BOOL, O(disable_dry_run), "aws: skip the dry-run checks of EC2NodeClasses"},
    {"ami-refresh-interval", "AMI_REFRESH_INTERVAL", OPT_DURATION_MS, O(ami_refresh_ms), "aws: how often AMIs are resolved again (1m, at least 1m)"},
    {"subnet-refresh-interval", "SUBNET_REFRESH_INTERVAL", OPT_DURATION_MS, O(subnet_refresh_ms), "aws: how often subnets are resolved again (1m, at least 1m)"},
    {"enable-zonal-shift", "ENABLE_ZONAL_SHIFT", OPT_BOOL, 0, "aws: avoid zones under an ARC zonal shift (not supported: true is refused)"},
    {"aws-feature-gates", "AWS_FEATURE_GATES", OPT_AWS_GATES, 0, "aws: NodeClassCEL, DRANVIDIAGPU, DRAEFA, RebootForRepair (none supported: true is refused)"},
    {"interruption-queue", "INTERRUPTION_QUEUE", OPT_STRING, O(interruption_queue), "aws: the SQS queue of interruption events (none: interruption handling off)"},
    {"interruption-dir", "INTERRUPTION_DIR", OPT_STRING, O(interruption_dir), "read interruption events (EventBridge JSON, one per *.json file) from this directory"},
    {"kwok-finish-pods-immediately", "KWOK_FINISH_PODS_IMMEDIATELY", OPT_BOOL, O(kwok_finish_immediately), "kwok: finish deleted pods at once instead of after their grace period"},
    {"log-level", "LOG_LEVEL", OPT_STRING, O(log_level), "debug, info, warn or error, any case (info)"},
    {"log-output-paths", "LOG_OUTPUT_PATHS", OPT_STRING, O(log_output_paths), "comma-separated: stdout, stderr or files the log goes to (stdout)"},
    {"log-error-output-paths", "LOG_ERROR_OUTPUT_PATHS", OPT_STRING, O(log_error_output_paths), "comma-separated: where failures to write the log are reported (stderr)"},
    {"version", NULL, OPT_BOOL, O(show_version), "print the version and exit"},
    /* Karpenter's, with nothing to act on here. */
    {"karpenter-service", "KARPENTER_SERVICE", OPT_NO_EFFECT, 0, "the controller serves no webhook here; karpenter-webhook takes --service-name"},
    {"enable-profiling", "ENABLE_PROFILING", OPT_NO_EFFECT, 0, "there is no profiling endpoint (use perf on the process)"},
    {"disable-controller-warmup", "DISABLE_CONTROLLER_WARMUP", OPT_NO_EFFECT, 0, "caches always fill before the lease is won"},
    {"memory-limit", "MEMORY_LIMIT", OPT_NO_EFFECT, 0, "there is no garbage collector to tune; the container's limit applies as it is"},
    {"webhook-port", "WEBHOOK_PORT", OPT_NO_EFFECT, 0, "the controller serves no webhook; karpenter-webhook takes --port"},
    {"webhook-metrics-port", "WEBHOOK_METRICS_PORT", OPT_NO_EFFECT, 0, "the controller serves no webhook"},
    {"disable-webhook", "DISABLE_WEBHOOK", OPT_NO_EFFECT, 0, "the controller serves no webhook; leave out the karpenter-webhook container instead"},
    {"assume-role-duration", "ASSUME_ROLE_DURATION", OPT_NO_EFFECT, 0, "no role is assumed (credentials come from the default chain)"},
};

#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

static void usage(FILE *out)
{
    fputs("usage: karpenter-controller run [flags]\n\nflags (environment variable in brackets):\n", out);
    for (size_t i = 0; i < N_OPTS; i++)
        if (opts[i].type != OPT_NO_EFFECT)
            fprintf(out, "  --%-36s %s%s%s%s\n", opts[i].flag, opts[i].help, opts[i].env ? " [" : "",
                    opts[i].env ? opts[i].env : "", opts[i].env ? "]" : "");
    fputs("\naccepted for Karpenter compatibility, with no effect here (a warning says so):\n", out);
    for (size_t i = 0; i < N_OPTS; i++)
        if (opts[i].type == OPT_NO_EFFECT)
            fprintf(out, "  --%-36s %s [%s]\n", opts[i].flag, opts[i].help, opts[i].env);
}

int kp_ctrl_parse_bool(const char *v, bool *out)
{
    static const char *const yes[] = {"", "1", "t", "T", "true", "TRUE", "True"};
    static const char *const no[] = {"0", "f", "F", "false", "FALSE", "False"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
        if (!strcmp(v, yes[i]))
            return *out = true, 0;
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
        if (!strcmp(v, no[i]))
            return *out = false, 0;
    return -1;
}

static int set_number(kp_ctrl_opts *o, const opt *d, const char *v)
{
    char *base = (char *)o, *end;
    errno = 0;
    if (d->type == OPT_INT || d->type == OPT_INT64) {
        long long n = strtoll(v, &end, 10);
        if (end == v || *end || errno || n < 0 || (d->type == OPT_INT && n > 65535 * 1000))
            return -1;
        if (d->type == OPT_INT)
            *(int *)(base + d->offset) = (int)n;
        else
            *(int64_t *)(base + d->offset) = n;
        return 0;
    }
    double x = strtod(v, &end);
    if (end == v || *end || errno || x < 0 || (d->type == OPT_DOUBLE && x == 0))
        return -1;
    *(double *)(base + d->offset) = x;
    return 0;
}

static int set(kp_ctrl_opts *o, const opt *d, const char *v, const char *source)
{
    char *base = (char *)o;
    kp_duration dur;
    bool b;
    int ok = -1;
    switch (d->type) {
    case OPT_STRING: *(const char **)(base + d->offset) = v; return 0;
    case OPT_DURATION_MS:
        if (kp_duration_parse(v, &dur) == 0 && dur.ns >= 0)
            *(int64_t *)(base + d->offset) = dur.ns / 1000000, ok = 0;
        break;
    case OPT_INT:
    case OPT_INT64:
    case OPT_DOUBLE:
    case OPT_FRACTION: ok = set_number(o, d, v); break;
    case OPT_BOOL:
    case OPT_NOT_BOOL:
        if ((ok = kp_ctrl_parse_bool(v, &b)) == 0 && d->offset)
            *(bool *)(base + d->offset) = d->type == OPT_BOOL ? b : !b;
        else if (ok == 0 && b && !strcmp(d->flag, "enable-zonal-shift"))
            return kp_error_set(KP_EINVALID, "%s=%s: ARC zonal shift is not supported; refusing to start rather "
                                "than launch into a zone AWS has shifted away from", source, v);
        break;
    case OPT_GATES: return kp_ctrl_parse_gates(o, v, source);
    case OPT_CAP: return kp_caps_parse_setting(&o->caps, d->flag, v, source);
    case OPT_AWS_GATES: return kp_ctrl_parse_aws_gates(o, v, source);
    case OPT_NO_EFFECT: kp_ctrl_opts_warn(o, "%s is set and has no effect: %s", source, d->help); return 0;
    }
    if (ok < 0)
        return kp_error_set(KP_EINVALID, "%s: invalid value \"%s\" (%s)", source, v, d->help);
    return 0;
}

static const opt *find(const char *flag, size_t len)
{
    for (size_t i = 0; i < N_OPTS; i++)
        if (strlen(opts[i].flag) == len && !strncmp(opts[i].flag, flag, len))
            return &opts[i];
    return NULL;
}

static int from_env(kp_ctrl_opts *o, const char *(*getenv_fn)(const char *))
{
    for (size_t i = 0; i < N_OPTS; i++) {
        const char *v = opts[i].env ? getenv_fn(opts[i].env) : NULL;
        int err = v && *v ? set(o, &opts[i], v, opts[i].env) : 0;
        if (err < 0)
            return err;
    }
    return 0;
}

static const char *plain_getenv(const char *name)
{
    return getenv(name);
}

static int from_args(kp_ctrl_opts *o, int argc, char **argv, FILE *help_out)
{
    int err = 0;
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
    return err;
}

int kp_ctrl_opts_parse(kp_ctrl_opts *o, int argc, char **argv, const char *(*getenv_fn)(const char *),
                       FILE *help_out)
{
    kp_ctrl_opts_init(o);
    int err = from_env(o, getenv_fn ? getenv_fn : plain_getenv);
    if (!err)
        err = from_args(o, argc, argv, help_out);
    if (err || o->show_version)
        return err;
    return kp_ctrl_opts_check(o);
}
