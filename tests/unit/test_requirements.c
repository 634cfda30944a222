/*
 * Tests for shared/api/requirements.c. The operator-pair tables are
 * Karpenter's (pkg/scheduling/requirement_test.go and requirements_test.go),
 * kept as data: the same inputs, and the expected results written the way
 * Karpenter's String() prints them (without the leading "key ").
 */
#include "requirements_fixture.h"

TestSuite(requirements, .init = setup, .fini = teardown);

struct compat_row {
    const char *node, *pod; /* pod: '+' where compatible, in compat_order */
};

/* Karpenter: "should be compatible with well-known v1 labels undefined". */
static const struct compat_row compat_allow_well_known[] = {
    {"none", "+++++++++++++++"},
    {"ex", "++-++++++++++++"},
    {"dne", "+-+---+---+----"},
    {"inA", "++-+-+----+----"},
    {"inB", "++--+++---+----"},
    {"inAB", "++-++++---+----"},
    {"ninA", "+++-+++++++++++"},
    {"in1", "++----++-+----+"},
    {"in9", "++----+-++++---"},
    {"in19", "++----++++++--+"},
    {"nin12", "+++++++-+++++++"},
    {"gt1", "++----+-+++++-+"},
    {"gt9", "++----+---+++--"},
    {"lt1", "++----+---+--++"},
    {"lt9", "++----++-+++-++"},
};

/* Karpenter: "should be strictly compatible". */
static const struct compat_row compat_strict[] = {
    {"none", "+-+---+---+----"},
    {"ex", "++-++++++++++++"},
    {"dne", "+-+---+---+----"},
    {"inA", "++-+-+----+----"},
    {"inB", "++--+++---+----"},
    {"inAB", "++-++++---+----"},
    {"ninA", "+++-+++++++++++"},
    {"in1", "++----++-+----+"},
    {"in9", "++----+-++++---"},
    {"in19", "++----++++++--+"},
    {"nin12", "+++++++-+++++++"},
    {"gt1", "++----+-+++++-+"},
    {"gt9", "++----+---+++--"},
    {"lt1", "++----+---+--++"},
    {"lt9", "++----++-+++-++"},
};
// clang-format on


/* Sets of requirements on topology.kubernetes.io/zone, as Karpenter's tests. */
static kp_requirements zone_set(const char *name)
{
    kp_requirements reqs;
    kp_requirements_init(&reqs);
    if (strcmp(name, "none") != 0) {
        kp_requirement r = named_on(name, KP_LABEL_ZONE);
        kp_requirements_add(&reqs, st, arena, &r);
    }
    return reqs;
}

static void check_compat(const struct compat_row *rows, unsigned flags)
{
    for (size_t i = 0; i < 15; i++) {
        kp_requirements node = zone_set(rows[i].node);
        for (size_t j = 0; j < 15; j++) {
            kp_requirements pod = zone_set(rows[j].node);
            kp_requirements_conflict c;
            memset(&c, 0, sizeof(c));
            bool want = rows[i].pod[j] == '+';
            bool got = kp_requirements_compatible(st, &node, &pod, flags, &c);
            cr_expect_eq(got, want, "%s compatible with %s", rows[i].node, rows[j].node);
            if (!got) cr_expect_eq(c.key, KP_SYM_ZONE);
            /* The zone is well known: allowed undefined, the rest is Intersects. */
            if (flags & KP_COMPAT_ALLOW_UNDEFINED_WELL_KNOWN)
                cr_expect_eq(kp_requirements_intersects(st, &node, &pod, NULL), want,
                             "%s intersects %s", rows[i].node, rows[j].node);
        }
    }
}

Test(requirements, compatible_allowing_undefined_well_known)
{
    check_compat(compat_allow_well_known, KP_COMPAT_ALLOW_UNDEFINED_WELL_KNOWN);
}

Test(requirements, compatible_strict)
{
    check_compat(compat_strict, 0);
}

