/* `karpenter-controller run` flags and their environment fallbacks. */
#include <criterion/criterion.h>
#include <string.h>

#include "base/error.h"
#include "controller/cloud_aws.h"
#include "controller/options.h"
#include "helpers/assert.h"

static const char *const *env_pairs;

static const char *fake_getenv(const char *name)
{
    for (size_t i = 0; env_pairs && env_pairs[i]; i += 2)
        if (!strcmp(env_pairs[i], name))
            return env_pairs[i + 1];
    return NULL;
}

static int parse(kp_ctrl_opts *o, const char *const *env, int argc, const char *const *argv)
{
    env_pairs = env;
    return kp_ctrl_opts_parse(o, argc, (char **)argv, fake_getenv, NULL);
}

Test(ctrl_options, a_cloud_provider_is_required)
{
    kp_ctrl_opts o;
    const char *argv[] = {"run"};
    cr_assert_eq(parse(&o, NULL, 1, argv), KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "no cloud provider") && strstr(kp_error_last(), "CLOUD_PROVIDER"), "%s",
              kp_error_last());
    const char *env[] = {"CLOUD_PROVIDER", "kwok", NULL};
    KP_EXPECT_OK(parse(&o, env, 1, argv));
}

Test(ctrl_options, defaults_are_karpenters)
{
    kp_ctrl_opts o;
    const char *argv[] = {"run", "--cloud-provider", "kwok"};
    KP_ASSERT_OK(parse(&o, NULL, 3, argv));
    cr_expect_eq(o.batch_idle_ms, 1000);
    cr_expect_eq(o.batch_max_ms, 10000);
    cr_expect_eq(o.metrics_port, 8080);
    cr_expect_eq(o.health_port, 8081);
    cr_expect(o.leader_elect);
    cr_expect_float_eq(o.kube_qps, 200.0, 1e-9);
    cr_expect_eq(o.kube_burst, 300);
    cr_expect_str_eq(o.cloud_provider, "kwok");
    cr_expect_eq(o.registration_ttl_ms, 15 * 60 * 1000);
    cr_expect(!o.spot_to_spot);
    cr_expect(o.reserved_capacity, "ReservedCapacity is on by default since v1.6");
    cr_expect(o.ignore_dra_requests);
    cr_expect(!o.ignore_preferences && !o.min_values_best_effort);
    cr_expect_eq(o.cpu_requests, 1000);
    cr_expect_str_eq(o.lease_namespace, "kube-system");
    cr_expect_str_eq(o.log_output_paths, "stdout");
    cr_expect_eq(o.n_warnings, 0);
}

Test(ctrl_options, flags_in_both_spellings)
{
    kp_ctrl_opts o;
    const char *argv[] = {"run", "--batch-idle-duration=2s", "--batch-max-duration", "1m30s", "--metrics-port", "0",
                          "--disable-leader-election", "--kube-client-qps=50.5", "--log-level", "debug",
                          "--cloud-provider=aws"};
    KP_ASSERT_OK(parse(&o, NULL, 11, argv));
    cr_expect_eq(o.batch_idle_ms, 2000);
    cr_expect_eq(o.batch_max_ms, 90000);
    cr_expect_eq(o.metrics_port, 0);
    cr_expect(!o.leader_elect);
    cr_expect_float_eq(o.kube_qps, 50.5, 1e-9);
    cr_expect_str_eq(o.log_level, "debug");
}

Test(ctrl_options, environment_then_flags)
{
    kp_ctrl_opts o;
    const char *env[] = {"BATCH_IDLE_DURATION", "3s", "CLUSTER_NAME", "prod", "FEATURE_GATES",
                         "Other=false,SpotToSpotConsolidation=true", "DISABLE_LEADER_ELECTION", "true",
                         "CLOUD_PROVIDER", "aws", NULL};
    const char *argv[] = {"run", "--batch-idle-duration", "500ms"};
    KP_ASSERT_OK(parse(&o, env, 3, argv));
    cr_expect_eq(o.batch_idle_ms, 500, "the flag wins over the variable");
    cr_expect_str_eq(o.cluster_name, "prod");
    cr_expect(o.spot_to_spot);
    cr_expect(!o.leader_elect);
    cr_expect_eq(o.n_warnings, 1, "the unknown gate is named");
    cr_expect(strstr(o.warnings[0], "unknown feature gate Other"), "%s", o.warnings[0]);
}

