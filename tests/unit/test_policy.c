/*
 * webhook/policy: the policy file (strict parsing), every NodePool and
 * EC2NodeClass rule allowed at its boundary and refused past it, and the Pod
 * mutations checked by applying the JSON Patch to the Pod.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/admission.h"
#include "base/arena.h"
#include "base/error.h"
#include "webhook/policy.h"

/* ---- helpers ---------------------------------------------------------------- */

static kp_policy *policy_of(const char *yaml)
{
    kp_policy *p = NULL;
    int err = kp_policy_parse(&p, yaml, strlen(yaml), "policy.yaml");
    cr_assert_eq(err, 0, "policy did not parse: %s\n%s", kp_error_last(), yaml);
    return p;
}

static cJSON *json_of(const char *text)
{
    cJSON *j = cJSON_Parse(text);
    cr_assert_not_null(j, "bad JSON in test: %s", text);
    return j;
}

typedef struct check_result {
    kp_arena *arena;
    kp_admission_result res;
    const char *message; /* all errors joined */
} check_result;

enum target { NODEPOOL, NODECLASS };

static void check(check_result *out, const char *policy_yaml, enum target t, const char *obj_json)
{
    kp_policy *p = policy_of(policy_yaml);
    cJSON *obj = json_of(obj_json);
    out->arena = kp_arena_new();
    kp_admission_result_init(&out->res, out->arena);
    int err = t == NODEPOOL ? kp_policy_check_nodepool(p, obj, &out->res)
                            : kp_policy_check_nodeclass(p, obj, &out->res);
    cr_assert_eq(err, 0);
    out->message = kp_field_errors_string(out->arena, &out->res.errors);
    cJSON_Delete(obj);
    kp_policy_unref(p);
}

static void check_done(check_result *r)
{
    kp_admission_result_clear(&r->res);
    kp_arena_free(r->arena);
}

static void expect_allowed(const char *policy_yaml, enum target t, const char *obj_json)
{
    check_result r;
    check(&r, policy_yaml, t, obj_json);
    cr_expect_eq(r.res.errors.count, 0, "expected allowed, got: %s\nobject: %s", r.message,
                 obj_json);
    check_done(&r);
}

/* Refused, and the message names `rule` and contains `fragment`. */
static void expect_refused(const char *policy_yaml, enum target t, const char *obj_json,
                           const char *rule, const char *fragment)
{
    check_result r;
    check(&r, policy_yaml, t, obj_json);
    cr_expect_gt(r.res.errors.count, 0, "expected refusal by %s for %s", rule, obj_json);
    cr_expect(strstr(r.message, rule) != NULL, "message lacks rule %s: %s", rule, r.message);
    cr_expect(strstr(r.message, "to comply") != NULL, "message lacks remedy: %s", r.message);
    if (fragment)
        cr_expect(strstr(r.message, fragment) != NULL, "message lacks \"%s\": %s", fragment,
                  r.message);
    check_done(&r);
}

/* A NodePool with the given requirements (JSON array text), limits and disruption. */
static char *nodepool(const char *requirements, const char *limits, const char *disruption)
{
    static const char fmt[] =
        "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":"
        "\"default\"},\"spec\":{\"template\":{\"spec\":{\"nodeClassRef\":{\"group\":"
        "\"karpenter.k8s.aws\",\"kind\":\"EC2NodeClass\",\"name\":\"default\"},"
        "\"requirements\":%s}}%s%s%s%s}}";
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    fprintf(f, fmt, requirements ? requirements : "[]", limits ? ",\"limits\":" : "",
            limits ? limits : "", disruption ? ",\"disruption\":" : "",
            disruption ? disruption : "");
    fclose(f);
    return out;
}

static char *req1(const char *key, const char *op, const char *values)
{
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    fprintf(f, "[{\"key\":\"%s\",\"operator\":\"%s\"%s%s%s}]", key, op,
            values ? ",\"values\":" : "", values ? values : "", "");
    fclose(f);
    return out;
}

/* ---- parsing ------------------------------------------------------------------ */

static const char full_policy[] = "apiVersion: karpenter.sh/v1alpha1\n"
                                  "kind: AdmissionPolicy\n"
                                  "nodePools:\n"
                                  "  requireLimits: [cpu, memory]\n"
                                  "  maxLimits: {cpu: 1000, memory: 4000Gi}\n"
                                  "  allowedCapacityTypes: [on-demand, spot]\n"
                                  "  allowedInstanceCategories: [c, m, r]\n"
                                  "  allowedInstanceFamilies: [c6i, m6i, r6i]\n"
                                  "  allowedArchitectures: [amd64]\n"
                                  "  maxInstanceTypes: 3\n"
                                  "  requireDisruptionBudget: true\n"
                                  "ec2NodeClasses:\n"
                                  "  requireIMDSv2: true\n"
                                  "  requireEncryptedVolumes: true\n"
                                  "  allowedAMIAliases: [\"al2023@*\", bottlerocket@v1.20.0]\n"
                                  "pods:\n"
                                  "  defaultRequests: {cpu: 100m, memory: 128Mi}\n"
                                  "  warnMissingRequests: true\n"
                                  "  doNotDisrupt:\n"
                                  "    - matchLabels: {workload: training}\n"
                                  "    - ownerKinds: [Job]\n"
                                  "      namespaces: [batch]\n"
                                  "    - resources: [nvidia.com/gpu]\n";

