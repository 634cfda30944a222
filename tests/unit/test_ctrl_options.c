/* `karpenter-controller run` flags and their environment fallbacks. */
#include <criterion/criterion.h>
#include <string.h>

#include "base/error.h"
#include "controller/options.h"

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

Test(ctrl_options, defaults_are_karpenters)
{
    kp_ctrl_opts o;
    const char *argv[] = {"run"};
    cr_assert_eq(parse(&o, NULL, 1, argv), 0, "%s", kp_error_last());
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
}

Test(ctrl_options, flags_in_both_spellings)
{
    kp_ctrl_opts o;
    const char *argv[] = {"run", "--batch-idle-duration=2s", "--batch-max-duration", "1m30s", "--metrics-port", "0",
                          "--disable-leader-election", "--kube-client-qps=50.5", "--log-level", "debug"};
    cr_assert_eq(parse(&o, NULL, 10, argv), 0, "%s", kp_error_last());
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
                         "Other=false,SpotToSpotConsolidation=true", "DISABLE_LEADER_ELECTION", "true", NULL};
    const char *argv[] = {"run", "--batch-idle-duration", "500ms"};
    cr_assert_eq(parse(&o, env, 3, argv), 0, "%s", kp_error_last());
    cr_expect_eq(o.batch_idle_ms, 500, "the flag wins over the variable");
    cr_expect_str_eq(o.cluster_name, "prod");
    cr_expect(o.spot_to_spot);
    cr_expect(!o.leader_elect);
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
        {{NULL}, {"run", "--cloud-provider", "gcp"}, 3, "kwok or aws"},
        {{NULL}, {"run", "--log-level", "loud"}, 3, "--log-level"},
        {{NULL}, {"run", "--feature-gates", "SpotToSpotConsolidation"}, 3, "--feature-gates"},
        {{NULL}, {"run", "stray"}, 2, "unexpected argument \"stray\""},
        {{NULL}, {"run", "--kube-client-qps=-1"}, 2, "--kube-client-qps"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kp_ctrl_opts o;
        int err = parse(&o, cases[i].env, cases[i].argc, cases[i].argv);
        cr_expect_eq(err, KP_EINVALID, "case %zu", i);
        cr_expect(strstr(kp_error_last(), cases[i].needle) != NULL, "case %zu: %s", i, kp_error_last());
    }
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
