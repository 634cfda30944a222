/*
 * `karpenter-controller simulate`: plan what the controller would do for the
 * manifests given, or for a live cluster read through its API server with
 * manifests laid over it (simulate_live.h, simulate_merge.h), and print the
 * plan.
 */
#include "controller/simulate.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/xalloc.h"
#include "base/clock.h"
#include "api/caps.h"
#include "api/duration.h"
#include "cloud/instance_types.h"
#include "controller/simulate_cloud.h"
#include "controller/simulate_live.h"
#include "controller/simulate_merge.h"
#include "disruption/disruption.h"
#include "format/json_out.h"
#include "format/load.h"
#include "kube/config.h"
#include "kube/rest.h"
#include "scheduling/manifests.h"
#include "scheduling/overlay_plan.h"
#include "scheduling/plan_output.h"
#include "scheduling/solver.h"
#include "scheduling/static_pools.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_INPUTS = 64, MAX_WITHOUT = 64 };

/* Long-only options: the caps (named as run's) and the split bound. */
enum { OPT_CAP_FIRST = 256, OPT_CAP_LAST = OPT_CAP_FIRST + 3, OPT_SPLIT_MAX };
static const char *const cap_flags[] = {"max-nodes-total", "cores-total", "memory-total", "max-hourly-cost"};

typedef struct sim_opts {
    const char *inputs[MAX_INPUTS];
    int n_inputs;
    const char *output;
    bool ignore_preferences;
    bool no_improve;
    bool disrupt;
    int64_t now_ns;
    /* A live cluster: --live (in-cluster, $KUBECONFIG, ~/.kube/config) or --kubeconfig. */
    bool live;
    const char *kubeconfig, *context;
    int64_t read_timeout_ms;
    kp_sim_without without[MAX_WITHOUT];
    size_t n_without;
    kp_sim_cloud_opts cloud;
    bool instance_types_set, aws_flag_set;
    /* As `run` decides: its caps and its bound on split consolidation. */
    kp_caps caps;
    int split_max;
} sim_opts;

static void usage(FILE *out)
{
    fputs("usage: karpenter-controller simulate -f FILE_OR_DIR [-f ...] [--instance-types builtin|synthetic:N|FILE]\n"
          "                                     [-o json|yaml|table] [--ignore-preferences] [--no-improve]\n"
          "                                     [--disrupt [--now RFC3339]]\n"
          "       karpenter-controller simulate --kubeconfig FILE [--context NAME] | --live\n"
          "                                     [-f FILE_OR_DIR ...] [--without KIND/[NAMESPACE/]NAME ...]\n"
          "                                     [--read-timeout DURATION] [same flags as above]\n"
          "       ... [--cloud-provider kwok|aws [--cluster-name NAME] [--aws-region R] [--aws-endpoint-url URL]\n"
          "            [--vm-memory-overhead-percent F] [--reserved-enis N] [--isolated-vpc]]\n"
          "           [--max-nodes-total N] [--cores-total N] [--memory-total QUANTITY] [--max-hourly-cost DOLLARS]\n"
          "           [--consolidation-split-max N]\n"
          "Plans where pending pods would go: existing nodes, new NodeClaims (with their instance\n"
          "types and hourly cost), or nowhere (with the reason); from manifests alone, or from a\n"
          "live cluster read through its API server (read only: one list per kind) with every -f\n"
          "object added or replacing the live one of the same kind, namespace and name, and\n"
          "every --without object removed with what goes with it (a NodePool's NodeClaims and\n"
          "Nodes, whose pods are then pending again).\n"
          "--no-improve keeps Karpenter's plan exactly, without the pass that repacks\n"
          "unconstrained pods onto cheaper NodeClaims.\n"
          "--disrupt adds what disruption would do (expiration, emptiness, drift, consolidation)\n"
          "and why every other node stays; --now fixes the clock (node ages, budgets' schedules).\n"
          "--cloud-provider plans as `run` with that provider: only its NodePools, NodeClaims and\n"
          "Nodes; aws reads instance types and prices from the account (reads only).\n"
          "The caps and --consolidation-split-max are run's settings of the same names (see\n"
          "karpenter-controller run --help): the plan keeps to them as the controller would.\n",
          out);
}

