/*
 * `karpenter-controller simulate`: plan offline what the controller would do
 * for the manifests given, and print the plan.
 */
#include "controller/simulate.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/clock.h"
#include "cloud/instance_types.h"
#include "disruption/disruption.h"
#include "format/json_out.h"
#include "format/load.h"
#include "scheduling/manifests.h"
#include "scheduling/overlay_plan.h"
#include "scheduling/plan_output.h"
#include "scheduling/solver.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_INPUTS = 64 };

typedef struct sim_opts {
    const char *inputs[MAX_INPUTS];
    int n_inputs;
    const char *instance_types;
    const char *output;
    bool ignore_preferences;
    bool no_improve;
    bool disrupt;
    int64_t now_ns;
} sim_opts;

static void usage(FILE *out)
{
    fputs("usage: karpenter-controller simulate -f FILE_OR_DIR [-f ...] [--instance-types builtin|synthetic:N|FILE]\n"
          "                                     [-o json|yaml|table] [--ignore-preferences] [--no-improve]\n"
          "                                     [--disrupt [--now RFC3339]]\n"
          "Plans, without a cluster, where pending pods would go: existing nodes, new NodeClaims\n"
          "(with their instance types and hourly cost), or nowhere (with the reason).\n"
          "--no-improve keeps Karpenter's plan exactly, without the pass that repacks\n"
          "unconstrained pods onto cheaper NodeClaims.\n"
          "--disrupt adds what disruption would do (expiration, emptiness, drift, consolidation)\n"
          "and why every other node stays; --now fixes the clock (node ages, budgets' schedules).\n",
          out);
}

static int parse_args(int argc, char **argv, sim_opts *o)
{
    static const struct option longopts[] = {
        {"filename", required_argument, NULL, 'f'},   {"instance-types", required_argument, NULL, 'i'},
        {"output", required_argument, NULL, 'o'},     {"ignore-preferences", no_argument, NULL, 'p'},
        {"no-improve", no_argument, NULL, 'n'},       {"disrupt", no_argument, NULL, 'd'},
        {"now", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},             {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof(*o));
    o->instance_types = "builtin";
    o->output = "json";
    o->now_ns = kp_clock_system()->now(kp_clock_system());
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (o->n_inputs == MAX_INPUTS)
                return kp_error_set(KP_EINVALID, "more than %d -f arguments", MAX_INPUTS);
            o->inputs[o->n_inputs++] = optarg;
            break;
        case 'i': o->instance_types = optarg; break;
        case 'o': o->output = optarg; break;
        case 'p': o->ignore_preferences = true; break;
        case 'n': o->no_improve = true; break;
        case 'd': o->disrupt = true; break;
        case 't':
            if (kp_time_parse_rfc3339(optarg, &o->now_ns) < 0)
                return kp_error_wrap(KP_EINVALID, "--now");
            break;
        case 'h': usage(stdout); exit(0);
        default: return kp_error_set(KP_EINVALID, "unknown option (see --help)");
        }
    }
    if (optind < argc)
        return kp_error_set(KP_EINVALID, "unexpected argument %s (inputs are given with -f)", argv[optind]);
    if (o->n_inputs == 0)
        return kp_error_set(KP_EINVALID, "no input: give manifests with -f FILE_OR_DIR");
    if (strcmp(o->output, "json") && strcmp(o->output, "yaml") && strcmp(o->output, "table"))
        return kp_error_set(KP_EINVALID, "-o %s: want json, yaml or table", o->output);
    return 0;
}

static int load(const sim_opts *o, kp_manifests *m)
{
    kp_doc_list *docs = kp_doc_list_new();
    int err = 0;
    for (int i = 0; i < o->n_inputs && !err; i++)
        err = kp_load_path(docs, o->inputs[i], NULL);
    if (!err)
        err = kp_manifests_add_docs(m, docs);
    kp_doc_list_free(docs);
    for (size_t i = 0; i < kp_manifests_note_count(m); i++)
        fprintf(stderr, "note: %s\n", kp_manifests_note(m, i));
    return err;
}