Test(ctrl_options, bad_values_name_the_source)
{
    static const struct {
        const char *env[3];
        const char *argv[3];
        int argc;
        const char *needle;
    } cases[] = {
        {{NULL}, {"run", "--batch-idle-duration", "soon"}, 3, "--batch-idle-duration: invalid value \"soon\""},
        {{"METRICS_PORT", "eighty", NULL}, {"run"}, 1, "METRICS_PORT: invalid value \"eighty\""},
        {{NULL}, {"run", "--no-such-flag"}, 2, "unknown flag --no-such-flag"},
        {{NULL}, {"run", "--metrics-port"}, 2, "needs a value"},
        {{NULL}, {"run", "--cloud-provider", "gcp"}, 3, "aws or kwok"},
        {{NULL}, {"run", "--log-level", "loud"}, 3, "--log-level"},
        {{NULL}, {"run", "--feature-gates", "SpotToSpotConsolidation"}, 3, "--feature-gates"},
        {{NULL}, {"run", "stray"}, 2, "unexpected argument \"stray\""},
        {{NULL}, {"run", "--kube-client-qps=-1"}, 2, "--kube-client-qps"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kp_ctrl_opts o;
        const char *env[5] = {"CLOUD_PROVIDER", "kwok", cases[i].env[0], cases[i].env[1], NULL};
        int err = parse(&o, env, cases[i].argc, cases[i].argv);
        cr_expect_eq(err, KP_EINVALID, "case %zu", i);
        cr_expect(strstr(kp_error_last(), cases[i].needle) != NULL, "case %zu: %s", i, kp_error_last());
    }
}

Test(ctrl_options, caps_from_flags_and_environment)
{
    kp_ctrl_opts o;
    const char *env[] = {"CLOUD_PROVIDER", "kwok", "MAX_NODES_TOTAL", "40", "MEMORY_TOTAL", "1Ti",
                         "MAX_HOURLY_COST", "12.5", NULL};
    const char *argv[] = {"run", "--cores-total", "96", "--max-nodes-total=30"};
    cr_assert_eq(parse(&o, env, 4, argv), 0, "%s", kp_error_last());
    cr_expect_eq(o.caps.max_nodes, 30, "the flag wins over the variable");
    cr_expect(o.caps.has_cores && o.caps.cores == (kp_milli128)96000);
    cr_expect(o.caps.has_memory && o.caps.memory == (kp_milli128)1024 * 1024 * 1024 * 1024 * 1000);
    cr_expect_float_eq(o.caps.max_hourly_cost, 12.5, 1e-12);
    const char *bad_env[] = {"CLOUD_PROVIDER", "kwok", "CORES_TOTAL", "0:96", NULL};
    cr_expect_eq(parse(&o, bad_env, 1, argv), KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "CORES_TOTAL 0:96: give the maximum only") != NULL, "%s", kp_error_last());
    kp_ctrl_opts d;
    cr_assert_eq(parse(&d, env, 1, argv), 0);
    cr_expect_eq(d.caps.max_nodes, 40);
    const char *none[] = {"CLOUD_PROVIDER", "kwok", NULL};
    cr_assert_eq(parse(&d, none, 1, argv), 0);
    cr_expect_not(kp_caps_any(&d.caps), "no cap unless one is set");
}

Test(ctrl_options, help)
{
    kp_ctrl_opts o;
    const char *argv[] = {"run", "--help"};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    env_pairs = NULL;
    cr_assert_eq(kp_ctrl_opts_parse(&o, 2, (char **)argv, fake_getenv, f), 1);
    fclose(f);
    cr_expect(strstr(text, "--batch-idle-duration") && strstr(text, "[BATCH_IDLE_DURATION]"), "%s", text);
    free(text);
}

/* ------------------------------------------------- every Karpenter setting */

enum outcome { ACTS, WARNS, REFUSED };

typedef struct setting_case {
    const char *env, *value;
    enum outcome outcome;
    bool (*took)(const kp_ctrl_opts *o); /* ACTS: the value reached the options */
    const char *needle;                  /* WARNS / REFUSED: in the warning or the error */
} setting_case;

