#include "options.h"

#include "base/error.h"
#include "base/log.h"
#include "base/version.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: karpenter-webhook [flags]\n"
    "\n"
    "Admission webhook for Karpenter's NodePool, NodeClaim and EC2NodeClass, and\n"
    "the operator's policy (Pods included), over HTTPS.\n"
    "\n"
    "  --address IP                   listen address (default 0.0.0.0)\n"
    "  --port N                       listen port (default 8443)\n"
    "  --tls-cert-file FILE           serving certificate (PEM), reloaded on change\n"
    "  --tls-key-file FILE            its private key (PEM), reloaded on change\n"
    "  --self-signed                  make a CA and serving certificate at start-up\n"
    "  --service-name NAME            Service the certificate names (default karpenter)\n"
    "  --namespace NS                 its namespace (default kube-system)\n"
    "  --cert-dir DIR                 --self-signed: write ca.crt, tls.crt, tls.key here\n"
    "  --ca-bundle-file FILE          --self-signed: write the CA certificate here\n"
    "  --validating-webhook-configuration NAME  (default validation.webhook.karpenter.sh)\n"
    "  --mutating-webhook-configuration NAME    (default defaulting.webhook.karpenter.sh)\n"
    "  --kubeconfig FILE              credentials for the API server (in a Pod: its\n"
    "                                 service account): --self-signed publishes the\n"
    "                                 caBundle into both configurations with them (without\n"
    "                                 them it is only logged), and Pod warnings watch\n"
    "                                 NodePools with them\n"
    "  --ca-bundle-resync SEC         how often the published caBundle is checked\n"
    "                                 and put back if it went (default 60)\n"
    "  --policy FILE                  admission policy (YAML), reloaded on change\n"
    "  --allow-empty-policy           accept a policy file that sets no rule (empty,\n"
    "                                 comments only, null or {}); without it such a\n"
    "                                 file is refused and the previous policy stays\n"
    "  --reload-interval MS           how often files are checked (default 1000)\n"
    "  --threads N                    worker threads (default: CPUs)\n"
    "  --connection-timeout SEC       idle connection timeout (default 10)\n"
    "  --request-timeout SEC          time one request may take, from the connection's\n"
    "                                 accept (TLS handshake and headers included) or\n"
    "                                 the previous answer on it (default 10)\n"
    "  --max-connections N            (default 1024)\n"
    "  --no-pod-warnings              do not warn, when a Pod is created, that no NodePool\n"
    "                                 can launch a node for it (on by default whenever\n"
    "                                 there are credentials for the API server)\n"
    "  --instance-types SPEC          the instance types Pod warnings check against:\n"
    "                                 builtin, synthetic:N or a JSON file (default builtin)\n"
    "  --pod-warning-budget MS        the longest a Pod's admission waits for its warning\n"
    "                                 (default 100); a later answer is dropped\n"
    "  --log-level LEVEL              debug, info, warn, error, any case (default info)\n"
    "  --version                      print the version and exit\n";

enum {
    OPT_ADDRESS = 1000,
    OPT_PORT,
    OPT_CERT,
    OPT_KEY,
    OPT_SELF_SIGNED,
    OPT_SERVICE,
    OPT_NAMESPACE,
    OPT_CERT_DIR,
    OPT_CA_BUNDLE,
    OPT_VALIDATING,
    OPT_MUTATING,
    OPT_KUBECONFIG,
    OPT_CA_RESYNC,
    OPT_POLICY,
    OPT_ALLOW_EMPTY_POLICY,
    OPT_RELOAD,
    OPT_THREADS,
    OPT_CONN_TIMEOUT,
    OPT_REQ_TIMEOUT,
    OPT_MAX_CONN,
    OPT_LOG_LEVEL,
    OPT_NO_POD_WARNINGS,
    OPT_INSTANCE_TYPES,
    OPT_POD_WARNING_BUDGET,
    OPT_HELP,
    OPT_VERSION,
};