Test(policy_parse, full_example_and_empty)
{
    kp_policy *p = policy_of(full_policy);
    cr_assert_null(kp_policy_unref(p));
    p = policy_of("");
    kp_policy_unref(p);
    p = policy_of("{}");
    kp_policy_unref(p);
    p = kp_policy_new_empty();
    cr_assert_not_null(p);
    cr_assert_eq(kp_policy_ref(p), p);
    kp_policy_unref(p);
    kp_policy_unref(p);
}

static const struct {
    const char *yaml;
    const char *message;
} bad_policies[] = {
    {"nodepools: {}", "unknown key nodepools"},
    {"nodePools: {requireLimit: [cpu]}", "nodePools: unknown key requireLimit"},
    {"nodePools: {requireLimits: cpu}", "nodePools.requireLimits: must be a list"},
    {"nodePools: {requireLimits: [\"\"]}", "nodePools.requireLimits: must be a list"},
    {"nodePools: {maxLimits: {cpu: lots}}", "nodePools.maxLimits.cpu"},
    {"nodePools: {maxLimits: {cpu: \"-1\"}}", "must not be negative"},
    {"nodePools: {maxLimits: [cpu]}", "nodePools.maxLimits: must be a mapping"},
    {"nodePools: {maxInstanceTypes: 0}", "nodePools.maxInstanceTypes"},
    {"nodePools: {maxInstanceTypes: 2.5}", "nodePools.maxInstanceTypes"},
    {"nodePools: {requireDisruptionBudget: yes please}", "must be true or false"},
    {"ec2NodeClasses: {requireIMDSv2: \"true\"}", "ec2NodeClasses.requireIMDSv2"},
    {"pods: {defaultRequests: {cpu: 1x}}", "pods.defaultRequests.cpu"},
    {"pods: {doNotDisrupt: [{}]}", "pods.doNotDisrupt[0]: must be a non-empty mapping"},
    {"pods: {doNotDisrupt: [{matchLabel: {a: b}}]}", "unknown key matchLabel"},
    {"pods: {doNotDisrupt: [{matchLabels: {a: 1}}]}", "pods.doNotDisrupt[0].matchLabels.a"},
    {"pods: {doNotDisrupt: {matchLabels: {a: b}}}", "must be a list of selector terms"},
    {"kind: Policy", "kind: must be AdmissionPolicy"},
    {"apiVersion: v1", "apiVersion: must be karpenter.sh/v1alpha1"},
    {"- a\n- b", "the policy must be a mapping"},
    {"a: [", "policy.yaml"},
    {"a: 1\n---\nb: 2", "policy.yaml"},
};

Test(policy_parse, refuses_typos_and_bad_values_naming_the_key)
{
    for (size_t i = 0; i < sizeof(bad_policies) / sizeof(bad_policies[0]); i++) {
        kp_policy *p = NULL;
        int err =
            kp_policy_parse(&p, bad_policies[i].yaml, strlen(bad_policies[i].yaml), "policy.yaml");
        cr_expect_lt(err, 0, "accepted: %s", bad_policies[i].yaml);
        cr_expect_null(p);
        cr_expect(strstr(kp_error_last(), bad_policies[i].message) != NULL,
                  "%s: message %s lacks %s", bad_policies[i].yaml, kp_error_last(),
                  bad_policies[i].message);
    }
}

Test(policy_parse, load_from_file_and_missing_file)
{
    char path[] = "/tmp/kp-policy-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(full_policy, f);
    fclose(f);
    kp_policy *p = NULL;
    cr_assert_eq(kp_policy_load(&p, path, false), 0, "%s", kp_error_last());
    kp_policy_unref(p);
    unlink(path);
    p = NULL;
    cr_assert_eq(kp_policy_load(&p, path, false), KP_ENOTFOUND);
    cr_assert_null(p);
}