#define ACT(field_check) ACTS, field_check, NULL
#define CHECK(name, expr)                                                                                        \
    static bool name(const kp_ctrl_opts *o)                                                                      \
    {                                                                                                            \
        return (expr);                                                                                           \
    }

CHECK(idle, o->batch_idle_ms == 3000)
CHECK(max, o->batch_max_ms == 20000)
CHECK(ca, o->cluster_ca_bundle && !strcmp(o->cluster_ca_bundle, "Q0E="))
CHECK(endpoint, o->cluster_endpoint && !strcmp(o->cluster_endpoint, "https://k8s.example"))
CHECK(name, !strcmp(o->cluster_name, "prod"))
CHECK(cpu, o->cpu_requests == 4000)
CHECK(no_state, o->disable_cluster_state_observability)
CHECK(dry, o->disable_dry_run)
CHECK(eks, o->eks_control_plane)
CHECK(split, o->consolidation_split_max == 1)
CHECK(no_leader, !o->leader_elect)
CHECK(s2s, o->spot_to_spot && !o->reserved_capacity)
CHECK(health, o->health_port == 9091)
CHECK(dra, o->ignore_dra_requests)
CHECK(queue, o->interruption_queue && !strcmp(o->interruption_queue, "q"))
CHECK(isolated, o->isolated_vpc)
CHECK(burst, o->kube_burst == 7)
CHECK(qps, o->kube_qps == 9)
CHECK(lease_name, !strcmp(o->lease_name, "other-lease"))
CHECK(lease_ns, !strcmp(o->lease_namespace, "elsewhere"))
CHECK(sys_ns, !strcmp(o->lease_namespace, "karpenter"))
CHECK(errs, !strcmp(o->log_error_output_paths, "stdout"))
CHECK(level, !strcmp(o->log_level, "ERROR"))
CHECK(outs, !strcmp(o->log_output_paths, "stderr"))
CHECK(metrics, o->metrics_port == 9090)
CHECK(minvals, o->min_values_best_effort)
CHECK(prefs, o->ignore_preferences)
CHECK(enis, o->reserved_enis == 2)
CHECK(vm, o->vm_memory_overhead_percent == 0)
CHECK(ami, o->ami_refresh_ms == 300000)
CHECK(subnet, o->subnet_refresh_ms == 120000)
CHECK(minver, o->kubernetes_min_version && !strcmp(o->kubernetes_min_version, "1.19.0-0"))
CHECK(pod, o->identity && !strcmp(o->identity, "karpenter-0"))
CHECK(repair, o->node_repair)
CHECK(static_pools, o->static_capacity && !o->capacity_buffer)
CHECK(buffers, o->capacity_buffer && !o->static_capacity)
CHECK(overlay, o->node_overlay)
CHECK(threshold, !strcmp(o->node_repair_threshold, "2"))

/* Karpenter v1.14's settings reference (core and AWS), its Helm chart's
 * variables, and the feature gates: each one set, each one honoured,
 * warned about or refused. */