static const char *compat_message(const char *pod_key, const char *value, unsigned flags,
                                  bool inferred)
{
    kp_requirements node, pod;
    kp_requirements_init(&node);
    kp_requirements_init(&pod);
    kp_requirement r =
        value ? make(pod_key, KP_OP_IN, &value, 1, 0) : make(pod_key, KP_OP_EXISTS, NULL, 0, 0);
    kp_requirements_add(&pod, st, arena, &r);
    kp_requirements_conflict c;
    cr_assert_not(kp_requirements_compatible(st, &node, &pod, flags, &c), "%s", pod_key);
    cr_expect(c.undefined);
    cr_expect_null(c.node);
    cr_expect_eq(c.pod, &pod.items[0]);
    return inferred ? kp_requirements_conflict_string(st, arena, &node, &c)
                    : kp_requirements_conflict_string_flags(st, arena, &node, &c, flags);
}

/* Karpenter: "should detect well known label truncations" and "typos". */
Test(requirements, typo_hints)
{
    static const struct {
        const char *key, *hint;
    } cases[] = {
        {"zone", "topology.kubernetes.io/zone"},
        {"region", "topology.kubernetes.io/region"},
        {"nodepool", "karpenter.sh/nodepool"},
        {"instance-type", "node.kubernetes.io/instance-type"},
        {"arch", "kubernetes.io/arch"},
        {"capacity-type", "karpenter.sh/capacity-type"},
        {"topology.kubernetesio/zone", "topology.kubernetes.io/zone"},
        {"node.io/zone", "topology.kubernetes.io/zone"},
        {"topology.kubernetes.io/regio", "topology.kubernetes.io/region"},
        {"node.kubernetes.io/region", "topology.kubernetes.io/region"},
        {"karpenter/nodepool", "karpenter.sh/nodepool"},
        {"instance-family", "karpenter.k8s.aws/instance-family"},
    };
    for (size_t i = 0; i < COUNT(cases); i++) {
        char want[256];
        snprintf(want, sizeof(want), "label \"%s\" does not have known values (typo of \"%s\"?)",
                 cases[i].key, cases[i].hint);
        for (int inferred = 0; inferred < 2; inferred++) {
            const char *got =
                compat_message(cases[i].key, NULL, KP_COMPAT_ALLOW_UNDEFINED_WELL_KNOWN, inferred);
            cr_expect_str_eq(got, want);
        }
    }
    /* Karpenter: "should display an error message for unknown labels". */
    cr_expect_str_eq(compat_message("deployment", NULL, 0, false),
                     "label \"deployment\" does not have known values");
    cr_expect_str_eq(compat_message("deployment", NULL, KP_COMPAT_ALLOW_UNDEFINED_WELL_KNOWN, true),
                     "label \"deployment\" does not have known values");
}

Test(requirements, undefined_well_known_keys)
{
    /* Without the flag a well-known key must be defined too; the hint then
     * only looks at the node's keys. */
    cr_expect_str_eq(compat_message(KP_LABEL_ZONE, "a", 0, false),
                     "label \"topology.kubernetes.io/zone\" does not have known values");
    cr_expect_str_eq(compat_message(KP_LABEL_ZONE, "a", 0, true),
                     "label \"topology.kubernetes.io/zone\" does not have known values");
    kp_requirements node, pod;
    kp_requirements_init(&node);
    kp_requirements_init(&pod);
    kp_requirements_add_label(&node, st, arena, "example.com/team", "a");
    kp_requirements_add_label(&pod, st, arena, "team", "a");
    kp_requirements_conflict c;
    cr_assert_not(kp_requirements_compatible(st, &node, &pod, 0, &c));
    cr_expect_str_eq(kp_requirements_conflict_string_flags(st, arena, &node, &c, 0),
                     "label \"team\" does not have known values (typo of \"example.com/team\"?)");
    /* NotIn and DoesNotExist need no definition. */
    kp_requirements_init(&pod);
    kp_requirement nin = named_on("ninA", "team"), dne = named_on("dne", "other");
    kp_requirements_add(&pod, st, arena, &nin);
    kp_requirements_add(&pod, st, arena, &dne);
    cr_expect(kp_requirements_compatible(st, &node, &pod, 0, NULL));
}

