/*
 * Shared by the test_solver_spread_*.c suites: YAML builders for pools,
 * pods and nodes in flow style, spread-constraint macros, and Karpenter's
 * ExpectSkew over a plan (skew(): pods per domain, largest first). Static
 * inline, so each program has its own copy and tests/unit/helpers/ stays
 * generic.
 */
#ifndef KP_TEST_SOLVER_SPREAD_H
#define KP_TEST_SOLVER_SPREAD_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers/scenario.h"
#include "helpers/assert.h"

/* Manifests: YAML documents appended one by one (helpers/scenario.h). */
typedef kp_yaml yb;
#define yb_add kp_yaml_doc

#define OR(x) ((x) ? (x) : "")
#define SEP(x) ((x) && *(x) ? ", " : ""), OR(x)

#define ZONE "topology.kubernetes.io/zone"
#define HOST "kubernetes.io/hostname"
#define CT "karpenter.sh/capacity-type"
#define SEL "labelSelector: {matchLabels: {test: test}}"
/* A spread constraint on KEY selecting test=test; `more` adds fields. */
#define TSC(key, skew, when, more) "{topologyKey: " key ", maxSkew: " #skew ", whenUnsatisfiable: " when ", " SEL more "}"
#define HARD(key, skew) TSC(key, skew, "DoNotSchedule", "")
#define SOFT(key, skew) TSC(key, skew, "ScheduleAnyway", "")
#define SPREAD(...) "topologySpreadConstraints: [" __VA_ARGS__ "]"

/* A NodePool: `reqs` the inside of its requirements list, `labels` the inside
 * of the template's labels map, `tspec` more template spec fields, `spec` more spec fields. */
static inline void pool(yb *y, const char *name, const char *reqs, const char *labels, const char *tspec, const char *spec)
{
    kp_yaml_nodepool(y, &(kp_yaml_pool){.name = name,
                                        .requirements = reqs,
                                        .template_labels = OR(labels),
                                        .template_spec = tspec,
                                        .spec = spec});
}

/* `n` pending pods PREFIX-0 .. in namespace `ns` (NULL: default) labelled
 * `labels` (inside of the map), requesting `requests`, with more spec fields `spec`. */
static inline void pods_ns(yb *y, const char *prefix, int n, const char *ns, const char *labels, const char *requests,
                    const char *spec)
{
    for (int i = 0; i < n; i++)
        yb_add(y,
               "apiVersion: v1\nkind: Pod\nmetadata: {name: %s-%d, namespace: %s, labels: {%s}}\n"
               "spec: {containers: [{name: c, resources: {requests: {%s}}}]%s%s}\n",
               prefix, i, ns ? ns : "default", OR(labels), OR(requests), SEP(spec));
}

static inline void pods(yb *y, const char *prefix, int n, const char *requests, const char *spec)
{
    pods_ns(y, prefix, n, NULL, "test: test", requests, spec);
}

/* A Node: `labels` the inside of its labels map, `spec` the inside of its spec, `alloc` its allocatable and capacity. */
static inline void node(yb *y, const char *name, const char *labels, const char *spec, const char *alloc)
{
    yb_add(y,
           "apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {%s}}\nspec: {%s}\n"
           "status: {capacity: {%s}, allocatable: {%s}}\n",
           name, OR(labels), OR(spec), alloc, alloc);
}

/* `n` running pods PREFIX-0 .. bound to `node_name`, labelled test=test unless `labels` says otherwise. */
static inline void bound_ns(yb *y, const char *prefix, int n, const char *node_name, const char *ns, const char *labels,
                     const char *requests)
{
    for (int i = 0; i < n; i++)
        yb_add(y,
               "apiVersion: v1\nkind: Pod\nmetadata: {name: %s-%d, namespace: %s, labels: {%s}}\n"
               "spec: {nodeName: %s, containers: [{name: c, resources: {requests: {%s}}}]}\n"
               "status: {phase: Running}\n",
               prefix, i, ns ? ns : "default", labels ? labels : "test: test", node_name, OR(requests));
}

static inline void bound(yb *y, const char *prefix, int n, const char *node_name)
{
    bound_ns(y, prefix, n, node_name, NULL, NULL, NULL);
}

static inline void run(kp_scenario *s, yb *y, const char *catalog, const kp_solve_opts *opts)
{
    int err = kp_scenario_run(s, kp_yaml_text(y), catalog, opts);
    kp_yaml_free(y);
    KP_ASSERT_OK(err);
}

/* ---- reading the plan ---- */

