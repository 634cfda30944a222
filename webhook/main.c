/*
 * karpenter-webhook: flags, wiring, and the loop that reloads the
 * certificate and the policy when their files change and, with
 * --self-signed, keeps our CA in the webhook configurations' caBundle.
 * Everything that can be tested without a socket is in shared/webhook/.
 */
#include "options.h"
#include "pod_warnings.h"
#include "server.h"

#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "base/version.h"
#include "base/xalloc.h"
#include "kube/config.h"
#include "kube/rest.h"
#include "metrics/metrics.h"
#include "webhook/cabundle.h"
#include "webhook/cabundle_kube.h"
#include "webhook/certs.h"
#include "webhook/filewatch.h"
#include "webhook/policy.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOGGER "webhook"

typedef struct app {
    kp_webhook_options opts;
    kp_metrics *metrics;
    kp_metric *tls_reloads, *policy_reloads, *cert_expiry, *ca_publishes;
    kp_policy_slot *policy;
    kp_server *server;
    kp_filewatch tls_watch, policy_watch;
    kp_tls_pair tls;
    /* Credentials for the API server (a Pod's, or --kubeconfig); NULL: none, so
     * the caBundle is only logged and Pods get no warnings. */
    kp_kube_client *kube;
    kp_pod_warnings *pod_warnings; /* NULL: off */
    kp_cabundle_client cabundle;
    char *ca_pem;            /* our CA, published again at every resync */
    int64_t next_publish;    /* monotonic ns */
    int64_t publish_backoff; /* ns; 0 after a success */
    bool awaiting_configs;   /* the configurations did not exist at the last look */
} app;

#define PUBLISH_BACKOFF_MIN (1 * KP_NS_PER_SEC)
#define PUBLISH_BACKOFF_MAX (30 * KP_NS_PER_SEC)
/* How often configurations that do not exist yet are looked for. */
#define PUBLISH_AWAIT_NS (2 * KP_NS_PER_SEC)

static void log_error(const char *message)
{
    KP_LOG(KP_LOG_ERROR, LOGGER, message, "error", kp_error_last());
}

static int register_metrics(app *a)
{
    static const char *const result[] = {"result"};
    int err = kp_metrics_counter(&a->tls_reloads, a->metrics,
                                 "karpenter_webhook_certificate_reloads_total",
                                 "Serving certificate reloads, by result.", result, 1);
    if (err == 0)
        err = kp_metrics_counter(&a->policy_reloads, a->metrics,
                                 "karpenter_webhook_policy_reloads_total",
                                 "Policy file reloads, by result.", result, 1);
    if (err == 0)
        err = kp_metrics_gauge(&a->cert_expiry, a->metrics,
                               "karpenter_webhook_certificate_expiration_timestamp_seconds",
                               "When the serving certificate expires (Unix time).", NULL, 0);
    if (err == 0)
        err = kp_metrics_counter(&a->ca_publishes, a->metrics,
                                 "karpenter_webhook_ca_bundle_publishes_total",
                                 "Checks of the caBundle in the webhook configurations, by result "
                                 "(patched, unchanged, failure).",
                                 result, 1);
    return err;
}

static void count(kp_metric *m, const char *result)
{
    const char *labels[1] = {result};
    kp_counter_inc(kp_metric_with(m, labels));
}

static int load_policy(app *a)
{
    kp_policy *p = NULL;
    int err = a->opts.policy_file ? kp_policy_load(&p, a->opts.policy_file, a->opts.allow_empty_policy) : 0;
    if (err < 0) return err;
    if (!p) p = kp_policy_new_empty();
    if (a->policy)
        kp_policy_slot_set(a->policy, p);
    else
        a->policy = kp_policy_slot_new(p);
    return 0;
}

/* The client for publishing the caBundle and watching NodePools: --kubeconfig,
 * else the Pod's service account, else none (outside a cluster the caBundle is
 * only logged and Pods get no warnings). */