static const struct option long_options[] = {
    {"address", required_argument, NULL, OPT_ADDRESS},
    {"port", required_argument, NULL, OPT_PORT},
    {"tls-cert-file", required_argument, NULL, OPT_CERT},
    {"tls-key-file", required_argument, NULL, OPT_KEY},
    {"self-signed", no_argument, NULL, OPT_SELF_SIGNED},
    {"service-name", required_argument, NULL, OPT_SERVICE},
    {"namespace", required_argument, NULL, OPT_NAMESPACE},
    {"cert-dir", required_argument, NULL, OPT_CERT_DIR},
    {"ca-bundle-file", required_argument, NULL, OPT_CA_BUNDLE},
    {"validating-webhook-configuration", required_argument, NULL, OPT_VALIDATING},
    {"mutating-webhook-configuration", required_argument, NULL, OPT_MUTATING},
    {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
    {"ca-bundle-resync", required_argument, NULL, OPT_CA_RESYNC},
    {"policy", required_argument, NULL, OPT_POLICY},
    {"allow-empty-policy", no_argument, NULL, OPT_ALLOW_EMPTY_POLICY},
    {"reload-interval", required_argument, NULL, OPT_RELOAD},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"connection-timeout", required_argument, NULL, OPT_CONN_TIMEOUT},
    {"request-timeout", required_argument, NULL, OPT_REQ_TIMEOUT},
    {"max-connections", required_argument, NULL, OPT_MAX_CONN},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"no-pod-warnings", no_argument, NULL, OPT_NO_POD_WARNINGS},
    {"instance-types", required_argument, NULL, OPT_INSTANCE_TYPES},
    {"pod-warning-budget", required_argument, NULL, OPT_POD_WARNING_BUDGET},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static int parse_uint(unsigned *out, const char *flag, const char *text, unsigned min, unsigned max)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || !end || *end || end == text || text[0] == '-' || v < min || v > max)
        return kp_error_set(KP_EINVALID, "--%s: %s is not a number from %u to %u", flag, text, min,
                            max);
    *out = (unsigned)v;
    return 0;
}

static void defaults(kp_webhook_options *o)
{
    memset(o, 0, sizeof(*o));
    o->address = "0.0.0.0";
    o->port = 8443;
    o->service_name = "karpenter";
    o->ns = "kube-system";
    o->validating_config = "validation.webhook.karpenter.sh";
    o->mutating_config = "defaulting.webhook.karpenter.sh";
    o->ca_bundle_resync_s = 60;
    o->reload_interval_ms = 1000;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    o->threads = cpus > 0 && cpus < 64 ? (unsigned)cpus : 2;
    o->connection_timeout = 10;
    o->request_timeout = 10;
    o->max_connections = 1024;
    o->log_level = "info";
    o->instance_types = "builtin";
    o->pod_warning_budget_ms = 100;
}