static inline bool pod_selected(const kp_scenario *s, const kp_spod *p, const char *ns)
{
    size_t n = strlen(ns);
    if (strncmp(p->ns_name, ns, n) != 0 || p->ns_name[n] != '/')
        return false;
    kp_sym key = kp_sym_lookup(s->snap->symtab, "test");
    kp_sym value = kp_sym_lookup(s->snap->symtab, "test");
    return key && value && kp_symlabels_get(&p->labels, key) == value;
}

static inline const char *node_domain(const kp_scenario *s, uint32_t node, const char *key)
{
    const kp_snode *n = &s->snap->nodes[node];
    if (strcmp(key, HOST) == 0)
        return n->name;
    kp_sym k = kp_sym_lookup(s->snap->symtab, key);
    kp_sym v = k ? kp_symlabels_get(&n->labels, k) : KP_SYM_NONE;
    return v == KP_SYM_NONE ? NULL : kp_sym_str(s->snap->symtab, v);
}

/* Where claim `c` lands for `key`: its launch offering's zone and capacity
 * type, its own name for hostnames, else its single-valued requirement. */
static inline const char *claim_domain(kp_scenario *s, int c, const char *key)
{
    const kp_plan_claim *pc = &s->plan->claims[c];
    if (strcmp(key, ZONE) == 0)
        return kp_sym_str(s->snap->symtab, pc->zone);
    if (strcmp(key, CT) == 0)
        return kp_sym_str(s->snap->symtab, pc->capacity_type);
    if (strcmp(key, HOST) == 0)
        return kp_arena_printf(s->arena, "claim-%d", c);
    const char *r = kp_scenario_claim_req(s, c, key);
    if (!r || strncmp(r, "In [", 4) != 0 || strchr(r + 4, ' '))
        return NULL;
    return kp_arena_strndup(s->arena, r + 4, strlen(r + 4) - 1);
}

/* Where pod `i` runs or will run for `key`, or NULL. */
static inline const char *pod_domain(kp_scenario *s, uint32_t i, const char *key)
{
    const kp_spod *p = &s->snap->pods[i];
    if (p->node >= 0)
        return node_domain(s, (uint32_t)p->node, key);
    const char *name = p->ns_name;
    if (strncmp(name, "default/", 8) == 0)
        name += 8;
    int c = kp_scenario_claim_of(s, name);
    if (c >= 0)
        return claim_domain(s, c, key);
    const char *placed = kp_scenario_node_of(s, name);
    for (uint32_t n = 0; placed && n < s->snap->n_nodes; n++)
        if (strcmp(s->snap->nodes[n].name, placed) == 0)
            return node_domain(s, n, key);
    return NULL;
}

static inline int cmp_desc(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x < y) - (x > y);
}

/* Karpenter's ExpectSkew: pods labelled test=test in namespace `ns` that run
 * (or are planned) on a node with a `key` domain, counted per domain; the
 * counts largest first, as "4,3,3" ("" when none). */
static inline const char *skew_ns(kp_scenario *s, const char *key, const char *ns)
{
    const char *names[256];
    int counts[256], n = 0;
    for (uint32_t i = 0; i < s->snap->n_pods; i++) {
        const kp_spod *p = &s->snap->pods[i];
        if (p->terminal || p->terminating || p->daemon || !pod_selected(s, p, ns))
            continue;
        const char *d = pod_domain(s, i, key);
        if (!d)
            continue;
        int j = 0;
        while (j < n && strcmp(names[j], d) != 0)
            j++;
        if (j == n) {
            cr_assert_lt(n, 256);
            names[n] = d;
            counts[n++] = 0;
        }
        counts[j]++;
    }
    qsort(counts, (size_t)n, sizeof(int), cmp_desc);
    char buf[2048];
    size_t len = 0;
    buf[0] = '\0';
    for (int j = 0; j < n; j++)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d", j ? "," : "", counts[j]);
    return kp_arena_strdup(s->arena, buf);
}

static inline const char *skew(kp_scenario *s, const char *key)
{
    return skew_ns(s, key, "default");
}

/* Every pending pod that was not placed names a topology spread on `key`. */
static inline void expect_errors(const kp_scenario *s, uint32_t n, const char *key)
{
    cr_expect_eq(s->plan->n_errors, n, "%u pods unschedulable, want %u", s->plan->n_errors, n);
    for (uint32_t i = 0; i < s->plan->n_errors; i++) {
        const char *why = s->plan->errors[i].reason;
        cr_expect(strstr(why, "topology spread") && strstr(why, key), "reason: %s", why);
    }
}

#endif
