/* The solver test harness (see scenario.h). */
#include "scenario.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "format/load.h"
#include "scheduling/overlay_plan.h"
#include "scheduling/plan_output.h"
#include "helpers/assert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int open_catalog(const char *spec, kp_catalog **out)
{
    if (strncmp(spec, "json:", 5) != 0)
        return kp_catalog_open(spec, out);
    cJSON *json = cJSON_Parse(spec + 5);
    if (!json)
        return kp_error_set(KP_EINVALID, "inline catalog is not valid JSON");
    int err = kp_catalog_from_json(json, "inline catalog", out);
    cJSON_Delete(json);
    return err;
}

static int run_docs(kp_scenario *s, kp_doc_list *docs, int err, const char *catalog, const kp_solve_opts *opts)
{
    kp_solve_opts defaults = KP_SOLVE_OPTS_INIT;
    defaults.improve = false; /* Karpenter's plan, unless a test asks for more */
    kp_cluster cluster;
    uint32_t *pending;
    if (!err)
        err = kp_manifests_add_docs(s->manifests, docs);
    kp_doc_list_free(docs);
    if (!err)
        err = open_catalog(catalog, &s->catalog);
    if (!err) {
        const kp_nodeoverlay *const *overlays;
        size_t n = kp_manifests_nodeoverlays(s->manifests, &overlays);
        kp_manifests_cluster(s->manifests, s->catalog, &cluster);
        err = kp_overlay_plan(&cluster, overlays, n, &s->overlaid); /* as simulate does */
    }
    if (!err)
        err = kp_snapshot_build(&cluster, &s->snap);
    if (!err) {
        s->n_pending = kp_snapshot_pending_pods(s->snap, &pending, s->arena);
        err = kp_solve(s->snap, opts ? opts : &defaults, pending, s->n_pending, &s->plan);
    }
    if (!err)
        s->json = kp_plan_to_json(s->plan, s->snap, s->n_pending);
    return err;
}

static kp_doc_list *start(kp_scenario *s)
{
    memset(s, 0, sizeof(*s));
    s->arena = kp_arena_new();
    s->manifests = kp_manifests_new();
    return kp_doc_list_new();
}

int kp_scenario_run(kp_scenario *s, const char *yaml, const char *catalog, const kp_solve_opts *opts)
{
    kp_doc_list *docs = start(s);
    int err = kp_load_buffer(docs, yaml, strlen(yaml), "scenario", KP_LOAD_YAML, NULL);
    return run_docs(s, docs, err, catalog, opts);
}

int kp_scenario_run_path(kp_scenario *s, const char *path, const char *catalog, const kp_solve_opts *opts)
{
    kp_doc_list *docs = start(s);
    int err = kp_load_path(docs, path, NULL);
    return run_docs(s, docs, err, catalog, opts);
}

void kp_scenario_free(kp_scenario *s)
{
    cJSON_Delete(s->disruption_json);
    kp_disruption_plan_free(s->disruption);
    cJSON_Delete(s->json);
    kp_plan_free(s->plan);
    kp_snapshot_free(s->snap);
    kp_overlay_catalogs_free(s->overlaid);
    kp_catalog_free(s->catalog);
    kp_manifests_free(s->manifests);
    kp_arena_free(s->arena);
    memset(s, 0, sizeof(*s));
}

static int pod_index(const kp_scenario *s, const char *pod)
{
    char full[512];
    if (!strchr(pod, '/'))
        snprintf(full, sizeof(full), "default/%s", pod);
    else
        snprintf(full, sizeof(full), "%s", pod);
    for (uint32_t i = 0; s->snap && i < s->snap->n_pods; i++)
        if (strcmp(s->snap->pods[i].ns_name, full) == 0)
            return (int)i;
    return -1;
}

static bool has_pod(const uint32_t *pods, uint32_t n, int pod)
{
    for (uint32_t i = 0; i < n; i++)
        if ((int)pods[i] == pod)
            return true;
    return false;
}

int kp_scenario_claim_of(const kp_scenario *s, const char *pod)
{
    int p = pod_index(s, pod);
    for (uint32_t c = 0; s->plan && p >= 0 && c < s->plan->n_claims; c++)
        if (has_pod(s->plan->claims[c].pods, s->plan->claims[c].n_pods, p))
            return (int)c;
    return -1;
}

const char *kp_scenario_node_of(const kp_scenario *s, const char *pod)
{
    int p = pod_index(s, pod);
    for (uint32_t n = 0; s->plan && p >= 0 && n < s->plan->n_nodes; n++)
        if (has_pod(s->plan->nodes[n].pods, s->plan->nodes[n].n_pods, p))
            return s->snap->nodes[s->plan->nodes[n].node].name;
    return NULL;
}

const char *kp_scenario_error_of(const kp_scenario *s, const char *pod)
{
    int p = pod_index(s, pod);
    for (uint32_t i = 0; s->plan && p >= 0 && i < s->plan->n_errors; i++)
        if ((int)s->plan->errors[i].pod == p)
            return s->plan->errors[i].reason;
    return NULL;
}