static int parse_number(const char *flag, const char *text, double min, double max, double *out)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (!end || end == text || *end || v < min || v > max)
        return kp_error_set(KP_EINVALID, "--%s %s: want a number from %g to %g", flag, text, min, max);
    *out = v;
    return 0;
}

static int parse_live_flag(sim_opts *o, int c, const char *arg)
{
    kp_duration d;
    switch (c) {
    case 'k': o->kubeconfig = arg, o->live = true; return 0;
    case 'x': o->context = arg; return 0;
    case 'l': o->live = true; return 0;
    case 'w':
        if (o->n_without == MAX_WITHOUT)
            return kp_error_set(KP_EINVALID, "more than %d --without arguments", MAX_WITHOUT);
        return kp_sim_without_parse(arg, &o->without[o->n_without++]);
    case 'r':
        if (kp_duration_parse(arg, &d) < 0 || d.ns <= 0)
            return kp_error_set(KP_EINVALID, "--read-timeout %s: want a positive duration (2m, 30s)", arg);
        o->read_timeout_ms = d.ns / 1000000;
        return 0;
    default: return kp_error_set(KP_EINVALID, "unknown option (see --help)");
    }
}

/* The caps and the split bound, as `run` reads them. */
static int parse_plan_flag(sim_opts *o, int c, const char *arg)
{
    char source[64];
    double v = 0;
    if (c >= OPT_CAP_FIRST && c <= OPT_CAP_LAST) {
        snprintf(source, sizeof(source), "--%s", cap_flags[c - OPT_CAP_FIRST]);
        return kp_caps_parse_setting(&o->caps, cap_flags[c - OPT_CAP_FIRST], arg, source);
    }
    if (c != OPT_SPLIT_MAX)
        return parse_live_flag(o, c, arg);
    int err = parse_number("consolidation-split-max", arg, 1, 10, &v);
    if (!err && v != (double)(int)v)
        err = kp_error_set(KP_EINVALID, "--consolidation-split-max %s: want a whole number (1: never split)", arg);
    if (!err)
        o->split_max = (int)v;
    return err;
}

static int parse_cloud_flag(sim_opts *o, int c, const char *arg)
{
    double v = 0;
    int err = 0;
    o->aws_flag_set |= c > 0 && c < 128 && strchr("CREVNI", c) != NULL;
    switch (c) {
    case 'c': o->cloud.provider = arg; break;
    case 'C': o->cloud.cluster_name = arg; break;
    case 'R': o->cloud.region = arg; break;
    case 'E': o->cloud.endpoint_url = arg; break;
    case 'V':
        err = parse_number("vm-memory-overhead-percent", arg, 0, 1, &v);
        o->cloud.vm_memory_overhead_percent = v;
        break;
    case 'N':
        err = parse_number("reserved-enis", arg, 0, 64, &v);
        o->cloud.reserved_enis = (int)v;
        break;
    case 'I': o->cloud.isolated_vpc = true; break;
    default: return parse_plan_flag(o, c, arg);
    }
    return err;
}

static int parse_flag(sim_opts *o, int c, const char *arg)
{
    switch (c) {
    case 'f':
        if (o->n_inputs == MAX_INPUTS)
            return kp_error_set(KP_EINVALID, "more than %d -f arguments", MAX_INPUTS);
        o->inputs[o->n_inputs++] = arg;
        return 0;
    case 'i': o->cloud.instance_types = arg, o->instance_types_set = true; return 0;
    case 'o': o->output = arg; return 0;
    case 'p': o->ignore_preferences = true; return 0;
    case 'n': o->no_improve = true; return 0;
    case 'd': o->disrupt = true; return 0;
    case 't':
        return kp_time_parse_rfc3339(arg, &o->now_ns) < 0 ? kp_error_wrap(KP_EINVALID, "--now") : 0;
    default: return parse_cloud_flag(o, c, arg);
    }
}