static int connect_kube(app *a)
{
    kp_kube_config *cfg = NULL;
    int err = 0;
    if (a->opts.kubeconfig)
        err = kp_kube_config_load(&cfg, a->opts.kubeconfig, NULL);
    else if (getenv("KUBERNETES_SERVICE_HOST"))
        err = kp_kube_config_in_cluster(&cfg, NULL);
    else
        return 0;
    if (err == 0) {
        kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
        o.qps = 5;
        o.burst = 10;
        o.user_agent = "karpenter-webhook";
        err = kp_kube_client_new(&a->kube, cfg, &o);
    }
    kp_kube_config_free(cfg);
    if (err < 0) return kp_error_wrap(err, "the Kubernetes client");
    kp_cabundle_kube_client(&a->cabundle, a->kube);
    return 0;
}

/* "No NodePool can run this pod" warnings, whenever NodePools can be watched. */
static int start_pod_warnings(app *a)
{
    if (a->opts.no_pod_warnings) return 0;
    if (!a->kube) {
        if (a->opts.pod_warning_flags_set)
            return kp_error_set(KP_EINVALID, "--instance-types and --pod-warning-budget are for Pod warnings, "
                                             "which need credentials for the API server: run in a Pod or "
                                             "give --kubeconfig");
        return 0;
    }
    int err = kp_pod_warnings_start(a->kube, a->opts.instance_types, a->opts.pod_warning_budget_ms, a->metrics,
                                    &a->pod_warnings);
    if (err == 0)
        KP_LOG(KP_LOG_INFO, LOGGER, "warning Pods that no NodePool can run", "instanceTypes",
               a->opts.instance_types);
    return err;
}

/* Our CA into both configurations (next to other replicas' CAs), then the
 * next check: a resync after a success, a growing back-off after a failure
 * (the configurations may not exist yet, or the API server may be away). */
static void publish(app *a)
{
    const kp_clock *clock = kp_clock_system();
    int64_t now_s = clock->now(clock) / KP_NS_PER_SEC;
    int changed_v = 0, changed_m = 0;
    int err = kp_cabundle_share(&a->cabundle, KP_CABUNDLE_VALIDATING, a->opts.validating_config,
                                a->ca_pem, KP_CABUNDLE_MAX_CAS, now_s, &changed_v);
    if (err == 0)
        err = kp_cabundle_share(&a->cabundle, KP_CABUNDLE_MUTATING, a->opts.mutating_config,
                                a->ca_pem, KP_CABUNDLE_MAX_CAS, now_s, &changed_m);
    if (err == KP_ENOTFOUND) {
        /* deploy/webhooks is applied once the Pods are ready: until then no
         * request can reach us through a configuration, so we are ready, and we
         * look for the configurations every 2 s to publish as soon as they come. */
        if (!a->awaiting_configs)
            KP_LOG(KP_LOG_INFO, LOGGER, "webhook configurations not created yet; publishing the caBundle once they are",
                   "error", kp_error_last());
        a->awaiting_configs = true;
        kp_server_set_ready(a->server, true);
        a->next_publish = clock->monotonic(clock) + PUBLISH_AWAIT_NS;
        return;
    }
    a->awaiting_configs = false;
    if (err < 0) {
        a->publish_backoff = a->publish_backoff ? a->publish_backoff * 2 : PUBLISH_BACKOFF_MIN;
        if (a->publish_backoff > PUBLISH_BACKOFF_MAX) a->publish_backoff = PUBLISH_BACKOFF_MAX;
        a->next_publish = clock->monotonic(clock) + a->publish_backoff;
        count(a->ca_publishes, "failure");
        KP_LOG(KP_LOG_WARN, LOGGER, "caBundle not published; will retry", "error", kp_error_last());
        return;
    }
    a->publish_backoff = 0;
    kp_server_set_ready(a->server, true);
    a->next_publish = clock->monotonic(clock) + (int64_t)a->opts.ca_bundle_resync_s * KP_NS_PER_SEC;
    count(a->ca_publishes, changed_v || changed_m ? "patched" : "unchanged");
    if (changed_v || changed_m)
        KP_LOG(KP_LOG_INFO, LOGGER, "caBundle published", "validating", a->opts.validating_config,
               "mutating", a->opts.mutating_config);
}