/* A file written with these bytes, in a fresh directory; returns its path. */
static const char *policy_file(char *dir, size_t size, const char *text)
{
    snprintf(dir, size, "/tmp/kp-policy-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    static char path[512];
    snprintf(path, sizeof(path), "%s/policy.yaml", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void remove_policy_file(const char *dir, const char *path)
{
    unlink(path);
    rmdir(dir);
}

/* Truncate-then-write leaves a moment where the file is empty: loading it
 * then must not switch every rule off, unless the operator asked for that. */
Test(policy_load, a_policy_that_sets_no_rule_is_refused_unless_allowed)
{
    static const char *const empty[] = {
        "", "\n\n", "# only a comment\n", "null\n", "~\n", "{}\n", "---\n",
        "apiVersion: karpenter.sh/v1alpha1\nkind: AdmissionPolicy\n",
    };
    for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
        char dir[64];
        const char *path = policy_file(dir, sizeof(dir), empty[i]);
        kp_policy *p = NULL;
        cr_expect_eq(kp_policy_load(&p, path, false), KP_EINVALID, "case %zu loaded", i);
        cr_expect_null(p);
        cr_expect(strstr(kp_error_last(), "sets no rule") != NULL, "%s", kp_error_last());
        cr_expect(strstr(kp_error_last(), "--allow-empty-policy") != NULL);
        cr_expect_eq(kp_policy_load(&p, path, true), 0, "case %zu: %s", i, kp_error_last());
        p = kp_policy_unref(p);
        remove_policy_file(dir, path);
    }
}

Test(policy_load, a_policy_with_any_rule_section_is_not_empty)
{
    char dir[64];
    const char *path = policy_file(dir, sizeof(dir), "pods: {warnMissingRequests: false}\n");
    kp_policy *p = NULL;
    cr_assert_eq(kp_policy_load(&p, path, false), 0, "%s", kp_error_last());
    kp_policy_unref(p);
    remove_policy_file(dir, path);
}

/* A FIFO at the path would block open(2) until a writer came; a directory or
 * a device is not a policy. Each is refused at once. */
Test(policy_load, non_regular_files_are_refused_without_blocking, .timeout = 20)
{
    char dir[] = "/tmp/kp-policy-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char fifo[256];
    snprintf(fifo, sizeof(fifo), "%s/fifo.yaml", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    const char *const paths[] = {fifo, dir, "/dev/zero", "/dev/null"};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        kp_policy *p = NULL;
        cr_expect_eq(kp_policy_load(&p, paths[i], true), KP_EINVALID, "%s", paths[i]);
        cr_expect(strstr(kp_error_last(), "not a regular file") != NULL, "%s", kp_error_last());
        cr_expect_null(p);
    }
    unlink(fifo);
    rmdir(dir);
}

/* ---- NodePool rules --------------------------------------------------------------- */

Test(policy_nodepool, empty_policy_allows_anything)
{
    char *np = nodepool(NULL, NULL, NULL);
    expect_allowed("{}", NODEPOOL, np);
    free(np);
}

Test(policy_nodepool, require_limits)
{
    const char *pol = "nodePools: {requireLimits: [cpu, memory]}";
    char *ok = nodepool(NULL, "{\"cpu\":\"10\",\"memory\":\"10Gi\"}", NULL);
    char *no_mem = nodepool(NULL, "{\"cpu\":\"10\"}", NULL);
    char *none = nodepool(NULL, NULL, NULL);
    expect_allowed(pol, NODEPOOL, ok);
    expect_refused(pol, NODEPOOL, no_mem, "nodePools.requireLimits", "spec.limits.memory");
    expect_refused(pol, NODEPOOL, none, "nodePools.requireLimits", "spec.limits.cpu");
    free(ok);
    free(no_mem);
    free(none);
}

Test(policy_nodepool, max_limits_at_boundary_and_over)
{
    const char *pol = "nodePools: {maxLimits: {cpu: 1000, memory: 4000Gi}}";
    char *at = nodepool(NULL, "{\"cpu\":1000,\"memory\":\"4000Gi\"}", NULL);
    char *milli = nodepool(NULL, "{\"cpu\":\"1000001m\",\"memory\":\"4000Gi\"}", NULL);
    char *over = nodepool(NULL, "{\"cpu\":\"1000\",\"memory\":\"4001Gi\"}", NULL);
    char *absent = nodepool(NULL, "{\"cpu\":\"1\"}", NULL);
    char *garbage = nodepool(NULL, "{\"cpu\":\"lots\",\"memory\":\"1Gi\"}", NULL);
    expect_allowed(pol, NODEPOOL, at);
    expect_refused(pol, NODEPOOL, milli, "nodePools.maxLimits", "cpu must be at most 1000");
    expect_refused(pol, NODEPOOL, over, "nodePools.maxLimits", "spec.limits.memory");
    expect_refused(pol, NODEPOOL, absent, "nodePools.maxLimits", "no limit is unbounded");
    expect_refused(pol, NODEPOOL, garbage, "nodePools.maxLimits", "spec.limits.cpu");
    /* numbers with fractions compare exactly: 0.1 is 100m, not 101m */
    char *frac = nodepool(NULL, "{\"cpu\":0.1}", NULL);
    expect_allowed("nodePools: {maxLimits: {cpu: 100m}}", NODEPOOL, frac);
    expect_refused("nodePools: {maxLimits: {cpu: 99m}}", NODEPOOL, frac, "nodePools.maxLimits",
                   "at most 99m");
    free(frac);
    free(at);
    free(milli);
    free(over);
    free(absent);
    free(garbage);
}

Test(policy_nodepool, capacity_types)
{
    const char *pol = "nodePools: {allowedCapacityTypes: [on-demand, spot]}";
    const char *key = "karpenter.sh/capacity-type";
    struct {
        const char *op, *values;
        int allowed;
        const char *fragment;
    } cases[] = {
        {"In", "[\"on-demand\",\"spot\"]", 1, NULL},
        {"In", "[\"on-demand\"]", 1, NULL},
        {"In", "[\"spot\",\"reserved\"]", 0, "\"reserved\""},
        {"NotIn", "[\"reserved\"]", 1, NULL},
        {"NotIn", "[\"spot\"]", 0, "\"reserved\""},
        {"Exists", NULL, 0, "allows any capacity type"},
        {"DoesNotExist", NULL, 1, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *reqs = req1(key, cases[i].op, cases[i].values);
        char *np = nodepool(reqs, NULL, NULL);
        if (cases[i].allowed)
            expect_allowed(pol, NODEPOOL, np);
        else
            expect_refused(pol, NODEPOOL, np, "nodePools.allowedCapacityTypes", cases[i].fragment);
        free(reqs);
        free(np);
    }
    char *none = nodepool(NULL, NULL, NULL);
    expect_refused(pol, NODEPOOL, none, "nodePools.allowedCapacityTypes",
                   "operator In and values from [on-demand, spot]");
    free(none);
}

Test(policy_nodepool, two_requirements_on_one_key_intersect)
{
    const char *pol = "nodePools: {allowedCapacityTypes: [on-demand]}";
    const char *reqs = "[{\"key\":\"karpenter.sh/capacity-type\",\"operator\":\"In\",\"values\":"
                       "[\"spot\",\"on-demand\"]},{\"key\":\"karpenter.sh/capacity-type\","
                       "\"operator\":\"NotIn\",\"values\":[\"spot\"]}]";
    char *np = nodepool(reqs, NULL, NULL);
    expect_allowed(pol, NODEPOOL, np);
    free(np);
}

Test(policy_nodepool, architectures)
{
    const char *pol = "nodePools: {allowedArchitectures: [amd64]}";
    char *ok_reqs = req1("kubernetes.io/arch", "In", "[\"amd64\"]");
    char *bad_reqs = req1("kubernetes.io/arch", "In", "[\"amd64\",\"arm64\"]");
    char *notin = req1("kubernetes.io/arch", "NotIn", "[\"arm64\"]");
    char *ok = nodepool(ok_reqs, NULL, NULL), *bad = nodepool(bad_reqs, NULL, NULL);
    char *ok2 = nodepool(notin, NULL, NULL), *open = nodepool(NULL, NULL, NULL);
    expect_allowed(pol, NODEPOOL, ok);
    expect_allowed(pol, NODEPOOL, ok2);
    expect_refused(pol, NODEPOOL, bad, "nodePools.allowedArchitectures", "\"arm64\"");
    expect_refused(pol, NODEPOOL, open, "nodePools.allowedArchitectures", "kubernetes.io/arch");
    free(ok_reqs);
    free(bad_reqs);
    free(notin);
    free(ok);
    free(bad);
    free(ok2);
    free(open);
}

Test(policy_nodepool, families_and_categories_follow_instance_types)
{
    const char *pol = "nodePools: {allowedInstanceFamilies: [c6i, m6i], "
                      "allowedInstanceCategories: [c, m]}";
    char *types_ok =
        req1("node.kubernetes.io/instance-type", "In", "[\"c6i.large\",\"m6i.xlarge\"]");
    char *types_bad =
        req1("node.kubernetes.io/instance-type", "In", "[\"c6i.large\",\"r6i.large\"]");
    char *fam_ok = req1("karpenter.k8s.aws/instance-family", "In", "[\"c6i\"]");
    char *fam_notin = req1("karpenter.k8s.aws/instance-family", "NotIn", "[\"x1\"]");
    char *cat_only = req1("karpenter.k8s.aws/instance-category", "In", "[\"c\"]");
    char *np;
    expect_allowed(pol, NODEPOOL, np = nodepool(types_ok, NULL, NULL));
    free(np);
    expect_refused(pol, NODEPOOL, np = nodepool(types_bad, NULL, NULL),
                   "nodePools.allowedInstanceFamilies", "\"r6i\"");
    free(np);
    expect_refused(pol, NODEPOOL, np = nodepool(types_bad, NULL, NULL),
                   "nodePools.allowedInstanceCategories", "\"r\"");
    free(np);
    expect_allowed(pol, NODEPOOL, np = nodepool(fam_ok, NULL, NULL));
    free(np);
    expect_refused(pol, NODEPOOL, np = nodepool(fam_notin, NULL, NULL),
                   "nodePools.allowedInstanceFamilies", "allows any instance family");
    free(np);
    /* A category requirement alone does not bound the families. */
    expect_refused(pol, NODEPOOL, np = nodepool(cat_only, NULL, NULL),
                   "nodePools.allowedInstanceFamilies", NULL);
    free(np);
    expect_allowed("nodePools: {allowedInstanceCategories: [c, m]}", NODEPOOL,
                   np = nodepool(cat_only, NULL, NULL));
    free(np);
    free(types_ok);
    free(types_bad);
    free(fam_ok);
    free(fam_notin);
    free(cat_only);
}

Test(policy_nodepool, max_instance_types)
{
    const char *pol = "nodePools: {maxInstanceTypes: 3}";
    char *three = req1("node.kubernetes.io/instance-type", "In",
                       "[\"c6i.large\",\"c6i.xlarge\",\"c6i.2xlarge\"]");
    char *four = req1("node.kubernetes.io/instance-type", "In",
                      "[\"c6i.large\",\"c6i.xlarge\",\"c6i.2xlarge\",\"c6i.4xlarge\"]");
    char *four_notin = req1("node.kubernetes.io/instance-type", "NotIn",
                            "[\"c6i.large\",\"c6i.xlarge\",\"c6i.2xlarge\",\"c6i.4xlarge\"]");
    char *np;
    expect_allowed(pol, NODEPOOL, np = nodepool(three, NULL, NULL));
    free(np);
    expect_refused(pol, NODEPOOL, np = nodepool(four, NULL, NULL), "nodePools.maxInstanceTypes",
                   "spec.template.spec.requirements[0].values: Too many");
    free(np);
    expect_allowed(pol, NODEPOOL, np = nodepool(four_notin, NULL, NULL));
    free(np);
    free(three);
    free(four);
    free(four_notin);
}

Test(policy_nodepool, disruption_budgets)
{
    const char *pol = "nodePools: {requireDisruptionBudget: true}";
    char *np;
    expect_allowed(pol, NODEPOOL, np = nodepool(NULL, NULL, "{\"budgets\":[{\"nodes\":\"10%\"}]}"));
    free(np);
    expect_refused(pol, NODEPOOL, np = nodepool(NULL, NULL, "{\"budgets\":[]}"),
                   "nodePools.requireDisruptionBudget", "spec.disruption.budgets");
    free(np);
    expect_refused(pol, NODEPOOL, np = nodepool(NULL, NULL, NULL),
                   "nodePools.requireDisruptionBudget", NULL);
    free(np);
    expect_allowed("nodePools: {requireDisruptionBudget: false}", NODEPOOL,
                   np = nodepool(NULL, NULL, NULL));
    free(np);
}

Test(policy_nodepool, malformed_objects_are_refused_not_crashed)
{
    const char *pol = full_policy;
    const char *objs[] = {"{}", "{\"spec\":1}", "{\"spec\":{\"template\":[]}}",
                          "{\"spec\":{\"template\":{\"spec\":{\"requirements\":[1,null,{}]}}}}",
                          "{\"spec\":{\"limits\":[1]}}"};
    for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++)
        expect_refused(pol, NODEPOOL, objs[i], "nodePools.", NULL);
}

/* ---- EC2NodeClass rules --------------------------------------------------------------- */

Test(policy_nodeclass, imdsv2)
{
    const char *pol = "ec2NodeClasses: {requireIMDSv2: true}";
    expect_allowed(pol, NODECLASS, "{\"spec\":{}}");
    expect_allowed(pol, NODECLASS,
                   "{\"spec\":{\"metadataOptions\":{\"httpTokens\":\"required\"}}}");
    expect_allowed(pol, NODECLASS,
                   "{\"spec\":{\"metadataOptions\":{\"httpEndpoint\":\"enabled\"}}}");
    expect_refused(pol, NODECLASS, "{\"spec\":{\"metadataOptions\":{\"httpTokens\":\"optional\"}}}",
                   "ec2NodeClasses.requireIMDSv2", "spec.metadataOptions.httpTokens");
    expect_refused(pol, NODECLASS, "{\"spec\":{\"metadataOptions\":{\"httpTokens\":1}}}",
                   "ec2NodeClasses.requireIMDSv2", NULL);
    expect_allowed("{}", NODECLASS,
                   "{\"spec\":{\"metadataOptions\":{\"httpTokens\":\"optional\"}}}");
}

Test(policy_nodeclass, encrypted_volumes)
{
    const char *pol = "ec2NodeClasses: {requireEncryptedVolumes: true}";
    expect_allowed(pol, NODECLASS, "{\"spec\":{}}");
    expect_allowed(pol, NODECLASS,
                   "{\"spec\":{\"blockDeviceMappings\":[{\"deviceName\":\"/dev/xvda\",\"ebs\":"
                   "{\"volumeSize\":\"20Gi\",\"encrypted\":true}}]}}");
    expect_refused(pol, NODECLASS,
                   "{\"spec\":{\"blockDeviceMappings\":[{\"ebs\":{\"encrypted\":true}},{\"ebs\":"
                   "{\"volumeSize\":\"20Gi\"}}]}}",
                   "ec2NodeClasses.requireEncryptedVolumes",
                   "spec.blockDeviceMappings[1].ebs.encrypted");
    expect_refused(pol, NODECLASS,
                   "{\"spec\":{\"blockDeviceMappings\":[{\"ebs\":{\"encrypted\":false}}]}}",
                   "ec2NodeClasses.requireEncryptedVolumes", NULL);
}

Test(policy_nodeclass, ami_aliases)
{
    const char *pol = "ec2NodeClasses: {allowedAMIAliases: [\"al2023@*\", bottlerocket@v1.20.0]}";
    expect_allowed(pol, NODECLASS,
                   "{\"spec\":{\"amiSelectorTerms\":[{\"alias\":\"al2023@latest\"}]}}");
    expect_allowed(pol, NODECLASS,
                   "{\"spec\":{\"amiSelectorTerms\":[{\"alias\":\"bottlerocket@v1.20.0\"}]}}");
    expect_refused(pol, NODECLASS,
                   "{\"spec\":{\"amiSelectorTerms\":[{\"alias\":\"bottlerocket@v1.21.0\"}]}}",
                   "ec2NodeClasses.allowedAMIAliases", "\"bottlerocket@v1.21.0\"");
    expect_refused(pol, NODECLASS, "{\"spec\":{\"amiSelectorTerms\":[{\"id\":\"ami-123\"}]}}",
                   "ec2NodeClasses.allowedAMIAliases", "spec.amiSelectorTerms[0]");
}

/* ---- Pod mutation --------------------------------------------------------------------- */

/* Resolve an RFC 6901 pointer's parent and last segment in `doc`. */
static cJSON *pointer_parent(cJSON *doc, const char *path, char *last, size_t size)
{
    cJSON *cur = doc;
    const char *p = path;
    cr_assert_eq(*p, '/', "pointer %s", path);
    for (;;) {
        p++;
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p), o = 0;
        for (size_t i = 0; i < n && o + 1 < size; i++) {
            if (p[i] == '~' && i + 1 < n) {
                last[o++] = p[i + 1] == '1' ? '/' : '~';
                i++;
            } else {
                last[o++] = p[i];
            }
        }
        last[o] = '\0';
        if (!end) return cur;
        cur = cJSON_IsArray(cur) ? cJSON_GetArrayItem(cur, (int)strtol(last, NULL, 10))
                                 : cJSON_GetObjectItemCaseSensitive(cur, last);
        cr_assert_not_null(cur, "pointer %s: no %s", path, last);
        p = end;
    }
}

/* Apply add/replace operations (all the webhook emits) to `doc`. */
static void apply_patch(cJSON *doc, const cJSON *patch)
{
    const cJSON *op;
    cJSON_ArrayForEach(op, patch)
    {
        const char *verb = cJSON_GetObjectItem(op, "op")->valuestring;
        const char *path = cJSON_GetObjectItem(op, "path")->valuestring;
        cr_assert(strcmp(verb, "add") == 0 || strcmp(verb, "replace") == 0, "op %s", verb);
        char last[256];
        cJSON *parent = pointer_parent(doc, path, last, sizeof(last));
        cr_assert(cJSON_IsObject(parent), "%s: parent is not an object", path);
        cJSON *value = cJSON_Duplicate(cJSON_GetObjectItem(op, "value"), 1);
        if (strcmp(verb, "replace") == 0)
            cr_assert_not_null(cJSON_GetObjectItemCaseSensitive(parent, last), "replace %s", path);
        if (cJSON_GetObjectItemCaseSensitive(parent, last))
            cJSON_ReplaceItemInObjectCaseSensitive(parent, last, value);
        else
            cJSON_AddItemToObject(parent, last, value);
    }
}

typedef struct mutation {
    cJSON *pod;   /* patched */
    cJSON *patch; /* as emitted */
    kp_arena *arena;
    kp_admission_result res;
} mutation;

static void mutate(mutation *m, const char *policy_yaml, const char *pod_json, const char *ns)
{
    kp_policy *p = policy_of(policy_yaml);
    m->pod = json_of(pod_json);
    m->patch = cJSON_CreateArray();
    m->arena = kp_arena_new();
    kp_admission_result_init(&m->res, m->arena);
    cr_assert_eq(kp_policy_mutate_pod(p, m->pod, ns, m->patch, &m->res), 0);
    kp_policy_unref(p);
    apply_patch(m->pod, m->patch);
}

static void mutation_done(mutation *m)
{
    cJSON_Delete(m->pod);
    cJSON_Delete(m->patch);
    kp_admission_result_clear(&m->res);
    kp_arena_free(m->arena);
}

static const char *at(const cJSON *root, const char *a, const char *b, int index, const char *c,
                      const char *d, const char *e)
{
    const cJSON *x = cJSON_GetObjectItem(root, a);
    x = cJSON_GetObjectItem(x, b);
    if (index >= 0) x = cJSON_GetArrayItem(x, index);
    if (c) x = cJSON_GetObjectItem(x, c);
    if (d) x = cJSON_GetObjectItem(x, d);
    if (e) x = cJSON_GetObjectItem(x, e);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

static const char *annotation(const cJSON *pod, const char *key)
{
    return at(pod, "metadata", "annotations", -1, key, NULL, NULL);
}

static const char defaults_policy[] = "pods: {defaultRequests: {cpu: 100m, memory: 128Mi}}";

Test(policy_pod, defaults_requests_where_there_are_none)
{
    mutation m;
    mutate(
        &m, defaults_policy,
        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"app\"},"
        "{\"name\":\"side\",\"resources\":{}},{\"name\":\"half\",\"resources\":{\"requests\":"
        "{\"cpu\":\"2\"}}},{\"name\":\"lim\",\"resources\":{\"limits\":{\"memory\":\"1Gi\"}}}]}}",
        "default");
    const cJSON *pod = m.pod;
    cr_expect_str_eq(at(pod, "spec", "containers", 0, "resources", "requests", "cpu"), "100m");
    cr_expect_str_eq(at(pod, "spec", "containers", 0, "resources", "requests", "memory"), "128Mi");
    cr_expect_str_eq(at(pod, "spec", "containers", 1, "resources", "requests", "memory"), "128Mi");
    cr_expect_str_eq(at(pod, "spec", "containers", 2, "resources", "requests", "cpu"), "2");
    cr_expect_str_eq(at(pod, "spec", "containers", 2, "resources", "requests", "memory"), "128Mi");
    /* a limit stands for the request: only cpu is added */
    cr_expect_str_eq(at(pod, "spec", "containers", 3, "resources", "requests", "cpu"), "100m");
    cr_expect_null(at(pod, "spec", "containers", 3, "resources", "requests", "memory"));
    const char *record = annotation(pod, "karpenter.sh/defaulted-requests");
    cr_assert_not_null(record);
    cr_expect_str_eq(record, "{\"app\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"},\"side\":{\"cpu\":"
                             "\"100m\",\"memory\":\"128Mi\"},\"half\":{\"memory\":\"128Mi\"},"
                             "\"lim\":{\"cpu\":\"100m\"}}");
    /* two containers had no requests at all */
    cr_expect_eq(m.res.n_warnings, 2);
    cr_expect(strstr(m.res.warnings[0], "container app has no resource requests") != NULL, "%s",
              m.res.warnings[0]);
    cr_expect(strstr(m.res.warnings[0], "cpu=100m, memory=128Mi") != NULL, "%s", m.res.warnings[0]);
    mutation_done(&m);
}

Test(policy_pod, nothing_to_do_means_an_empty_patch)
{
    mutation m;
    mutate(&m, defaults_policy,
           "{\"spec\":{\"containers\":[{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"1\","
           "\"memory\":\"1Gi\"}}}]}}",
           "default");
    cr_expect_eq(cJSON_GetArraySize(m.patch), 0);
    cr_expect_eq(m.res.n_warnings, 0);
    mutation_done(&m);
}

Test(policy_pod, init_containers_and_existing_annotations)
{
    mutation m;
    mutate(&m, defaults_policy,
           "{\"metadata\":{\"annotations\":{\"x\":\"y\",\"karpenter.sh/defaulted-requests\":"
           "\"stale\"}},\"spec\":{\"initContainers\":[{\"name\":\"init\"}],\"containers\":[{"
           "\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}}",
           NULL);
    cr_expect_str_eq(at(m.pod, "spec", "initContainers", 0, "resources", "requests", "cpu"),
                     "100m");
    cr_expect_str_eq(annotation(m.pod, "x"), "y");
    cr_expect_str_eq(annotation(m.pod, "karpenter.sh/defaulted-requests"),
                     "{\"init\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"}}");
    mutation_done(&m);
}

