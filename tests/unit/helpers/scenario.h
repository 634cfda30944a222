/*
 * Test harness for the solver: manifests (YAML text) and a catalog in, a plan
 * out, with lookups that read like the assertions of Karpenter's scheduling
 * tests ("the pod landed on a NodeClaim whose zone requirement is In [a]").
 */
#ifndef KP_TEST_SCENARIO_H
#define KP_TEST_SCENARIO_H

#include "base/buf.h"
#include "cloud/instance_types.h"
#include "disruption/disruption.h"
#include "scheduling/manifests.h"
#include "scheduling/solver.h"

#include <cjson/cJSON.h>
#include <stdarg.h>

typedef struct kp_scenario {
    kp_manifests *manifests;
    kp_catalog *catalog;
    struct kp_overlay_catalogs *overlaid; /* the manifests' NodeOverlays applied, as simulate does */
    kp_snapshot *snap;
    kp_plan *plan;
    kp_arena *arena;
    uint32_t n_pending;
    cJSON *json; /* the plan as `simulate -o json` prints it */
    kp_disruption_plan *disruption; /* after kp_scenario_disrupt */
    cJSON *disruption_json;         /* {"disruption":[...],"blocked":[...]} as simulate --disrupt prints them */
} kp_scenario;

/*
 * The manifests of a scenario, built as YAML text (flow style keeps a case
 * short). Zero-initialised it is empty and ready; appends that would pass
 * 4 MiB fail the test. Every suite builds its manifests with these, through
 * thin helpers of its own that fill in its defaults.
 */
typedef struct kp_yaml {
    kp_buf buf;
} kp_yaml;

/* Append text as it is (the caller writes "---" between documents). */
void kp_yaml_add(kp_yaml *y, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kp_yaml_vadd(kp_yaml *y, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Append one whole document: "---", the text, a newline. */
void kp_yaml_doc(kp_yaml *y, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kp_yaml_vdoc(kp_yaml *y, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* The stream so far ("" when empty). */
const char *kp_yaml_text(const kp_yaml *y);
/* Empty it (to build another scenario), or free it. */
void kp_yaml_reset(kp_yaml *y);
void kp_yaml_free(kp_yaml *y);

/* A NodePool of EC2NodeClass "default". Each part but `name` may be NULL;
 * each is the inside of a flow map or list. */
typedef struct kp_yaml_pool {
    const char *name;
    const char *meta;            /* more metadata fields: "annotations: {...}" */
    const char *requirements;    /* spec.template.spec.requirements */
    const char *template_labels; /* spec.template.metadata.labels */
    const char *template_meta;   /* more spec.template.metadata fields */
    const char *template_spec;   /* more spec.template.spec fields: "expireAfter: 1h" */
    const char *spec;            /* more spec fields: "weight: 10", "disruption: {...}" */
} kp_yaml_pool;

void kp_yaml_nodepool(kp_yaml *y, const kp_yaml_pool *p);

/* Decode `yaml` (any number of documents), open `catalog` — "builtin",
 * "synthetic:N", or "json:" followed by an inline instance-type array in the
 * --instance-types FILE format — and solve. `opts` may be NULL: Karpenter's
 * behaviour, without the repacking pass (opts.improve) that goes beyond it. Returns 0 or a
 * negative KP_E* (kp_error_last() says why); the scenario must be freed either way. */
int kp_scenario_run(kp_scenario *s, const char *yaml, const char *catalog, const kp_solve_opts *opts);
/* As kp_scenario_run, with manifests from a file or directory. */
int kp_scenario_run_path(kp_scenario *s, const char *path, const char *catalog, const kp_solve_opts *opts);
void kp_scenario_free(kp_scenario *s);

/* "ns/name", or "name" for the default namespace. */
/* Index of the new NodeClaim the pod was planned onto, or -1. */
int kp_scenario_claim_of(const kp_scenario *s, const char *pod);
/* Name of the existing node the pod was planned onto, or NULL. */
const char *kp_scenario_node_of(const kp_scenario *s, const char *pod);
/* The reason the pod stays pending, or NULL when it was placed. */
const char *kp_scenario_error_of(const kp_scenario *s, const char *pod);
/* The requirement of claim `claim` on `key` as Karpenter prints it without
 * the key ("In [a b]", "Exists", "DoesNotExist"), or NULL when absent. */
const char *kp_scenario_claim_req(kp_scenario *s, int claim, const char *key);
/* The claim's cheapest instance type (its launch choice), or NULL. */
const char *kp_scenario_claim_type(const kp_scenario *s, int claim);
/* The claim's NodePool name. */
const char *kp_scenario_claim_pool(const kp_scenario *s, int claim);
/* Number of pods on claim `claim`. */
uint32_t kp_scenario_claim_pods(const kp_scenario *s, int claim);

/*
 * Disruption, after kp_scenario_run (whose plan places the pending pods first,
 * as `simulate --disrupt` does): plan with the clock at `now` (RFC 3339).
 * `opts` NULL: Karpenter's defaults (loops until nothing changes). Commands
 * and blocked nodes name snapshot nodes; the snapshot then holds the cluster
 * after the plan.
 */
int kp_scenario_disrupt(kp_scenario *s, const char *now, const kp_disrupt_opts *opts);
/* Number of commands in the plan. */
uint32_t kp_scenario_n_commands(const kp_scenario *s);
/* Command `i`'s method ("emptiness", "drift", "multi-node consolidation", ...;
 * kp_disrupt_method_name) or NULL when out of range. */
const char *kp_scenario_command_method(const kp_scenario *s, uint32_t i);
/* Command `i`'s candidate node names, sorted and joined by "," ("a,b"). */
const char *kp_scenario_command_nodes(kp_scenario *s, uint32_t i);
/* Number of replacement NodeClaims command `i` launches, and the cheapest
 * instance type of replacement `r` (or NULL). */
uint32_t kp_scenario_command_replacements(const kp_scenario *s, uint32_t i);
const char *kp_scenario_command_replacement_type(const kp_scenario *s, uint32_t i, uint32_t r);
/* Index of the first command that takes `node` away, or -1. */
int kp_scenario_disrupted_by(const kp_scenario *s, const char *node);
/* Why `node` stays (the plan's blocked reason), or NULL when it is disrupted
 * or not a managed node. */
const char *kp_scenario_blocked_reason(const kp_scenario *s, const char *node);

#endif