static const setting_case settings[] = {
    {"AMI_REFRESH_INTERVAL", "5m", ACT(ami)},
    {"AMI_REFRESH_INTERVAL", "30s", REFUSED, NULL, "at least 1m"},
    {"BATCH_IDLE_DURATION", "3s", ACT(idle)},
    {"BATCH_MAX_DURATION", "20s", ACT(max)},
    {"CLUSTER_CA_BUNDLE", "Q0E=", ACT(ca)},
    {"CLUSTER_ENDPOINT", "https://k8s.example", ACT(endpoint)},
    {"CLUSTER_NAME", "prod", ACT(name)},
    {"CPU_REQUESTS", "4000", ACT(cpu)},
    {"DISABLE_CLUSTER_STATE_OBSERVABILITY", "true", ACT(no_state)},
    {"DISABLE_CONTROLLER_WARMUP", "true", WARNS, NULL, "DISABLE_CONTROLLER_WARMUP is set and has no effect"},
    {"DISABLE_DRY_RUN", "true", ACT(dry)},
    {"DISABLE_LEADER_ELECTION", "true", ACT(no_leader)},
    {"EKS_CONTROL_PLANE", "true", ACT(eks)},
    {"CONSOLIDATION_SPLIT_MAX", "1", ACT(split)},
    {"CONSOLIDATION_SPLIT_MAX", "0", REFUSED, NULL, "CONSOLIDATION_SPLIT_MAX"},
    {"ENABLE_PROFILING", "true", WARNS, NULL, "ENABLE_PROFILING is set and has no effect"},
    {"ENABLE_ZONAL_SHIFT", "true", REFUSED, NULL, "zonal shift is not supported"},
    {"FEATURE_GATES", "SpotToSpotConsolidation=true,ReservedCapacity=false", ACT(s2s)},
    {"FEATURE_GATES", "NodeRepair=true", ACT(repair)},
    {"NODE_REPAIR_UNHEALTHY_THRESHOLD", "2", ACT(threshold)},
    {"NODE_REPAIR_UNHEALTHY_THRESHOLD", "lots", REFUSED, NULL, "NODE_REPAIR_UNHEALTHY_THRESHOLD"},
    {"FEATURE_GATES", "NodeOverlay=true", ACT(overlay)},
    {"FEATURE_GATES", "StaticCapacity=true", ACT(static_pools)},
    {"FEATURE_GATES", "CapacityBuffer=true", ACT(buffers)},
    {"FEATURE_GATES", "Drift=true", WARNS, NULL, "unknown feature gate Drift"},
    {"AWS_FEATURE_GATES", "RebootForRepair=true", REFUSED, NULL, "RebootForRepair=true"},
    {"AWS_FEATURE_GATES", "NodeClassCEL=false,Foo=true", WARNS, NULL, "unknown feature gate Foo"},
    {"HEALTH_PROBE_PORT", "9091", ACT(health)},
    {"IGNORE_DRA_REQUESTS", "true", ACT(dra)},
    {"IGNORE_DRA_REQUESTS", "false", REFUSED, NULL, "Dynamic Resource Allocation"},
    {"INTERRUPTION_QUEUE", "q", ACT(queue)},
    {"ISOLATED_VPC", "true", ACT(isolated)},
    {"KARPENTER_SERVICE", "karpenter", WARNS, NULL, "KARPENTER_SERVICE is set and has no effect"},
    {"KUBE_CLIENT_BURST", "7", ACT(burst)},
    {"KUBE_CLIENT_QPS", "9", ACT(qps)},
    {"KUBERNETES_MIN_VERSION", "1.19.0-0", ACT(minver)},
    {"LEADER_ELECTION_NAME", "other-lease", ACT(lease_name)},
    {"LEADER_ELECTION_NAMESPACE", "elsewhere", ACT(lease_ns)},
    {"LOG_ERROR_OUTPUT_PATHS", "stdout", ACT(errs)},
    {"LOG_LEVEL", "ERROR", ACT(level)},
    {"LOG_LEVEL", "loud", REFUSED, NULL, "--log-level"},
    {"LOG_OUTPUT_PATHS", "stderr", ACT(outs)},
    {"MEMORY_LIMIT", "1073741824", WARNS, NULL, "MEMORY_LIMIT is set and has no effect"},
    {"METRICS_PORT", "9090", ACT(metrics)},
    {"MIN_VALUES_POLICY", "BestEffort", ACT(minvals)},
    {"MIN_VALUES_POLICY", "Loose", REFUSED, NULL, "MIN_VALUES_POLICY"},
    {"PREFERENCE_POLICY", "Ignore", ACT(prefs)},
    {"PREFERENCE_POLICY", "Maybe", REFUSED, NULL, "PREFERENCE_POLICY"},
    {"RESERVED_ENIS", "2", ACT(enis)},
    {"SUBNET_REFRESH_INTERVAL", "2m", ACT(subnet)},
    {"VM_MEMORY_OVERHEAD_PERCENT", "0", ACT(vm)},
    {"SYSTEM_NAMESPACE", "karpenter", ACT(sys_ns)},
    {"POD_NAME", "karpenter-0", ACT(pod)},
    {"WEBHOOK_PORT", "8443", WARNS, NULL, "WEBHOOK_PORT is set and has no effect"},
    {"WEBHOOK_METRICS_PORT", "8001", WARNS, NULL, "WEBHOOK_METRICS_PORT is set and has no effect"},
    {"DISABLE_WEBHOOK", "true", WARNS, NULL, "DISABLE_WEBHOOK is set and has no effect"},
    {"ASSUME_ROLE_DURATION", "15m", WARNS, NULL, "ASSUME_ROLE_DURATION is set and has no effect"},
};