Test(policy_pod, warning_only_without_defaults)
{
    mutation m;
    mutate(&m, "pods: {}", "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}", "default");
    cr_expect_eq(cJSON_GetArraySize(m.patch), 0);
    cr_assert_eq(m.res.n_warnings, 1);
    cr_expect(strstr(m.res.warnings[0], "may land on a node too small") != NULL);
    mutation_done(&m);
    mutate(&m, "pods: {warnMissingRequests: false}",
           "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}", "default");
    cr_expect_eq(m.res.n_warnings, 0);
    mutation_done(&m);
}

static const char dnd_policy[] = "pods:\n"
                                 "  doNotDisrupt:\n"
                                 "    - matchLabels: {workload: training, team: ml}\n"
                                 "    - ownerKinds: [Job]\n"
                                 "      namespaces: [batch]\n"
                                 "    - resources: [nvidia.com/gpu]\n";

Test(policy_pod, do_not_disrupt_selectors)
{
    struct {
        const char *pod, *ns;
        int expect;
    } cases[] = {
        {"{\"metadata\":{\"labels\":{\"workload\":\"training\",\"team\":\"ml\"}},\"spec\":{}}", "x",
         1},
        {"{\"metadata\":{\"labels\":{\"workload\":\"training\"}},\"spec\":{}}", "x", 0},
        {"{\"metadata\":{\"ownerReferences\":[{\"kind\":\"Job\",\"name\":\"j\"}]},\"spec\":{}}",
         "batch", 1},
        {"{\"metadata\":{\"ownerReferences\":[{\"kind\":\"Job\",\"name\":\"j\"}]},\"spec\":{}}",
         "web", 0},
        {"{\"metadata\":{\"namespace\":\"batch\",\"ownerReferences\":[{\"kind\":\"Job\"}]},"
         "\"spec\":{}}",
         NULL, 1},
        {"{\"metadata\":{\"ownerReferences\":[{\"kind\":\"ReplicaSet\"}]},\"spec\":{}}", "batch",
         0},
        {"{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":"
         "1}}}]}}",
         "x", 1},
        {"{\"spec\":{\"initContainers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"nvidia.com/"
         "gpu\":\"1\"}}}]}}",
         "x", 1},
        {"{\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{\"cpu\":1}}}]}}",
         "x", 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mutation m;
        mutate(&m, dnd_policy, cases[i].pod, cases[i].ns);
        const char *v = annotation(m.pod, "karpenter.sh/do-not-disrupt");
        if (cases[i].expect)
            cr_expect(v && strcmp(v, "true") == 0, "case %zu: annotation missing", i);
        else
            cr_expect_null(v, "case %zu: annotated", i);
        mutation_done(&m);
    }
}

Test(policy_pod, do_not_disrupt_keeps_the_users_choice_and_escapes_the_key)
{
    mutation m;
    mutate(&m, dnd_policy,
           "{\"metadata\":{\"labels\":{\"workload\":\"training\",\"team\":\"ml\"},\"annotations\":"
           "{\"karpenter.sh/do-not-disrupt\":\"false\"}},\"spec\":{}}",
           "x");
    cr_expect_eq(cJSON_GetArraySize(m.patch), 0);
    cr_expect_str_eq(annotation(m.pod, "karpenter.sh/do-not-disrupt"), "false");
    mutation_done(&m);
    mutate(&m, dnd_policy,
           "{\"metadata\":{\"labels\":{\"workload\":\"training\",\"team\":\"ml\"},\"annotations\":"
           "{\"a\":\"b\"}},\"spec\":{}}",
           "x");
    cr_assert_eq(cJSON_GetArraySize(m.patch), 1);
    cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(m.patch, 0), "path")->valuestring,
                     "/metadata/annotations/karpenter.sh~1do-not-disrupt");
    mutation_done(&m);
}