static int apply(kp_webhook_options *o, int opt, const char *arg)
{
    unsigned port = 0;
    int err = 0;
    switch (opt) {
    case OPT_ADDRESS:
        o->address = arg;
        break;
    case OPT_PORT:
        if ((err = parse_uint(&port, "port", arg, 0, 65535)) == 0) o->port = (uint16_t)port;
        break;
    case OPT_CERT:
        o->tls_cert_file = arg;
        break;
    case OPT_KEY:
        o->tls_key_file = arg;
        break;
    case OPT_SELF_SIGNED:
        o->self_signed = true;
        break;
    case OPT_SERVICE:
        o->service_name = arg;
        break;
    case OPT_NAMESPACE:
        o->ns = arg;
        break;
    case OPT_CERT_DIR:
        o->cert_dir = arg;
        break;
    case OPT_CA_BUNDLE:
        o->ca_bundle_file = arg;
        break;
    case OPT_VALIDATING:
        o->validating_config = arg;
        break;
    case OPT_MUTATING:
        o->mutating_config = arg;
        break;
    case OPT_KUBECONFIG:
        o->kubeconfig = arg;
        break;
    case OPT_CA_RESYNC:
        err = parse_uint(&o->ca_bundle_resync_s, "ca-bundle-resync", arg, 1, 86400);
        break;
    case OPT_POLICY:
        o->policy_file = arg;
        break;
    case OPT_ALLOW_EMPTY_POLICY:
        o->allow_empty_policy = true;
        break;
    case OPT_RELOAD:
        err = parse_uint(&o->reload_interval_ms, "reload-interval", arg, 50, 600000);
        break;
    case OPT_THREADS:
        err = parse_uint(&o->threads, "threads", arg, 1, 256);
        break;
    case OPT_CONN_TIMEOUT:
        err = parse_uint(&o->connection_timeout, "connection-timeout", arg, 1, 3600);
        break;
    case OPT_REQ_TIMEOUT:
        err = parse_uint(&o->request_timeout, "request-timeout", arg, 1, 3600);
        break;
    case OPT_MAX_CONN:
        err = parse_uint(&o->max_connections, "max-connections", arg, 1, 1000000);
        break;
    case OPT_LOG_LEVEL:
        o->log_level = arg;
        if (kp_log_level_parse(arg) < 0)
            err = kp_error_set(KP_EINVALID, "--log-level: %s is not debug, info, warn or error", arg);
        break;
    case OPT_NO_POD_WARNINGS:
        o->no_pod_warnings = true;
        break;
    case OPT_INSTANCE_TYPES:
        o->instance_types = arg;
        o->pod_warning_flags_set = true;
        break;
    case OPT_POD_WARNING_BUDGET:
        err = parse_uint(&o->pod_warning_budget_ms, "pod-warning-budget", arg, 1, 5000);
        o->pod_warning_flags_set = true;
        break;
    default:
        err = kp_error_set(KP_EINVALID, "unknown flag (see --help)");
    }
    return err;
}

static int check(const kp_webhook_options *o)
{
    bool files = o->tls_cert_file || o->tls_key_file;
    if (o->self_signed && files)
        return kp_error_set(KP_EINVALID,
                            "--self-signed and --tls-cert-file/--tls-key-file exclude each other");
    if (!o->self_signed && o->kubeconfig && o->no_pod_warnings)
        return kp_error_set(KP_EINVALID, "--kubeconfig is only used with --self-signed (to publish "
                                         "the caBundle; cert-manager publishes its own) and for Pod "
                                         "warnings, which --no-pod-warnings turns off");
    if (o->no_pod_warnings && o->pod_warning_flags_set)
        return kp_error_set(KP_EINVALID, "--instance-types and --pod-warning-budget are only used by "
                                         "Pod warnings, which --no-pod-warnings turns off");
    if (!o->self_signed && (!o->tls_cert_file || !o->tls_key_file))
        return kp_error_set(KP_EINVALID,
                            "give --tls-cert-file and --tls-key-file, or --self-signed");
    return 0;
}

int kp_webhook_options_parse(kp_webhook_options *out, int argc, char **argv)
{
    kp_webhook_options o;
    defaults(&o);
    opterr = 0;
    optind = 1;
    int opt;
    while ((opt = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        if (opt == OPT_HELP) {
            fputs(usage, stdout);
            return 1;
        }
        if (opt == OPT_VERSION) {
            printf("karpenter-webhook %s (commit %s, %s, %s)\n", kp_version(), kp_commit(), kp_compiler(), kp_arch());
            return 1;
        }
        if (opt == '?' || opt == ':')
            return kp_error_set(KP_EINVALID, "unknown flag or missing value: %s (see --help)",
                                argv[optind - 1]);
        int err = apply(&o, opt, optarg);
        if (err < 0) return err;
    }
    if (optind < argc) return kp_error_set(KP_EINVALID, "unexpected argument %s", argv[optind]);
    int err = check(&o);
    if (err < 0) return err;
    *out = o;
    return 0;
}