static bool warned(const kp_ctrl_opts *o, const char *needle)
{
    for (int i = 0; i < o->n_warnings; i++)
        if (strstr(o->warnings[i], needle))
            return true;
    return false;
}

Test(ctrl_options, every_karpenter_setting_is_honoured_warned_or_refused)
{
    for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
        const setting_case *t = &settings[i];
        const char *env[] = {"CLOUD_PROVIDER", "aws", t->env, t->value, NULL};
        const char *argv[] = {"run"};
        kp_ctrl_opts o;
        int err = parse(&o, env, 1, argv);
        if (t->outcome == REFUSED) {
            cr_expect_eq(err, KP_EINVALID, "%s=%s should be refused", t->env, t->value);
            cr_expect(strstr(kp_error_last(), t->needle), "%s=%s: %s", t->env, t->value, kp_error_last());
            continue;
        }
        cr_expect_eq(err, 0, "%s=%s: %s", t->env, t->value, kp_error_last());
        if (t->outcome == ACTS)
            cr_expect(t->took(&o), "%s=%s did not take effect", t->env, t->value);
        else
            cr_expect(warned(&o, t->needle), "%s=%s: no warning with \"%s\" (%d warnings)", t->env, t->value,
                      t->needle, o.n_warnings);
    }
}

Test(ctrl_options, aws_settings_with_kwok_are_named)
{
    const char *env[] = {"CLOUD_PROVIDER", "kwok", "CLUSTER_ENDPOINT", "https://x", "RESERVED_ENIS", "1", NULL};
    const char *argv[] = {"run"};
    kp_ctrl_opts o;
    KP_ASSERT_OK(parse(&o, env, 1, argv));
    cr_expect(warned(&o, "CLUSTER_ENDPOINT is set and has no effect: it is a setting of the aws provider"));
    cr_expect(warned(&o, "RESERVED_ENIS is set and has no effect"));
}

Test(ctrl_options, version_flag)
{
    const char *argv[] = {"run", "--version"};
    kp_ctrl_opts o;
    cr_assert_eq(parse(&o, NULL, 2, argv), 0, "--version needs no provider: %s", kp_error_last());
    cr_expect(o.show_version);
}

/* The AWS settings reach the provider, not only the option struct. */
Test(ctrl_options, aws_settings_reach_the_provider)
{
    const char *env[] = {"CLOUD_PROVIDER", "aws", "DISABLE_DRY_RUN", "true", "EKS_CONTROL_PLANE", "true",
                         "AMI_REFRESH_INTERVAL", "5m", "SUBNET_REFRESH_INTERVAL", "2m", "FEATURE_GATES",
                         "ReservedCapacity=false", "RESERVED_ENIS", "3", "ISOLATED_VPC", "true", NULL};
    const char *argv[] = {"run"};
    kp_ctrl_opts o;
    KP_ASSERT_OK(parse(&o, env, 1, argv));
    kp_aws_provider_opts ao;
    kp_cloud_aws_opts(&o, &ao);
    cr_expect(ao.disable_dry_run);
    cr_expect(ao.eks_control_plane);
    cr_expect_eq(ao.ami_refresh_interval_ns, 5LL * 60 * 1000000000);
    cr_expect_eq(ao.subnet_refresh_interval_ns, 2LL * 60 * 1000000000);
    cr_expect(ao.reserved_capacity_disabled);
    cr_expect_eq(ao.reserved_enis, 3);
    cr_expect(ao.isolated_vpc);
    const char *plain[] = {"CLOUD_PROVIDER", "aws", NULL};
    KP_ASSERT_OK(parse(&o, plain, 1, argv));
    kp_cloud_aws_opts(&o, &ao);
    cr_expect(!ao.disable_dry_run && !ao.eks_control_plane && !ao.reserved_capacity_disabled);
    cr_expect_eq(ao.ami_refresh_interval_ns, 60LL * 1000000000);
}