const char *kp_scenario_claim_req(kp_scenario *s, int claim, const char *key)
{
    if (claim < 0 || (uint32_t)claim >= s->plan->n_claims)
        return NULL;
    kp_sym k = kp_sym_lookup(s->snap->symtab, key);
    const kp_requirement *r = k ? kp_requirements_get(&s->plan->claims[claim].reqs, k) : NULL;
    if (!r)
        return NULL;
    const char *text = kp_requirement_string(s->snap->symtab, s->arena, r);
    size_t n = strlen(key);
    return strncmp(text, key, n) == 0 && text[n] == ' ' ? text + n + 1 : text;
}

const char *kp_scenario_claim_type(const kp_scenario *s, int claim)
{
    if (claim < 0 || (uint32_t)claim >= s->plan->n_claims || s->plan->claims[claim].n_its == 0)
        return NULL;
    return kp_sym_str(s->snap->symtab, s->snap->its[s->plan->claims[claim].its[0]].name);
}

const char *kp_scenario_claim_pool(const kp_scenario *s, int claim)
{
    if (claim < 0 || (uint32_t)claim >= s->plan->n_claims)
        return NULL;
    return s->snap->templates[s->plan->claims[claim].template_index].name;
}

uint32_t kp_scenario_claim_pods(const kp_scenario *s, int claim)
{
    if (claim < 0 || (uint32_t)claim >= s->plan->n_claims)
        return 0;
    return s->plan->claims[claim].n_pods;
}

int kp_scenario_disrupt(kp_scenario *s, const char *now, const kp_disrupt_opts *opts)
{
    kp_disrupt_opts o = opts ? *opts : (kp_disrupt_opts)KP_DISRUPT_OPTS_INIT;
    int err = kp_time_parse_rfc3339(now, &o.now_ns);
    if (!err)
        err = kp_disruption_plan_compute(s->snap, &o, &s->disruption);
    if (err)
        return err;
    s->disruption_json = cJSON_CreateObject();
    cJSON_AddItemToObject(s->disruption_json, "disruption",
                          kp_disruption_plan_commands_json(s->disruption, s->snap));
    cJSON_AddItemToObject(s->disruption_json, "blocked", kp_disruption_plan_blocked_json(s->disruption, s->snap));
    return 0;
}

uint32_t kp_scenario_n_commands(const kp_scenario *s)
{
    return s->disruption ? s->disruption->n_commands : 0;
}

static const kp_disrupt_command *command_at(const kp_scenario *s, uint32_t i)
{
    return i < kp_scenario_n_commands(s) ? &s->disruption->commands[i] : NULL;
}

const char *kp_scenario_command_method(const kp_scenario *s, uint32_t i)
{
    const kp_disrupt_command *c = command_at(s, i);
    return c ? kp_disrupt_method_name(c->method) : NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *kp_scenario_command_nodes(kp_scenario *s, uint32_t i)
{
    const kp_disrupt_command *c = command_at(s, i);
    if (!c)
        return NULL;
    const char **names = KP_ARENA_NEW(s->arena, const char *, c->n_candidates + 1);
    for (uint32_t k = 0; k < c->n_candidates; k++)
        names[k] = s->snap->nodes[c->candidates[k]].name;
    qsort(names, c->n_candidates, sizeof(*names), cmp_str);
    kp_buf out = KP_BUF_INIT(1 << 20);
    for (uint32_t k = 0; k < c->n_candidates; k++)
        KP_ASSERT_OK(kp_buf_printf(&out, "%s%s", k ? "," : "", names[k]));
    const char *joined = kp_arena_strdup(s->arena, kp_buf_cstr(&out));
    kp_buf_free(&out);
    return joined;
}

uint32_t kp_scenario_command_replacements(const kp_scenario *s, uint32_t i)
{
    const kp_disrupt_command *c = command_at(s, i);
    return c && c->simulation ? c->simulation->n_claims : 0;
}

const char *kp_scenario_command_replacement_type(const kp_scenario *s, uint32_t i, uint32_t r)
{
    const kp_disrupt_command *c = command_at(s, i);
    if (!c || !c->simulation || r >= c->simulation->n_claims || !c->simulation->claims[r].n_its)
        return NULL;
    return kp_sym_str(s->snap->symtab, s->snap->its[c->simulation->claims[r].its[0]].name);
}

int kp_scenario_disrupted_by(const kp_scenario *s, const char *node)
{
    for (uint32_t i = 0; i < kp_scenario_n_commands(s); i++) {
        const kp_disrupt_command *c = &s->disruption->commands[i];
        for (uint32_t k = 0; k < c->n_candidates; k++)
            if (strcmp(s->snap->nodes[c->candidates[k]].name, node) == 0)
                return (int)i;
    }
    return -1;
}

const char *kp_scenario_blocked_reason(const kp_scenario *s, const char *node)
{
    for (uint32_t i = 0; s->disruption && i < s->disruption->n_blocked; i++)
        if (strcmp(s->snap->nodes[s->disruption->blocked[i].node].name, node) == 0)
            return s->disruption->blocked[i].reason;
    return NULL;
}