static void maybe_publish(app *a)
{
    const kp_clock *clock = kp_clock_system();
    if (a->kube && a->ca_pem && clock->monotonic(clock) >= a->next_publish) publish(a);
}

/* The CA goes to --ca-bundle-file if asked; with a Kubernetes client it is
 * published once the server listens (maybe_publish), otherwise logged. */
static int keep_ca(app *a, const char *ca_pem)
{
    if (a->opts.ca_bundle_file) {
        FILE *f = fopen(a->opts.ca_bundle_file, "w");
        int bad = !f || fputs(ca_pem, f) < 0;
        if ((f && fclose(f) != 0) || bad)
            return kp_error_set(KP_EIO, "writing %s: %s", a->opts.ca_bundle_file, strerror(errno));
    }
    if (a->kube) {
        a->ca_pem = kp_xstrdup(ca_pem);
        return 0;
    }
    kp_buf b64 = KP_BUF_INIT(1 << 20);
    kp_certs_cabundle(&b64, ca_pem);
    KP_LOG(KP_LOG_INFO, LOGGER, "self-signed CA made; set it as caBundle", "caBundle",
           kp_buf_cstr(&b64));
    kp_buf_free(&b64);
    return 0;
}

static int self_signed(app *a)
{
    const char *extra[] = {"localhost"};
    const char *ips[] = {"127.0.0.1", "::1"};
    kp_cert_request req = {a->opts.service_name, a->opts.ns, extra, 1, ips, 2, 365};
    kp_cert_bundle bundle = {NULL, NULL, NULL};
    int err = kp_certs_generate(&bundle, &req);
    if (err == 0 && a->opts.cert_dir) err = kp_certs_write_dir(&bundle, a->opts.cert_dir);
    if (err == 0) err = kp_certs_check_pair(&a->tls, bundle.cert, bundle.key);
    if (err == 0) err = keep_ca(a, bundle.ca_cert);
    kp_cert_bundle_clear(&bundle);
    return err;
}

static void note_certificate(app *a, const char *message)
{
    char fp[17];
    char expiry[32];
    kp_certs_fingerprint_hex(&a->tls, fp);
    kp_time_format_rfc3339(a->tls.not_after * 1000000000, expiry, sizeof(expiry));
    kp_gauge_set(kp_metric_with(a->cert_expiry, NULL), (double)a->tls.not_after);
    KP_LOG(KP_LOG_INFO, LOGGER, message, "fingerprint", fp, "notAfter", expiry);
}

static void reload_tls(app *a)
{
    if (a->opts.self_signed || !kp_filewatch_poll(&a->tls_watch)) return;
    kp_tls_pair next;
    int err = kp_certs_read_pair(&next, a->opts.tls_cert_file, a->opts.tls_key_file);
    if (err == 0 && memcmp(next.fingerprint, a->tls.fingerprint, sizeof(next.fingerprint)) == 0 &&
        strcmp(next.key, a->tls.key) == 0) {
        kp_tls_pair_clear(&next); /* touched, not changed */
        kp_filewatch_commit(&a->tls_watch);
        return;
    }
    if (err == 0 && (err = kp_server_rotate(a->server, next.cert, next.key)) < 0)
        kp_tls_pair_clear(&next);
    if (err < 0) {
        /* Often a rotation caught half-written: keep serving, retry next poll. */
        if (kp_filewatch_failed(&a->tls_watch)) {
            count(a->tls_reloads, "failure");
            KP_LOG(KP_LOG_WARN, LOGGER, "certificate not reloaded; still serving the old one",
                   "error", kp_error_last());
        }
        return;
    }
    kp_tls_pair_clear(&a->tls);
    a->tls = next;
    kp_filewatch_commit(&a->tls_watch);
    count(a->tls_reloads, "success");
    note_certificate(a, "serving a new certificate");
}