Test(requirements, conflict_messages)
{
    kp_requirements node, pod;
    kp_requirements_init(&node);
    kp_requirements_init(&pod);
    kp_requirements_add_label(&node, st, arena, KP_LABEL_ZONE, "A");
    kp_requirements_add_label(&node, st, arena, KP_LABEL_ARCH, "amd64");
    kp_requirement r = named_on("inB*", KP_LABEL_ZONE);
    kp_requirements_add(&pod, st, arena, &r);
    kp_requirements_conflict c;
    cr_assert_not(kp_requirements_intersects(st, &node, &pod, &c));
    cr_expect_eq(c.key, KP_SYM_ZONE);
    cr_expect_not(c.undefined);
    cr_expect_eq(c.node, kp_requirements_get(&node, KP_SYM_ZONE));
    cr_expect_eq(c.pod, kp_requirements_get(&pod, KP_SYM_ZONE));
    cr_expect_str_eq(kp_requirements_conflict_string(st, arena, &node, &c),
                     "key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [B] "
                     "minValues 1 not in topology.kubernetes.io/zone In [A]");
    /* An undefined key is reported before a conflict on a shared key. */
    kp_requirements_add_label(&pod, st, arena, "a-custom-label", "x");
    cr_assert_not(kp_requirements_compatible(st, &node, &pod, 0, &c));
    cr_expect(c.undefined);
    cr_expect_str_eq(kp_sym_str(st, c.key), "a-custom-label");
}

Test(requirements, intersects_spares_two_negative_requirements)
{
    static const struct {
        const char *node, *pod;
        bool want;
    } cases[] = {
        {"ninA", "dne", true},  {"dne", "ninA", true},  {"dne", "dne", true},
        {"nin12", "dne", true}, {"ex", "dne", false},   {"dne", "ex", false},
        {"inA", "dne", false},  {"dne", "inA", false},  {"gt1", "dne", false},
        {"dne", "gt1", false},  {"nin12", "lt1", true}, {"inA", "ninA", false},
    };
    for (size_t i = 0; i < COUNT(cases); i++) {
        kp_requirements node = zone_set(cases[i].node), pod = zone_set(cases[i].pod);
        cr_expect_eq(kp_requirements_intersects(st, &node, &pod, NULL), cases[i].want, "%s ~ %s",
                     cases[i].node, cases[i].pod);
    }
}

Test(requirements, add_get_copy)
{
    kp_requirements reqs, copy;
    kp_requirements_init(&reqs);
    const char *keys[] = {"k9", "k3", "k7", "k1", "k5", "k2", "k8", "k4", "k6", "k0"};
    for (size_t i = 0; i < 10; i++)
        kp_requirements_add_label(&reqs, st, arena, keys[i], "v");
    cr_assert_eq(reqs.count, 10);
    for (uint32_t i = 1; i < reqs.count; i++)
        cr_expect_lt(reqs.items[i - 1].key, reqs.items[i].key, "sorted by key");
    cr_expect_null(kp_requirements_get(&reqs, kp_sym_intern(st, "absent")));
    cr_expect_null(kp_requirements_get(&reqs, KP_SYM_NONE));

    kp_requirements_copy(&copy, arena, &reqs);
    kp_requirement other = make("k3", KP_OP_NOT_IN, (const char *[]){"v"}, 1, 0);
    kp_requirements_add(&copy, st, arena, &other);
    kp_requirements_add_label(&copy, st, arena, "k10", "v");
    kp_sym k3 = kp_sym_lookup(st, "k3");
    cr_expect_eq(kp_requirement_operator(kp_requirements_get(&copy, k3)), KP_OP_DOES_NOT_EXIST);
    cr_expect_eq(kp_requirement_operator(kp_requirements_get(&reqs, k3)), KP_OP_IN);
    cr_expect_eq(copy.count, 11);
    cr_expect_eq(reqs.count, 10);

    kp_requirements more;
    kp_requirements_init(&more);
    kp_requirement gt = make("k0", KP_OP_GT, (const char *[]){"3"}, 1, 0);
    kp_requirements_add(&more, st, arena, &gt);
    kp_requirements_add_label(&more, st, arena, "extra", "e");
    kp_requirements_add_all(&reqs, st, arena, &more);
    cr_expect_eq(reqs.count, 11);
    cr_expect_str_eq(str(kp_requirements_get(&reqs, kp_sym_lookup(st, "k0"))), "k0 DoesNotExist");

    kp_requirements empty;
    kp_requirements_init(&empty);
    kp_requirements_copy(&copy, arena, &empty);
    cr_expect_eq(copy.count, 0);
    cr_expect_str_eq(kp_requirements_string(st, arena, &empty), "");
}