typedef struct sim_result {
    const kp_plan *plan;
    kp_snapshot *snap;
    uint32_t n_pending;
    kp_disruption_plan *disruption;
} sim_result;

static void disruption_table(const sim_result *r, kp_buf *out)
{
    const kp_disruption_plan *d = r->disruption;
    kp_buf_printf(out, "\n%-5s %-26s %-14s %-44s %s\n", "LOOP", "DISRUPTION", "REASON", "NODES", "$/HOUR SAVED");
    for (uint32_t i = 0; i < d->n_commands; i++) {
        const kp_disrupt_command *c = &d->commands[i];
        kp_buf names = KP_BUF_INIT(4096);
        for (uint32_t k = 0; k < c->n_candidates && k < 4; k++)
            kp_buf_printf(&names, "%s%s", k ? ", " : "", r->snap->nodes[c->candidates[k]].name);
        if (c->n_candidates > 4)
            kp_buf_printf(&names, " and %u more", c->n_candidates - 4);
        uint32_t repl = c->simulation ? c->simulation->n_claims : 0;
        if (repl)
            kp_buf_printf(&names, " -> %u new", repl);
        kp_buf_printf(out, "%-5u %-26s %-14s %-44s %.4f\n", c->loop, kp_disrupt_method_name(c->method),
                      kp_disrupt_reason(c->method), kp_buf_cstr(&names), c->savings_hourly);
        kp_buf_free(&names);
    }
    if (d->n_blocked)
        kp_buf_printf(out, "\n%-40s %s\n", "NODE KEPT", "WHY");
    for (uint32_t i = 0; i < d->n_blocked; i++)
        kp_buf_printf(out, "%-40s %s\n", r->snap->nodes[d->blocked[i].node].name, d->blocked[i].reason);
    kp_buf_printf(out, "\nManaged nodes cost $%.4f/hour now and $%.4f/hour after %u disruption(s).\n",
                  d->cost_before, d->cost_after, d->n_commands);
}

static int disrupt(const sim_opts *o, sim_result *r)
{
    kp_disrupt_opts d = KP_DISRUPT_OPTS_INIT;
    d.now_ns = o->now_ns;
    d.ignore_preferences = o->ignore_preferences;
    return kp_disruption_plan_compute(r->snap, &d, &r->disruption);
}

static int print_plan(const sim_opts *o, sim_result *r)
{
    kp_buf out = KP_BUF_INIT(256u << 20);
    int err = 0;
    if (strcmp(o->output, "table") == 0) {
        err = kp_plan_write_table(r->plan, r->snap, r->n_pending, &out);
        if (!err && o->disrupt && !(err = disrupt(o, r)))
            disruption_table(r, &out);
    } else {
        cJSON *json = kp_plan_to_json(r->plan, r->snap, r->n_pending);
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
    kp_catalog *catalog = NULL;
    kp_overlay_catalogs *overlaid = NULL;
    kp_snapshot *snap = NULL;
    kp_plan *plan = NULL;
    kp_arena *arena = kp_arena_new();
    kp_cluster cluster;
    uint32_t *pending = NULL, n_pending = 0;
    int err = load(o, m);
    if (!err)
        err = kp_catalog_open(o->instance_types, &catalog);
    if (!err) {
        kp_manifests_cluster(m, catalog, &cluster);
        err = overlays(m, &cluster, &overlaid);
    }
    if (!err)
        err = kp_snapshot_build(&cluster, &snap);
    if (!err) {
        kp_solve_opts so = KP_SOLVE_OPTS_INIT;
        so.ignore_preferences = o->ignore_preferences;
        so.improve = !o->no_improve;
        n_pending = kp_snapshot_pending_pods(snap, &pending, arena);
        err = kp_solve(snap, &so, pending, n_pending, &plan);
    }
    if (!err) {
        sim_result r = {plan, snap, n_pending, NULL};
        err = print_plan(o, &r);
    }
    kp_plan_free(plan);
    kp_snapshot_free(snap);
    kp_overlay_catalogs_free(overlaid);
    kp_catalog_free(catalog);
    kp_manifests_free(m);
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