Test(policy_pod, pods_without_metadata_or_spec)
{
    mutation m;
    mutate(&m, dnd_policy, "{}", "x");
    cr_expect_eq(cJSON_GetArraySize(m.patch), 0);
    mutation_done(&m);
    mutate(&m, "pods: {doNotDisrupt: [{namespaces: [x]}]}", "{}", "x");
    cr_expect_str_eq(annotation(m.pod, "karpenter.sh/do-not-disrupt"), "true");
    mutation_done(&m);
}

/* ---- the slot ------------------------------------------------------------------------------ */

Test(policy_slot, readers_keep_their_policy_across_a_swap)
{
    kp_policy *first = policy_of("nodePools: {requireDisruptionBudget: true}");
    kp_policy_slot *slot = kp_policy_slot_new(first);
    kp_policy *held = kp_policy_slot_get(slot);
    cr_assert_eq(held, first);
    kp_policy_slot_set(slot, kp_policy_new_empty());
    kp_policy *now = kp_policy_slot_get(slot);
    cr_assert_neq(now, held);
    /* the old policy still works for its holder */
    check_result r;
    cJSON *np = json_of("{\"spec\":{}}");
    r.arena = kp_arena_new();
    kp_admission_result_init(&r.res, r.arena);
    kp_policy_check_nodepool(held, np, &r.res);
    cr_expect_eq(r.res.errors.count, 1);
    cJSON_Delete(np);
    check_done(&r);
    kp_policy_unref(held);
    kp_policy_unref(now);
    cr_assert_null(kp_policy_slot_free(slot));
}