static void reload_policy(app *a)
{
    if (!a->opts.policy_file || !kp_filewatch_poll(&a->policy_watch)) return;
    if (load_policy(a) < 0) {
        if (kp_filewatch_failed(&a->policy_watch)) {
            count(a->policy_reloads, "failure");
            KP_LOG(KP_LOG_WARN, LOGGER, "policy not reloaded; the previous one stays in force",
                   "error", kp_error_last());
        }
        return;
    }
    kp_filewatch_commit(&a->policy_watch);
    count(a->policy_reloads, "success");
    KP_LOG(KP_LOG_INFO, LOGGER, "policy reloaded", "file", a->opts.policy_file);
}

static int setup(app *a)
{
    const char *tls_paths[2] = {a->opts.tls_cert_file, a->opts.tls_key_file};
    const char *policy_paths[1] = {a->opts.policy_file};
    kp_filewatch_init(&a->tls_watch, tls_paths, a->opts.self_signed ? 0 : 2);
    kp_filewatch_init(&a->policy_watch, policy_paths, 1);
    a->metrics = kp_metrics_new();
    int err = register_metrics(a);
    if (err == 0 && (err = load_policy(a)) < 0) kp_error_wrap(err, "loading the policy");
    if (err == 0 && (a->opts.self_signed || !a->opts.no_pod_warnings)) err = connect_kube(a);
    if (err == 0) err = start_pod_warnings(a);
    if (err == 0)
        err = a->opts.self_signed
                  ? self_signed(a)
                  : kp_certs_read_pair(&a->tls, a->opts.tls_cert_file, a->opts.tls_key_file);
    if (err < 0) return err;
    kp_server_config cfg = {a->opts.address,
                            a->opts.port,
                            a->opts.threads,
                            a->opts.connection_timeout,
                            a->opts.request_timeout,
                            a->opts.max_connections,
                            a->policy,
                            a->metrics,
                            kp_pod_warnings_advisor(a->pod_warnings)};
    err = kp_server_start(&a->server, &cfg, a->tls.cert, a->tls.key);
    if (err == 0) note_certificate(a, "serving");
    if (err == 0 && a->kube && a->opts.self_signed) {
        /* Not ready until the API server can trust us: a rollout waits for it. */
        kp_server_set_ready(a->server, false);
        maybe_publish(a);
    }
    return err;
}

/* Wait for a signal or the next poll; SIGHUP forces a check of the files. */
static void run(app *a, const sigset_t *signals)
{
    struct timespec tick = {(time_t)(a->opts.reload_interval_ms / 1000),
                            (long)(a->opts.reload_interval_ms % 1000) * 1000000};
    for (;;) {
        int sig = sigtimedwait(signals, NULL, &tick);
        if (sig == SIGTERM || sig == SIGINT) break;
        reload_tls(a);
        reload_policy(a);
        maybe_publish(a);
        kp_server_reap(a->server, false);
    }
}

int main(int argc, char **argv)
{
    app a;
    memset(&a, 0, sizeof(a));
    int rc = kp_webhook_options_parse(&a.opts, argc, argv);
    if (rc != 0) {
        if (rc < 0) fprintf(stderr, "karpenter-webhook: %s\n", kp_error_last());
        return rc < 0 ? 2 : 0;
    }
    int level = kp_log_level_parse(a.opts.log_level);
    kp_log_set_level(level < 0 ? KP_LOG_INFO : (enum kp_log_level)level);
    /* Block the signals before any thread starts, so only run() receives them. */
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &signals, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (setup(&a) < 0) {
        log_error("karpenter-webhook could not start");
        rc = 1;
    } else {
        char port[8];
        snprintf(port, sizeof(port), "%u", (unsigned)kp_server_port(a.server));
        KP_LOG(KP_LOG_INFO, LOGGER, "listening", "address", a.opts.address, "port", port, "version", kp_version(),
               "commit", kp_commit());
        run(&a, &signals);
        KP_LOG(KP_LOG_INFO, LOGGER, "shutting down");
    }
    a.server = kp_server_stop(a.server);
    a.pod_warnings = kp_pod_warnings_stop(a.pod_warnings);
    kp_tls_pair_clear(&a.tls);
    a.policy = kp_policy_slot_free(a.policy);
    a.metrics = kp_metrics_free(a.metrics);
    a.kube = kp_kube_client_free(a.kube);
    free(a.ca_pem);
    return rc;
}