/* Combinations that would be accepted and ignored are refused instead. */
static int check_args(const sim_opts *o)
{
    bool aws = o->cloud.provider && !strcmp(o->cloud.provider, "aws");
    if (o->n_inputs == 0 && !o->live)
        return kp_error_set(KP_EINVALID, "no input: give manifests with -f FILE_OR_DIR, or a cluster with "
                                         "--kubeconfig FILE or --live");
    if (o->context && !o->live)
        return kp_error_set(KP_EINVALID, "--context needs --kubeconfig or --live");
    if (aws && o->instance_types_set)
        return kp_error_set(KP_EINVALID, "--instance-types is not used with --cloud-provider aws (the "
                                         "instance types are the account's)");
    if (!aws && o->aws_flag_set)
        return kp_error_set(KP_EINVALID, "--cluster-name, --aws-region, --aws-endpoint-url, "
                                         "--vm-memory-overhead-percent, --reserved-enis and --isolated-vpc "
                                         "need --cloud-provider aws");
    if (strcmp(o->output, "json") && strcmp(o->output, "yaml") && strcmp(o->output, "table"))
        return kp_error_set(KP_EINVALID, "-o %s: want json, yaml or table", o->output);
    return 0;
}

static int parse_args(int argc, char **argv, sim_opts *o)
{
    static const struct option longopts[] = {
        {"filename", required_argument, NULL, 'f'},   {"instance-types", required_argument, NULL, 'i'},
        {"output", required_argument, NULL, 'o'},     {"ignore-preferences", no_argument, NULL, 'p'},
        {"no-improve", no_argument, NULL, 'n'},       {"disrupt", no_argument, NULL, 'd'},
        {"now", required_argument, NULL, 't'},
        {"kubeconfig", required_argument, NULL, 'k'}, {"context", required_argument, NULL, 'x'},
        {"live", no_argument, NULL, 'l'},             {"without", required_argument, NULL, 'w'},
        {"read-timeout", required_argument, NULL, 'r'},
        {"cloud-provider", required_argument, NULL, 'c'}, {"cluster-name", required_argument, NULL, 'C'},
        {"aws-region", required_argument, NULL, 'R'}, {"aws-endpoint-url", required_argument, NULL, 'E'},
        {"vm-memory-overhead-percent", required_argument, NULL, 'V'},
        {"reserved-enis", required_argument, NULL, 'N'}, {"isolated-vpc", no_argument, NULL, 'I'},
        {"max-nodes-total", required_argument, NULL, OPT_CAP_FIRST},
        {"cores-total", required_argument, NULL, OPT_CAP_FIRST + 1},
        {"memory-total", required_argument, NULL, OPT_CAP_FIRST + 2},
        {"max-hourly-cost", required_argument, NULL, OPT_CAP_FIRST + 3},
        {"consolidation-split-max", required_argument, NULL, OPT_SPLIT_MAX},
        {"help", no_argument, NULL, 'h'},             {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof(*o));
    o->cloud = (kp_sim_cloud_opts)KP_SIM_CLOUD_OPTS_INIT;
    o->cloud.cluster_name = getenv("CLUSTER_NAME");
    o->output = "json";
    o->now_ns = kp_clock_system()->now(kp_clock_system());
    o->read_timeout_ms = 120000;
    o->caps = (kp_caps)KP_CAPS_INIT;
    o->split_max = 3; /* run's default */
    int c, err = 0;
    optind = 1;
    while (!err && (c = getopt_long(argc, argv, "f:o:h", longopts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            exit(0);
        }
        err = parse_flag(o, c, optarg);
    }
    if (err < 0)
        return err;
    if (optind < argc)
        return kp_error_set(KP_EINVALID, "unexpected argument %s (inputs are given with -f)", argv[optind]);
    return check_args(o);
}

/* What the plan was made from, when a cluster was read. */
typedef struct sim_source {
    bool live;
    char server[256];
    kp_sim_live_stats read;
    kp_sim_merge_report merge;
} sim_source;

static int connect_cluster(const sim_opts *o, kp_kube_client **client, char **default_ns)
{
    kp_kube_config *cfg = NULL;
    int err = kp_kube_config_auto(&cfg, o->kubeconfig, o->context);
    if (err < 0)
        return kp_error_wrap(err, "the cluster to read");
    kp_kube_client_opts co = KP_KUBE_CLIENT_OPTS_INIT;
    co.qps = 50, co.burst = 100, co.user_agent = "karpenter-controller-simulate";
    if ((err = kp_kube_client_new(client, cfg, &co)) == 0)
        *default_ns = kp_xstrdup(cfg->namespace ? cfg->namespace : "default");
    kp_kube_config_free(cfg);
    return err;
}

/* The cluster's objects into `live`; the namespace -f objects default to. */
static int read_live(const sim_opts *o, kp_doc_list *live, sim_source *src, char **default_ns)
{
    kp_kube_client *client = NULL;
    int err = connect_cluster(o, &client, default_ns);
    if (err < 0)
        return err;
    snprintf(src->server, sizeof(src->server), "%s", kp_kube_client_server(client));
    kp_sim_live_opts lo = KP_SIM_LIVE_OPTS_INIT;
    lo.node_classes = o->cloud.provider && !strcmp(o->cloud.provider, "aws");
    lo.deadline_ms = o->read_timeout_ms;
    err = kp_sim_live_read(client, &lo, live, &src->read);
    src->live = err == 0;
    for (size_t i = 0; i < src->read.n_notes; i++)
        fprintf(stderr, "note: %s\n", src->read.notes[i]);
    if (src->read.skipped > src->read.n_notes)
        fprintf(stderr, "note: %zu objects in all were left out\n", src->read.skipped);
    kp_kube_client_free(client);
    return err;
}

static int move_all(kp_doc_list *from, kp_doc_list *to)
{
    int err = 0;
    for (size_t i = 0; i < kp_doc_list_count(from) && !err; i++) {
        const kp_doc *d = kp_doc_list_at(from, i);
        cJSON *obj = kp_doc_list_take(from, i);
        if (obj)
            err = kp_doc_list_append(to, obj, d->file, d->doc, d->item);
    }
    return err;
}

/* The -f documents, over the cluster's when one is read, minus --without. */
static int gather(const sim_opts *o, kp_doc_list *merged, sim_source *src)
{
    kp_doc_list *files = kp_doc_list_new(), *live = kp_doc_list_new();
    char *default_ns = NULL;
    int err = 0;
    for (int i = 0; i < o->n_inputs && !err; i++)
        err = kp_load_path(files, o->inputs[i], NULL);
    if (!err && o->live)
        err = read_live(o, live, src, &default_ns);
    if (!err && !o->live && !o->n_without) {
        err = move_all(files, merged); /* manifests alone, as they are */
    } else if (!err) {
        kp_sim_merge_opts mo = {default_ns, o->without, o->n_without};
        err = kp_sim_merge(live, files, &mo, merged, &src->merge);
    }
    for (size_t i = 0; i < src->merge.notes.count; i++)
        fprintf(stderr, "note: %s\n", src->merge.notes.items[i]);
    for (size_t i = 0; i < kp_doc_list_skipped_count(files); i++)
        fprintf(stderr, "note: skipped %s\n", kp_doc_list_skipped(files, i));
    free(default_ns);
    kp_doc_list_free(files);
    kp_doc_list_free(live);
    return err;
}

/* `docs` holds what the plan reads (the aws provider's look-ups borrow its
 * EC2NodeClasses): it must outlive the plan. */
static int load(const sim_opts *o, kp_sim_cloud *cloud, kp_doc_list *docs, kp_manifests *m, sim_source *src)
{
    kp_doc_list *merged = kp_doc_list_new();
    int err = gather(o, merged, src);
    if (!err)
        err = kp_sim_cloud_filter(cloud, merged, docs);
    if (!err)
        err = kp_manifests_add_docs(m, docs);
    kp_doc_list_free(merged);
    for (size_t i = 0; i < kp_manifests_note_count(m); i++)
        fprintf(stderr, "note: %s\n", kp_manifests_note(m, i));
    return err;
}

typedef struct sim_result {
    const kp_plan *plan;
    kp_snapshot *snap;
    uint32_t n_pending;
    kp_disruption_plan *disruption;
    const sim_source *src;
} sim_result;

/* "cluster": where a live plan's objects came from and what -f and --without changed. */
static cJSON *source_json(const sim_source *src)
{
    cJSON *c = cJSON_CreateObject(), *objects = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "server", src->server);
    for (size_t i = 0; i < src->read.n_kinds; i++)
        if (src->read.kinds[i].served)
            cJSON_AddNumberToObject(objects, src->read.kinds[i].plural, (double)src->read.kinds[i].objects);
    cJSON_AddItemToObject(c, "objects", objects);
    cJSON_AddNumberToObject(c, "leftOut", (double)src->read.skipped);
    cJSON_AddNumberToObject(c, "replaced", (double)src->merge.replaced);
    cJSON_AddNumberToObject(c, "added", (double)src->merge.added);
    cJSON_AddNumberToObject(c, "removed", (double)src->merge.removed);
    cJSON_AddNumberToObject(c, "pendingAgain", (double)src->merge.rescheduled);
    cJSON_AddNumberToObject(c, "gone", (double)src->merge.lost);
    return c;
}

static int source_table(const sim_source *src, kp_buf *out)
{
    return kp_buf_printf(out, "Read from %s: %zu objects (%zu left out); -f replaced %zu and added %zu; --without "
                              "removed %zu; %zu pods pending again.\n\n",
                         src->server, src->read.objects, src->read.skipped, src->merge.replaced, src->merge.added,
                         src->merge.removed, src->merge.rescheduled);
}

/* "a, b, c, d and 3 more -> 2 new": the first candidates of a command. */
static int command_nodes(const sim_result *r, const kp_disrupt_command *c, kp_buf *names)
{
    int err = 0;
    for (uint32_t k = 0; k < c->n_candidates && k < 4 && !err; k++)
        err = kp_buf_printf(names, "%s%s", k ? ", " : "", r->snap->nodes[c->candidates[k]].name);
    if (!err && c->n_candidates > 4)
        err = kp_buf_printf(names, " and %u more", c->n_candidates - 4);
    uint32_t repl = c->simulation ? c->simulation->n_claims : 0;
    if (!err && repl)
        err = kp_buf_printf(names, " -> %u new", repl);
    return err;
}

static int disruption_table(const sim_result *r, kp_buf *out)
{
    const kp_disruption_plan *d = r->disruption;
    int err = kp_buf_printf(out, "\n%-5s %-26s %-14s %-44s %s\n", "LOOP", "DISRUPTION", "REASON", "NODES",
                            "$/HOUR SAVED");
    for (uint32_t i = 0; i < d->n_commands && !err; i++) {
        const kp_disrupt_command *c = &d->commands[i];
        kp_buf names = KP_BUF_INIT(1u << 20); /* names are at most 253 bytes: four fit */
        err = command_nodes(r, c, &names);
        if (!err)
            err = kp_buf_printf(out, "%-5u %-26s %-14s %-44s %.4f\n", c->loop, kp_disrupt_method_name(c->method),
                                kp_disrupt_reason(c->method), kp_buf_cstr(&names), c->savings_hourly);
        kp_buf_free(&names);
    }
    if (!err && d->n_blocked)
        err = kp_buf_printf(out, "\n%-40s %s\n", "NODE KEPT", "WHY");
    for (uint32_t i = 0; i < d->n_blocked && !err; i++)
        err = kp_buf_printf(out, "%-40s %s\n", r->snap->nodes[d->blocked[i].node].name, d->blocked[i].reason);
    if (!err)
        err = kp_buf_printf(out, "\nManaged nodes cost $%.4f/hour now and $%.4f/hour after %u disruption(s).\n",
                            d->cost_before, d->cost_after, d->n_commands);
    return err;
}

static int disrupt(const sim_opts *o, sim_result *r)
{
    kp_disrupt_opts d = KP_DISRUPT_OPTS_INIT;
    d.now_ns = o->now_ns;
    d.ignore_preferences = o->ignore_preferences;
    d.split_max = (uint32_t)o->split_max;
    d.caps = &o->caps;
    return kp_disruption_plan_compute(r->snap, &d, &r->disruption);
}

static int print_plan(const sim_opts *o, sim_result *r)
{
    kp_buf out = KP_BUF_INIT(256u << 20);
    int err = 0;
    if (strcmp(o->output, "table") == 0) {
        if (r->src->live)
            err = source_table(r->src, &out);
        if (!err)
            err = kp_plan_write_table(r->plan, r->snap, r->n_pending, &out);
        if (!err && o->disrupt && !(err = disrupt(o, r)))
            err = disruption_table(r, &out);
    } else {
        cJSON *json = kp_plan_to_json(r->plan, r->snap, r->n_pending);
        if (r->src->live)
            cJSON_AddItemToObject(json, "cluster", source_json(r->src));
        if (o->disrupt && !(err = disrupt(o, r))) {
            cJSON_AddItemToObject(json, "disruption", kp_disruption_plan_commands_json(r->disruption, r->snap));
            cJSON_AddItemToObject(json, "blocked", kp_disruption_plan_blocked_json(r->disruption, r->snap));
        }
        if (!err)
            err = strcmp(o->output, "yaml") == 0 ? kp_json_out_yaml(&out, json, 0) : kp_json_out_json(&out, json, 1);
        if (!err && strcmp(o->output, "json") == 0)
            err = kp_buf_putc(&out, '\n');
        cJSON_Delete(json);
    }
    if (!err)
        fwrite(kp_buf_cstr(&out), 1, out.len, stdout);
    kp_buf_free(&out);
    kp_disruption_plan_free(r->disruption);
    return err;
}

static void cloud_notes(const kp_sim_cloud *cloud)
{
    for (size_t i = 0; cloud && i < kp_sim_cloud_note_count(cloud); i++)
        fprintf(stderr, "note: %s\n", kp_sim_cloud_note(cloud, i));
}

static void print_note(void *ctx, const char *text)
{
    (void)ctx;
    fprintf(stderr, "note: %s\n", text);
}

/* NodeOverlays in the manifests (the NodeOverlay gate is on in simulate):
 * applied to the plan, and what became of each said on stderr. */
static int overlays(const kp_manifests *m, kp_cluster *cluster, kp_overlay_catalogs **out)
{
    const kp_nodeoverlay *const *items;
    size_t n = kp_manifests_nodeoverlays(m, &items);
    int err = kp_overlay_plan(cluster, items, n, out);
    const kp_overlay_verdict *v;
    char line[1024];
    for (size_t i = 0, nv = *out ? kp_overlay_store_verdicts(kp_overlay_catalogs_store(*out), &v) : 0; i < nv; i++)
        fprintf(stderr, "note: %s\n", kp_overlay_verdict_text(&v[i], line, sizeof(line)));
    return err;
}

static int run(const sim_opts *o)
{
    kp_manifests *m = kp_manifests_new();
    kp_sim_cloud *cloud = NULL;
    kp_doc_list *docs = kp_doc_list_new();
    sim_source src;
    kp_overlay_catalogs *overlaid = NULL;
    kp_snapshot *snap = NULL;
    kp_plan *plan = NULL;
    kp_arena *arena = kp_arena_new();
    kp_cluster cluster;
    uint32_t *pending = NULL, n_pending = 0;
    memset(&src, 0, sizeof(src));
    int err = kp_sim_cloud_new(&o->cloud, &cloud);
    if (!err)
        err = load(o, cloud, docs, m, &src);
    if (!err) {
        kp_manifests_cluster(m, NULL, &cluster);
        kp_sim_cloud_wire(cloud, &cluster);
        err = overlays(m, &cluster, &overlaid);
    }
    if (!err)
        err = kp_snapshot_build(&cluster, &snap);
    if (!err) {
        kp_solve_opts so = KP_SOLVE_OPTS_INIT;
        so.ignore_preferences = o->ignore_preferences;
        so.improve = !o->no_improve;
        so.caps = &o->caps;
        n_pending = kp_snapshot_pending_pods(snap, &pending, arena);
        err = kp_static_solve(snap, &so, pending, n_pending, print_note, NULL, &plan);
    }
    cloud_notes(cloud);
    if (!err) {
        sim_result r = {plan, snap, n_pending, NULL, &src};
        err = print_plan(o, &r);
    }
    kp_plan_free(plan);
    kp_snapshot_free(snap);
    kp_overlay_catalogs_free(overlaid);
    kp_manifests_free(m);
    kp_doc_list_free(docs);
    kp_sim_cloud_free(cloud);
    kp_sim_merge_report_clear(&src.merge);
    kp_arena_free(arena);
    return err;
}

int kp_simulate_main(int argc, char **argv)
{
    sim_opts o;
    int err = parse_args(argc, argv, &o);
    if (err < 0) {
        fprintf(stderr, "karpenter-controller simulate: %s\n", kp_error_last());
        usage(stderr);
        return 2;
    }
    if ((err = run(&o)) < 0) {
        fprintf(stderr, "karpenter-controller simulate: %s\n", kp_error_last());
        return 1;
    }
    return 0;
}