/* Karpenter: "should print Requirements in the same order". */
Test(requirements, string)
{
    static const char *const names[] = {"ex",  "dne",  "inA",   "inB", "inAB", "ninA", "in1",
                                        "in9", "in19", "nin12", "gt1", "gt9",  "lt1",  "lt9"};
    static const char *const keys[] = {"exists",    "doesNotExist", "inA",          "inB",
                                       "inAB",      "notInA",       "in1",          "in9",
                                       "in19",      "notIn12",      "greaterThan1", "greaterThan9",
                                       "lessThan1", "lessThan9"};
    kp_requirements reqs;
    kp_requirements_init(&reqs);
    for (size_t i = 0; i < 14; i++) {
        kp_requirement r = named_on(names[i], keys[i]);
        kp_requirements_add(&reqs, st, arena, &r);
    }
    kp_requirements_add_label(&reqs, st, arena, KP_LABEL_HOSTNAME, "restricted-so-hidden");
    cr_expect_str_eq(kp_requirements_string(st, arena, &reqs),
                     "doesNotExist DoesNotExist, exists Exists, greaterThan1 Exists >=2, "
                     "greaterThan9 Exists >=10, in1 In [1], in19 In [1 9], in9 In [9], "
                     "inA In [A], inAB In [A B], inB In [B], lessThan1 Exists <=0, "
                     "lessThan9 Exists <=8, notIn12 NotIn [1 2], notInA NotIn [A]");
}

Test(requirements, large_sets)
{
    /* Sizes on both sides of the scan/bisect and merge/probe thresholds. */
    enum { N = 400 };
    const char **vals = kp_arena_calloc(arena, N, sizeof(char *));
    for (int i = 0; i < N; i++)
        vals[i] = kp_arena_printf(arena, "type-%03d", i);
    kp_requirement all = make("key", KP_OP_IN, vals, N, 0);
    kp_requirement odd = make("key", KP_OP_IN, vals + 1, 1, 0);
    kp_requirement last = make("key", KP_OP_IN, vals + N - 1, 1, 0);
    kp_requirement some = make("key", KP_OP_NOT_IN, vals, N - 1, 0);
    kp_requirement none = make("key", KP_OP_NOT_IN, vals, N, 0);
    kp_requirement half = make("key", KP_OP_IN, vals + N / 2, N / 2, 0), r;
    cr_expect(kp_requirement_intersects(st, &all, &odd));
    cr_expect(kp_requirement_intersects(st, &last, &all));
    cr_expect(kp_requirement_intersects(st, &all, &some));
    cr_expect_not(kp_requirement_intersects(st, &all, &none));
    cr_expect(kp_requirement_intersects(st, &half, &all));
    cr_expect_not(kp_requirement_intersects(st, &half, &odd));
    for (int i = 0; i < N; i++)
        cr_expect(kp_requirement_has(st, &all, kp_sym_lookup(st, vals[i])), "%s", vals[i]);
    cr_expect_not(kp_requirement_has(st, &all, kp_sym_intern(st, "type-400")));
    kp_requirement_intersect(&r, st, arena, &all, &some);
    cr_expect_str_eq(str(&r), "key In [type-399]");
    kp_requirement_intersect(&r, st, arena, &half, &all);
    cr_expect_eq(r.n_values, N / 2);
    assert_well_formed(&r);
    kp_requirement_intersect(&r, st, arena, &some, &none);
    cr_expect_eq(r.n_values, N);
    cr_expect_str_eq(str(&r), "key NotIn [type-000 type-001 type-002 type-003 type-004 and 395 "
                              "others]");
}

